package db

// The OData $filter compiler: the only dynamic SQL in the project. A filter
// string becomes a parameterised SQL condition over a whitelist of fields.
// Caller text never reaches the SQL: the output holds only the whitelisted
// column expressions, fixed operator text and ? placeholders. The grammar,
// limits and semantics are documented in docs/lists.md.

import (
	"database/sql/driver"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"
)

// Limits on a filter, so one request cannot make an expensive query.
const (
	MaxFilterLength = 4096 // bytes
	MaxFilterDepth  = 32   // nested parentheses and nots
	MaxFilterTerms  = 100  // comparisons and function calls
)

// FieldKind is how a filterable field's values are typed and stored.
type FieldKind int

const (
	FieldString FieldKind = iota // TEXT; compared with string literals
	FieldNumber                  // INTEGER or REAL; compared with number literals
	FieldBool                    // BOOLEAN stored as 0/1; compared with true/false
	FieldTime                    // TEXT in TimeLayout; compared with date-time literals
	FieldID                      // snowflake INTEGER; literal a number or a quoted decimal
	FieldEnum                    // TEXT restricted to FilterField.Values
)

// FilterField maps one OData field name to a column.
type FilterField struct {
	// Column is SQL text of ours (a column, "p.status"), never the caller's.
	Column string
	Kind   FieldKind
	// Values lists the allowed literals of a FieldEnum.
	Values []string
	// CaseInsensitive compares FieldString values after Unicode lower-casing.
	CaseInsensitive bool
}

// FilterFields is the whitelist of one list endpoint: OData name -> field.
type FilterFields map[string]FilterField

// FilterError is a filter the caller must fix (a 400). Field names the
// filter field at fault, or is "" when the problem is the syntax.
type FilterError struct {
	Field   string
	Message string
}

func (e *FilterError) Error() string {
	if e.Field == "" {
		return e.Message
	}
	return e.Field + " " + e.Message
}

// CaseFoldFunc is the SQL function, registered with the driver, that
// lower-cases text the way strings.ToLower does. SQLite's own lower() and
// LIKE fold ASCII only, so "Ärger" would not match "ärger".
const CaseFoldFunc = "casefold"

func init() {
	sqlite.MustRegisterDeterministicScalarFunction(CaseFoldFunc, 1, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		switch v := args[0].(type) {
		case string:
			return strings.ToLower(v), nil
		case []byte:
			return strings.ToLower(string(v)), nil
		default: // NULL and numbers pass through
			return v, nil
		}
	})
}

// CompileFilter compiles an OData $filter expression into a SQL condition
// and its arguments. A blank expression gives "" and no arguments. The
// condition may contain OR at its top level: wrap it in parentheses when
// joining it to other conditions. Errors are *FilterError.
func CompileFilter(expr string, fields FilterFields) (where string, args []any, err error) {
	if len(expr) > MaxFilterLength {
		return "", nil, &FilterError{Message: fmt.Sprintf("is longer than %d bytes", MaxFilterLength)}
	}
	if !utf8.ValidString(expr) {
		return "", nil, &FilterError{Message: "is not valid UTF-8"}
	}
	if strings.TrimSpace(expr) == "" {
		return "", nil, nil
	}
	toks, err := lex(expr)
	if err != nil {
		return "", nil, err
	}
	p := &parser{src: expr, toks: toks, fields: fields}
	n, err := p.or(0)
	if err != nil {
		return "", nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return "", nil, p.syntax(t, "unexpected %s", t.describe())
	}
	return n.sql, p.args, nil
}

// ---- tokens

type tokKind int

const (
	tEOF tokKind = iota
	tIdent
	tString
	tNumber
	tDateTime
	tLParen
	tRParen
	tComma
)

type token struct {
	kind tokKind
	text string // identifier, literal text, or a string's unescaped value
	pos  int    // byte offset in the expression
}

