package schedule

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Layout transformation (TVM's src/tir/schedule/primitive/
// layout_transformation.cc): transform_layout.
//
// transform_layout(b, i, "read"|"write", map) changes the layout of the
// buffer of b's read (write) region i: an element at old indices
// (x_0, ..., x_{n-1}) moves to map(x_0, ..., x_{n-1}). The buffer's shape
// becomes the bounding box of the map's image, and every access of the
// buffer in the function (loads, stores, block regions, the allocation)
// is rewritten: index expressions are substituted into the map and
// simplified.
//
// Refused (an *Error) when: the buffer is a parameter of the function
// (its layout is the kernel's calling convention; TVM rewrites the
// signature — here transform a cache_read/cache_write copy instead); the
// buffer's shape is not constant; the map's arity differs from the rank;
// a result uses something other than the map's parameters, integer
// constants, + - * floordiv floormod (positive constant divisors); the map
// is not injective on the buffer's domain, maps outside of [0, ∞), or is
// not onto the bounding box of its image (TVM would need a pad_value).

// IndexMap is an index map (TVM's tir::IndexMap): Results are expressions
// of Params.
type IndexMap struct {
	Params  []*tir.Var
	Results []tir.Expr
}

// maxLayoutElems bounds the buffers whose map is checked by enumeration.
const maxLayoutElems = 1 << 22

// ParseIndexMap reads an index map written
// "(i, j) -> (j floordiv 16, i, j floormod 16)": parameter names
// (optionally with a leading '%'), integer constants, parentheses and
// + - * floordiv floormod with the usual precedences.
func ParseIndexMap(text string) (IndexMap, error) {
	p := &imParser{src: text}
	p.lex()
	if p.err != nil {
		return IndexMap{}, p.err
	}
	var m IndexMap
	vars := map[string]*tir.Var{}
	p.expect("(")
	for p.err == nil && p.peek() != ")" {
		name := p.next()
		if !isIdent(name) {
			p.fail("want a parameter name, got %q", name)
			break
		}
		if vars[name] != nil {
			p.fail("parameter %q appears twice", name)
			break
		}
		v := tir.NewVar(name, tir.DIndex)
		vars[name] = v
		m.Params = append(m.Params, v)
		if p.peek() == "," {
			p.next()
		}
	}
	p.expect(")")
	p.expect("->")
	p.expect("(")
	for p.err == nil && p.peek() != ")" {
		m.Results = append(m.Results, p.sum(vars))
		if p.peek() == "," {
			p.next()
		} else if p.peek() != ")" {
			p.fail("want ',' or ')', got %q", p.peek())
		}
	}
	p.expect(")")
	if p.err == nil && p.pos != len(p.toks) {
		p.fail("unexpected %q after the map", p.peek())
	}
	if p.err != nil {
		return IndexMap{}, p.err
	}
	if len(m.Params) == 0 || len(m.Results) == 0 {
		return IndexMap{}, fmt.Errorf("index map %q: want at least one parameter and one result", text)
	}
	return m, nil
}

// MustParseIndexMap is ParseIndexMap that panics on a malformed map.
func MustParseIndexMap(text string) IndexMap {
	m, err := ParseIndexMap(text)
	if err != nil {
		panic(err)
	}
	return m
}

// String writes m in the form ParseIndexMap reads.
func (m IndexMap) String() string {
	var sb strings.Builder
	sb.WriteString("(")
	for i, v := range m.Params {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(v.Name)
	}
	sb.WriteString(") -> (")
	for i, e := range m.Results {
		if i > 0 {
			sb.WriteString(", ")
		}
		sb.WriteString(imExprString(e, 0))
	}
	sb.WriteString(")")
	return sb.String()
}

func imExprString(e tir.Expr, prec int) string {
	switch x := e.(type) {
	case *tir.IntImm:
		if x.Value < 0 {
			return "(" + strconv.FormatInt(x.Value, 10) + ")"
		}
		return strconv.FormatInt(x.Value, 10)
	case *tir.Var:
		return x.Name
	case *tir.Binary:
		var op string
		p := 2
		switch x.Op {
		case tir.OpAdd:
			op, p = "+", 1
		case tir.OpSub:
			op, p = "-", 1
		case tir.OpMul:
			op = "*"
		case tir.OpFloorDiv:
			op = "floordiv"
		case tir.OpFloorMod:
			op = "floormod"
		default:
			return tir.ExprString(e)
		}
		s := imExprString(x.A, p) + " " + op + " " + imExprString(x.B, p+1)
		if p < prec {
			return "(" + s + ")"
		}
		return s
	}
	return tir.ExprString(e)
}

type imParser struct {
	src  string
	toks []string
	pos  int
	err  error
}

func isIdent(s string) bool {
	if s == "" || s == "floordiv" || s == "floormod" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || unicode.IsLetter(r) || (i > 0 && unicode.IsDigit(r))) {
			return false
		}
	}
	return true
}

