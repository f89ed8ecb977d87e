package docengine

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// swap is the same resolution seen from the other direction.
func swap(take Take) Take {
	switch take {
	case TakeOurs:
		return TakeTheirs
	case TakeTheirs:
		return TakeOurs
	}
	return take
}

// TestMergeResolutions: every conflict kind settled by ours, theirs, base
// or a value, in both directions (ours and theirs swapped, the take
// swapped with them): the results are equal and as checked.
func TestMergeResolutions(t *testing.T) {
	rows := []struct {
		name  string
		ours  []op
		their []op
		take  Take   // for every conflict of the plain merge
		value string // with TakeValue
		kinds []string
		// remain: the conflict kinds still there after resolving (the
		// resolution cannot apply); empty: it merges
		remain []string
		check  func(*Doc) error
		order  []int64
	}{
		{name: "cell: ours", ours: []op{setCell(101, c1, "o")}, their: []op{setCell(101, c1, "t")}, take: TakeOurs,
			kinds: []string{KindCell}, check: cells(map[[2]int64]string{{101, c1}: "o"})},
		{name: "cell: theirs", ours: []op{setCell(101, c1, "o")}, their: []op{setCell(101, c1, "t")}, take: TakeTheirs,
			kinds: []string{KindCell}, check: cells(map[[2]int64]string{{101, c1}: "t"})},
		{name: "cell: base", ours: []op{setCell(101, c1, "o"), setCell(103, c1, "kept")}, their: []op{setCell(101, c1, "t")}, take: TakeBase,
			kinds: []string{KindCell}, check: cells(map[[2]int64]string{{101, c1}: "a", {103, c1}: "kept"})},
		{name: "cell: a value", ours: []op{setCell(101, c1, "o")}, their: []op{setCell(101, c1, "t")}, take: TakeValue, value: "v",
			kinds: []string{KindCell}, check: cells(map[[2]int64]string{{101, c1}: "v"})},
		{name: "text: theirs", ours: []op{setText(101, "x\nsecond\nthird\n")}, their: []op{setText(101, "y\nsecond\nthird\n")}, take: TakeTheirs,
			kinds: []string{KindText}, check: text(101, "y\nsecond\nthird\n")},
		{name: "text: a value", ours: []op{setText(101, "x\n")}, their: []op{setText(101, "y\n")}, take: TakeValue, value: "both\n",
			kinds: []string{KindText}, check: text(101, "both\n")},
		{name: "delete vs modify: the delete", ours: []op{delClause(103)}, their: []op{setCell(103, c1, "x")}, take: TakeOurs,
			kinds: []string{KindDeleteModify}, order: []int64{101, 102, 104, 105, 201}},
		{name: "delete vs modify: the change", ours: []op{delClause(103)}, their: []op{setCell(103, c1, "x")}, take: TakeTheirs,
			kinds: []string{KindDeleteModify}, order: []int64{101, 102, 103, 104, 105, 201}, check: cells(map[[2]int64]string{{103, c1}: "x"})},
		{name: "delete vs modify: base", ours: []op{delClause(103)}, their: []op{setCell(103, c1, "x")}, take: TakeBase,
			kinds: []string{KindDeleteModify}, order: []int64{101, 102, 103, 104, 105, 201}, check: cells(map[[2]int64]string{{103, c1}: ""})},
		{name: "move vs move: theirs", ours: []op{move(101, Place{After: 104})}, their: []op{move(101, Place{Sheet: s2})}, take: TakeTheirs,
			kinds: []string{KindMoveMove}, order: []int64{102, 103, 104, 105, 201, 101}},
		{name: "move vs move: base", ours: []op{move(101, Place{After: 104})}, their: []op{move(101, Place{Sheet: s2})}, take: TakeBase,
			kinds: []string{KindMoveMove}, order: []int64{101, 102, 103, 104, 105, 201}},
		{name: "sheet renamed on both: ours", ours: []op{renameSheet(s1, "A")}, their: []op{renameSheet(s1, "B")}, take: TakeOurs,
			kinds: []string{KindAttribute}, check: sheetName(s1, "A")},
		{name: "sheet renamed vs deleted: keep it", ours: []op{renameSheet(s2, "A")}, their: []op{delSheet(s2)}, take: TakeOurs,
			kinds: []string{KindDeleteModify}, check: sheetName(s2, "A"), order: []int64{101, 102, 103, 104, 105}},
		{name: "column type on both: base", ours: []op{patchColumn(c1, func(c *Column) { c.Type = "number" })},
			their: []op{patchColumn(c1, func(c *Column) { c.Type = "date" })}, take: TakeBase, kinds: []string{KindAttribute},
			check: func(d *Doc) error {
				if c, _ := d.Column(c1); c.Type != "text" {
					return fmt.Errorf("column type %q", c.Type)
				}
				return nil
			}},
		{name: "sheet deleted vs clause edited: drop the clause", ours: []op{delSheet(s2)}, their: []op{setText(201, "edited")}, take: TakeOurs,
			kinds: []string{KindContainerDeleted}, order: []int64{101, 102, 103, 104, 105}},
		{name: "sheet deleted vs clause edited: keeping it cannot apply", ours: []op{delSheet(s2)}, their: []op{setText(201, "edited")}, take: TakeTheirs,
			kinds: []string{KindContainerDeleted}, remain: []string{KindContainerDeleted}},
		{name: "sheet deleted vs clause added: drop it", ours: []op{delSheet(s2)}, their: []op{insert(304, Place{Sheet: s2}, "new")}, take: TakeOurs,
			kinds: []string{KindContainerDeleted}, order: []int64{101, 102, 103, 104, 105}},
		{name: "column deleted vs cell edited: drop the cell", ours: []op{delColumn(c1)}, their: []op{setCell(101, c1, "edit"), setCell(101, c2, "y")}, take: TakeOurs,
			kinds: []string{KindColumnDeleted}, check: cells(map[[2]int64]string{{101, c1}: "", {101, c2}: "y"})},
		{name: "column deleted vs cell edited: an empty value", ours: []op{delColumn(c1)}, their: []op{setCell(101, c1, "edit")}, take: TakeValue,
			kinds: []string{KindColumnDeleted}, check: cells(map[[2]int64]string{{101, c1}: ""})},
		{name: "column deleted vs cell edited: keeping it cannot apply", ours: []op{delColumn(c1)}, their: []op{setCell(101, c1, "edit")}, take: TakeTheirs,
			kinds: []string{KindColumnDeleted}, remain: []string{KindColumnDeleted}},
		{name: "column deleted vs new clause's cell: drop the cell", ours: []op{delColumn(c1)}, their: []op{insert(305, Place{}, "n"), setCell(305, c1, "v")}, take: TakeOurs,
			kinds: []string{KindColumnDeleted}, check: cells(map[[2]int64]string{{305, c1}: ""})},
		{name: "a name constraint is not settled by a take", ours: []op{addColumn(c3, "z")}, their: []op{addColumn(14, "z")}, take: TakeOurs,
			kinds: []string{KindConstraint}, remain: []string{KindConstraint}},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			st := NewStage(NewMemStore())
			base := fixture(t, st)
			o := change(t, st, base, r.ours...)
			th := change(t, st, base, r.their...)
			var results [2]Hash
			for i, pair := range [][2]Hash{{o, th}, {th, o}} {
				_, plain, err := st.Merge(base, pair[0], pair[1])
				must(t, err)
				var kinds []string
				res := map[string]Resolution{}
				take := r.take
				if i == 1 {
					take = swap(take)
				}
				for _, c := range plain {
					kinds = append(kinds, c.Kind)
					res[c.ID] = Resolution{Take: take, Value: r.value}
				}
				if strings.Join(kinds, ",") != strings.Join(r.kinds, ",") {
					t.Fatalf("direction %d: conflicts %v, want %v", i, kinds, r.kinds)
				}
				h, left, err := st.MergeWith(base, pair[0], pair[1], MergeOptions{Resolve: res})
				must(t, err)
				kinds = nil
				for _, c := range left {
					kinds = append(kinds, c.Kind)
				}
				if strings.Join(kinds, ",") != strings.Join(r.remain, ",") {
					t.Fatalf("direction %d: after resolving %v, want %v", i, kinds, r.remain)
				}
				results[i] = h
				if len(left) > 0 {
					continue
				}
				d, err := st.Open(h)
				must(t, err)
				if r.check != nil {
					must(t, r.check(d))
				}
				if r.order != nil {
					if got := order(t, st, h); fmt.Sprint(got) != fmt.Sprint(r.order) {
						t.Fatalf("direction %d: order %v, want %v", i, got, r.order)
					}
				}
			}
			if results[0] != results[1] {
				t.Errorf("resolved merge is not symmetric")
			}
		})
	}
}

