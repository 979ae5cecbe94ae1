package graphir

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"strings"
)

// SymExpr is an integer expression over symbolic dimension names: a tensor
// dimension that is not a constant (ONNX's dim_param, MLIR's `?`), such as
// `batch`, `batch*seq` or `(h - 1) floordiv 2 + 1`. Expressions are sums of
// products of symbols and floor divisions by positive constants, with
// integer coefficients, kept in a canonical form: two expressions are
// equal exactly when their printed forms are (what shape unification
// compares). The algebra is MLIR's affine expressions (mlir/IR/AffineExpr)
// with symbols for dimensions and without mod/ceildiv; TVM's PrimExpr
// shapes play the same part in Relax.
//
// A SymExpr is immutable; the zero value is the constant 0. Arithmetic
// that overflows int64 coefficients panics with errOverflow, which Eval,
// ParseSymExpr and shape inference (OpDef.InferTypes, the verifier) report
// as an error.
type SymExpr struct {
	terms []symTerm // sorted by key; no zero coefficients; the constant term has key ""
}

// symTerm is coef · (product of factors).
type symTerm struct {
	coef    int64
	factors []symFactor // sorted by key; a repeated factor is a power
	key     string      // the factors' keys joined by '*'
}

// symFactor is a symbol, or floordiv(num, den) with den ≥ 2 and num not
// a multiple of den (canonical).
type symFactor struct {
	name string
	num  *SymExpr
	den  int64
	key  string
}

// SymConst returns the constant expression c.
func SymConst(c int64) *SymExpr {
	if c == 0 {
		return &SymExpr{}
	}
	return &SymExpr{terms: []symTerm{{coef: c}}}
}

// Sym returns the expression made of the symbol name. Names are
// identifiers: a letter or '_', then letters, digits and '_' (ValidSymbol).
func Sym(name string) *SymExpr {
	f := symFactor{name: name, key: name}
	return &SymExpr{terms: []symTerm{{coef: 1, factors: []symFactor{f}, key: name}}}
}

// ValidSymbol reports whether name can name a symbolic dimension.
func ValidSymbol(name string) bool {
	if name == "" || name == "floordiv" || !(isSymStart(name[0])) {
		return false
	}
	for i := 1; i < len(name); i++ {
		if !isSymStart(name[i]) && !(name[i] >= '0' && name[i] <= '9') {
			return false
		}
	}
	return true
}