func (p *imParser) lex() {
	s := p.src
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			i++
		case c == '-' && i+1 < len(s) && s[i+1] == '>':
			p.toks = append(p.toks, "->")
			i += 2
		case strings.IndexByte("(),+-*", c) >= 0:
			p.toks = append(p.toks, string(c))
			i++
		case c == '%' || c == '_' || unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)):
			j := i
			if c == '%' {
				i++
				j = i
			}
			for j < len(s) && (s[j] == '_' || unicode.IsLetter(rune(s[j])) || unicode.IsDigit(rune(s[j]))) {
				j++
			}
			if j == i {
				p.err = fmt.Errorf("index map %q: '%%' without a name", p.src)
				return
			}
			p.toks = append(p.toks, s[i:j])
			i = j
		default:
			p.err = fmt.Errorf("index map %q: unexpected character %q", p.src, string(c))
			return
		}
	}
}

func (p *imParser) fail(format string, args ...any) {
	if p.err == nil {
		p.err = fmt.Errorf("index map %q: %s", p.src, fmt.Sprintf(format, args...))
	}
}

func (p *imParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *imParser) next() string {
	t := p.peek()
	if p.pos < len(p.toks) {
		p.pos++
	}
	return t
}

func (p *imParser) expect(t string) {
	if p.err != nil {
		return
	}
	if got := p.next(); got != t {
		if got == "" {
			got = "the end"
		}
		p.fail("want %q, got %q", t, got)
	}
}

func (p *imParser) sum(vars map[string]*tir.Var) tir.Expr {
	e := p.product(vars)
	for p.err == nil && (p.peek() == "+" || p.peek() == "-") {
		op := tir.OpAdd
		if p.next() == "-" {
			op = tir.OpSub
		}
		e = tir.Bin(op, e, p.product(vars))
	}
	return e
}

func (p *imParser) product(vars map[string]*tir.Var) tir.Expr {
	e := p.atom(vars)
	for p.err == nil {
		var op tir.BinOp
		switch p.peek() {
		case "*":
			op = tir.OpMul
		case "floordiv":
			op = tir.OpFloorDiv
		case "floormod":
			op = tir.OpFloorMod
		default:
			return e
		}
		p.next()
		e = tir.Bin(op, e, p.atom(vars))
	}
	return e
}

func (p *imParser) atom(vars map[string]*tir.Var) tir.Expr {
	if p.err != nil {
		return tir.Int(0)
	}
	t := p.next()
	switch {
	case t == "(":
		e := p.sum(vars)
		p.expect(")")
		return e
	case t == "-":
		return tir.Sub(tir.Int(0), p.atom(vars))
	case t != "" && unicode.IsDigit(rune(t[0])):
		v, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			p.fail("bad integer %q", t)
			return tir.Int(0)
		}
		return tir.Int(v)
	case isIdent(t):
		if v := vars[t]; v != nil {
			return v
		}
		p.fail("%q is not a parameter of the map", t)
	default:
		if t == "" {
			t = "the end"
		}
		p.fail("want an expression, got %q", t)
	}
	return tir.Int(0)
}

