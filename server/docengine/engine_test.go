package docengine

import (
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
)

func TestKeyBetween(t *testing.T) {
	rows := []struct{ a, b string }{{"", ""}, {"a0", ""}, {"", "a0"}, {"a0", "a1"}, {"a0", "a0V"}, {"az", ""}, {"a0", "b00"}, {"Zz", "a0"}}
	for _, r := range rows {
		k, err := KeyBetween(r.a, r.b)
		if err != nil {
			t.Fatalf("KeyBetween(%q,%q): %v", r.a, r.b, err)
		}
		if (r.a != "" && k <= r.a) || (r.b != "" && k >= r.b) {
			t.Errorf("KeyBetween(%q,%q) = %q, not between", r.a, r.b, k)
		}
	}
	// appends stay short; repeated inserts in one gap stay ordered
	k := ""
	for i := 0; i < 10000; i++ {
		n, err := KeyBetween(k, "")
		if err != nil || n <= k {
			t.Fatalf("append %d: %q after %q (%v)", i, n, k, err)
		}
		k = n
	}
	if len(k) > 4 {
		t.Errorf("10,000 appends gave a %d-character key %q", len(k), k)
	}
	lo, hi := "a0", "a1"
	for i := 0; i < 200; i++ {
		m, err := KeyBetween(lo, hi)
		if err != nil || m <= lo || m >= hi {
			t.Fatalf("gap insert %d: %q between %q and %q (%v)", i, m, lo, hi, err)
		}
		if i%2 == 0 {
			lo = m
		} else {
			hi = m
		}
	}
}

func keyOf(i int) []byte { return []byte(fmt.Sprintf("k%08d", i)) }

// TestTreeIncrementalEqualsAtOnce: any order of single edits gives the
// root a single build of the final map gives (the property that lets two
// writers agree on hashes).
func TestTreeIncrementalEqualsAtOnce(t *testing.T) {
	for _, seed := range []int64{1, 2, 3, 4, 5} {
		rng := rand.New(rand.NewSource(seed))
		st := NewStage(NewMemStore())
		ref := map[string]string{}
		root := Zero
		for step := 0; step < 3000; step++ {
			k := keyOf(rng.Intn(1500))
			var ed Edit
			if rng.Intn(4) == 0 {
				ed = Edit{Key: k, Del: true}
				delete(ref, string(k))
			} else {
				v := fmt.Sprintf("v%d", rng.Int())
				ed = Edit{Key: k, Val: []byte(v)}
				ref[string(k)] = v
			}
			var err error
			if root, err = st.Apply(root, []Edit{ed}); err != nil {
				t.Fatal(err)
			}
			if step%500 == 0 || step == 2999 {
				var all []Edit
				for k, v := range ref {
					all = append(all, Edit{Key: []byte(k), Val: []byte(v)})
				}
				once, err := NewStage(NewMemStore()).Apply(Zero, all)
				if err != nil {
					t.Fatal(err)
				}
				if once != root {
					t.Fatalf("seed %d step %d: incremental root differs from build at once", seed, step)
				}
				n, _ := st.Count(root)
				if int(n) != len(ref) {
					t.Fatalf("count %d, want %d", n, len(ref))
				}
			}
		}
		// reads agree with the map
		keys := make([]string, 0, len(ref))
		for k := range ref {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		i := 0
		err := st.Iter(root, nil, func(k, v []byte) (bool, error) {
			if string(k) != keys[i] || string(v) != ref[keys[i]] {
				t.Fatalf("iter %d: %s=%s", i, k, v)
			}
			i++
			return true, nil
		})
		if err != nil || i != len(keys) {
			t.Fatalf("iterated %d of %d (%v)", i, len(keys), err)
		}
		for _, pos := range []int{0, 1, len(keys) / 2, len(keys) - 1} {
			var got string
			_ = st.IterAt(root, uint64(pos), func(k, _ []byte) (bool, error) { got = string(k); return false, nil })
			if got != keys[pos] {
				t.Errorf("IterAt(%d) = %s, want %s", pos, got, keys[pos])
			}
			r, _ := st.Rank(root, []byte(keys[pos]))
			if int(r) != pos {
				t.Errorf("Rank(%s) = %d, want %d", keys[pos], r, pos)
			}
		}
	}
}

func TestTreeDiff(t *testing.T) {
	st := NewStage(NewMemStore())
	var all []Edit
	for i := 0; i < 5000; i++ {
		all = append(all, Edit{Key: keyOf(i * 2), Val: []byte("x")})
	}
	a, _ := st.Apply(Zero, all)
	edits := []Edit{{Key: keyOf(10), Del: true}, {Key: keyOf(11), Val: []byte("new")}, {Key: keyOf(4000), Val: []byte("y")}}
	b, _ := st.Apply(a, edits)
	var got []string
	_ = st.Diff(a, b, func(c TreeChange) error {
		got = append(got, fmt.Sprintf("%s:%s>%s", c.Key, c.A, c.B))
		return nil
	})
	want := []string{"k00000010:x>", "k00000011:>new", "k00004000:x>y"}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("diff = %v, want %v", got, want)
	}
	// against the empty tree: everything
	n := 0
	_ = st.Diff(Zero, b, func(TreeChange) error { n++; return nil })
	if n != 5000 {
		t.Errorf("diff from empty: %d changes, want 5000", n)
	}
}

