package docengine

import (
	"bytes"
	"encoding/binary"
	"sort"
)

// The clause tree (and the id index) is a sorted map of byte keys to byte
// values stored as a tree of nodes. A node ends after an entry whose key is
// a boundary at the node's level (a hash of level and key alone), so the
// shape depends only on the key set: building step by step gives the same
// root as building at once, and changing a value rewrites only its path.
// Internal entries are keyed by their child's last key and carry the count
// of leaf entries below, for paging by position.

// fanout is the mean entries per node. Part of the format version.
const fanout = 24

// FormatVersion names the encoding and the chunking constants.
const FormatVersion = 1

type node struct {
	_      struct{} `cbor:",toarray"`
	Level  uint8
	Keys   [][]byte
	Vals   [][]byte
	Counts []uint64 // internal nodes only
}

type entry struct {
	key   []byte
	val   []byte
	count uint64
}

// Edit sets (or with Del removes) one key of a tree.
type Edit struct {
	Key   []byte
	Val   []byte
	Del   bool
	count uint64
}

func (n *node) entry(i int) entry {
	e := entry{key: n.Keys[i], val: n.Vals[i], count: 1}
	if n.Level > 0 {
		e.count = n.Counts[i]
	}
	return e
}

func (n *node) total() uint64 {
	if n.Level == 0 {
		return uint64(len(n.Keys))
	}
	var t uint64
	for _, c := range n.Counts {
		t += c
	}
	return t
}

// isBoundary: a splitmix64 finish of FNV-1a over level and key.
func isBoundary(level uint8, key []byte) bool {
	h := uint64(14695981039346656037)
	h ^= uint64(level)
	h *= 1099511628211
	for _, b := range key {
		h ^= uint64(b)
		h *= 1099511628211
	}
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h%fanout == 0
}

func (s *Stage) node(h Hash) (*node, error) {
	if n, ok := s.nodes[h]; ok {
		return n, nil
	}
	b, err := s.get(h)
	if err != nil {
		return nil, err
	}
	n := &node{}
	if err := decode(b, n); err != nil {
		return nil, err
	}
	s.nodes[h] = n
	return n, nil
}

func (s *Stage) putNode(level uint8, es []entry) (entry, error) {
	n := &node{Level: level, Keys: make([][]byte, len(es)), Vals: make([][]byte, len(es))}
	if level > 0 {
		n.Counts = make([]uint64, len(es))
	}
	for i, e := range es {
		n.Keys[i], n.Vals[i] = e.key, e.val
		if level > 0 {
			n.Counts[i] = e.count
		}
	}
	h, err := s.put(n)
	if err != nil {
		return entry{}, err
	}
	s.nodes[h] = n
	return entry{key: es[len(es)-1].key, val: append([]byte(nil), h[:]...), count: n.total()}, nil
}

// chunker groups a level's entries into nodes at key boundaries.
type chunker struct {
	s       *Stage
	level   uint8
	pending []entry
	out     []entry // one entry per finished node, for the level above
}

func (c *chunker) add(e entry) error {
	c.pending = append(c.pending, e)
	if isBoundary(c.level, e.key) {
		return c.flush()
	}
	return nil
}

func (c *chunker) flush() error {
	if len(c.pending) == 0 {
		return nil
	}
	e, err := c.s.putNode(c.level, c.pending)
	c.pending = nil
	c.out = append(c.out, e)
	return err
}

// build makes the tree of a level's full entry list; an empty list is the
// empty tree. A root with one entry above the leaves is its child, so the
// root is the first level made of one node, as when building at once.
func (s *Stage) build(level uint8, es []entry) (Hash, error) {
	for {
		if len(es) == 0 {
			return Zero, nil
		}
		c := chunker{s: s, level: level}
		for _, e := range es {
			if err := c.add(e); err != nil {
				return Zero, err
			}
		}
		if err := c.flush(); err != nil {
			return Zero, err
		}
		if len(c.out) == 1 {
			return s.collapse(Hash(c.out[0].val))
		}
		es = c.out
		level++
	}
}

