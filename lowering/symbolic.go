package lowering

import (
	"sort"

	"github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Symbolic dimensions in tensor IR (issue 19): a function whose tensor
// types have symbolic dimensions (graphir.TensorType.Sym) takes each
// symbol as an index-typed scalar parameter named after it, first and in
// name order (TVM's T.int64 shape vars of a dynamic PrimFunc), and its
// buffers' shapes are expressions of those parameters. The host function
// passes its own symbol parameters to every kernel call
// (tensorir.CallKernel.Scalars).

// symScope holds the scalar parameter of each symbol of one function.
type symScope struct {
	vars map[string]*tir.Var
}

func newSymScope() *symScope { return &symScope{vars: map[string]*tir.Var{}} }

// use records the symbols of t.
func (s *symScope) use(t *graphir.TensorType) {
	for _, name := range t.Symbols() {
		if s.vars[name] == nil {
			s.vars[name] = tir.NewVar(name, tir.DIndex)
		}
	}
}

// empty reports whether the function has no symbols.
func (s *symScope) empty() bool { return len(s.vars) == 0 }

// names lists the symbols in name order (the scalar parameters' order).
func (s *symScope) names() []string {
	out := make([]string, 0, len(s.vars))
	for n := range s.vars {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// params are the scalar parameters, in name order.
func (s *symScope) params(loc tir.Location) []*tir.Param {
	var out []*tir.Param
	for _, n := range s.names() {
		out = append(out, &tir.Param{Var: s.vars[n], Role: tir.RoleIn, Loc: loc})
	}
	return out
}

// expr is e as a tensor IR index expression over the scope's parameters
// (each symbol of e must have been recorded with use).
func (s *symScope) expr(e *graphir.SymExpr) tir.Expr {
	return graphir.FoldSym(e, graphir.SymAlgebra[tir.Expr]{
		Const:    func(c int64) tir.Expr { return tir.Int(c) },
		Symbol:   func(n string) tir.Expr { return s.vars[n] },
		Add:      func(a, b tir.Expr) tir.Expr { return tir.Add(a, b) },
		Mul:      func(a, b tir.Expr) tir.Expr { return tir.Mul(a, b) },
		FloorDiv: func(a tir.Expr, d int64) tir.Expr { return tir.FloorDiv(a, tir.Int(d)) },
	})
}

// dims are t's dimensions as expressions.
func (s *symScope) dims(t *graphir.TensorType) []tir.Expr {
	out := make([]tir.Expr, t.Rank())
	for i, d := range t.Dims() {
		out[i] = s.expr(d)
	}
	return out
}

// buffer makes a global row-major buffer for t, its symbolic dimensions
// expressions of the scope's parameters.
func (s *symScope) buffer(name string, t *graphir.TensorType, dt tir.DType) *tir.Buffer {
	if t.IsStatic() {
		return bufferFor(name, t, dt)
	}
	s.use(t)
	return &tir.Buffer{Name: name, DType: dt, Scope: tir.ScopeGlobal, Shape: s.dims(t)}
}

// byteSize is the size of a tensor of type t in bytes, as an expression of
// its symbols.
func byteSize(t *graphir.TensorType, dt tir.DType) *graphir.SymExpr {
	n := graphir.SymConst(tir.ElemBytes(dt))
	for _, d := range t.Dims() {
		n = n.Mul(d)
	}
	return n
}

// valueSymbols records the symbols of every tensor type in a fusion's
// region (its arguments and every op's results).
func (s *symScope) valueSymbols(body *graphir.Block) {
	for _, a := range body.Args {
		if t := graphir.AsTensor(a.Type); t != nil {
			s.use(t)
		}
	}
	for o := body.First(); o != nil; o = o.Next() {
		for _, r := range o.Results {
			if t := graphir.AsTensor(r.Type); t != nil {
				s.use(t)
			}
		}
	}
}

// argsFor is the call's values of kernel k's scalar parameters: the
// function's own parameter of each symbol, by name.
func (s *symScope) argsFor(k *tir.PrimFunc) []tir.Expr {
	var out []tir.Expr
	for _, p := range k.Params {
		if p.Var != nil {
			out = append(out, s.vars[p.Var.Name])
		}
	}
	return out
}