func isSymStart(c byte) bool { return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// Const returns the value of a constant expression (ok false when it
// contains a symbol).
func (e *SymExpr) Const() (int64, bool) {
	switch {
	case len(e.terms) == 0:
		return 0, true
	case len(e.terms) == 1 && e.terms[0].key == "":
		return e.terms[0].coef, true
	}
	return 0, false
}

// Equal reports whether e and o are the same expression.
func (e *SymExpr) Equal(o *SymExpr) bool { return e.String() == o.String() }

// Symbols returns the names e uses, sorted, each once.
func (e *SymExpr) Symbols() []string { return SymbolsOf([]*SymExpr{e}) }

func (e *SymExpr) symbols(out *[]string) {
	for _, t := range e.terms {
		for _, f := range t.factors {
			if f.num != nil {
				f.num.symbols(out)
			} else {
				*out = append(*out, f.name)
			}
		}
	}
}

// SymbolsOf returns the symbols es use (nil entries skipped), sorted, each
// once.
func SymbolsOf(es []*SymExpr) []string {
	var out []string
	for _, e := range es {
		if e != nil {
			e.symbols(&out)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// FormatSymExprs prints es separated by ", " (a shape's dimensions, a
// shape value's elements).
func FormatSymExprs(es []*SymExpr) string {
	s := make([]string, len(es))
	for i, e := range es {
		s[i] = e.String()
	}
	return strings.Join(s, ", ")
}

// Add returns e + o.
func (e *SymExpr) Add(o *SymExpr) *SymExpr {
	out := make([]symTerm, 0, len(e.terms)+len(o.terms))
	i, j := 0, 0
	for i < len(e.terms) || j < len(o.terms) {
		switch {
		case j == len(o.terms) || i < len(e.terms) && e.terms[i].key < o.terms[j].key:
			out = append(out, e.terms[i])
			i++
		case i == len(e.terms) || o.terms[j].key < e.terms[i].key:
			out = append(out, o.terms[j])
			j++
		default:
			t := e.terms[i]
			t.coef = addChecked(t.coef, o.terms[j].coef)
			if t.coef != 0 {
				out = append(out, t)
			}
			i++
			j++
		}
	}
	return &SymExpr{terms: out}
}

// Scale returns c · e.
func (e *SymExpr) Scale(c int64) *SymExpr {
	if c == 0 {
		return &SymExpr{}
	}
	out := make([]symTerm, len(e.terms))
	for i, t := range e.terms {
		t.coef = mulChecked(t.coef, c)
		out[i] = t
	}
	return &SymExpr{terms: out}
}

// Sub returns e − o.
func (e *SymExpr) Sub(o *SymExpr) *SymExpr { return e.Add(o.Scale(-1)) }

// AddConst returns e + c.
func (e *SymExpr) AddConst(c int64) *SymExpr { return e.Add(SymConst(c)) }

// Mul returns e · o.
func (e *SymExpr) Mul(o *SymExpr) *SymExpr {
	sum := &SymExpr{}
	for _, a := range e.terms {
		for _, b := range o.terms {
			fs := append(slices.Clone(a.factors), b.factors...)
			slices.SortFunc(fs, func(x, y symFactor) int { return strings.Compare(x.key, y.key) })
			t := symTerm{coef: mulChecked(a.coef, b.coef), factors: fs, key: factorKey(fs)}
			sum = sum.Add(&SymExpr{terms: []symTerm{t}})
		}
	}
	return sum
}

func factorKey(fs []symFactor) string {
	keys := make([]string, len(fs))
	for i, f := range fs {
		keys[i] = f.key
	}
	return strings.Join(keys, "*")
}

// FloorDiv returns floor(e / d) for a constant d ≥ 1. Terms whose
// coefficients d divides move out of the division (floor((d·a + b)/d) =
// a + floor(b/d) for integers a, b), so divisions that are exact leave no
// floordiv behind. Errors: d < 1.
func (e *SymExpr) FloorDiv(d int64) (*SymExpr, error) {
	if d < 1 {
		return nil, fmt.Errorf("floordiv by %d: the divisor must be a positive constant", d)
	}
	if d == 1 {
		return e, nil
	}
	out, rest := &SymExpr{}, &SymExpr{}
	for _, t := range e.terms {
		q := t
		if t.coef%d == 0 {
			q.coef = t.coef / d
			out = out.Add(&SymExpr{terms: []symTerm{q}})
			continue
		}
		rest = rest.Add(&SymExpr{terms: []symTerm{t}})
	}
	if c, ok := rest.Const(); ok {
		return out.AddConst(floorDiv(c, d)), nil
	}
	f := symFactor{num: rest, den: d}
	f.key = "(" + rest.String() + ") floordiv " + strconv.FormatInt(d, 10)
	return out.Add(&SymExpr{terms: []symTerm{{coef: 1, factors: []symFactor{f}, key: f.key}}}), nil
}

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// DivExact returns e / d when d divides e for every value of its symbols
// (every coefficient is a multiple of d); ok false otherwise.
func (e *SymExpr) DivExact(d int64) (*SymExpr, bool) {
	if d == 0 {
		return nil, false
	}
	out := make([]symTerm, len(e.terms))
	for i, t := range e.terms {
		if t.coef%d != 0 {
			return nil, false
		}
		t.coef /= d
		out[i] = t
	}
	return &SymExpr{terms: out}, true
}

// Eval returns e's value with each symbol bound by bind. Errors: a symbol
// bind lacks, an int64 overflow.
func (e *SymExpr) Eval(bind map[string]int64) (v int64, err error) {
	defer CatchOverflow(&err, e.String)
	return e.eval(bind)
}

func (e *SymExpr) eval(bind map[string]int64) (int64, error) {
	var sum int64
	for _, t := range e.terms {
		p := t.coef
		for _, f := range t.factors {
			var x int64
			if f.num != nil {
				n, err := f.num.eval(bind)
				if err != nil {
					return 0, err
				}
				x = floorDiv(n, f.den)
			} else {
				var ok bool
				if x, ok = bind[f.name]; !ok {
					return 0, fmt.Errorf("symbolic dimension '%s' has no value", f.name)
				}
			}
			p = mulChecked(p, x)
		}
		sum = addChecked(sum, p)
	}
	return sum, nil
}

// Subst returns e with each symbol bind names replaced by its expression.
func (e *SymExpr) Subst(bind map[string]*SymExpr) *SymExpr {
	sum := &SymExpr{}
	for _, t := range e.terms {
		p := SymConst(t.coef)
		for _, f := range t.factors {
			switch {
			case f.num != nil:
				q, _ := f.num.Subst(bind).FloorDiv(f.den)
				p = p.Mul(q)
			case bind[f.name] != nil:
				p = p.Mul(bind[f.name])
			default:
				p = p.Mul(Sym(f.name))
			}
		}
		sum = sum.Add(p)
	}
	return sum
}

// errOverflow is the panic of arithmetic on expressions that overflows
// int64; the exported entry points that can meet it (Eval, ParseSymExpr,
// the verifier's and Build's shape inference, CatchOverflow) turn it into
// an error.
type errOverflow struct{}

func addChecked(a, b int64) int64 {
	s := a + b
	if (s > a) != (b > 0) {
		panic(errOverflow{})
	}
	return s
}

// CatchOverflow, deferred, turns the panic of SymExpr arithmetic that
// overflows int64 into *err ("<what> overflows int64"); other panics go
// on. Code that does shape arithmetic outside the verifier and Build (an
// importer folding shape computations) defers it.
func CatchOverflow(err *error, what func() string) {
	if r := recover(); r != nil {
		if _, ok := r.(errOverflow); !ok {
			panic(r)
		}
		*err = fmt.Errorf("%s overflows int64", what())
	}
}

func mulChecked(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	neg := (a < 0) != (b < 0)
	hi, lo := bits.Mul64(absU(a), absU(b))
	if hi != 0 || lo > math.MaxInt64 && !(neg && lo == 1<<63) {
		panic(errOverflow{})
	}
	if neg {
		return int64(-lo)
	}
	return int64(lo)
}

func absU(a int64) uint64 {
	if a < 0 {
		return uint64(-a)
	}
	return uint64(a)
}

// String prints e canonically: terms in key order, the constant last,
// `*` for products, `floordiv` for divisions (MLIR's affine syntax). A
// division inside a product, or after a unary minus, is parenthesized, so
// the text parses back to e.
func (e *SymExpr) String() string {
	if len(e.terms) == 0 {
		return "0"
	}
	var b strings.Builder
	first := true
	write := func(t symTerm) {
		c := t.coef
		unary := false
		switch {
		case first && c < 0:
			b.WriteString("-")
			c, unary = -c, true
		case !first && c < 0:
			b.WriteString(" - ")
			c = -c
		case !first:
			b.WriteString(" + ")
		}
		first = false
		if t.key == "" {
			b.WriteString(strconv.FormatInt(c, 10))
			return
		}
		if c != 1 {
			b.WriteString(strconv.FormatInt(c, 10))
			b.WriteByte('*')
		}
		wrap := unary || c != 1 || len(t.factors) > 1
		for i, f := range t.factors {
			if i > 0 {
				b.WriteByte('*')
			}
			if f.num != nil && wrap {
				b.WriteString("(" + f.key + ")")
			} else {
				b.WriteString(f.key)
			}
		}
	}
	for _, t := range e.terms {
		if t.key != "" {
			write(t)
		}
	}
	if e.terms[0].key == "" {
		write(e.terms[0])
	}
	return b.String()
}

// ParseSymExpr parses an expression in the syntax String prints: integer
// literals, symbol names, parentheses, unary and binary + and -, * and
// `floordiv` by a constant, with * and floordiv binding tighter than + and
// −. Errors: a syntax error naming the offset, a product of two
// non-constant factors written with a floordiv, a non-constant or
// non-positive divisor, an overflow.
func ParseSymExpr(s string) (e *SymExpr, err error) {
	defer CatchOverflow(&err, func() string { return fmt.Sprintf("symbolic expression %q", s) })
	p := &symParser{src: s}
	e, err = p.sum()
	if err == nil {
		p.space()
		if p.pos < len(p.src) {
			err = p.errorf("unexpected %q", p.src[p.pos:])
		}
	}
	return e, err
}

type symParser struct {
	src   string
	pos   int
	depth int
}

func (p *symParser) errorf(format string, args ...any) error {
	return fmt.Errorf("symbolic expression %q at offset %d: %s", p.src, p.pos, fmt.Sprintf(format, args...))
}

func (p *symParser) space() {
	for p.pos < len(p.src) && p.src[p.pos] == ' ' {
		p.pos++
	}
}

func (p *symParser) sum() (*SymExpr, error) {
	e, err := p.product()
	if err != nil {
		return nil, err
	}
	for {
		p.space()
		if p.pos >= len(p.src) || (p.src[p.pos] != '+' && p.src[p.pos] != '-') {
			return e, nil
		}
		op := p.src[p.pos]
		p.pos++
		t, err := p.product()
		if err != nil {
			return nil, err
		}
		if op == '-' {
			t = t.Scale(-1)
		}
		e = e.Add(t)
	}
}

func (p *symParser) product() (*SymExpr, error) {
	e, err := p.factor()
	if err != nil {
		return nil, err
	}
	for {
		p.space()
		switch {
		case strings.HasPrefix(p.src[p.pos:], "*"):
			p.pos++
			f, err := p.factor()
			if err != nil {
				return nil, err
			}
			e = e.Mul(f)
		case strings.HasPrefix(p.src[p.pos:], "floordiv") && !p.identAt(p.pos+len("floordiv")):
			p.pos += len("floordiv")
			f, err := p.factor()
			if err != nil {
				return nil, err
			}
			d, ok := f.Const()
			if !ok || d < 1 {
				return nil, p.errorf("floordiv needs a positive constant divisor, got %s", f)
			}
			e, _ = e.FloorDiv(d)
		default:
			return e, nil
		}
	}
}

// identAt reports whether an identifier character is at i.
func (p *symParser) identAt(i int) bool {
	return i < len(p.src) && (isSymStart(p.src[i]) || p.src[i] >= '0' && p.src[i] <= '9')
}

func (p *symParser) factor() (*SymExpr, error) {
	p.space()
	if p.pos >= len(p.src) {
		return nil, p.errorf("expected a number, a symbol or '('")
	}
	c := p.src[p.pos]
	switch {
	case c == '-':
		if p.depth++; p.depth > 64 {
			return nil, p.errorf("nested too deeply")
		}
		p.pos++
		e, err := p.factor()
		if err != nil {
			return nil, err
		}
		p.depth--
		return e.Scale(-1), nil
	case c == '(':
		if p.depth++; p.depth > 64 {
			return nil, p.errorf("nested too deeply")
		}
		p.pos++
		e, err := p.sum()
		if err != nil {
			return nil, err
		}
		p.space()
		if p.pos >= len(p.src) || p.src[p.pos] != ')' {
			return nil, p.errorf("expected ')'")
		}
		p.pos++
		p.depth--
		return e, nil
	case c >= '0' && c <= '9':
		n := p.pos
		for n < len(p.src) && p.src[n] >= '0' && p.src[n] <= '9' {
			n++
		}
		v, err := strconv.ParseInt(p.src[p.pos:n], 10, 64)
		if err != nil {
			return nil, p.errorf("integer %s out of range", p.src[p.pos:n])
		}
		p.pos = n
		return SymConst(v), nil
	case isSymStart(c):
		n := p.pos
		for n < len(p.src) && (isSymStart(p.src[n]) || p.src[n] >= '0' && p.src[n] <= '9') {
			n++
		}
		name := p.src[p.pos:n]
		if name == "floordiv" {
			return nil, p.errorf("expected a number, a symbol or '('")
		}
		p.pos = n
		return Sym(name), nil
	}
	return nil, p.errorf("unexpected %q", c)
}

// DivExactBy returns e / d when d is a constant or a single term
// (c·s1·s2·…) that divides every term of e; ok false otherwise (the
// quotient is not an expression of this algebra, or d is 0).
func (e *SymExpr) DivExactBy(d *SymExpr) (*SymExpr, bool) {
	if c, ok := d.Const(); ok {
		return e.DivExact(c)
	}
	if len(d.terms) != 1 {
		return nil, false
	}
	dt := d.terms[0]
	sum := &SymExpr{}
	for _, t := range e.terms {
		if t.coef%dt.coef != 0 {
			return nil, false
		}
		rest, ok := removeFactors(t.factors, dt.factors)
		if !ok {
			return nil, false
		}
		q := symTerm{coef: t.coef / dt.coef, factors: rest, key: factorKey(rest)}
		sum = sum.Add(&SymExpr{terms: []symTerm{q}})
	}
	return sum, true
}

// removeFactors returns fs less one occurrence of each of rm (both sorted
// by key); ok false when fs lacks one.
func removeFactors(fs, rm []symFactor) ([]symFactor, bool) {
	out := make([]symFactor, 0, len(fs))
	j := 0
	for _, f := range fs {
		if j < len(rm) && f.key == rm[j].key {
			j++
			continue
		}
		out = append(out, f)
	}
	return out, j == len(rm)
}