func (t token) describe() string {
	switch t.kind {
	case tEOF:
		return "end of filter"
	case tString:
		return "string"
	case tLParen:
		return "'('"
	case tRParen:
		return "')'"
	case tComma:
		return "','"
	}
	return fmt.Sprintf("%q", clip(t.text))
}

var (
	numberRE   = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	dateRE     = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}$`)
	dateTimeRE = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}(:[0-9]{2}(\.[0-9]+)?)?(Z|[+-][0-9]{2}:[0-9]{2})$`)
)

func lex(s string) ([]token, error) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\r' || c == '\n':
			i++
		case c == '(':
			toks = append(toks, token{tLParen, "(", i})
			i++
		case c == ')':
			toks = append(toks, token{tRParen, ")", i})
			i++
		case c == ',':
			toks = append(toks, token{tComma, ",", i})
			i++
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for {
				if j >= len(s) {
					return nil, &FilterError{Message: fmt.Sprintf("has an unterminated string starting at position %d", position(s, i))}
				}
				if s[j] == '\'' {
					if j+1 < len(s) && s[j+1] == '\'' { // '' is an escaped quote
						b.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				b.WriteByte(s[j])
				j++
			}
			toks = append(toks, token{tString, b.String(), i})
			i = j + 1
		case isIdentStart(c):
			j := i + 1
			for j < len(s) && isIdentPart(s[j]) {
				j++
			}
			toks = append(toks, token{tIdent, s[i:j], i})
			i = j
		case isDigit(c) || (c == '-' && i+1 < len(s) && isDigit(s[i+1])):
			// A literal runs over everything a number or a date-time holds.
			j := i + 1
			for j < len(s) && (isIdentPart(s[j]) || strings.IndexByte(".:+-", s[j]) >= 0) {
				j++
			}
			lit := s[i:j]
			switch {
			case numberRE.MatchString(lit):
				toks = append(toks, token{tNumber, lit, i})
			case dateRE.MatchString(lit) || dateTimeRE.MatchString(lit):
				toks = append(toks, token{tDateTime, lit, i})
			default:
				return nil, &FilterError{Message: fmt.Sprintf("has an invalid literal %q at position %d", clip(lit), position(s, i))}
			}
			i = j
		default:
			r, _ := utf8.DecodeRuneInString(s[i:])
			return nil, &FilterError{Message: fmt.Sprintf("has an unexpected character %q at position %d", r, position(s, i))}
		}
	}
	return append(toks, token{tEOF, "", len(s)}), nil
}

func isDigit(c byte) bool      { return c >= '0' && c <= '9' }
func isIdentStart(c byte) bool { return c == '_' || (c|0x20 >= 'a' && c|0x20 <= 'z') }
func isIdentPart(c byte) bool  { return isIdentStart(c) || isDigit(c) }

// position is the 1-based character position of byte offset off.
func position(s string, off int) int { return utf8.RuneCountInString(s[:off]) + 1 }

// clip shortens caller text quoted back in a message.
func clip(s string) string {
	if len(s) <= 40 {
		return s
	}
	r := []rune(s)
	if len(r) <= 40 {
		return s
	}
	return string(r[:40]) + "..."
}

// ---- parser and code generation in one pass

// Precedence of a compiled fragment, to parenthesise only where needed.
const (
	precOr = iota + 1
	precAnd
	precAtom
)

type node struct {
	sql  string
	prec int
}

