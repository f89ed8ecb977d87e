package docengine

import "fmt"

// Objects of the store and what each refers to, for sync (docs/sync.md,
// "Documents"): a node that lacks a revision's content fetches the objects
// it lacks from the root down, and stores them children first, so a node
// that holds an object holds everything reachable from it.

// ObjectKind says how an object's bytes name other objects.
type ObjectKind uint8

const (
	ObjRoot       ObjectKind = iota + 1 // a revision's content root
	ObjClauseNode                       // a node of the clause tree
	ObjIndexNode                        // a node of the id index
	ObjClause                           // a clause
	ObjText                             // a long clause text
)

// ObjectRef is one object, with the kind it is read as.
type ObjectRef struct {
	Kind ObjectKind
	Hash Hash
}

// Refs lists the objects an object of kind k refers to.
func Refs(k ObjectKind, data []byte) ([]ObjectRef, error) {
	switch k {
	case ObjRoot:
		r := &Root{}
		if err := decode(data, r); err != nil {
			return nil, err
		}
		if r.Version != FormatVersion {
			return nil, fmt.Errorf("docengine: unknown format version %d", r.Version)
		}
		var out []ObjectRef
		if !r.Clauses.IsZero() {
			out = append(out, ObjectRef{ObjClauseNode, r.Clauses})
		}
		if !r.Index.IsZero() {
			out = append(out, ObjectRef{ObjIndexNode, r.Index})
		}
		return out, nil
	case ObjClauseNode, ObjIndexNode:
		n := &node{}
		if err := decode(data, n); err != nil {
			return nil, err
		}
		var out []ObjectRef
		for _, v := range n.Vals {
			switch {
			case n.Level > 0 && len(v) == 32:
				out = append(out, ObjectRef{k, Hash(v)})
			case n.Level == 0 && k == ObjClauseNode && len(v) == 32:
				out = append(out, ObjectRef{ObjClause, Hash(v)})
			}
		}
		return out, nil
	case ObjClause:
		c := &Clause{}
		if err := decode(data, c); err != nil {
			return nil, err
		}
		if len(c.TextHash) == 32 {
			return []ObjectRef{{ObjText, Hash(c.TextHash)}}, nil
		}
		return nil, nil
	case ObjText:
		return nil, nil
	}
	return nil, fmt.Errorf("docengine: unknown object kind %d", k)
}

// Verify reports whether data is the object h names.
func Verify(h Hash, data []byte) bool { return hashOf(data) == h }