func (s *Stage) collapse(h Hash) (Hash, error) {
	for {
		n, err := s.node(h)
		if err != nil {
			return Zero, err
		}
		if n.Level == 0 || len(n.Keys) != 1 {
			return h, nil
		}
		h = Hash(n.Vals[0])
	}
}

// mergeEntries applies sorted edits to sorted entries.
func mergeEntries(es []entry, edits []Edit) []entry {
	out := make([]entry, 0, len(es)+len(edits))
	i := 0
	for _, ed := range edits {
		for i < len(es) && bytes.Compare(es[i].key, ed.Key) < 0 {
			out = append(out, es[i])
			i++
		}
		if i < len(es) && bytes.Equal(es[i].key, ed.Key) {
			i++
		}
		if !ed.Del {
			c := ed.count
			if c == 0 {
				c = 1
			}
			out = append(out, entry{key: ed.Key, val: ed.Val, count: c})
		}
	}
	return append(out, es[i:]...)
}

func sortEdits(edits []Edit) []Edit {
	sort.SliceStable(edits, func(i, j int) bool { return bytes.Compare(edits[i].Key, edits[j].Key) < 0 })
	out := edits[:0:0]
	for i, e := range edits {
		if i+1 < len(edits) && bytes.Equal(edits[i+1].Key, e.Key) {
			continue // the last edit of a key wins
		}
		out = append(out, e)
	}
	return out
}

// Apply returns the root of the tree after the edits.
func (s *Stage) Apply(root Hash, edits []Edit) (Hash, error) {
	if len(edits) == 0 {
		return root, nil
	}
	edits = sortEdits(append([]Edit(nil), edits...))
	if root.IsZero() {
		return s.build(0, mergeEntries(nil, edits))
	}
	rn, err := s.node(root)
	if err != nil {
		return Zero, err
	}
	for level := uint8(0); ; level++ {
		if level == rn.Level {
			es := make([]entry, len(rn.Keys))
			for i := range es {
				es[i] = rn.entry(i)
			}
			return s.build(level, mergeEntries(es, edits))
		}
		if edits, err = s.applyLevel(root, level, edits); err != nil {
			return Zero, err
		}
		if len(edits) == 0 {
			return root, nil
		}
	}
}

// applyLevel re-chunks the nodes of one level below the root that the
// edits touch, continuing into the next node while the last new node is
// open, and returns the edits of the level above.
func (s *Stage) applyLevel(root Hash, level uint8, edits []Edit) ([]Edit, error) {
	up := map[string]Edit{}
	var order []string
	note := func(e Edit) {
		k := string(e.Key)
		if _, ok := up[k]; !ok {
			order = append(order, k)
		}
		up[k] = e
	}
	i := 0
	for i < len(edits) {
		cur := &cursor{s: s, level: level}
		if err := cur.seek(root, edits[i].Key); err != nil {
			return nil, err
		}
		c := chunker{s: s, level: level + 0}
		for {
			nd := cur.here()
			last := nd.Keys[len(nd.Keys)-1]
			isLast := !cur.hasNext()
			j := i
			for j < len(edits) && (isLast || bytes.Compare(edits[j].Key, last) <= 0) {
				j++
			}
			es := make([]entry, len(nd.Keys))
			for k := range es {
				es[k] = nd.entry(k)
			}
			merged := mergeEntries(es, edits[i:j])
			i = j
			note(Edit{Key: last, Del: true})
			for _, e := range merged {
				if err := c.add(e); err != nil {
					return nil, err
				}
			}
			if len(c.pending) == 0 {
				break
			}
			ok, err := cur.next()
			if err != nil {
				return nil, err
			}
			if !ok {
				if err := c.flush(); err != nil {
					return nil, err
				}
				break
			}
		}
		for _, e := range c.out {
			note(Edit{Key: e.key, Val: e.val, count: e.count})
		}
	}
	out := make([]Edit, 0, len(order))
	for _, k := range order {
		out = append(out, up[k])
	}
	return sortEdits(out), nil
}

// cursor is a path from the root down to a node of one level.
type cursor struct {
	s     *Stage
	level uint8
	stack []frame // root first
}

type frame struct {
	n   *node
	idx int
}

func (c *cursor) here() *node { return c.stack[len(c.stack)-1].n }

