package schedule

import (
	"sort"
	"strconv"
	"strings"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// transform_block_layout (TVM's TransformBlockLayout,
// src/tir/schedule/primitive/layout_transformation.cc).
//
// transform_block_layout(b, map) changes block b's iteration space: its
// iteration variables become the map's results, each a fusion of some of
// the old ones, and b's loop nest is replaced by one loop per new
// variable over its extent. A convolution's (n, co, oh, ow, ci, kh, kw)
// becomes a GEMM's (m, co, k) with
// (n, co, oh, ow, ci, kh, kw) -> (n*OH*OW + oh*OW + ow, co, ci*KH*KW + kh*KW + kw);
// reindex then gives its operands the [M][K] and [K][N] forms.
//
// Requirements: b's bindings are trivial (each variable its own loop over
// a domain from 0, no predicate) and those loops are a perfect nest
// directly around b; the map has one parameter per iteration variable (in
// b's order) and each result is Σ v·stride over a set of parameters with
// the row-major strides of their extents (the variable with stride 1
// innermost), every parameter in exactly one result, the variables of a
// result of one kind (spatial or reduce). The old variables are then
// recovered with floordiv and floormod of the new ones. TVM accepts any
// bijective affine map (its iter-map detection); fusions and
// permutations are what a convolution-to-GEMM layout needs.

// TransformBlockLayout remaps block b's iteration variables with m (TVM's
// transform_block_layout); see the file comment for the maps it takes.
func (s *Schedule) TransformBlockLayout(b BlockRV, m IndexMap) error {
	const prim = "transform_block_layout"
	r := findBlock(s.f.Body, b.Name)
	if r == nil {
		return s.Errorf(prim, &b, nil, "no such block in @%s", s.f.Name)
	}
	if why := s.trivialBinding(b, r); why != "" {
		return s.Errorf(prim, &b, nil, "%s", why)
	}
	nest, why := s.blockNest(b, r)
	if why != "" {
		return s.Errorf(prim, &b, nil, "%s", why)
	}
	ivs := r.Block.IterVars
	if len(m.Params) != len(ivs) {
		return s.Errorf(prim, &b, nil, "index map %s has %d parameters, the block %d iteration variables", m, len(m.Params), len(ivs))
	}
	fused, why := fusions(m, ivs)
	if why != "" {
		return s.Errorf(prim, &b, nil, "index map %s: %s", m, why)
	}
	top := rebuildNest(r, nest, fused, s.loopEnv())
	body := tir.Mutate(s.f.Body, func(x tir.Stmt) (tir.Stmt, bool) {
		if x == tir.Stmt(nest[0]) {
			return top, true
		}
		return nil, false
	})
	if err := s.install(prim, &b, nil, body); err != nil {
		return err
	}
	s.Record(prim, []any{b}, indexMapAttrs(m), nil, nil)
	return nil
}

// blockNest is the loops bound to r's iteration variables, outermost
// first, when they are a perfect nest directly around r.
func (s *Schedule) blockNest(b BlockRV, r *tir.BlockRealize) ([]*tir.For, string) {
	fors, err := s.LoopsOf(b)
	if err != nil {
		return nil, err.Error()
	}
	n := len(r.Block.IterVars)
	if len(fors) < n {
		return nil, "the block is not under a loop per iteration variable"
	}
	nest := fors[len(fors)-n:]
	for i, f := range nest {
		var want tir.Stmt = r
		if i+1 < n {
			want = nest[i+1]
		}
		body := f.Body
		if q, ok := body.(*tir.SeqStmt); ok && len(q.Stmts) == 1 {
			body = q.Stmts[0]
		}
		if body != want {
			return nil, "loop %" + f.Var.Name + " holds more than the block's nest (not a perfect nest)"
		}
		bound := false
		for _, v := range r.Values {
			bound = bound || v == tir.Expr(f.Var)
		}
		if !bound {
			return nil, "loop %" + f.Var.Name + " is not bound to an iteration variable of the block"
		}
	}
	return nest, ""
}

// fusion is a new iteration variable: the old ones it fuses (indices
// into the block's, outermost first) and its extent.
type fusion struct {
	olds   []int
	extent int64
	kind   tir.IterKind
}

// fusions reads m's results as fusions of the iteration variables ivs.
func fusions(m IndexMap, ivs []*tir.IterVar) ([]fusion, string) {
	param := map[*tir.Var]int{}
	ext := make([]int64, len(ivs))
	for i, v := range m.Params {
		param[v] = i
		lo, ok1 := constInt(ivs[i].Dom.Min)
		e, ok2 := constInt(ivs[i].Dom.Extent)
		if !ok1 || !ok2 || lo != 0 {
			return nil, "%" + ivs[i].Var.Name + "'s domain is not a constant range from 0"
		}
		ext[i] = e
	}
	seen := make([]bool, len(ivs))
	out := make([]fusion, len(m.Results))
	for j, e := range m.Results {
		terms, ok := strideTerms(e, param)
		if !ok || len(terms) == 0 {
			return nil, "result " + imExprString(e, 0) + " is not a sum of parameters times constant strides"
		}
		sort.SliceStable(terms, func(a, b int) bool { return terms[a].stride > terms[b].stride })
		f := fusion{extent: 1, kind: ivs[terms[0].param].Kind}
		want := int64(1)
		for t := len(terms) - 1; t >= 0; t-- {
			p := terms[t].param
			if seen[p] {
				return nil, "parameter " + m.Params[p].Name + " is used twice"
			}
			seen[p] = true
			if terms[t].stride != want {
				return nil, "result " + imExprString(e, 0) + " does not fuse its parameters row-major (the stride of " + m.Params[p].Name + " should be " + itoa(want) + ")"
			}
			if ivs[p].Kind != f.kind {
				return nil, "result " + imExprString(e, 0) + " fuses spatial and reduce iteration variables"
			}
			want *= ext[p]
		}
		for _, t := range terms {
			f.olds = append(f.olds, t.param)
		}
		f.extent = want
		out[j] = f
	}
	for i, ok := range seen {
		if !ok {
			return nil, "parameter " + m.Params[i].Name + " is not used"
		}
	}
	return out, ""
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

type strideTerm struct {
	param  int
	stride int64
}

// strideTerms reads e as Σ param·stride (positive constant strides).
func strideTerms(e tir.Expr, param map[*tir.Var]int) ([]strideTerm, bool) {
	switch x := e.(type) {
	case *tir.Var:
		p, ok := param[x]
		return []strideTerm{{p, 1}}, ok
	case *tir.Binary:
		switch x.Op {
		case tir.OpAdd:
			a, ok1 := strideTerms(x.A, param)
			b, ok2 := strideTerms(x.B, param)
			return append(a, b...), ok1 && ok2
		case tir.OpMul:
			v, c := x.A, x.B
			if _, isConst := v.(*tir.IntImm); isConst {
				v, c = c, v
			}
			k, ok := constInt(c)
			ts, ok2 := strideTerms(v, param)
			if !ok || !ok2 || k <= 0 || len(ts) != 1 {
				return nil, false
			}
			ts[0].stride *= k
			return ts, true
		}
	}
	return nil, false
}

// rebuildNest is the loop nest (one loop per new variable) around r over
// the fused iteration variables that replaces nest.
func rebuildNest(r *tir.BlockRealize, nest []*tir.For, fused []fusion, env tir.BoundEnv) tir.Stmt {
	ivs := r.Block.IterVars
	sub := map[*tir.Var]tir.Expr{}
	newIVs := make([]*tir.IterVar, len(fused))
	loops := make([]*tir.Var, len(fused))
	for j, f := range fused {
		ivNames, loopNames := make([]string, len(f.olds)), make([]string, len(f.olds))
		for i, o := range f.olds {
			ivNames[i] = ivs[o].Var.Name
			loopNames[i] = r.Values[o].(*tir.Var).Name
		}
		v := tir.NewVar(fusedName(ivNames), ivs[f.olds[0]].Var.DType())
		loops[j] = tir.NewVar(fusedName(loopNames), v.DType())
		newIVs[j] = &tir.IterVar{Var: v, Dom: tir.Range{Min: tir.IntOf(v.DType(), 0), Extent: tir.IntOf(v.DType(), f.extent)}, Kind: f.kind}
		env[v] = tir.Interval{Lo: 0, Hi: f.extent - 1}
		stride := int64(1)
		for i := len(f.olds) - 1; i >= 0; i-- {
			o := f.olds[i]
			var e tir.Expr = v
			if stride > 1 {
				e = tir.FloorDiv(e, tir.IntOf(v.DType(), stride))
			}
			if i > 0 {
				e = tir.FloorMod(e, ivs[o].Dom.Extent)
			}
			sub[ivs[o].Var] = e
			ext, _ := constInt(ivs[o].Dom.Extent)
			stride *= ext
		}
	}
	nr := substStmt(r, sub, env).(*tir.BlockRealize)
	nb := *nr.Block
	nb.IterVars = newIVs
	nr.Block = &nb
	nr.Values = make([]tir.Expr, len(loops))
	for j, l := range loops {
		nr.Values[j] = l
	}
	var st tir.Stmt = nr
	for j := len(loops) - 1; j >= 0; j-- {
		st = &tir.For{Var: loops[j], Min: tir.IntOf(loops[j].DType(), 0), Extent: newIVs[j].Dom.Extent, Body: st, Loc: nest[0].Loc}
	}
	return st
}

// fusedName is a fused variable's name: the one name, or the names joined
// with "_fused" (fuse's convention).
func fusedName(names []string) string {
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names, "_") + "_fused"
}

func init() {
	RegisterInstruction("transform_block_layout", func(s *Schedule, in []any, attrs map[string]any, _ any) ([]any, error) {
		b, err := BlockInput(in, 0)
		if err != nil {
			return nil, err
		}
		m, err := indexMapOf(attrs)
		if err != nil {
			return nil, err
		}
		return nil, s.TransformBlockLayout(b, m)
	})
}
