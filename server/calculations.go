package server

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"

	"workspace/server/docengine"
)

// Calculations (documents.md "Calculations and formatting"): a formula
// column computes from other columns of the same clause, named by column
// name (an identifier) or c<column id>; conditional_formatting yields a
// colour. Expressions are compiled once per (text, column names) and kept;
// they run on read with expr's memory budget and a node limit. A formula
// cycle is refused when saved (400) and after a merge (constraint).

const (
	maxFormulaNodes   = 256
	maxCompiledFormae = 4096
	calcError         = "#ERROR"
)

type compiled struct {
	prog *vm.Program
	refs []string
	err  error
}

var formulaCache = struct {
	sync.Mutex
	m map[string]compiled
}{m: map[string]compiled{}}

func isIdentifier(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (i > 0 && r >= '0' && r <= '9')) {
			return false
		}
	}
	return true
}

// envNames are the names a column answers to in expressions.
func envNames(c docengine.Column) []string {
	names := []string{"c" + strconv.FormatInt(c.ID, 10)}
	if isIdentifier(c.Name) {
		names = append(names, c.Name)
	}
	return names
}

// identVisitor collects the names an expression reads (function names
// called are expr's builtins, not columns).
type identVisitor struct {
	names   []string
	callees map[ast.Node]bool
}

func (v *identVisitor) Visit(n *ast.Node) {
	if x, ok := (*n).(*ast.CallNode); ok {
		v.callees[x.Callee] = true
	}
}

// colVisitor collects identifiers that are not called functions.
type colVisitor struct{ v *identVisitor }

func (c *colVisitor) Visit(n *ast.Node) {
	if id, ok := (*n).(*ast.IdentifierNode); ok && !c.v.callees[*n] {
		c.v.names = append(c.v.names, id.Value)
	}
}

// compileExpr compiles src against the column names (cached).
func compileExpr(src string, names []string) compiled {
	key := src + "\x00" + strings.Join(names, ",")
	formulaCache.Lock()
	c, ok := formulaCache.m[key]
	formulaCache.Unlock()
	if ok {
		return c
	}
	env := make(map[string]any, len(names))
	for _, n := range names {
		env[n] = nil
	}
	tree, err := parser.Parse(src)
	if err == nil {
		v := &identVisitor{callees: map[ast.Node]bool{}}
		ast.Walk(&tree.Node, v)
		v2 := &identVisitor{callees: v.callees}
		ast.Walk(&tree.Node, &colVisitor{v2})
		v.names = v2.names
		for _, n := range v.names {
			if _, ok := env[n]; !ok {
				err = fmt.Errorf("names no column %s", n)
				break
			}
		}
		c.refs = v.names
	}
	if err == nil {
		// no typed environment: cells are typed per value at run time
		c.prog, err = expr.Compile(src, expr.MaxNodes(maxFormulaNodes))
	}
	c.err = err
	formulaCache.Lock()
	if len(formulaCache.m) >= maxCompiledFormae {
		formulaCache.m = map[string]compiled{}
	}
	formulaCache.m[key] = c
	formulaCache.Unlock()
	return c
}

// calcPlan is how one revision's columns calculate.
type calcPlan struct {
	cols     []docengine.Column
	formulas []int // indexes of formula columns, in evaluation order
	progs    map[int64]*vm.Program
	refs     map[int64][]int // the columns (indexes) a formula reads
	colours  map[int64]*vm.Program
}

// calcError is a refusal of the plan: the field and column at fault.
type calcPlanError struct {
	field    string
	columnID int64
	msg      string
}

func (e *calcPlanError) Error() string { return e.field + " " + e.msg }

// planCalc compiles the columns' expressions and orders the formulas;
// an expression that does not compile or a cycle is an error.
func planCalc(cols []docengine.Column) (*calcPlan, error) {
	p := &calcPlan{cols: cols, progs: map[int64]*vm.Program{}, refs: map[int64][]int{}, colours: map[int64]*vm.Program{}}
	var names []string
	byName := map[string]int{}
	for i, c := range cols {
		for _, n := range envNames(c) {
			names = append(names, n)
			byName[n] = i
		}
	}
	sort.Strings(names)
	deps := map[int][]int{}
	for i, c := range cols {
		if c.Type == "formula" {
			if strings.TrimSpace(c.Formula) == "" {
				return nil, &calcPlanError{"formula", c.ID, "is required for a formula column"}
			}
			cc := compileExpr(c.Formula, names)
			if cc.err != nil {
				return nil, &calcPlanError{"formula", c.ID, "does not compile: " + cc.err.Error()}
			}
			p.progs[c.ID] = cc.prog
			for _, r := range cc.refs {
				p.refs[c.ID] = append(p.refs[c.ID], byName[r])
				if j := byName[r]; cols[j].Type == "formula" {
					deps[i] = append(deps[i], j)
				}
			}
		}
		if strings.TrimSpace(c.ConditionalFormatting) != "" {
			cc := compileExpr(c.ConditionalFormatting, names)
			if cc.err != nil {
				return nil, &calcPlanError{"conditional_formatting", c.ID, "does not compile: " + cc.err.Error()}
			}
			p.colours[c.ID] = cc.prog
		}
	}
	state := map[int]int{} // 1 visiting, 2 done
	var visit func(i int) error
	visit = func(i int) error {
		switch state[i] {
		case 1:
			return &calcPlanError{"formula", cols[i].ID, "makes a cycle of formulas (through " + cols[i].Name + ")"}
		case 2:
			return nil
		}
		state[i] = 1
		for _, j := range deps[i] {
			if err := visit(j); err != nil {
				return err
			}
		}
		state[i] = 2
		p.formulas = append(p.formulas, i)
		return nil
	}
	for i, c := range cols {
		if c.Type == "formula" {
			if err := visit(i); err != nil {
				return nil, err
			}
		}
	}
	return p, nil
}