func sheetName(id int64, want string) func(*Doc) error {
	return func(d *Doc) error {
		if sh, ok := d.Sheet(id); !ok || sh.Name != want {
			return fmt.Errorf("sheet %d = %+v, want the name %q", id, sh, want)
		}
		return nil
	}
}

// TestMergeResolutionErrors: a value for a conflict that takes none is a
// ResolutionError; a resolution for no conflict changes nothing.
func TestMergeResolutionErrors(t *testing.T) {
	st := NewStage(NewMemStore())
	base := fixture(t, st)
	o := change(t, st, base, delClause(103))
	th := change(t, st, base, setCell(103, c1, "x"))
	_, plain, err := st.Merge(base, o, th)
	must(t, err)
	_, _, err = st.MergeWith(base, o, th, MergeOptions{Resolve: map[string]Resolution{plain[0].ID: {Take: TakeValue, Value: "v"}}})
	var re *ResolutionError
	if !errors.As(err, &re) || re.ID != plain[0].ID {
		t.Fatalf("value for delete_modify: %v", err)
	}
	clean := change(t, st, base, setCell(104, c1, "q"))
	h, cs, err := st.MergeWith(base, o, clean, MergeOptions{Resolve: map[string]Resolution{"cell:1:1:1:cell": {Take: TakeOurs}}})
	want, _, _ := st.Merge(base, o, clean)
	if err != nil || len(cs) > 0 || h != want {
		t.Fatalf("an unused resolution: %v %v", cs, err)
	}
}

