package graphir

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/alecthomas/participle/v2/lexer"

	"github.com/tessera-ml/tessera/internal/syntax"
)

// builder converts the parse tree to IR; its Source locates positions
// and errors.
type builder struct {
	syntax.Source
	scopes []map[string]*Value
}

func (b *builder) file_(t *pFile) (*Module, error) {
	if len(t.Ops) == 1 && (t.Ops[0].Module != nil || isGeneric(t.Ops[0], "builtin.module")) {
		return b.moduleOp(t.Ops[0])
	}
	m := &Module{Loc: Location{File: b.File}}
	if err := b.moduleBody(m, t.Ops); err != nil {
		return nil, err
	}
	return m, nil
}

func isGeneric(o *pOp, name string) bool {
	return o.Generic != nil && syntax.Unquote(o.Generic.Name) == name
}

func (b *builder) moduleOp(o *pOp) (*Module, error) {
	if len(o.Results) > 0 {
		return nil, b.Errorf(o.Pos, "'builtin.module' op has no results")
	}
	m := &Module{Loc: b.opLoc(o, o.Pos)}
	if o.Module != nil {
		if o.Module.Name != nil {
			m.Name = symbol(*o.Module.Name)
		}
		if o.Module.Attrs != nil {
			d, err := b.dict(o.Module.Attrs)
			if err != nil {
				return nil, err
			}
			m.Attrs = d
		}
		return m, b.moduleBody(m, o.Module.Ops)
	}
	g := o.Generic
	if len(g.Operands) != 0 || len(g.Regions) != 1 || len(g.Regions[0].Blocks) != 0 {
		return nil, b.Errorf(g.Pos, "'builtin.module' op expects no operands and one region with one block")
	}
	if g.Attrs != nil {
		d, err := b.dict(g.Attrs)
		if err != nil {
			return nil, err
		}
		if n, ok := d.Get("sym_name").(StringAttr); ok {
			m.Name = string(n)
			d = d.Delete("sym_name")
		}
		m.Attrs = d
	}
	return m, b.moduleBody(m, g.Regions[0].Ops)
}

func (b *builder) moduleBody(m *Module, ops []*pOp) error {
	for _, o := range ops {
		var f *Func
		var err error
		switch {
		case o.Func != nil:
			f, err = b.prettyFunc(o.Func)
		case isGeneric(o, "func.func"):
			f, err = b.genericFunc(o.Generic)
		default:
			return b.Errorf(o.Pos, "expected 'func.func'; only functions may appear at module level")
		}
		if err != nil {
			return err
		}
		if len(o.Results) > 0 {
			return b.Errorf(o.Pos, "'func.func' op has no results")
		}
		if o.Loc != nil {
			f.Loc = b.opLoc(o, lexer.Position{})
		}
		m.AddFunc(f)
	}
	return nil
}

func (b *builder) opLoc(o *pOp, p lexer.Position) Location {
	return b.LocOr((*syntax.Loc)(o.Loc), p)
}

func (b *builder) prettyFunc(pf *pFunc) (*Func, error) {
	ty := &FunctionType{}
	b.push()
	defer b.pop()
	entry := &Block{}
	for _, a := range pf.Args {
		t, err := b.typ(a.Type)
		if err != nil {
			return nil, err
		}
		ty.Inputs = append(ty.Inputs, t)
		if err := b.define(a.Name, entry.AddArg(t, b.At(a.Pos)), a.Pos); err != nil {
			return nil, err
		}
	}
	if pf.Results != nil {
		rs, err := b.typeList(pf.Results)
		if err != nil {
			return nil, err
		}
		ty.Results = rs
	}
	f := &Func{Name: symbol(pf.Name), Type: ty, Private: pf.Private, Loc: b.At(pf.Pos)}
	if pf.Attrs != nil {
		d, err := b.dict(pf.Attrs)
		if err != nil {
			return nil, err
		}
		f.Attrs = d
	}
	f.Body = NewRegion(entry)
	if err := b.blockOps(entry, pf.Body.Ops); err != nil {
		return nil, err
	}
	if len(pf.Body.Blocks) > 0 {
		return nil, b.Errorf(pf.Body.Blocks[0].Pos, "function '@%s' must have a single block", f.Name)
	}
	return f, nil
}