type parser struct {
	src    string
	toks   []token
	i      int
	fields FilterFields
	args   []any
	terms  int
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token { t := p.toks[p.i]; p.i++; return t }

func (p *parser) keyword(word string) bool {
	if t := p.peek(); t.kind == tIdent && t.text == word {
		p.i++
		return true
	}
	return false
}

func (p *parser) syntax(t token, format string, a ...any) error {
	return &FilterError{Message: fmt.Sprintf("has "+format+" at position %d", append(a, position(p.src, t.pos))...)}
}

// or = and { "or" and }
func (p *parser) or(depth int) (node, error) {
	n, err := p.and(depth)
	if err != nil {
		return n, err
	}
	for p.keyword("or") {
		r, err := p.and(depth)
		if err != nil {
			return r, err
		}
		n = node{n.sql + " OR " + r.sql, precOr}
	}
	return n, nil
}

// and = unary { "and" unary }
func (p *parser) and(depth int) (node, error) {
	n, err := p.unary(depth)
	if err != nil {
		return n, err
	}
	for p.keyword("and") {
		r, err := p.unary(depth)
		if err != nil {
			return r, err
		}
		n = node{paren(n, precAnd) + " AND " + paren(r, precAnd), precAnd}
	}
	return n, nil
}

func paren(n node, min int) string {
	if n.prec < min {
		return "(" + n.sql + ")"
	}
	return n.sql
}

// unary = "not" unary | "(" or ")" | predicate
func (p *parser) unary(depth int) (node, error) {
	t := p.peek()
	if depth > MaxFilterDepth {
		return node{}, &FilterError{Message: fmt.Sprintf("nests deeper than %d levels", MaxFilterDepth)}
	}
	if p.keyword("not") {
		n, err := p.unary(depth + 1)
		if err != nil {
			return n, err
		}
		// A condition on a null field is NULL in SQL but false in OData;
		// ifnull keeps "not" true for it, as OData says.
		return node{"NOT ifnull(" + n.sql + ", 0)", precAtom}, nil
	}
	if t.kind == tLParen {
		p.i++
		n, err := p.or(depth + 1)
		if err != nil {
			return n, err
		}
		if c := p.next(); c.kind != tRParen {
			return n, p.syntax(c, "%s where ')' was expected", c.describe())
		}
		return n, nil
	}
	if t.kind != tIdent || reserved[t.text] {
		return node{}, p.syntax(t, "%s where a field, a function or '(' was expected", t.describe())
	}
	p.terms++
	if p.terms > MaxFilterTerms {
		return node{}, &FilterError{Message: fmt.Sprintf("has more than %d conditions", MaxFilterTerms)}
	}
	if p.toks[p.i+1].kind == tLParen {
		return p.function()
	}
	return p.comparison()
}

// reserved words cannot start a condition, so "a eq 1 or or" is a syntax
// error rather than an unknown field "or".
var reserved = map[string]bool{"and": true, "or": true, "not": true, "eq": true, "ne": true, "gt": true,
	"ge": true, "lt": true, "le": true, "null": true, "true": true, "false": true}

var sqlOps = map[string]string{"eq": "=", "ne": "IS NOT", "gt": ">", "ge": ">=", "lt": "<", "le": "<="}

// field reads a field name and looks it up in the whitelist.
func (p *parser) field() (string, FilterField, error) {
	t := p.next()
	if t.kind != tIdent {
		return "", FilterField{}, p.syntax(t, "%s where a field was expected", t.describe())
	}
	f, ok := p.fields[t.text]
	if !ok {
		names := make([]string, 0, len(p.fields))
		for k := range p.fields {
			names = append(names, k)
		}
		slices.Sort(names)
		msg := "is not a filterable field"
		if len(names) > 0 {
			msg += " (filterable: " + strings.Join(names, ", ") + ")"
		}
		return "", f, &FilterError{Field: clip(t.text), Message: msg}
	}
	return t.text, f, nil
}

// comparison = field op literal | bool-field
func (p *parser) comparison() (node, error) {
	name, f, err := p.field()
	if err != nil {
		return node{}, err
	}
	opTok := p.peek()
	op, isOp := sqlOps[opTok.text]
	if opTok.kind != tIdent || !isOp {
		if f.Kind == FieldBool { // a bare boolean field is a condition
			return node{f.Column + " = 1", precAtom}, nil
		}
		return node{}, p.syntax(opTok, "%s where eq, ne, gt, ge, lt or le was expected after %s", opTok.describe(), name)
	}
	p.i++
	lit := p.next()
	if lit.kind == tEOF || lit.kind == tRParen || lit.kind == tLParen || lit.kind == tComma {
		return node{}, p.syntax(lit, "%s where a value for %s was expected", lit.describe(), name)
	}
	if lit.kind == tIdent && lit.text == "null" {
		switch opTok.text {
		case "eq":
			return node{f.Column + " IS NULL", precAtom}, nil
		case "ne":
			return node{f.Column + " IS NOT NULL", precAtom}, nil
		}
		return node{}, &FilterError{Field: name, Message: "can be compared with null only by eq or ne"}
	}
	ordered := opTok.text != "eq" && opTok.text != "ne"
	col := f.Column
	var arg any
	switch f.Kind {
	case FieldString:
		if lit.kind != tString {
			return node{}, p.wantLiteral(name, lit, "a string in single quotes")
		}
		arg = lit.text
		if f.CaseInsensitive {
			col, arg = CaseFoldFunc+"("+col+")", strings.ToLower(lit.text)
		}
	case FieldEnum:
		if ordered {
			return node{}, &FilterError{Field: name, Message: "can be compared only by eq or ne"}
		}
		if lit.kind != tString || !slices.Contains(f.Values, lit.text) {
			return node{}, &FilterError{Field: name, Message: "must be compared with one of " + quoteAll(f.Values)}
		}
		arg = lit.text
	case FieldBool:
		if ordered {
			return node{}, &FilterError{Field: name, Message: "can be compared only by eq or ne"}
		}
		switch {
		case lit.kind == tIdent && lit.text == "true":
			arg = int64(1)
		case lit.kind == tIdent && lit.text == "false":
			arg = int64(0)
		default:
			return node{}, p.wantLiteral(name, lit, "true or false")
		}
	case FieldNumber:
		if lit.kind != tNumber {
			return node{}, p.wantLiteral(name, lit, "a number")
		}
		v, err := number(lit.text)
		if err != nil {
			return node{}, &FilterError{Field: name, Message: err.Error()}
		}
		arg = v
	case FieldID:
		s := lit.text
		if lit.kind != tNumber && lit.kind != tString {
			return node{}, p.wantLiteral(name, lit, "an id")
		}
		id, ok := ParseID(s)
		if !ok {
			return node{}, &FilterError{Field: name, Message: "must be compared with an id (a positive decimal snowflake)"}
		}
		arg = int64(id)
	case FieldTime:
		if lit.kind != tDateTime && lit.kind != tString {
			return node{}, p.wantLiteral(name, lit, "a date-time such as 2026-11-21T09:30:00Z")
		}
		v, err := dateTime(lit.text)
		if err != nil {
			return node{}, &FilterError{Field: name, Message: err.Error()}
		}
		arg = v
	default:
		return node{}, &FilterError{Field: name, Message: "cannot be filtered on"}
	}
	p.args = append(p.args, arg)
	return node{col + " " + op + " ?", precAtom}, nil
}

func (p *parser) wantLiteral(field string, lit token, want string) error {
	if lit.kind == tEOF || lit.kind == tRParen || lit.kind == tLParen || lit.kind == tComma {
		return p.syntax(lit, "%s where a value for %s was expected", lit.describe(), field)
	}
	return &FilterError{Field: field, Message: "must be compared with " + want}
}

func quoteAll(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = "'" + v + "'"
	}
	return strings.Join(q, ", ")
}