// evalIndex evaluates an index-map expression at env.
func evalIndex(e tir.Expr, env map[*tir.Var]int64) (int64, bool) {
	switch x := e.(type) {
	case *tir.IntImm:
		return x.Value, true
	case *tir.Var:
		v, ok := env[x]
		return v, ok
	case *tir.Binary:
		a, ok1 := evalIndex(x.A, env)
		b, ok2 := evalIndex(x.B, env)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch x.Op {
		case tir.OpAdd:
			return a + b, true
		case tir.OpSub:
			return a - b, true
		case tir.OpMul:
			return a * b, true
		case tir.OpFloorDiv, tir.OpFloorMod:
			if b <= 0 {
				return 0, false
			}
			q := a / b
			if a%b != 0 && a < 0 {
				q--
			}
			if x.Op == tir.OpFloorDiv {
				return q, true
			}
			return a - q*b, true
		}
	}
	return 0, false
}

// checkIndexMapExpr says why e is not an index-map expression ("" when it is).
func checkIndexMapExpr(e tir.Expr, params map[*tir.Var]bool) string {
	why := ""
	tir.VisitExpr(e, func(x tir.Expr) bool {
		if why != "" {
			return false
		}
		switch n := x.(type) {
		case *tir.IntImm:
		case *tir.Var:
			if !params[n] {
				why = fmt.Sprintf("%s is not a parameter of the map", n.Name)
			}
		case *tir.Binary:
			switch n.Op {
			case tir.OpAdd, tir.OpSub, tir.OpMul:
			case tir.OpFloorDiv, tir.OpFloorMod:
				if c, ok := n.B.(*tir.IntImm); !ok || c.Value <= 0 {
					why = fmt.Sprintf("the divisor of %s is not a positive constant", imExprString(n, 0))
				}
			default:
				why = fmt.Sprintf("%s uses an operator other than + - * floordiv floormod", tir.ExprString(n))
			}
		default:
			why = fmt.Sprintf("%s is not an integer expression of the parameters", tir.ExprString(x))
		}
		return true
	})
	return why
}

// layoutBuffer returns the buffer of b's read or write region i.
func (s *Schedule) layoutBuffer(prim string, b BlockRV, i int, kind string) (*tir.Buffer, error) {
	r := findBlock(s.f.Body, b.Name)
	if r == nil {
		return nil, s.Errorf(prim, &b, nil, "no such block in @%s", s.f.Name)
	}
	var regs []tir.BufferRegion
	switch kind {
	case "read":
		regs = r.Block.Reads
	case "write":
		regs = r.Block.Writes
	default:
		return nil, s.Errorf(prim, &b, nil, "buffer index type %q: want \"read\" or \"write\"", kind)
	}
	if i < 0 || i >= len(regs) {
		return nil, s.Errorf(prim, &b, nil, "%s index %d is out of range: the block has %d %s regions", kind, i, len(regs), kind)
	}
	return regs[i].Buffer, nil
}

