package tensorir_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

func TestDType(t *testing.T) {
	for _, s := range []string{"i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64", "index", "f16", "bf16", "f32", "f64", "f32x4", "i8x16", "ui8x32", "indexx2"} {
		d, ok := tir.ParseDType(s)
		require.True(t, ok, s)
		assert.Equal(t, s, d.String())
	}
	for _, s := range []string{"", "f31", "x4", "f32x", "f32x1", "f32x04", "float32", "f32x4x2"} {
		_, ok := tir.ParseDType(s)
		assert.False(t, ok, s)
	}
	assert.Equal(t, 16, tir.DBF16.Bits())
	assert.Equal(t, 64, tir.DIndex.Bits())
	assert.True(t, tir.DF16.IsFloat())
	assert.True(t, tir.DBool.IsInt() && tir.DBool.IsBool())
	assert.Equal(t, tir.DType{Kind: tir.F32, Lanes: 8}, tir.DF32.WithLanes(8))
	assert.True(t, tir.DUI64.IsInt() && tir.DUI64.IsUnsigned() && !tir.DI64.IsUnsigned() && !tir.DBool.IsUnsigned())
	assert.Equal(t, 16, tir.DUI16.Bits())
	assert.Equal(t, int64(255), tir.WrapInt(tir.DUI8, -1))
	assert.Equal(t, int64(-1), tir.WrapInt(tir.DUI64, -1), "ui64 keeps the bit pattern")
	assert.Equal(t, int64(-32768), tir.WrapInt(tir.DI16, 32768))
	assert.Equal(t, int64(4294967295), tir.WrapInt(tir.DUI32, -1))
}

func TestHalfPrecision(t *testing.T) {
	cases := []struct {
		in   float32
		bits uint16
	}{
		{1, 0x3C00}, {-2, 0xC000}, {65504, 0x7BFF}, {65520, 0x7C00}, {1e-8, 0},
		{5.960464477539063e-08, 0x0001}, // smallest subnormal
		{2.9802322387695312e-08, 0},     // half of it: ties to even (0)
		{8.940696716308594e-08, 0x0002}, // 1.5 ulps: ties to even (2)
		{6.097555160522461e-05, 0x03FF}, // largest subnormal
		{1.0009765625, 0x3C01}, {1.00048828125, 0x3C00}, {1.00146484375, 0x3C02},
		{float32(math.Inf(-1)), 0xFC00},
	}
	for _, c := range cases {
		assert.Equal(t, c.bits, tir.Float32ToF16(c.in), "%g", c.in)
		if c.bits&0x7FFF != 0 && c.bits != 0x7C00 {
			assert.Equal(t, c.bits, tir.Float32ToF16(tir.F16ToFloat32(c.bits)))
		}
	}
	assert.True(t, math.IsNaN(float64(tir.F16ToFloat32(tir.Float32ToF16(float32(math.NaN()))))))
	// Every binary16 value converts to float32 and back exactly.
	for h := 0; h < 1<<16; h++ {
		if h&0x7C00 == 0x7C00 && h&0x3FF != 0 {
			continue // NaN
		}
		require.Equal(t, uint16(h), tir.Float32ToF16(tir.F16ToFloat32(uint16(h))), "%#04x", h)
		require.Equal(t, uint16(h), tir.Float32ToBF16(tir.BF16ToFloat32(uint16(h))), "%#04x", h)
	}
	assert.Equal(t, uint16(0x3F80), tir.Float32ToBF16(1))
	assert.Equal(t, uint16(0x3F80), tir.Float32ToBF16(1.00390625)) // tie to even
	assert.Equal(t, uint16(0x3F82), tir.Float32ToBF16(1.01171875)) // tie to even (up)
	assert.Equal(t, 1.0, tir.RoundFloat(tir.DBF16, 1.001))
}