// function = name "(" field "," string ")" [ ("eq" | "ne") ("true" | "false") ]
func (p *parser) function() (node, error) {
	fn := p.next()
	if fn.text != "startswith" && fn.text != "endswith" && fn.text != "contains" {
		return node{}, p.syntax(fn, "an unknown function %q (supported: startswith, endswith, contains)", clip(fn.text))
	}
	p.i++ // (
	name, f, err := p.field()
	if err != nil {
		return node{}, err
	}
	if f.Kind != FieldString {
		return node{}, &FilterError{Field: name, Message: fn.text + " applies to text fields only"}
	}
	if c := p.next(); c.kind != tComma {
		return node{}, p.syntax(c, "%s where ',' was expected", c.describe())
	}
	lit := p.next()
	if lit.kind != tString {
		return node{}, p.wantLiteral(name, lit, "a string in single quotes")
	}
	if c := p.next(); c.kind != tRParen {
		return node{}, p.syntax(c, "%s where ')' was expected", c.describe())
	}
	var sql string
	var pat string
	if f.CaseInsensitive {
		// LIKE with every wildcard in the literal escaped; both sides folded.
		esc := likeEscaper.Replace(strings.ToLower(lit.text))
		pat = map[string]string{"startswith": esc + "%", "endswith": "%" + esc, "contains": "%" + esc + "%"}[fn.text]
		sql = CaseFoldFunc + "(" + f.Column + `) LIKE ? ESCAPE '\'`
	} else {
		// GLOB is case-sensitive; its wildcards are escaped as one-character classes.
		esc := globEscaper.Replace(lit.text)
		pat = map[string]string{"startswith": esc + "*", "endswith": "*" + esc, "contains": "*" + esc + "*"}[fn.text]
		sql = f.Column + " GLOB ?"
	}
	p.args = append(p.args, pat)
	n := node{sql, precAtom}
	// "startswith(name, 'a') eq true" is a common OData spelling.
	if opTok := p.peek(); opTok.kind == tIdent && (opTok.text == "eq" || opTok.text == "ne") {
		p.i++
		b := p.next()
		if b.kind != tIdent || (b.text != "true" && b.text != "false") {
			return node{}, p.syntax(b, "%s where true or false was expected after %s", b.describe(), fn.text)
		}
		if (opTok.text == "eq") != (b.text == "true") {
			n = node{"NOT ifnull(" + sql + ", 0)", precAtom}
		}
	}
	return n, nil
}