// TransformLayout rewrites the layout of the buffer of block b's read
// (bufferType "read") or write ("write") region bufferIndex with m
// (TVM's transform_layout).
func (s *Schedule) TransformLayout(b BlockRV, bufferIndex int, bufferType string, m IndexMap) error {
	const prim = "transform_layout"
	x, err := s.layoutBuffer(prim, b, bufferIndex, bufferType)
	if err != nil {
		return err
	}
	if isParam(s.f, x) {
		return s.Errorf(prim, &b, nil, "%%%s is a parameter of @%s: its layout is the kernel's calling convention; transform a cache_read/cache_write copy of it instead", x.Name, s.f.Name)
	}
	shape, ok := x.ConstShape()
	if !ok {
		return s.Errorf(prim, &b, nil, "%%%s has a non-constant shape", x.Name)
	}
	if len(m.Params) != len(shape) {
		return s.Errorf(prim, &b, nil, "index map %s has %d parameters, %%%s has rank %d", m, len(m.Params), x.Name, len(shape))
	}
	params := map[*tir.Var]bool{}
	for _, v := range m.Params {
		params[v] = true
	}
	for _, e := range m.Results {
		if why := checkIndexMapExpr(e, params); why != "" {
			return s.Errorf(prim, &b, nil, "index map %s: %s", m, why)
		}
	}
	newShape, why := imageShape(m, shape)
	if why != "" {
		return s.Errorf(prim, &b, nil, "index map %s on %%%s (shape %v): %s", m, x.Name, shape, why)
	}
	nb := *x
	nb.Shape = make([]tir.Expr, len(newShape))
	for i, d := range newShape {
		nb.Shape[i] = tir.Int(d)
	}
	nb.Strides, nb.ElemOffset = nil, nil
	env := s.loopEnv()
	mapIdx := func(idx []tir.Expr) []tir.Expr {
		sub := map[*tir.Var]tir.Expr{}
		for i, v := range m.Params {
			sub[v] = idx[i]
		}
		out := make([]tir.Expr, len(m.Results))
		for i, e := range m.Results {
			out[i] = tir.Simplify(tir.Substitute(e, sub), env)
		}
		return out
	}
	mapRegion := func(rg []tir.Range) []tir.Range {
		point := make([]bool, len(rg))
		mins := make([]tir.Expr, len(rg))
		for i, r := range rg {
			c, ok := constInt(r.Extent)
			point[i] = ok && c == 1
			mins[i] = r.Min
		}
		pts := mapIdx(mins)
		out := make([]tir.Range, len(m.Results))
		for j, e := range m.Results {
			exact := true
			tir.VisitExpr(e, func(y tir.Expr) bool {
				if v, ok := y.(*tir.Var); ok {
					for i, p := range m.Params {
						if p == v && !point[i] {
							exact = false
						}
					}
				}
				return true
			})
			if exact {
				out[j] = tir.Range{Min: pts[j], Extent: tir.Int(1)}
			} else {
				out[j] = tir.RangeOf(0, newShape[j])
			}
		}
		return out
	}
	body := remapBuffer(s.f.Body, x, &nb, mapIdx, mapRegion)
	if err := s.install(prim, &b, nil, body); err != nil {
		return err
	}
	attrs := indexMapAttrs(m)
	attrs["buffer_index"], attrs["buffer_type"] = int64(bufferIndex), bufferType
	s.Record(prim, []any{b}, attrs, nil, nil)
	return nil
}

// indexMapAttrs are a trace instruction's attributes for index map m: its
// parameter names and its results' text, two string lists ("map_params",
// "map_results"), editable in a trace file.
func indexMapAttrs(m IndexMap) map[string]any {
	names := make([]any, len(m.Params))
	for i, v := range m.Params {
		names[i] = v.Name
	}
	results := make([]any, len(m.Results))
	for i, e := range m.Results {
		results[i] = imExprString(e, 0)
	}
	return map[string]any{"map_params": names, "map_results": results}
}

// indexMapOf reads the index map indexMapAttrs wrote.
func indexMapOf(attrs map[string]any) (IndexMap, error) {
	params, err := attrStrings(attrs, "map_params")
	if err != nil {
		return IndexMap{}, err
	}
	results, err := attrStrings(attrs, "map_results")
	if err != nil {
		return IndexMap{}, err
	}
	return ParseIndexMap("(" + strings.Join(params, ", ") + ") -> (" + strings.Join(results, ", ") + ")")
}