// typed is a stored cell as an expression sees it. An empty cell is blank
// as a spreadsheet treats it: 0 in a number column, "" in a text column,
// false in a boolean one (so `Menge * Preis` with no Preis is 0, not an
// error); row() shows a formula whose inputs are all blank as blank.
func typed(c docengine.Column, v string) any {
	switch c.Type {
	case "number":
		if f, err := strconv.ParseFloat(v, 64); err == nil {
			return f
		}
		return 0.0
	case "boolean":
		return v == "true"
	}
	return v
}

func formatValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case int:
		return strconv.Itoa(x)
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	}
	return fmt.Sprint(v)
}

// row calculates one clause: formula values and background colours by
// column id. A formula whose inputs are all blank (empty cells, or formulas
// that are blank themselves) is blank and is not run; otherwise blank
// inputs are typed() blanks and a failing expression gives #ERROR. A
// blank formula is 0 in the formulas that read it (as an empty number
// cell). This is the one evaluation the grid (clauses endpoints) and every
// export use.
func (p *calcPlan) row(cells map[int64]string) (map[int64]string, map[int64]string) {
	if len(p.progs) == 0 && len(p.colours) == 0 {
		return nil, nil
	}
	env := make(map[string]any, len(p.cols)*2)
	for _, c := range p.cols {
		v := typed(c, cells[c.ID])
		for _, n := range envNames(c) {
			env[n] = v
		}
	}
	values := map[int64]string{}
	blank := func(j int) bool {
		c := p.cols[j]
		if c.Type == "formula" {
			return values[c.ID] == ""
		}
		return strings.TrimSpace(cells[c.ID]) == ""
	}
	for _, i := range p.formulas {
		c := p.cols[i]
		allBlank := len(p.refs[c.ID]) > 0
		for _, j := range p.refs[c.ID] {
			allBlank = allBlank && blank(j)
		}
		if allBlank {
			values[c.ID] = ""
			for _, n := range envNames(c) {
				env[n] = 0.0
			}
			continue
		}
		out, err := expr.Run(p.progs[c.ID], env)
		if err != nil {
			values[c.ID] = calcError
			out = nil
		} else {
			values[c.ID] = formatValue(out)
		}
		for _, n := range envNames(c) {
			env[n] = out
		}
	}
	colours := map[int64]string{}
	for id, prog := range p.colours {
		if out, err := expr.Run(prog, env); err == nil {
			if s, ok := out.(string); ok && colourRE.MatchString(s) {
				colours[id] = strings.ToUpper(s)
			}
		}
	}
	return values, colours
}

// Document data formats (spec: 0 String, 1 Decimal, 2 Scientific,
// 3 Engineering, 4 Time, 5 Unixtime), applied on output to number and
// formula cells that hold a number.
func formatData(format int64, v string) (string, bool) {
	if format == 0 {
		return "", false
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return "", false
	}
	switch format {
	case 1:
		return strconv.FormatFloat(f, 'f', 4, 64), true
	case 2, 3:
		exp := 0
		if f != 0 {
			exp = int(math.Floor(math.Log10(math.Abs(f))))
		}
		if format == 3 {
			exp = int(math.Floor(float64(exp)/3)) * 3
		}
		m := f / math.Pow10(exp)
		return strconv.FormatFloat(m, 'f', 4, 64) + "x10^" + strconv.Itoa(exp), true
	case 4:
		s := int64(math.Round(math.Abs(f)))
		sign := ""
		if f < 0 {
			sign = "-"
		}
		return fmt.Sprintf("%s%02d:%02d:%02d:%02d", sign, s/86400, s%86400/3600, s%3600/60, s%60), true
	case 5:
		ms := int64(f * 1000)
		if math.Abs(f) >= 1e11 { // already milliseconds
			ms = int64(f)
		}
		return time.UnixMilli(ms).UTC().Format(time.RFC3339), true
	}
	return "", false
}