// IR built through the API prints with unique, valid names even where
// its Vars share names or shadow each other.
func TestPrintRenames(t *testing.T) {
	a := tir.NewBuffer("A b", tir.DF32, 4, 4)
	i1, i2 := tir.NewVar("i", tir.DIndex), tir.NewVar("i", tir.DIndex)
	x := tir.NewVar("i", tir.DF32)
	f := &tir.PrimFunc{Name: "ren", Params: []*tir.Param{{Buffer: a, Role: tir.RoleOut}},
		Body: &tir.For{Var: i1, Min: tir.Int(0), Extent: tir.Int(4), Body: &tir.For{Var: i2, Min: i1, Extent: tir.Int(1),
			Body: &tir.LetStmt{Var: x, Value: tir.Load(a, i1, i2), Body: &tir.BufferStore{Buffer: a, Indices: []tir.Expr{i2, i1}, Value: x}}}}}
	require.NoError(t, tir.VerifyFunc(f))
	out := tir.PrintFunc(f, tir.PrintOptions{})
	assert.Equal(t, `tir.func @ren(out %A_b: buffer<4x4xf32>) {
  tir.for %i = 0 to 4 {
    tir.for %i_1 = %i to %i + 1 {
      tir.let %i_2 = %A_b[%i, %i_1] {
        %A_b[%i_1, %i] = %i_2
      }
    }
  }
}
`, out)
	m, err := tir.ParseString("r.tir", out)
	require.NoError(t, err)
	require.NoError(t, tir.Verify(m))
	assert.Equal(t, out, tir.Print(m))
}

func TestSeqAndHelpers(t *testing.T) {
	e1 := &tir.Evaluate{Value: tir.Int(1)}
	e2 := &tir.Evaluate{Value: tir.Int(2)}
	assert.Same(t, e1, tir.Seq(e1).(*tir.Evaluate))
	s := tir.Seq(tir.Seq(e1, e2), nil, e1).(*tir.SeqStmt)
	assert.Len(t, s.Stmts, 3)
	b := tir.NewBuffer("B", tir.DI32, 2, 3)
	shape, ok := b.ConstShape()
	assert.True(t, ok)
	assert.Equal(t, []int64{2, 3}, shape)
	assert.True(t, tir.Equal(tir.Add(tir.Int(1), tir.Load(b, tir.Int(0), tir.Int(1))), tir.Add(tir.Int(1), tir.Load(b, tir.Int(0), tir.Int(1)))))
	assert.False(t, tir.Equal(tir.Int(1), tir.IntOf(tir.DI32, 1)))
	assert.False(t, tir.Equal(tir.NewVar("v", tir.DIndex), tir.NewVar("v", tir.DIndex)))
	assert.True(t, tir.Equal(tir.Float(tir.DF32, math.NaN()), tir.Float(tir.DF32, math.NaN())))
	assert.Equal(t, int64(-128), tir.IntOf(tir.DI8, 128).Value)
	assert.Equal(t, "0.1", tir.ExprString(tir.Float(tir.DF32, 0.1)))
	assert.Equal(t, "0.1 : f64", tir.ExprString(tir.Float(tir.DF64, 0.1)))
	assert.Equal(t, "0x7FF0000000000000 : f64", tir.ExprString(tir.Float(tir.DF64, math.Inf(1))))
	assert.Equal(t, "0xFC00 : f16", tir.ExprString(tir.Float(tir.DF16, math.Inf(-1))))
	m := &tir.Module{}
	require.NoError(t, m.Add(&tir.PrimFunc{Name: "f", Body: &tir.SeqStmt{}}))
	require.Error(t, m.Add(&tir.PrimFunc{Name: "f", Body: &tir.SeqStmt{}}))
	assert.Equal(t, "tir.func @f() {\n}\n", tir.Print(m))
}