// imageShape is the bounding box of m's image of the domain shape, or why
// m is not a bijection from the domain onto it.
func imageShape(m IndexMap, shape []int64) ([]int64, string) {
	if out, ok := axisImageShape(m, shape); ok {
		return out, ""
	}
	total := int64(1)
	for _, d := range shape {
		if d <= 0 {
			return nil, "the buffer is empty"
		}
		total *= d
		if total > maxLayoutElems {
			return nil, fmt.Sprintf("the buffer has more than %d elements", maxLayoutElems)
		}
	}
	env := map[*tir.Var]int64{}
	idx := make([]int64, len(shape))
	points := make([][]int64, 0, total)
	hi := make([]int64, len(m.Results))
	for n := int64(0); n < total; n++ {
		r := n
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d] = r % shape[d]
			r /= shape[d]
			env[m.Params[d]] = idx[d]
		}
		p := make([]int64, len(m.Results))
		for j, e := range m.Results {
			v, ok := evalIndex(e, env)
			if !ok {
				return nil, "a result cannot be evaluated"
			}
			if v < 0 {
				return nil, fmt.Sprintf("%v maps to a negative index %d in dimension %d", idx, v, j)
			}
			p[j] = v
			if v > hi[j] {
				hi[j] = v
			}
		}
		points = append(points, p)
	}
	out := make([]int64, len(hi))
	size := int64(1)
	for j, h := range hi {
		out[j] = h + 1
		size *= h + 1
		if size > maxLayoutElems {
			return nil, fmt.Sprintf("the image's bounding box has more than %d elements", maxLayoutElems)
		}
	}
	seen := make([]int64, size)
	for n, p := range points {
		lin := int64(0)
		for j, v := range p {
			lin = lin*out[j] + v
		}
		if seen[lin] != 0 {
			a := unlinear(seen[lin]-1, shape)
			b := unlinear(int64(n), shape)
			return nil, fmt.Sprintf("not injective: %v and %v both map to %v", a, b, p)
		}
		seen[lin] = int64(n) + 1
	}
	if size != total {
		return nil, fmt.Sprintf("not bijective: %d elements map into a bounding box %v of %d (padding is not supported)", total, out, size)
	}
	return out, ""
}

func unlinear(n int64, shape []int64) []int64 {
	out := make([]int64, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		out[d] = n % shape[d]
		n /= shape[d]
	}
	return out
}

// remapBuffer replaces buffer old by nb in st, mapping the indices of
// every load and store with idx and every region with region.
func remapBuffer(st tir.Stmt, old, nb *tir.Buffer, idx func([]tir.Expr) []tir.Expr, region func([]tir.Range) []tir.Range) tir.Stmt {
	var ex func(e tir.Expr) tir.Expr
	ex = func(e tir.Expr) tir.Expr {
		switch x := e.(type) {
		case nil:
			return nil
		case *tir.BufferLoad:
			is := make([]tir.Expr, len(x.Indices))
			for i, a := range x.Indices {
				is[i] = ex(a)
			}
			if x.Buffer == old {
				return &tir.BufferLoad{Buffer: nb, Indices: idx(is)}
			}
			return &tir.BufferLoad{Buffer: x.Buffer, Indices: is}
		case *tir.Binary:
			return &tir.Binary{Op: x.Op, A: ex(x.A), B: ex(x.B)}
		case *tir.Not:
			return &tir.Not{X: ex(x.X)}
		case *tir.Select:
			return &tir.Select{Cond: ex(x.Cond), T: ex(x.T), F: ex(x.F)}
		case *tir.Cast:
			return &tir.Cast{Type: x.Type, X: ex(x.X)}
		case *tir.Call:
			args := make([]tir.Expr, len(x.Args))
			for i, a := range x.Args {
				args[i] = ex(a)
			}
			return &tir.Call{Name: x.Name, Args: args}
		}
		return e
	}
	regions := func(rs []tir.BufferRegion) []tir.BufferRegion {
		if rs == nil {
			return nil
		}
		out := make([]tir.BufferRegion, len(rs))
		for i, r := range rs {
			out[i] = r
			if r.Buffer == old {
				out[i] = tir.BufferRegion{Buffer: nb, Region: region(r.Region)}
			}
		}
		return out
	}
	var rec func(s tir.Stmt) tir.Stmt
	rec = func(s tir.Stmt) tir.Stmt {
		return tir.Mutate(s, func(y tir.Stmt) (tir.Stmt, bool) {
			switch x := y.(type) {
			case *tir.BlockRealize:
				c := *x
				if x.Block != nil {
					b := *x.Block
					b.Reads, b.Writes = regions(x.Block.Reads), regions(x.Block.Writes)
					b.Init, b.Body = rec(x.Block.Init), rec(x.Block.Body)
					if x.Block.Allocs != nil {
						b.Allocs = make([]*tir.Buffer, len(x.Block.Allocs))
						for i, a := range x.Block.Allocs {
							b.Allocs[i] = a
							if a == old {
								b.Allocs[i] = nb
							}
						}
					}
					c.Block = &b
				}
				return &c, true
			case *tir.BufferStore:
				c := *x
				c.Value = ex(x.Value)
				c.Indices = make([]tir.Expr, len(x.Indices))
				for i, a := range x.Indices {
					c.Indices[i] = ex(a)
				}
				if x.Buffer == old {
					c.Buffer, c.Indices = nb, idx(c.Indices)
				}
				return &c, true
			case *tir.Allocate:
				c := *x
				if x.Buffer == old {
					c.Buffer = nb
				}
				c.Body = rec(x.Body)
				return &c, true
			case *tir.IfThenElse:
				c := *x
				c.Cond, c.Then, c.Else = ex(x.Cond), rec(x.Then), rec(x.Else)
				return &c, true
			case *tir.LetStmt:
				c := *x
				c.Value, c.Body = ex(x.Value), rec(x.Body)
				return &c, true
			case *tir.Evaluate:
				c := *x
				c.Value = ex(x.Value)
				return &c, true
			}
			return nil, false
		})
	}
	return rec(st)
}