// TestMergeStrict: under the strict policy any change of one clause on
// both sides conflicts (kind clause), in both directions; changes of
// different clauses and equal changes still merge, and a resolution takes
// a side's whole clause.
func TestMergeStrict(t *testing.T) {
	rows := []struct {
		name   string
		ours   []op
		their  []op
		loose  []string // conflict kinds without the strict policy
		strict []string // and with it
	}{
		{name: "different cells of one clause", ours: []op{setCell(102, c1, "B")}, their: []op{setCell(102, c2, "C")}, strict: []string{KindClause}},
		{name: "text lines of one clause", ours: []op{setText(101, "T101\nsecond\nthird\n")}, their: []op{setText(101, "t101\nsecond\nTHIRD\n")},
			strict: []string{KindClause}},
		{name: "move vs edit", ours: []op{move(101, Place{After: 104})}, their: []op{setCell(101, c1, "moved")}, strict: []string{KindClause}},
		{name: "delete vs move", ours: []op{delClause(103)}, their: []op{move(103, Place{After: 105})}, strict: []string{KindClause}},
		{name: "one cell both ways", ours: []op{setCell(101, c1, "o")}, their: []op{setCell(101, c1, "t")}, loose: []string{KindCell}, strict: []string{KindClause}},
		{name: "different clauses", ours: []op{setCell(101, c1, "A")}, their: []op{setCell(103, c2, "Z")}},
		{name: "equal changes", ours: []op{setCell(101, c1, "z")}, their: []op{setCell(101, c1, "z")}},
		{name: "inserts next to each other", ours: []op{insert(301, Place{After: 101}, "o")}, their: []op{insert(302, Place{After: 101}, "t")}},
	}
	kindsOf := func(cs []Conflict) string {
		var k []string
		for _, c := range cs {
			k = append(k, c.Kind)
		}
		return strings.Join(k, ",")
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			st := NewStage(NewMemStore())
			base := fixture(t, st)
			o := change(t, st, base, r.ours...)
			th := change(t, st, base, r.their...)
			var results [2]Hash
			for i, pair := range [][2]Hash{{o, th}, {th, o}} {
				_, loose, err := st.Merge(base, pair[0], pair[1])
				must(t, err)
				if got := kindsOf(loose); got != strings.Join(r.loose, ",") {
					t.Fatalf("direction %d loose: %v, want %v", i, got, r.loose)
				}
				h, strict, err := st.MergeWith(base, pair[0], pair[1], MergeOptions{Strict: true})
				must(t, err)
				if got := kindsOf(strict); got != strings.Join(r.strict, ",") {
					t.Fatalf("direction %d strict: %v, want %v", i, got, r.strict)
				}
				if len(strict) == 0 {
					results[i] = h
					continue
				}
				// take the side first called theirs, whole
				take := TakeTheirs
				if i == 1 {
					take = TakeOurs
				}
				res := map[string]Resolution{}
				for _, c := range strict {
					res[c.ID] = Resolution{Take: take}
				}
				if results[i], strict, err = st.MergeWith(base, pair[0], pair[1], MergeOptions{Strict: true, Resolve: res}); err != nil || len(strict) > 0 {
					t.Fatalf("direction %d resolved: %v %v", i, strict, err)
				}
			}
			if results[0] != results[1] {
				t.Errorf("strict merge is not symmetric")
			}
			if len(r.strict) > 0 && results[0] != th {
				// every conflict taken from theirs, and theirs changed
				// nothing else: the result is theirs
				t.Errorf("taking theirs whole did not give theirs")
			}
		})
	}
}