var (
	likeEscaper = strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	globEscaper = strings.NewReplacer(`*`, `[*]`, `?`, `[?]`, `[`, `[[]`)
)

// number reads a number literal as int64 when it is an integer, else float64.
func number(s string) (any, error) {
	if !strings.ContainsAny(s, ".eE") {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("must be compared with a number in range (%s is too large)", clip(s))
		}
		return v, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return nil, fmt.Errorf("must be compared with a number in range (%s is too large)", clip(s))
	}
	return v, nil
}

// dateTime normalises an OData date-time (or date: midnight UTC) to the
// stored layout, so TEXT comparison orders it correctly.
func dateTime(s string) (string, error) {
	bad := fmt.Errorf("must be compared with a date-time such as 2026-11-21T09:30:00Z (got %q)", clip(s))
	var t time.Time
	var err error
	switch {
	case dateRE.MatchString(s):
		t, err = time.Parse("2006-01-02", s)
	case dateTimeRE.MatchString(s):
		layout := time.RFC3339Nano
		if len(s) >= 17 && s[16] != ':' { // no seconds: 2026-11-21T09:30Z
			layout = "2006-01-02T15:04Z07:00"
		}
		t, err = time.Parse(layout, s)
	default:
		return "", bad
	}
	if err != nil {
		return "", bad
	}
	if t.Nanosecond()%int(time.Millisecond) != 0 {
		// Stored times have millisecond precision; rounding would change
		// the meaning of ge and lt, so finer literals are refused.
		return "", fmt.Errorf("must be compared with a date-time of at most millisecond precision (got %q)", clip(s))
	}
	u := t.UTC()
	if u.Year() < 0 || u.Year() > 9999 {
		return "", bad
	}
	return FormatTime(u), nil
}