// attrStrings reads a list of strings from a trace attribute.
func attrStrings(attrs map[string]any, key string) ([]string, error) {
	list, ok := attrs[key].([]any)
	if !ok {
		return nil, fmt.Errorf("attribute %q: want a list of strings, got %v", key, attrs[key])
	}
	out := make([]string, len(list))
	for i, v := range list {
		str, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("attribute %q: element %d is not a string: %v", key, i, v)
		}
		out[i] = str
	}
	return out, nil
}

func init() {
	RegisterInstruction("transform_layout", func(s *Schedule, in []any, attrs map[string]any, _ any) ([]any, error) {
		b, err := BlockInput(in, 0)
		if err != nil {
			return nil, err
		}
		i, err := AttrInt(attrs, "buffer_index")
		if err != nil {
			return nil, err
		}
		kind, err := AttrString(attrs, "buffer_type")
		if err != nil {
			return nil, err
		}
		m, err := indexMapOf(attrs)
		if err != nil {
			return nil, err
		}
		return nil, s.TransformLayout(b, int(i), kind, m)
	})
}

// axisImageShape is imageShape for a map whose results each use one
// parameter, every parameter in exactly one result (a permutation of
// per-dimension maps, such as a transpose or an interleaving of one
// dimension): m is a bijection onto its bounding box when each
// one-dimensional map is a bijection of [0, n) onto itself, checked by
// enumerating each dimension on its own, so buffers of any size qualify.
// ok is false for other maps.
func axisImageShape(m IndexMap, shape []int64) ([]int64, bool) {
	if len(m.Results) != len(m.Params) {
		return nil, false
	}
	param := make([]int, len(m.Results))
	used := make([]bool, len(m.Params))
	for j, e := range m.Results {
		param[j] = -1
		for i, p := range m.Params {
			if !tir.UsesVar(e, p) {
				continue
			}
			if param[j] >= 0 || used[i] {
				return nil, false
			}
			param[j], used[i] = i, true
		}
		if param[j] < 0 {
			return nil, false
		}
	}
	out := make([]int64, len(m.Results))
	for j, e := range m.Results {
		i := param[j]
		n := shape[i]
		if n <= 0 || n > maxLayoutElems {
			return nil, false
		}
		seen := make([]bool, n)
		env := map[*tir.Var]int64{}
		for x := int64(0); x < n; x++ {
			env[m.Params[i]] = x
			v, ok := evalIndex(e, env)
			// Only bijections onto [0, n) are taken here; anything else
			// (holes, collisions) goes through the general check, whose
			// message names the colliding indices.
			if !ok || v < 0 || v >= n || seen[v] {
				return nil, false
			}
			seen[v] = true
		}
		out[j] = n
	}
	return out, true
}