func (b *builder) genericFunc(g *pGeneric) (*Func, error) {
	if len(g.Operands) != 0 || len(g.Regions) != 1 || g.Attrs == nil {
		return nil, b.Errorf(g.Pos, "'func.func' op expects no operands, one region and the attributes sym_name and function_type")
	}
	d, err := b.dict(g.Attrs)
	if err != nil {
		return nil, err
	}
	name, ok1 := d.Get("sym_name").(StringAttr)
	ta, ok2 := d.Get("function_type").(*TypeAttr)
	var fty *FunctionType
	if ok2 {
		fty, ok2 = ta.Type.(*FunctionType)
	}
	if !ok1 || !ok2 {
		return nil, b.Errorf(g.Pos, "'func.func' op requires a string 'sym_name' and a function type 'function_type'")
	}
	f := &Func{Name: string(name), Type: fty, Loc: b.At(g.Pos)}
	if v, ok := d.Get("sym_visibility").(StringAttr); ok && v == "private" {
		f.Private = true
	}
	f.Attrs = d.Delete("sym_name").Delete("function_type").Delete("sym_visibility")
	b.push()
	defer b.pop()
	r, err := b.region(g.Regions[0])
	if err != nil {
		return nil, err
	}
	if len(r.Blocks) != 1 {
		return nil, b.Errorf(g.Regions[0].Pos, "function '@%s' must have a single block", f.Name)
	}
	f.Body = r
	return f, nil
}

func (b *builder) push() { b.scopes = append(b.scopes, map[string]*Value{}) }
func (b *builder) pop()  { b.scopes = b.scopes[:len(b.scopes)-1] }

func (b *builder) define(name string, v *Value, p lexer.Position) error {
	top := b.scopes[len(b.scopes)-1]
	if _, dup := top[name]; dup {
		return b.Errorf(p, "redefinition of SSA value '%s'", name)
	}
	top[name] = v
	return nil
}

func (b *builder) lookup(u *pUse) (*Value, error) {
	for i := len(b.scopes) - 1; i >= 0; i-- {
		if v, ok := b.scopes[i][u.Name]; ok {
			return v, nil
		}
	}
	return nil, b.Errorf(u.Pos, "use of undeclared SSA value name '%s'", u.Name)
}