// seek descends to the node of c.level that holds key (or would).
func (c *cursor) seek(root Hash, key []byte) error {
	n, err := c.s.node(root)
	if err != nil {
		return err
	}
	c.stack = c.stack[:0]
	for {
		if n.Level == c.level {
			c.stack = append(c.stack, frame{n: n})
			return nil
		}
		i := sort.Search(len(n.Keys), func(i int) bool { return bytes.Compare(n.Keys[i], key) >= 0 })
		if i == len(n.Keys) {
			i--
		}
		c.stack = append(c.stack, frame{n: n, idx: i})
		if n, err = c.s.node(Hash(n.Vals[i])); err != nil {
			return err
		}
	}
}

func (c *cursor) hasNext() bool {
	for d := len(c.stack) - 2; d >= 0; d-- {
		if c.stack[d].idx+1 < len(c.stack[d].n.Keys) {
			return true
		}
	}
	return false
}

// next moves to the following node of the level.
func (c *cursor) next() (bool, error) {
	d := len(c.stack) - 2
	for d >= 0 && c.stack[d].idx+1 >= len(c.stack[d].n.Keys) {
		d--
	}
	if d < 0 {
		return false, nil
	}
	c.stack[d].idx++
	c.stack = c.stack[:d+1]
	for {
		f := c.stack[len(c.stack)-1]
		n, err := c.s.node(Hash(f.n.Vals[f.idx]))
		if err != nil {
			return false, err
		}
		c.stack = append(c.stack, frame{n: n})
		if n.Level == c.level {
			return true, nil
		}
	}
}

// Get returns the value of key.
func (s *Stage) Get(root Hash, key []byte) ([]byte, bool, error) {
	if root.IsZero() {
		return nil, false, nil
	}
	c := &cursor{s: s}
	if err := c.seek(root, key); err != nil {
		return nil, false, err
	}
	n := c.here()
	i := sort.Search(len(n.Keys), func(i int) bool { return bytes.Compare(n.Keys[i], key) >= 0 })
	if i < len(n.Keys) && bytes.Equal(n.Keys[i], key) {
		return n.Vals[i], true, nil
	}
	return nil, false, nil
}

// Iter calls fn for each entry with key >= from in key order until fn
// returns false.
func (s *Stage) Iter(root Hash, from []byte, fn func(k, v []byte) (bool, error)) error {
	if root.IsZero() {
		return nil
	}
	c := &cursor{s: s}
	if err := c.seek(root, from); err != nil {
		return err
	}
	first := true
	for {
		n := c.here()
		i := 0
		if first {
			i = sort.Search(len(n.Keys), func(i int) bool { return bytes.Compare(n.Keys[i], from) >= 0 })
			first = false
		}
		for ; i < len(n.Keys); i++ {
			more, err := fn(n.Keys[i], n.Vals[i])
			if err != nil || !more {
				return err
			}
		}
		ok, err := c.next()
		if err != nil || !ok {
			return err
		}
	}
}

// Rank is the number of entries with key < key.
func (s *Stage) Rank(root Hash, key []byte) (uint64, error) {
	if root.IsZero() {
		return 0, nil
	}
	var r uint64
	h := root
	for {
		n, err := s.node(h)
		if err != nil {
			return 0, err
		}
		i := sort.Search(len(n.Keys), func(i int) bool { return bytes.Compare(n.Keys[i], key) >= 0 })
		if n.Level == 0 {
			return r + uint64(i), nil
		}
		if i == len(n.Keys) {
			return r + n.total(), nil
		}
		for k := 0; k < i; k++ {
			r += n.Counts[k]
		}
		h = Hash(n.Vals[i])
	}
}

// Count is the number of entries.
func (s *Stage) Count(root Hash) (uint64, error) {
	if root.IsZero() {
		return 0, nil
	}
	n, err := s.node(root)
	if err != nil {
		return 0, err
	}
	return n.total(), nil
}

