// Package docengine is the revision engine of documents: deterministic CBOR
// objects addressed by their SHA-256 in an insert-only chunk store, a clause
// tree whose node boundaries are decided by the keys alone, revisions made
// from changes, diff and the three-way merge of docs/documents.md. It knows
// nothing of SQL: the server hands it a Store over its chunks table.
package docengine

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/fxamacker/cbor/v2"
)

// Hash is the SHA-256 of a stored object's bytes.
type Hash [32]byte

// Zero stands for "no object" (an empty tree).
var Zero Hash

func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports the empty hash.
func (h Hash) IsZero() bool { return h == Zero }

// ParseHash reads a hex hash.
func ParseHash(s string) (Hash, bool) {
	var h Hash
	if len(s) != 64 {
		return h, false
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, false
	}
	return h, true
}

func hashOf(b []byte) Hash { return sha256.Sum256(b) }

// ErrMissing: a referenced object is not in the store (a corrupt or foreign
// reference); the server reports it as an internal error.
var ErrMissing = errors.New("docengine: object missing from the store")

// Store is the insert-only chunk table. Get of an absent hash returns
// ErrMissing; Put of a present hash is a no-op, and Put says whether it
// stored the object (false: it was there already).
type Store interface {
	Get(h Hash) ([]byte, error)
	Put(h Hash, data []byte) (bool, error)
}

// MemStore is a Store in memory, for tests and benchmarks.
type MemStore struct {
	M     map[Hash][]byte
	Bytes int // total bytes stored
}

func NewMemStore() *MemStore { return &MemStore{M: map[Hash][]byte{}} }

func (m *MemStore) Get(h Hash) ([]byte, error) {
	b, ok := m.M[h]
	if !ok {
		return nil, ErrMissing
	}
	return b, nil
}

func (m *MemStore) Put(h Hash, data []byte) (bool, error) {
	if _, ok := m.M[h]; ok {
		return false, nil
	}
	m.M[h] = data
	m.Bytes += len(data)
	return true, nil
}

var (
	encMode cbor.EncMode
	decMode cbor.DecMode
)

func init() {
	var err error
	// RFC 8949 core deterministic encoding: sorted map keys, shortest
	// integers, definite lengths. Structs are arrays (toarray tags).
	if encMode, err = cbor.CoreDetEncOptions().EncMode(); err != nil {
		panic(err)
	}
	if decMode, err = (cbor.DecOptions{MaxArrayElements: 1 << 24, MaxMapPairs: 1 << 24}).DecMode(); err != nil {
		panic(err)
	}
}

// Encode is the one encoding of hashed objects.
func Encode(v any) ([]byte, error) { return encMode.Marshal(v) }

func decode(b []byte, v any) error { return decMode.Unmarshal(b, v) }

// Stage is one transaction's view of the store: new objects stay in memory
// until Flush writes those reachable from the final root, so objects of
// intermediate states (a change later merged) are never stored. Decoded
// nodes are cached.
type Stage struct {
	base    Store
	fresh   map[Hash][]byte
	nodes   map[Hash]*node
	clauses map[Hash]*Clause
}

func NewStage(base Store) *Stage {
	return &Stage{base: base, fresh: map[Hash][]byte{}, nodes: map[Hash]*node{}, clauses: map[Hash]*Clause{}}
}

func (s *Stage) get(h Hash) ([]byte, error) {
	if b, ok := s.fresh[h]; ok {
		return b, nil
	}
	b, err := s.base.Get(h)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, h)
	}
	return b, nil
}

func (s *Stage) putBytes(b []byte) Hash {
	h := hashOf(b)
	if _, ok := s.fresh[h]; !ok {
		s.fresh[h] = b
	}
	return h
}

func (s *Stage) put(v any) (Hash, error) {
	b, err := Encode(v)
	if err != nil {
		return Zero, err
	}
	return s.putBytes(b), nil
}

// Flush writes the new objects reachable from root to the store and
// returns how many bytes the store did not hold before (an object equal to
// one already stored, e.g. a reverted edit, costs nothing).
func (s *Stage) Flush(root Hash) (int, error) {
	n := 0
	var write func(h Hash) (bool, error)
	write = func(h Hash) (bool, error) {
		b, ok := s.fresh[h]
		if !ok {
			return false, nil
		}
		delete(s.fresh, h)
		stored, err := s.base.Put(h, b)
		if stored {
			n += len(b)
		}
		return true, err
	}
	fresh, err := write(root)
	if err != nil || !fresh {
		return n, err
	}
	r, err := s.Root(root)
	if err != nil {
		return n, err
	}
	var walk func(h Hash, clauseLeaves bool) error
	walk = func(h Hash, clauseLeaves bool) error {
		if h.IsZero() {
			return nil
		}
		if _, ok := s.fresh[h]; !ok {
			return nil
		}
		nd, err := s.node(h)
		if err != nil {
			return err
		}
		if _, err := write(h); err != nil {
			return err
		}
		for _, v := range nd.Vals {
			switch {
			case nd.Level > 0:
				err = walk(Hash(v), clauseLeaves)
			case clauseLeaves:
				var ch Hash
				copy(ch[:], v)
				if _, ok := s.fresh[ch]; ok {
					c, err := s.clause(ch)
					if err != nil {
						return err
					}
					if _, err := write(ch); err != nil {
						return err
					}
					if len(c.TextHash) == 32 {
						if _, err := write(Hash(c.TextHash)); err != nil {
							return err
						}
					}
				}
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(r.Clauses, true); err != nil {
		return n, err
	}
	return n, walk(r.Index, false)
}