func (b *builder) region(pr *pRegion) (*Region, error) {
	r := &Region{}
	b.push()
	defer b.pop()
	if len(pr.Ops) > 0 || len(pr.Blocks) == 0 {
		entry := &Block{}
		r.AddBlock(entry)
		if err := b.blockOps(entry, pr.Ops); err != nil {
			return nil, err
		}
	}
	for _, pb := range pr.Blocks {
		blk := &Block{}
		r.AddBlock(blk)
		for _, a := range pb.Args {
			t, err := b.typ(a.Type)
			if err != nil {
				return nil, err
			}
			if err := b.define(a.Name, blk.AddArg(t, b.At(a.Pos)), a.Pos); err != nil {
				return nil, err
			}
		}
		if err := b.blockOps(blk, pb.Ops); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (b *builder) blockOps(blk *Block, ops []*pOp) error {
	for _, o := range ops {
		op, err := b.op(o)
		if err != nil {
			return err
		}
		blk.Append(op)
	}
	return nil
}

func (b *builder) op(o *pOp) (*Op, error) {
	switch {
	case o.Module != nil:
		return nil, b.Errorf(o.Pos, "'module' may only appear at the top level")
	case o.Func != nil:
		return nil, b.Errorf(o.Pos, "'func.func' may only appear at module level")
	case o.Generic != nil:
		return b.genericOp(o)
	}
	return b.customOp(o)
}

// resultNames expands `%a, %b = ` and `%0:2 = ` into one name per result.
func (b *builder) resultNames(o *pOp) ([]string, []lexer.Position, error) {
	var names []string
	var poss []lexer.Position
	for _, r := range o.Results {
		if strings.Contains(r.Name, "#") {
			return nil, nil, b.Errorf(r.Pos, "result name '%s' may not contain '#'", r.Name)
		}
		if r.Count == nil {
			names = append(names, r.Name)
			poss = append(poss, r.Pos)
			continue
		}
		if *r.Count < 1 {
			return nil, nil, b.Errorf(r.Pos, "expected a positive result count after '%s:'", r.Name)
		}
		for i := 0; i < *r.Count; i++ {
			names = append(names, r.Name+"#"+strconv.Itoa(i))
			poss = append(poss, r.Pos)
		}
	}
	return names, poss, nil
}

func (b *builder) defineResults(o *pOp, op *Op, names []string, poss []lexer.Position) error {
	for i, n := range names {
		if err := b.define(n, op.Results[i], poss[i]); err != nil {
			return err
		}
	}
	// A single-result group "%0:1" may also be referenced as "%0".
	for _, r := range o.Results {
		if r.Count != nil && *r.Count == 1 {
			_ = b.define(r.Name, b.scopes[len(b.scopes)-1][r.Name+"#0"], r.Pos)
		}
	}
	return nil
}

func (b *builder) operands(uses []*pUse, want []Type, opName string) ([]*Value, error) {
	if len(want) != len(uses) {
		return nil, fmt.Errorf("'%s' op has %d operands but its type lists %d", opName, len(uses), len(want))
	}
	vals := make([]*Value, len(uses))
	for i, u := range uses {
		v, err := b.lookup(u)
		if err != nil {
			return nil, err
		}
		if !v.Type.Equal(want[i]) {
			return nil, b.Errorf(u.Pos, "use of value '%s' expects different type than prior uses: '%s' vs '%s'", u.Name, want[i], v.Type)
		}
		vals[i] = v
	}
	return vals, nil
}

func (b *builder) genericOp(o *pOp) (*Op, error) {
	g := o.Generic
	name := syntax.Unquote(g.Name)
	if name == "func.func" || name == "builtin.module" {
		return nil, b.Errorf(g.Pos, "'%s' may not be nested inside another operation", name)
	}
	if name == "" {
		return nil, b.Errorf(g.Pos, "empty operation name")
	}
	names, poss, err := b.resultNames(o)
	if err != nil {
		return nil, err
	}
	fty, err := b.funcType(g.Type)
	if err != nil {
		return nil, err
	}
	if len(fty.Results) != len(names) {
		return nil, b.Errorf(g.Pos, "operation defines %d results but %d were bound", len(fty.Results), len(names))
	}
	vals, err := b.operands(g.Operands, fty.Inputs, name)
	if err != nil {
		return nil, b.wrap(g.Pos, err)
	}
	attrs, err := b.optDict(g.Attrs)
	if err != nil {
		return nil, err
	}
	op := NewOp(name, vals, fty.Results, attrs, b.opLoc(o, g.Pos))
	for _, pr := range g.Regions {
		r, err := b.region(pr)
		if err != nil {
			return nil, err
		}
		op.AddRegion(r)
	}
	return op, b.defineResults(o, op, names, poss)
}

func (b *builder) wrap(p lexer.Position, err error) error {
	if _, ok := err.(Diagnostics); ok {
		return err
	}
	return b.Errorf(p, "%v", err)
}

func (b *builder) customOp(o *pOp) (*Op, error) {
	c := o.Custom
	def := LookupOp(c.Name)
	if def == nil {
		return nil, b.Errorf(c.Pos, "custom op '%s' is unknown (unregistered ops must use the generic form \"%s\"(...))", c.Name, c.Name)
	}
	if !def.Pretty && c.Name != ReturnOpName {
		return nil, b.Errorf(c.Pos, "'%s' has no custom form; write it in generic form", c.Name)
	}
	names, poss, err := b.resultNames(o)
	if err != nil {
		return nil, err
	}
	var ins, outs []Type
	switch {
	case c.Types == nil:
		if len(c.Operands) > 0 || len(names) > 0 {
			return nil, b.Errorf(c.Pos, "expected ':' and the types of '%s'", c.Name)
		}
	case c.Types.Fn != nil:
		fty, err := b.funcType(c.Types.Fn)
		if err != nil {
			return nil, err
		}
		ins, outs = fty.Inputs, fty.Results
	case isReturnLike(def):
		for _, pt := range c.Types.List {
			t, err := b.typ(pt)
			if err != nil {
				return nil, err
			}
			ins = append(ins, t)
		}
	default:
		if len(c.Types.List) != 1 {
			return nil, b.Errorf(c.Types.List[1].Pos, "expected a single type or a function type for '%s'", c.Name)
		}
		t, err := b.typ(c.Types.List[0])
		if err != nil {
			return nil, err
		}
		for range c.Operands {
			ins = append(ins, t)
		}
		for range names {
			outs = append(outs, t)
		}
	}
	if len(outs) != len(names) {
		return nil, b.Errorf(c.Pos, "operation defines %d results but %d were bound", len(outs), len(names))
	}
	uses := make([]*pUse, len(c.Operands))
	for i, u := range c.Operands {
		uses[i] = &pUse{Pos: u.Pos, Name: u.Name}
	}
	vals, err := b.operands(uses, ins, c.Name)
	if err != nil {
		return nil, b.wrap(c.Pos, err)
	}
	attrs, err := b.optDict(c.Attrs)
	if err != nil {
		return nil, err
	}
	op := NewOp(c.Name, vals, outs, attrs, b.opLoc(o, c.Pos))
	return op, b.defineResults(o, op, names, poss)
}

func (b *builder) funcType(pf *pFuncType) (*FunctionType, error) {
	ft := &FunctionType{}
	for _, pt := range pf.Inputs {
		t, err := b.typ(pt)
		if err != nil {
			return nil, err
		}
		ft.Inputs = append(ft.Inputs, t)
	}
	rs, err := b.typeList(pf.Results)
	if err != nil {
		return nil, err
	}
	ft.Results = rs
	return ft, nil
}

func (b *builder) typeList(pl *pTypeList) ([]Type, error) {
	if !pl.Paren {
		t, err := b.typ(pl.One)
		if err != nil {
			return nil, err
		}
		return []Type{t}, nil
	}
	ts := []Type{}
	for _, pt := range pl.List {
		t, err := b.typ(pt)
		if err != nil {
			return nil, err
		}
		ts = append(ts, t)
	}
	return ts, nil
}

func (b *builder) typ(pt *pType) (Type, error) {
	switch {
	case pt.Tensor != nil:
		t, err := ParseTensorType(*pt.Tensor)
		if err != nil {
			return nil, b.Errorf(pt.Pos, "%v", err)
		}
		return t, nil
	case pt.Fn != nil:
		return b.funcType(pt.Fn)
	}
	if t, ok := scalarTys[*pt.Name]; ok {
		return t, nil
	}
	return nil, b.Errorf(pt.Pos, "unknown type '%s'", *pt.Name)
}

func (b *builder) optDict(pd *pDict) (DictAttr, error) {
	if pd == nil {
		return nil, nil
	}
	return b.dict(pd)
}

func (b *builder) dict(pd *pDict) (DictAttr, error) {
	var d DictAttr
	for _, e := range pd.Entries {
		name := e.Name
		if strings.HasPrefix(name, `"`) {
			name = syntax.Unquote(name)
		}
		if d.Get(name) != nil {
			return nil, b.Errorf(e.Pos, "duplicate key '%s' in dictionary attribute", name)
		}
		var v Attribute = UnitAttr{}
		if e.Value != nil {
			var err error
			if v, err = b.attr(e.Value); err != nil {
				return nil, err
			}
		}
		d = d.Set(name, v)
	}
	return d, nil
}

func (b *builder) attr(pa *pAttr) (Attribute, error) {
	switch {
	case pa.Dense != nil:
		return b.dense(pa.Dense)
	case pa.Array != nil:
		elems, err := syntax.ConvertAll(pa.Array.Elems, b.attr)
		if err != nil {
			return nil, err
		}
		return ArrayAttr(elems), nil
	case pa.Dict != nil:
		return b.dict(pa.Dict)
	case pa.Str != nil:
		return StringAttr(syntax.Unquote(*pa.Str)), nil
	case pa.Bool != nil:
		return BoolAttr(*pa.Bool == "true"), nil
	case pa.Unit:
		return UnitAttr{}, nil
	case pa.Num != nil:
		return b.number(pa.Num)
	}
	t, err := b.typ(pa.Type)
	if err != nil {
		return nil, err
	}
	return &TypeAttr{Type: t}, nil
}

func (b *builder) number(pn *pNumber) (Attribute, error) {
	var t Type
	if pn.Type != nil {
		var err error
		if t, err = b.typ(pn.Type); err != nil {
			return nil, err
		}
	}
	st, _ := t.(*ScalarType)
	if t != nil && st == nil {
		if _, isIdx := t.(*IndexType); !isIdx {
			return nil, b.Errorf(pn.Type.Pos, "number attributes need a scalar type, got %s", t)
		}
	}
	isFloat := strings.ContainsAny(pn.Text, ".") && !strings.HasPrefix(pn.Text, "0x")
	if st != nil && st.DType.IsFloat() {
		v, err := parseFloatLit(pn.Text, st.DType)
		if err != nil {
			return nil, b.Errorf(pn.Pos, "%v", err)
		}
		return &FloatAttr{Value: v, Type: t}, nil
	}
	if isFloat {
		if t != nil {
			return nil, b.Errorf(pn.Pos, "floating point literal %s with integer type %s", pn.Text, t)
		}
		v, err := strconv.ParseFloat(pn.Text, 64)
		if err != nil {
			return nil, b.Errorf(pn.Pos, "invalid float literal %s", pn.Text)
		}
		return &FloatAttr{Value: v, Type: &ScalarType{F64}}, nil
	}
	if t == nil {
		t = I64Type
	}
	v, err := parseIntLit(pn.Text, t)
	if err != nil {
		return nil, b.Errorf(pn.Pos, "%v", err)
	}
	return &IntegerAttr{Value: v, Type: t}, nil
}

func (b *builder) dense(pd *pDense) (Attribute, error) {
	t, err := b.typ(pd.Type)
	if err != nil {
		return nil, err
	}
	tt, ok := t.(*TensorType)
	if !ok {
		return nil, b.Errorf(pd.Type.Pos, "dense elements need a tensor type, got %s", t)
	}
	if pd.Resource != nil {
		body := strings.TrimSuffix(strings.TrimPrefix(*pd.Resource, "dense_resource<"), ">")
		if strings.TrimSpace(body) != "__elided__" {
			return nil, b.Errorf(pd.Pos, "dense_resource blobs are not supported (only the elided placeholder dense_resource<__elided__>)")
		}
		return &DenseElementsAttr{Type: tt, Elided: true}, nil
	}
	body := (*pd.Body)[len("dense<") : len(*pd.Body)-1]
	d, err := parseDenseBody(body, tt)
	if err != nil {
		p := pd.Pos
		if de, ok := err.(*denseErr); ok {
			p.Column += len("dense<") + de.off
			err = de.err
		}
		return nil, b.Errorf(p, "%v", err)
	}
	return d, nil
}

func symbol(s string) string {
	s = strings.TrimPrefix(s, "@")
	if strings.HasPrefix(s, `"`) {
		return syntax.Unquote(s)
	}
	return s
}