func TestMerge3Text(t *testing.T) {
	rows := []struct {
		name       string
		b, o, t    string
		want       string
		conflicted bool
	}{
		{"one side", "a\nb\n", "a\nB\n", "a\nb\n", "a\nB\n", false},
		{"both same", "a\nb\n", "a\nB\n", "a\nB\n", "a\nB\n", false},
		{"different lines", "a\nb\nc\nd\n", "A\nb\nc\nd\n", "a\nb\nc\nD\n", "A\nb\nc\nD\n", false},
		{"same line", "a\nb\nc\n", "a\nX\nc\n", "a\nY\nc\n", "", true},
		{"insert both ends", "m\n", "top\nm\n", "m\nbottom\n", "top\nm\nbottom\n", false},
		{"delete vs edit same line", "a\nb\nc\n", "a\nc\n", "a\nB\nc\n", "", true},
		{"no newline", "x", "y", "x", "y", false},
	}
	for _, r := range rows {
		for _, swap := range []bool{false, true} {
			o, th := r.o, r.t
			if swap {
				o, th = th, o
			}
			got, ok := Merge3Text(r.b, o, th)
			if ok == r.conflicted || (ok && got != r.want) {
				t.Errorf("%s (swap %v): got %q ok %v", r.name, swap, got, ok)
			}
		}
	}
}

// fixture: a document with sheets S1, S2, columns C1 (x), C2 (y) and
// clauses 101..105 in S1 ("t101"...), 201 in S2, cells on 101 and 102.
const (
	s1, s2     = 1, 2
	c1, c2, c3 = 11, 12, 13
)

func fixture(t testing.TB, st *Stage) Hash {
	d := st.New(Meta{Title: "Spec"}, s1, "Sheet 1")
	must(t, d.AddSheet(s2, "Sheet 2"))
	must(t, d.AddColumn(Column{ID: c1, Name: "x", Type: "text"}))
	must(t, d.AddColumn(Column{ID: c2, Name: "y", Type: "text"}))
	for i := int64(101); i <= 105; i++ {
		must(t, d.InsertClause(i, Place{Sheet: s1}, fmt.Sprintf("t%d\nsecond\nthird\n", i)))
	}
	must(t, d.InsertClause(201, Place{Sheet: s2}, "t201"))
	must(t, d.SetCell(101, c1, "a"))
	must(t, d.SetCell(102, c1, "b"))
	must(t, d.SetCell(102, c2, "c"))
	h, err := d.Save()
	must(t, err)
	return h
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

type op func(d *Doc) error

func change(t testing.TB, st *Stage, base Hash, ops ...op) Hash {
	t.Helper()
	d, err := st.Open(base)
	must(t, err)
	for _, o := range ops {
		must(t, o(d))
	}
	h, err := d.Save()
	must(t, err)
	return h
}

func setCell(cl, col int64, v string) op { return func(d *Doc) error { return d.SetCell(cl, col, v) } }
func setText(cl int64, s string) op {
	return func(d *Doc) error { return d.PatchClause(cl, nil, &s) }
}
func move(cl int64, pl Place) op { return func(d *Doc) error { return d.PatchClause(cl, &pl, nil) } }
func delClause(cl int64) op      { return func(d *Doc) error { return d.DeleteClause(cl) } }
func insert(cl int64, pl Place, s string) op {
	return func(d *Doc) error { return d.InsertClause(cl, pl, s) }
}
func delSheet(id int64) op { return func(d *Doc) error { return d.DeleteSheet(id) } }
func renameSheet(id int64, n string) op {
	return func(d *Doc) error { return d.PatchSheet(id, &n, nil) }
}
func delColumn(id int64) op { return func(d *Doc) error { return d.DeleteColumn(id) } }
func addColumn(id int64, n string) op {
	return func(d *Doc) error { return d.AddColumn(Column{ID: id, Name: n, Type: "text"}) }
}
func patchColumn(id int64, f func(*Column)) op {
	return func(d *Doc) error {
		c, _ := d.Column(id)
		f(&c)
		return d.PatchColumn(c)
	}
}

// order lists clause ids in document order.
func order(t testing.TB, st *Stage, h Hash) []int64 {
	d, err := st.Open(h)
	must(t, err)
	rows, _, err := d.Clauses(0, 0, 1<<30)
	must(t, err)
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r.ID)
	}
	return ids
}

