package hlo

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	g "github.com/tessera-ml/tessera/graphir"
)

// randAttr returns a well-formed or malformed attribute value.
func randAttr(r *rand.Rand) g.Attribute {
	switch r.Intn(9) {
	case 0:
		return g.IntAttr(int64(r.Intn(7) - 2))
	case 1:
		return g.StringAttr([]string{"EQ", "loop", "x", ""}[r.Intn(4)])
	case 2:
		return g.ArrayAttr{g.StringAttr("a"), g.IntAttr(1)}
	case 3:
		pairs := make(g.ArrayAttr, r.Intn(4))
		for i := range pairs {
			if r.Intn(4) == 0 {
				pairs[i] = g.I64Array(1)
			} else {
				pairs[i] = g.I64Array(int64(r.Intn(5)-2), int64(r.Intn(5)-2))
			}
		}
		return pairs
	case 4:
		return g.F32Attr(1.5)
	default:
		vs := make([]int64, r.Intn(5))
		for i := range vs {
			vs[i] = int64(r.Intn(7) - 2)
		}
		return g.I64Array(vs...)
	}
}

func randType(r *rand.Rand) *g.TensorType {
	shape := make([]int64, r.Intn(5))
	for i := range shape {
		shape[i] = int64(r.Intn(4))
	}
	elems := []g.DType{g.F32, g.F32, g.F32, g.I32, g.I1, g.F16}
	return g.NewTensor(elems[r.Intn(len(elems))], shape...)
}

var attrNames = []string{"dimensions", "window_dimensions", "window_strides", "base_dilations", "window_dilations",
	"padding", "lhs_dilation", "rhs_dilation", "feature_group_count", "lhs_batching_dimensions", "rhs_batching_dimensions",
	"lhs_contracting_dimensions", "rhs_contracting_dimensions", "broadcast_dimensions", "permutation",
	"edge_padding_low", "edge_padding_high", "interior_padding", "start_indices", "limit_indices", "strides",
	"dimension", "comparison_direction", "kind", "value"}

// TestNoPanicOnMalformedOps throws random operand types, operand counts,
// attributes and regions at every hlo op's Infer, Verify and Eval (Eval
// only on ops that verify) and at the whole verifier: each must answer
// with a diagnostic, never a panic.
func TestNoPanicOnMalformedOps(t *testing.T) {
	r := rand.New(rand.NewSource(99))
	var names []string
	for _, n := range g.RegisteredOps() {
		if strings.HasPrefix(n, "hlo.") {
			names = append(names, n)
		}
	}
	require.NotEmpty(t, names)
	evaluated := 0
	for iter := 0; iter < 20000; iter++ {
		name := names[r.Intn(len(names))]
		def := g.LookupOp(name)
		nops := def.Operands.Min
		if r.Intn(8) == 0 {
			nops = r.Intn(4)
		}
		var ins []g.Type
		for i := 0; i < nops; i++ {
			ins = append(ins, randType(r))
		}
		// bias towards plausible inputs: often make all operands equal
		if r.Intn(2) == 0 && nops > 1 {
			for i := range ins {
				ins[i] = ins[0]
			}
		}
		if (name == ReduceOp || name == ReduceWindowOp || name == PadOp) && nops == 2 && r.Intn(2) == 0 {
			ins[1] = g.NewTensor(ins[0].(*g.TensorType).Elem)
		}
		b := newFB(t, ins...)
		var a g.DictAttr
		for k := r.Intn(4); k > 0; k-- {
			a = a.Set(attrNames[r.Intn(len(attrNames))], randAttr(r))
		}
		if name == ConstantOp && r.Intn(2) == 0 {
			ty := randType(r)
			d := &g.DenseElementsAttr{Type: ty}
			d.Floats = make([]float64, r.Intn(3))
			d.Ints = make([]int64, len(d.Floats))
			a = a.Set("value", d)
		}
		res := []g.Type{randType(r)}
		op := b.op(name, b.f.Args(), res, a)
		if def.Infer != nil && r.Intn(2) == 0 {
			if tys, err := def.Infer(op); err == nil {
				op.Results[0].Type = tys[0]
			}
		}
		if def.Regions > 0 && r.Intn(4) != 0 {
			var argTys []g.Type
			for k := r.Intn(3); k >= 0; k-- {
				argTys = append(argTys, g.NewTensor(g.F32))
			}
			blk := g.NewBlock(argTys...)
			if r.Intn(2) == 0 && len(argTys) >= 2 {
				add, err := g.Build(AddOp, blk.Args[:2], nil, loc())
				require.NoError(t, err)
				blk.Append(add)
				blk.Append(g.NewOp(ReturnOp, add.Results, nil, nil, loc()))
			} else {
				blk.Append(g.NewOp(ReturnOp, blk.Args[:r.Intn(len(blk.Args)+1)], nil, nil, loc()))
			}
			op.AddRegion(g.NewRegion(blk))
		}
		b.ret(op.Results...)
		func() {
			defer func() {
				if p := recover(); p != nil {
					t.Fatalf("panic %v on\n%s", p, describe(op))
				}
			}()
			if def.Infer != nil {
				_, _ = def.Infer(op)
			}
			if def.Verify != nil {
				_ = def.Verify(op)
			}
			if g.Verify(b.m) == nil {
				args := randArgs(r, b.f)
				if _, err := g.Interpret(b.f, args); err == nil {
					evaluated++
				}
			}
		}()
	}
	t.Logf("%d random ops verified and evaluated", evaluated)
	require.Greater(t, evaluated, 500)
}

// describe prints op for a failure report (malformed dense values may not
// print: fall back to the name and attribute names).
func describe(op *g.Op) (s string) {
	defer func() {
		if recover() != nil {
			s = fmt.Sprintf("%s with attributes %v and operands %v", op.Name, op.Attrs, op.Operands())
		}
	}()
	return g.PrintOp(op, g.PrintOptions{Generic: true})
}
