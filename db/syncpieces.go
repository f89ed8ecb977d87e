package db

import (
	"bytes"
	"context"
	"time"
)

// Large files travel in pieces (docs/sync.md, "Documents and files"): a
// file larger than SyncPieceSize is sent, and fetched, SyncPieceSize
// bytes at a time, and the receiver keeps each piece as it comes, so an
// exchange cut in the middle of a 60 MB drawing goes on from the last
// piece that arrived. Pieces are kept per peer (each node's transfer to
// the hub is its own); the whole file is checked against its hash when
// the last piece comes, as a whole object is.

// SyncPieceSize is the size of a piece of a large file.
const SyncPieceSize = 4 << 20

// SyncPiecesHeld is how many bytes of the file (by hash) from peer are held.
func (s *Store) SyncPiecesHeld(ctx context.Context, peer int64, hash string) (int64, error) {
	return s.R.SyncPiecesHeld(ctx, SyncPiecesHeldParams{Peer: peer, Hash: hash})
}

// SyncPieceAdd keeps the piece of the file (by hash) from peer that starts
// at pos, when pos is what is held so far; it returns what is held after
// (what was held, when pos is not it: the sender goes on from there).
func (s *Store) SyncPieceAdd(ctx context.Context, peer int64, hash string, pos int64, data []byte) (int64, bool, error) {
	var held int64
	added := false
	err := s.InTx(ctx, func(q *Queries) error {
		var err error
		if held, err = q.SyncPiecesHeld(ctx, SyncPiecesHeldParams{Peer: peer, Hash: hash}); err != nil || held != pos {
			return err
		}
		if err := q.SyncPieceAdd(ctx, SyncPieceAddParams{Peer: peer, Hash: hash, Pos: pos, Data: data, CreatedAt: FormatTime(time.Now())}); err != nil {
			return err
		}
		held += int64(len(data))
		added = true
		return nil
	})
	return held, added, err
}

// SyncPiecesTake joins the pieces of the file from peer and drops them.
func (s *Store) SyncPiecesTake(ctx context.Context, peer int64, hash string) ([]byte, error) {
	var whole []byte
	err := s.InTx(ctx, func(q *Queries) error {
		pieces, err := q.SyncPieces(ctx, SyncPiecesParams{Peer: peer, Hash: hash})
		if err != nil {
			return err
		}
		whole = bytes.Join(pieces, nil)
		return q.SyncPiecesDrop(ctx, SyncPiecesDropParams{Peer: peer, Hash: hash})
	})
	return whole, err
}

// SyncPiecesPrune drops pieces of transfers abandoned before (a laptop
// that never came back, a file deleted before it was sent whole).
func (s *Store) SyncPiecesPrune(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := s.InTx(ctx, func(q *Queries) error {
		var err error
		n, err = q.SyncPiecesPrune(ctx, FormatTime(before))
		return err
	})
	return n, err
}