// TestMergeScenarios runs every rule of documents.md in both directions:
// the result (or the conflict kinds) must be the same either way.
func TestMergeScenarios(t *testing.T) {
	rows := []struct {
		name  string
		ours  []op
		their []op
		kinds []string         // conflict kinds; empty: merges
		check func(*Doc) error // on the merged result
		order []int64          // expected document order, when set
	}{
		{name: "cells of different clauses", ours: []op{setCell(101, c1, "A")}, their: []op{setCell(103, c2, "Z")},
			check: cells(map[[2]int64]string{{101, c1}: "A", {103, c2}: "Z", {102, c1}: "b"})},
		{name: "cells of one clause, different columns", ours: []op{setCell(102, c1, "B")}, their: []op{setCell(102, c2, "C")},
			check: cells(map[[2]int64]string{{102, c1}: "B", {102, c2}: "C"})},
		{name: "same cell, same value", ours: []op{setCell(101, c1, "z")}, their: []op{setCell(101, c1, "z")},
			check: cells(map[[2]int64]string{{101, c1}: "z"})},
		{name: "same cell, different values", ours: []op{setCell(101, c1, "o")}, their: []op{setCell(101, c1, "t")}, kinds: []string{KindCell}},
		{name: "text lines merge", ours: []op{setText(101, "T101\nsecond\nthird\n")}, their: []op{setText(101, "t101\nsecond\nTHIRD\n")},
			check: text(101, "T101\nsecond\nTHIRD\n")},
		{name: "text same line", ours: []op{setText(101, "x\nsecond\nthird\n")}, their: []op{setText(101, "y\nsecond\nthird\n")}, kinds: []string{KindText}},
		{name: "text and cell", ours: []op{setText(102, "new")}, their: []op{setCell(102, c1, "q")},
			check: func(d *Doc) error {
				if err := text(102, "new")(d); err != nil {
					return err
				}
				return cells(map[[2]int64]string{{102, c1}: "q"})(d)
			}},
		{name: "delete vs modify", ours: []op{delClause(103)}, their: []op{setCell(103, c1, "x")}, kinds: []string{KindDeleteModify}},
		{name: "delete vs move: delete wins", ours: []op{delClause(103)}, their: []op{move(103, Place{After: 105})},
			order: []int64{101, 102, 104, 105, 201}},
		{name: "delete on both", ours: []op{delClause(103)}, their: []op{delClause(103)}, order: []int64{101, 102, 104, 105, 201}},
		{name: "move vs edit: both apply", ours: []op{move(101, Place{After: 104})}, their: []op{setCell(101, c1, "moved")},
			order: []int64{102, 103, 104, 101, 105, 201}, check: cells(map[[2]int64]string{{101, c1}: "moved"})},
		{name: "move vs move elsewhere", ours: []op{move(101, Place{After: 104})}, their: []op{move(101, Place{Sheet: s2})}, kinds: []string{KindMoveMove}},
		{name: "move vs move same place", ours: []op{move(101, Place{After: 104})}, their: []op{move(101, Place{After: 104})},
			order: []int64{102, 103, 104, 101, 105, 201}},
		{name: "inserts in different gaps", ours: []op{insert(301, Place{After: 101}, "o")}, their: []op{insert(302, Place{After: 104}, "t")},
			order: []int64{101, 301, 102, 103, 104, 302, 105, 201}},
		{name: "inserts into one gap stay contiguous runs", ours: []op{insert(301, Place{After: 101}, "o1"), insert(302, Place{After: 301}, "o2")},
			their: []op{insert(303, Place{After: 101}, "t1"), insert(304, Place{After: 303}, "t2")},
			order: []int64{101, 301, 302, 303, 304, 102, 103, 104, 105, 201}},
		{name: "the run with the smaller first id goes first", ours: []op{insert(310, Place{After: 101}, "o1"), insert(311, Place{After: 310}, "o2")},
			their: []op{insert(305, Place{Before: 102}, "t1")},
			order: []int64{101, 305, 310, 311, 102, 103, 104, 105, 201}},
		{name: "inserts at the end of a sheet on both sides", ours: []op{insert(320, Place{Sheet: s1}, "o")},
			their: []op{insert(321, Place{Sheet: s1}, "t"), insert(322, Place{Sheet: s1}, "t2")},
			order: []int64{101, 102, 103, 104, 105, 320, 321, 322, 201}},
		{name: "insert after a clause the other deleted", ours: []op{delClause(102)}, their: []op{insert(303, Place{After: 102}, "t")},
			order: []int64{101, 303, 103, 104, 105, 201}},
		{name: "sheet deleted vs clause edited in it", ours: []op{delSheet(s2)}, their: []op{setText(201, "edited")}, kinds: []string{KindContainerDeleted}},
		{name: "sheet deleted vs clause added in it", ours: []op{delSheet(s2)}, their: []op{insert(304, Place{Sheet: s2}, "new")}, kinds: []string{KindContainerDeleted}},
		{name: "sheet deleted vs untouched", ours: []op{delSheet(s2)}, their: []op{setCell(101, c1, "k")}, order: []int64{101, 102, 103, 104, 105}},
		{name: "column deleted vs cell edited", ours: []op{delColumn(c1)}, their: []op{setCell(101, c1, "edit")}, kinds: []string{KindColumnDeleted}},
		{name: "column deleted vs cell set on a new clause", ours: []op{delColumn(c1)}, their: []op{insert(305, Place{}, "n"), setCell(305, c1, "v")}, kinds: []string{KindColumnDeleted}},
		{name: "column deleted vs other column edited", ours: []op{delColumn(c1)}, their: []op{setCell(102, c2, "C2")},
			check: cells(map[[2]int64]string{{102, c1}: "", {102, c2}: "C2", {101, c1}: ""})},
		{name: "sheet renamed on both", ours: []op{renameSheet(s1, "A")}, their: []op{renameSheet(s1, "B")}, kinds: []string{KindAttribute}},
		{name: "sheet renamed vs deleted", ours: []op{renameSheet(s2, "A")}, their: []op{delSheet(s2)}, kinds: []string{KindDeleteModify}},
		{name: "column attributes on both sides", ours: []op{patchColumn(c1, func(c *Column) { c.Description = "d" })},
			their: []op{patchColumn(c1, func(c *Column) { c.DataFormat = 1 })},
			check: func(d *Doc) error {
				c, _ := d.Column(c1)
				if c.Description != "d" || c.DataFormat != 1 {
					return fmt.Errorf("column %+v", c)
				}
				return nil
			}},
		{name: "column type on both", ours: []op{patchColumn(c1, func(c *Column) { c.Type = "number" })},
			their: []op{patchColumn(c1, func(c *Column) { c.Type = "date" })}, kinds: []string{KindAttribute}},
		{name: "columns added with one name", ours: []op{addColumn(c3, "z")}, their: []op{addColumn(14, "z")}, kinds: []string{KindConstraint}},
		{name: "columns added", ours: []op{addColumn(c3, "z")}, their: []op{addColumn(14, "w")},
			check: func(d *Doc) error {
				if len(d.R.Columns) != 4 {
					return fmt.Errorf("%d columns", len(d.R.Columns))
				}
				return nil
			}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			st := NewStage(NewMemStore())
			base := fixture(t, st)
			o := change(t, st, base, r.ours...)
			th := change(t, st, base, r.their...)
			var results [2]Hash
			for i, pair := range [][2]Hash{{o, th}, {th, o}} {
				res, conflicts, err := st.Merge(base, pair[0], pair[1])
				must(t, err)
				var kinds []string
				for _, c := range conflicts {
					kinds = append(kinds, c.Kind)
				}
				if strings.Join(kinds, ",") != strings.Join(r.kinds, ",") {
					t.Fatalf("direction %d: conflicts %v, want %v", i, kinds, r.kinds)
				}
				results[i] = res
				if len(r.kinds) > 0 {
					continue
				}
				d, err := st.Open(res)
				must(t, err)
				if r.check != nil {
					must(t, r.check(d))
				}
				if r.order != nil {
					if got := order(t, st, res); fmt.Sprint(got) != fmt.Sprint(r.order) {
						t.Fatalf("direction %d: order %v, want %v", i, got, r.order)
					}
				}
			}
			if results[0] != results[1] {
				t.Errorf("merge is not symmetric")
			}
		})
	}
}