func TestSubstituteAndVisit(t *testing.T) {
	i, j := tir.NewVar("i", tir.DIndex), tir.NewVar("j", tir.DIndex)
	a := tir.NewBuffer("A", tir.DF32, 8)
	e := tir.Add(tir.Load(a, tir.Add(tir.Mul(i, tir.Int(2)), j)), &tir.Call{Name: "exp", Args: []tir.Expr{tir.Load(a, j)}})
	io, ii := tir.NewVar("io", tir.DIndex), tir.NewVar("ii", tir.DIndex)
	s := tir.Substitute(e, map[*tir.Var]tir.Expr{i: tir.Add(tir.Mul(io, tir.Int(2)), ii)})
	assert.Equal(t, "%A[(%io * 2 + %ii) * 2 + %j] + exp(%A[%j])", tir.ExprString(s))
	assert.Same(t, e.(*tir.Binary).B, s.(*tir.Binary).B, "untouched subtrees are shared")
	assert.Same(t, e, tir.Substitute(e, map[*tir.Var]tir.Expr{io: j}))

	m := tensorLevel.MustParse(t, conv2dText)
	var loops, blocks, stores []string
	tir.VisitStmt(m.Funcs[0].Body, func(s tir.Stmt) bool {
		switch x := s.(type) {
		case *tir.For:
			loops = append(loops, x.Var.Name)
		case *tir.Block:
			blocks = append(blocks, x.Name)
		case *tir.BufferStore:
			stores = append(stores, x.Buffer.Name)
		}
		return true
	})
	assert.Equal(t, []string{"n", "f", "y", "x", "c", "ky", "kx"}, loops)
	assert.Equal(t, []string{"Y"}, blocks)
	assert.Equal(t, []string{"Y", "Y"}, stores, "init and body")
	n := 0
	tir.VisitStmt(m.Funcs[0].Body, func(s tir.Stmt) bool { n++; return false })
	assert.Equal(t, 1, n)
}

// TestReduceEmptiesOutput: a symbolic reduce extent keeps the one-block
// form only when, at 0, it zeroes an output dimension too; otherwise
// Block emits an init block and an accumulating reduction.
func TestReduceEmptiesOutput(t *testing.T) {
	n, m := tir.NewVar("n", tir.DIndex), tir.NewVar("m", tir.DIndex)
	out := tir.NewBuffer("o", tir.DF32, 4)
	for _, c := range []struct {
		extents, reduce []tir.Expr
		want            bool
	}{
		{[]tir.Expr{n, tir.Int(4)}, []tir.Expr{n}, true},
		{[]tir.Expr{tir.Mul(tir.Int(2), n), m}, []tir.Expr{tir.Mul(tir.Mul(tir.Int(3), n), m)}, true},
		{[]tir.Expr{tir.Int(4)}, []tir.Expr{n}, false},
		{[]tir.Expr{n}, []tir.Expr{tir.Mul(n, m)}, false},
		{[]tir.Expr{n}, []tir.Expr{tir.Add(n, tir.Int(1))}, false},
		{[]tir.Expr{n}, []tir.Expr{tir.FloorDiv(n, tir.Int(2))}, false},
		{[]tir.Expr{tir.Int(4)}, []tir.Expr{tir.Int(3)}, true},
	} {
		comp := &tir.Compute{Shape: []int64{-1}, Extents: c.extents, Reduce: []int64{-1}, ReduceExtents: c.reduce,
			Init: func(tir.Nest) tir.Expr { return tir.Float(tir.DF32, 0) }, Body: func(_ tir.Nest, acc tir.Expr) tir.Expr { return acc }}
		assert.Equal(t, c.want, comp.ReduceEmptiesOutput(), "extents %v reduce %v", c.extents, c.reduce)
	}
	comp := &tir.Compute{Shape: []int64{4}, Reduce: []int64{-1}, ReduceExtents: []tir.Expr{n},
		Init: func(tir.Nest) tir.Expr { return tir.Float(tir.DF32, 0) },
		Body: func(nest tir.Nest, acc tir.Expr) tir.Expr { return tir.Add(acc, tir.Float(tir.DF32, 1)) }}
	s := comp.Block("sum", out, tir.Location{})
	seq, ok := s.(*tir.SeqStmt)
	require.True(t, ok, "decomposed into two nests")
	require.Len(t, seq.Stmts, 2)
	var names []string
	tir.VisitStmt(s, func(x tir.Stmt) bool {
		if b, ok := x.(*tir.Block); ok {
			names = append(names, b.Name)
			if b.Name == "sum" {
				assert.Nil(t, b.Init)
				assert.Contains(t, b.Annotations, tir.AttrAccumulate)
			}
		}
		return true
	})
	assert.Equal(t, []string{"sum_init", "sum"}, names)
}
