package db

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// AuditHash is an audit entry's hash: SHA-256 over its content and the
// previous entry's hash, fields separated by a byte no field may hold.
func AuditHash(e AuditLog) string {
	opt := func(v *int64) string {
		if v == nil {
			return ""
		}
		return strconv.FormatInt(*v, 10)
	}
	parts := []string{
		strconv.FormatInt(e.ID, 10), strconv.FormatInt(e.Chain, 10), strconv.FormatInt(e.Seq, 10),
		opt(e.OrganisationID), opt(e.ActorID), e.Action, e.TargetIds, e.ChangedFields, e.RequestID,
		e.CreatedAt, e.PrevHash,
	}
	// Entries from before details existed hashed without it: an empty
	// details adds nothing, so their chains verify as they were written.
	if e.Details != "" {
		parts = append(parts, e.Details)
	}
	if e.Node != 0 {
		// A clone's chain (0121): entries from before there were nodes hash
		// as they always did. Details is a JSON object, never "node=…".
		parts = append(parts, "node="+strconv.FormatInt(e.Node, 10))
	}
	sum := sha256.Sum256([]byte(strings.Join(parts, "\x1f")))
	return hex.EncodeToString(sum[:])
}

// AuditAppendEntry adds e at the end of its chain (seq and prev_hash are
// taken from the chain's last entry, the hash computed), inside the
// caller's write transaction: the single writer keeps each chain in order.
func AuditAppendEntry(ctx context.Context, q *Queries, e AuditLog) error {
	last, err := q.AuditLast(ctx, AuditLastParams{Chain: e.Chain, Node: e.Node})
	switch {
	case IsNotFound(err):
		e.Seq, e.PrevHash = 1, ""
	case err != nil:
		return err
	default:
		e.Seq, e.PrevHash = last.Seq+1, last.Hash
	}
	return insertAuditEntry(ctx, q, &e)
}

func insertAuditEntry(ctx context.Context, q *Queries, e *AuditLog) error {
	e.Hash = AuditHash(*e)
	return q.AuditAppend(ctx, AuditAppendParams{ID: e.ID, Chain: e.Chain, Node: e.Node, Seq: e.Seq, OrganisationID: e.OrganisationID,
		ActorID: e.ActorID, Action: e.Action, TargetIds: e.TargetIds, ChangedFields: e.ChangedFields, RequestID: e.RequestID,
		CreatedAt: e.CreatedAt, PrevHash: e.PrevHash, Hash: e.Hash, Details: e.Details})
}

// auditHead is a chain's last entry as the writer appended it.
type auditHead struct {
	node  int64
	seq   int64
	hash  string
	epoch uint64
}

// auditHeadsMax bounds the memo (one entry per organisation written to).
const auditHeadsMax = 10_000

// AppendAudit is AuditAppendEntry for write transactions (InTx only) that
// remembers each chain's head instead of reading it for every write. The
// memo holds while the writer's epoch does: audit_log changes only through
// these appends, a rolled-back member or another process's commit moves
// the epoch.
func (s *Store) AppendAudit(ctx context.Context, q *Queries, e AuditLog) error {
	e.Node = s.auditNode.Load() // this node's own chain of the organisation
	epoch := s.WriterEpoch()
	s.auditMu.Lock()
	head, ok := s.auditHeads[e.Chain]
	s.auditMu.Unlock()
	if !ok || head.epoch != epoch || head.node != e.Node {
		last, err := q.AuditLast(ctx, AuditLastParams{Chain: e.Chain, Node: e.Node})
		switch {
		case IsNotFound(err):
			head = auditHead{node: e.Node}
		case err != nil:
			return err
		default:
			head = auditHead{node: e.Node, seq: last.Seq, hash: last.Hash}
		}
	}
	e.Seq, e.PrevHash = head.seq+1, head.hash
	if err := insertAuditEntry(ctx, q, &e); err != nil {
		return err
	}
	s.auditMu.Lock()
	if s.auditHeads == nil || len(s.auditHeads) >= auditHeadsMax {
		s.auditHeads = make(map[int64]auditHead)
	}
	s.auditHeads[e.Chain] = auditHead{node: e.Node, seq: e.Seq, hash: e.Hash, epoch: epoch}
	s.auditMu.Unlock()
	return nil
}

// VerifyAudit recomputes every chain and describes the first entry of each
// broken chain that was altered or after which entries were removed; an
// empty answer means every chain is whole. checked counts the entries.
func VerifyAudit(ctx context.Context, q *Queries) (problems []string, checked int, err error) {
	chains, err := q.AuditChains(ctx)
	if err != nil {
		return nil, 0, err
	}
	for _, ch := range chains {
		entries, err := q.AuditChain(ctx, AuditChainParams{Chain: ch.Chain, Node: ch.Node})
		if err != nil {
			return nil, checked, err
		}
		c := strconv.FormatInt(ch.Chain, 10)
		if ch.Node != 0 {
			c += " (node " + strconv.FormatInt(ch.Node, 10) + ")"
		}
		prev := ""
		for i, e := range entries {
			checked++
			want := int64(i + 1)
			switch {
			case e.Seq != want:
				problems = append(problems, fmt.Sprintf("chain %s: entry %d is missing (removed); the next present is entry %d (id %d)", c, want, e.Seq, e.ID))
			case e.PrevHash != prev:
				problems = append(problems, fmt.Sprintf("chain %s: entry %d (id %d) does not follow entry %d: one of them was altered or replaced", c, e.Seq, e.ID, e.Seq-1))
			case AuditHash(e) != e.Hash:
				problems = append(problems, fmt.Sprintf("chain %s: entry %d (id %d) was altered", c, e.Seq, e.ID))
			default:
				prev = e.Hash
				continue
			}
			break
		}
	}
	return problems, checked, nil
}