func cells(want map[[2]int64]string) func(*Doc) error {
	return func(d *Doc) error {
		for k, v := range want {
			_, c, err := d.ClauseAt(k[0])
			if err != nil {
				return err
			}
			if c.Cells[k[1]] != v {
				return fmt.Errorf("cell %v = %q, want %q", k, c.Cells[k[1]], v)
			}
		}
		return nil
	}
}

func text(id int64, want string) func(*Doc) error {
	return func(d *Doc) error {
		_, c, err := d.ClauseAt(id)
		if err != nil {
			return err
		}
		got, err := d.S.ClauseText(c)
		if err != nil {
			return err
		}
		if got != want {
			return fmt.Errorf("text %q, want %q", got, want)
		}
		return nil
	}
}

// TestMergeIdentities: merge(B, B, T) = T and merge(B, X, X) = X.
func TestMergeIdentities(t *testing.T) {
	st := NewStage(NewMemStore())
	base := fixture(t, st)
	x := change(t, st, base, setCell(101, c1, "q"), delClause(104))
	if h, c, _ := st.Merge(base, base, x); h != x || c != nil {
		t.Error("merge(B, B, T) != T")
	}
	if h, c, _ := st.Merge(base, x, base); h != x || c != nil {
		t.Error("merge(B, T, B) != T")
	}
	if h, c, _ := st.Merge(base, x, x); h != x || c != nil {
		t.Error("merge(B, X, X) != X")
	}
}