// IterAt calls fn for entries from position pos (0-based) on.
func (s *Stage) IterAt(root Hash, pos uint64, fn func(k, v []byte) (bool, error)) error {
	if root.IsZero() {
		return nil
	}
	h := root
	for {
		n, err := s.node(h)
		if err != nil {
			return err
		}
		if n.Level == 0 {
			if pos >= uint64(len(n.Keys)) {
				return nil
			}
			return s.Iter(root, n.Keys[pos], fn)
		}
		i := 0
		for i < len(n.Counts) && pos >= n.Counts[i] {
			pos -= n.Counts[i]
			i++
		}
		if i == len(n.Counts) {
			return nil
		}
		h = Hash(n.Vals[i])
	}
}

// TreeChange is one key that differs between two trees; a nil side is
// absent there.
type TreeChange struct {
	Key, A, B []byte
}

// Diff lists the keys whose values differ between trees a and b, in key
// order. Subtrees equal in both are skipped without reading them: runs of
// a level between entries equal on both sides cover the same key range.
func (s *Stage) Diff(a, b Hash, fn func(TreeChange) error) error {
	load := func(h Hash) ([]entry, int, error) {
		if h.IsZero() {
			return nil, -1, nil
		}
		n, err := s.node(h)
		if err != nil {
			return nil, 0, err
		}
		es := make([]entry, len(n.Keys))
		for i := range es {
			es[i] = n.entry(i)
		}
		return es, int(n.Level), nil
	}
	if a == b {
		return nil
	}
	ea, la, err := load(a)
	if err != nil {
		return err
	}
	eb, lb, err := load(b)
	if err != nil {
		return err
	}
	for la > lb && la > 0 {
		if ea, err = s.expand(ea); err != nil {
			return err
		}
		la--
	}
	for lb > la && lb > 0 {
		if eb, err = s.expand(eb); err != nil {
			return err
		}
		lb--
	}
	lvl := la
	if lb > lvl {
		lvl = lb
	}
	if lvl < 0 {
		return nil
	}
	return s.diffLists(ea, eb, lvl, fn)
}

func (s *Stage) expand(es []entry) ([]entry, error) {
	var out []entry
	for _, e := range es {
		n, err := s.node(Hash(e.val))
		if err != nil {
			return nil, err
		}
		for i := range n.Keys {
			out = append(out, n.entry(i))
		}
	}
	return out, nil
}

func (s *Stage) diffLists(ea, eb []entry, level int, fn func(TreeChange) error) error {
	if level == 0 {
		i, j := 0, 0
		for i < len(ea) || j < len(eb) {
			switch {
			case j >= len(eb) || (i < len(ea) && bytes.Compare(ea[i].key, eb[j].key) < 0):
				if err := fn(TreeChange{Key: ea[i].key, A: ea[i].val}); err != nil {
					return err
				}
				i++
			case i >= len(ea) || bytes.Compare(ea[i].key, eb[j].key) > 0:
				if err := fn(TreeChange{Key: eb[j].key, B: eb[j].val}); err != nil {
					return err
				}
				j++
			default:
				if !bytes.Equal(ea[i].val, eb[j].val) {
					if err := fn(TreeChange{Key: ea[i].key, A: ea[i].val, B: eb[j].val}); err != nil {
						return err
					}
				}
				i++
				j++
			}
		}
		return nil
	}
	var ra, rb []entry
	flush := func() error {
		if len(ra) == 0 && len(rb) == 0 {
			return nil
		}
		xa, err := s.expand(ra)
		if err != nil {
			return err
		}
		xb, err := s.expand(rb)
		if err != nil {
			return err
		}
		ra, rb = nil, nil
		return s.diffLists(xa, xb, level-1, fn)
	}
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		if i < len(ea) && j < len(eb) && bytes.Equal(ea[i].key, eb[j].key) && bytes.Equal(ea[i].val, eb[j].val) {
			if err := flush(); err != nil {
				return err
			}
			i++
			j++
			continue
		}
		if j >= len(eb) || (i < len(ea) && bytes.Compare(ea[i].key, eb[j].key) <= 0) {
			ra = append(ra, ea[i])
			i++
		} else {
			rb = append(rb, eb[j])
			j++
		}
	}
	return flush()
}

func u64(b []byte, v uint64) []byte { return binary.BigEndian.AppendUint64(b, v) }