// model is the reference: plain maps of clause id to (text, cells).
type model struct {
	text  map[int64]string
	cells map[int64]map[int64]string
}

// TestMergeRandomAgainstModel: random cell and text edits of disjoint
// clauses on two branches, merged, equal the reference model; and equal
// content gives an equal hash however it was reached.
func TestMergeRandomAgainstModel(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		st := NewStage(NewMemStore())
		d := st.New(Meta{Title: "R"}, s1, "Sheet 1")
		must(t, d.AddColumn(Column{ID: c1, Name: "x"}))
		must(t, d.AddColumn(Column{ID: c2, Name: "y"}))
		m := model{text: map[int64]string{}, cells: map[int64]map[int64]string{}}
		for i := int64(1); i <= 300; i++ {
			must(t, d.InsertClause(i, Place{}, fmt.Sprint("c", i)))
			m.text[i] = fmt.Sprint("c", i)
			m.cells[i] = map[int64]string{}
		}
		base, err := d.Save()
		must(t, err)
		side := func(parity int64) Hash {
			d, err := st.Open(base)
			must(t, err)
			for k := 0; k < 15; k++ {
				id := rng.Int63n(150)*2 + 1 + parity // odd ids ours, even theirs
				if id > 300 {
					continue
				}
				if rng.Intn(2) == 0 {
					v := fmt.Sprint("v", rng.Intn(1000))
					col := int64(c1 + rng.Intn(2))
					must(t, d.SetCell(id, col, v))
					m.cells[id][col] = v
				} else {
					s := fmt.Sprint("text", rng.Intn(1000))
					must(t, d.PatchClause(id, nil, &s))
					m.text[id] = s
				}
			}
			h, err := d.Save()
			must(t, err)
			return h
		}
		o, th := side(0), side(1)
		res, conflicts, err := st.Merge(base, o, th)
		must(t, err)
		if len(conflicts) > 0 {
			t.Fatalf("seed %d: conflicts %v", seed, conflicts)
		}
		rd, err := st.Open(res)
		must(t, err)
		rows, total, err := rd.Clauses(0, 0, 1000)
		must(t, err)
		if total != 300 {
			t.Fatalf("total %d", total)
		}
		for i, r := range rows {
			if r.ID != int64(i+1) || r.Text != m.text[r.ID] || fmt.Sprint(r.Cells) != fmt.Sprint(nonEmpty(m.cells[r.ID])) {
				t.Fatalf("seed %d clause %d: %+v, model %q %v", seed, r.ID, r, m.text[r.ID], m.cells[r.ID])
			}
		}
		// the same content built at once from the model hashes the same
		b := st.New(Meta{Title: "R"}, s1, "Sheet 1")
		must(t, b.AddColumn(Column{ID: c1, Name: "x"}))
		must(t, b.AddColumn(Column{ID: c2, Name: "y"}))
		for i := int64(1); i <= 300; i++ {
			must(t, b.InsertClause(i, Place{}, m.text[i]))
			for col, v := range m.cells[i] {
				must(t, b.SetCell(i, col, v))
			}
		}
		h, err := b.Save()
		must(t, err)
		if h != res {
			t.Fatalf("seed %d: merged hash differs from the same content built directly", seed)
		}
	}
}

func nonEmpty(m map[int64]string) map[int64]string {
	out := map[int64]string{}
	for k, v := range m {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

func TestOperations(t *testing.T) {
	st := NewStage(NewMemStore())
	base := fixture(t, st)
	d, _ := st.Open(base)
	rows := []struct {
		name string
		op   op
		want error
	}{
		{"delete a missing clause", delClause(999), ErrNoClause},
		{"cell of a missing column", setCell(101, 999, "x"), ErrNoColumn},
		{"duplicate sheet name", func(d *Doc) error { return d.AddSheet(9, "Sheet 2") }, ErrSheetName},
		{"duplicate column name", addColumn(99, "x"), ErrColumnName},
		{"after a clause in another sheet", insert(400, Place{After: 201, Sheet: s1}, ""), ErrBadPosition},
		{"next to itself", move(101, Place{After: 101}), ErrSelfPosition},
		{"missing sheet", insert(400, Place{Sheet: 77}, ""), ErrNoSheet},
	}
	for _, r := range rows {
		if err := r.op(d); err != r.want {
			t.Errorf("%s: %v, want %v", r.name, err, r.want)
		}
	}
	// deleting the last sheet is refused
	d2, _ := st.Open(change(t, st, base, delSheet(s2)))
	if err := d2.DeleteSheet(s1); err != ErrLastSheet {
		t.Errorf("last sheet: %v", err)
	}
	// a change back to the original content gives the original hash
	h := change(t, st, base, setCell(101, c1, "zz"), setCell(101, c1, "a"))
	if h != base {
		t.Error("undoing a change gives a different hash")
	}
	// large text goes to a blob and reads back
	big := strings.Repeat("long line\n", 500)
	d3, _ := st.Open(change(t, st, base, setText(101, big)))
	if err := text(101, big)(d3); err != nil {
		t.Error(err)
	}
	// paging within a sheet
	rowsS1, total, _ := d3.Clauses(s1, 1, 2)
	if total != 5 || len(rowsS1) != 2 || rowsS1[0].ID != 102 || rowsS1[1].ID != 103 {
		t.Errorf("page of sheet 1: %d %+v", total, rowsS1)
	}
	// the diff names moves, cells and deletions
	h2 := change(t, st, base, move(101, Place{After: 103}), setCell(102, c2, "new"), delClause(105))
	ch, err := st.DiffRevisions(base, h2)
	must(t, err)
	var kinds []string
	for _, c := range ch {
		kinds = append(kinds, fmt.Sprintf("%s:%d", c.Kind, c.ClauseID))
	}
	if got := strings.Join(kinds, ","); got != "clause_moved:101,cell:102,clause_deleted:105" {
		t.Errorf("diff: %s", got)
	}
	// Flush stores only what the final root reaches
	ms := NewMemStore()
	s2 := NewStage(ms)
	f := fixture(t, s2)
	if _, err := s2.Flush(f); err != nil {
		t.Fatal(err)
	}
	s3 := NewStage(ms)
	d4, err := s3.Open(f)
	must(t, err)
	if r, n, err := d4.Clauses(0, 0, 100); err != nil || n != 6 || len(r) != 6 {
		t.Errorf("reopened from the store: %d %v", n, err)
	}
}

// TestAppendClausesEqualsInserts: a bulk append hashes as inserting the
// same clauses one by one.
func TestAppendClausesEqualsInserts(t *testing.T) {
	st := NewStage(NewMemStore())
	one := st.New(Meta{Title: "A"}, s1, "Sheet 1")
	bulk := st.New(Meta{Title: "A"}, s1, "Sheet 1")
	for _, d := range []*Doc{one, bulk} {
		must(t, d.AddColumn(Column{ID: c1, Name: "x"}))
		must(t, d.InsertClause(1, Place{}, "first"))
	}
	var items []NewClause
	for i := int64(2); i < 500; i++ {
		must(t, one.InsertClause(i, Place{}, fmt.Sprint("c", i)))
		must(t, one.SetCell(i, c1, fmt.Sprint(i)))
		items = append(items, NewClause{ID: i, Text: fmt.Sprint("c", i), Cells: map[int64]string{c1: fmt.Sprint(i)}})
	}
	must(t, bulk.AppendClauses(0, items))
	a, _ := one.Save()
	b, _ := bulk.Save()
	if a != b {
		t.Fatal("bulk append hashes differently from single inserts")
	}
	if err := bulk.AppendClauses(0, []NewClause{{ID: 900, Cells: map[int64]string{99: "x"}}}); err != ErrNoColumn {
		t.Errorf("unknown column: %v", err)
	}
}

// BenchmarkCellEdit: a one-cell edit of a 10,000-clause document, from a
// committed revision to the new revision's stored objects (bytes/op is
// the new storage, reported as new-bytes/op).
func BenchmarkCellEdit(b *testing.B) {
	ms := NewMemStore()
	st := NewStage(ms)
	d := st.New(Meta{Title: "Big"}, s1, "Sheet 1")
	must(b, d.AddColumn(Column{ID: c1, Name: "x"}))
	var items []NewClause
	for i := int64(1); i <= 10000; i++ {
		items = append(items, NewClause{ID: i, Text: fmt.Sprintf("Clause %d: the contractor shall provide the works described.", i),
			Cells: map[int64]string{c1: fmt.Sprint(i)}})
	}
	must(b, d.AppendClauses(0, items))
	root, err := d.Save()
	must(b, err)
	if _, err := st.Flush(root); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	written := 0
	for i := 0; i < b.N; i++ {
		s := NewStage(ms) // a cold stage each time, as each request has
		d, err := s.Open(root)
		if err != nil {
			b.Fatal(err)
		}
		if err := d.SetCell(int64(i%10000)+1, c1, fmt.Sprint("edit ", i)); err != nil {
			b.Fatal(err)
		}
		h, err := d.Save()
		if err != nil {
			b.Fatal(err)
		}
		n, err := s.Flush(h)
		if err != nil {
			b.Fatal(err)
		}
		written += n
		root = h
	}
	b.ReportMetric(float64(written)/float64(b.N), "new-bytes/op")
}

// BenchmarkMerge10x10: two branches with 10 cell edits each on 10,000
// clauses, merged.
func BenchmarkMerge10x10(b *testing.B) {
	ms := NewMemStore()
	st := NewStage(ms)
	d := st.New(Meta{Title: "Big"}, s1, "Sheet 1")
	must(b, d.AddColumn(Column{ID: c1, Name: "x"}))
	var items []NewClause
	for i := int64(1); i <= 10000; i++ {
		items = append(items, NewClause{ID: i, Text: fmt.Sprint("Clause ", i)})
	}
	must(b, d.AppendClauses(0, items))
	base, _ := d.Save()
	o := change(b, st, base, func(d *Doc) error {
		for k := int64(1); k <= 10; k++ {
			if err := d.SetCell(k*997, c1, "o"); err != nil {
				return err
			}
		}
		return nil
	})
	th := change(b, st, base, func(d *Doc) error {
		for k := int64(1); k <= 10; k++ {
			if err := d.SetCell(k*991, c1, "t"); err != nil {
				return err
			}
		}
		return nil
	})
	for _, h := range []Hash{base, o, th} {
		if _, err := st.Flush(h); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s := NewStage(ms)
		if _, c, err := s.Merge(base, o, th); err != nil || c != nil {
			b.Fatal(err, c)
		}
	}
}

// TestMergeRandomStructureAgainstModel: random inserts (runs after base
// clauses of the side's parity, in random places within the run), deletes
// (theirs, of even base clauses it does not insert after) and cell edits
// on two branches, merged both ways, equal a model over plain slices.
func TestMergeRandomStructureAgainstModel(t *testing.T) {
	const n = 60
	for seed := int64(1); seed <= 30; seed++ {
		rng := rand.New(rand.NewSource(seed))
		st := NewStage(NewMemStore())
		d := st.New(Meta{Title: "R"}, s1, "Sheet 1")
		must(t, d.AddColumn(Column{ID: c1, Name: "x"}))
		var items []NewClause
		for i := int64(1); i <= n; i++ {
			items = append(items, NewClause{ID: i, Text: fmt.Sprint("c", i)})
		}
		must(t, d.AppendClauses(0, items))
		base, err := d.Save()
		must(t, err)
		next := int64(1000)
		deleted := map[int64]bool{}
		cells := map[int64]string{}
		side := func(parity int64) (Hash, []int64) {
			d, err := st.Open(base)
			must(t, err)
			list := make([]int64, n) // the side's own order
			for i := range list {
				list[i] = int64(i + 1)
			}
			insertAt := func(pos int, id int64) {
				list = append(list[:pos], append([]int64{id}, list[pos:]...)...)
			}
			for k := 0; k < 25; k++ {
				switch rng.Intn(3) {
				case 0: // insert after a base clause of our parity, or after one of our new clauses
					var after int64
					if rng.Intn(2) == 0 || next == 1000 {
						after = int64(rng.Intn(n/2))*2 + 1 + parity
					} else {
						after = list[rng.Intn(len(list))]
						if after <= n && (after%2 == 1) != (parity == 0) {
							continue
						}
					}
					if deleted[after] {
						continue
					}
					next++
					must(t, d.InsertClause(next, Place{After: after}, fmt.Sprint("new", next)))
					for i, x := range list {
						if x == after {
							insertAt(i+1, next)
							break
						}
					}
				case 1: // theirs deletes an even base clause nobody inserts after
					if parity == 0 {
						continue
					}
					id := int64(rng.Intn(n/2))*2 + 2
					used := false
					for i, x := range list {
						if x == id && i+1 < len(list) && list[i+1] > n {
							used = true
						}
					}
					if used || deleted[id] {
						continue
					}
					deleted[id] = true
					delete(cells, id)
					must(t, d.DeleteClause(id))
					for i, x := range list {
						if x == id {
							list = append(list[:i], list[i+1:]...)
							break
						}
					}
				default: // a cell of a base clause of our parity
					id := int64(rng.Intn(n/2))*2 + 1 + parity
					if deleted[id] {
						continue
					}
					v := fmt.Sprint("v", rng.Intn(100))
					must(t, d.SetCell(id, c1, v))
					cells[id] = v
				}
			}
			h, err := d.Save()
			must(t, err)
			return h, list
		}
		o, ol := side(0)
		th, tl := side(1)
		// model: walk the base, each base clause followed by the run a
		// side inserted after it (the side owning its parity)
		runAfter := func(list []int64, b int64) []int64 {
			var run []int64
			for i, x := range list {
				if x == b {
					for _, y := range list[i+1:] {
						if y <= n {
							break
						}
						run = append(run, y)
					}
				}
			}
			return run
		}
		var want []int64
		want = append(want, runAfter(append([]int64{0}, ol...), 0)...)
		for b := int64(1); b <= n; b++ {
			if !deleted[b] {
				want = append(want, b)
			}
			if b%2 == 1 {
				want = append(want, runAfter(ol, b)...)
			} else if !deleted[b] {
				want = append(want, runAfter(tl, b)...)
			}
		}
		var results [2]Hash
		for i, pair := range [][2]Hash{{o, th}, {th, o}} {
			res, conflicts, err := st.Merge(base, pair[0], pair[1])
			must(t, err)
			if len(conflicts) > 0 {
				t.Fatalf("seed %d: conflicts %v", seed, conflicts)
			}
			results[i] = res
		}
		if results[0] != results[1] {
			t.Fatalf("seed %d: merge not symmetric", seed)
		}
		if got := order(t, st, results[0]); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("seed %d: order\n got %v\nwant %v", seed, got, want)
		}
		md, _ := st.Open(results[0])
		for id, v := range cells {
			_, c, err := md.ClauseAt(id)
			must(t, err)
			if c.Cells[c1] != v {
				t.Fatalf("seed %d: cell of %d = %q, want %q", seed, id, c.Cells[c1], v)
			}
		}
	}
}
