package hlo

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	g "github.com/tessera-ml/tessera/graphir"
)

// fuseAndCheck verifies b's function, interprets it on random inputs, runs
// the fusion pass, verifies again, checks the top level holds only
// non-splat constants, fusions and func.return, and checks the results
// agree bit for bit. It returns the fusions in program order.
func fuseAndCheck(t *testing.T, b *fb, seed int64) []*g.Op {
	t.Helper()
	return fuseWithAndCheck(t, b, seed, FusePolicy{})
}

// fuseWithAndCheck is fuseAndCheck with a fusion policy.
func fuseWithAndCheck(t *testing.T, b *fb, seed int64, pol FusePolicy) []*g.Op {
	t.Helper()
	require.NoError(t, b.verify())
	r := rand.New(rand.NewSource(seed))
	args := randArgs(r, b.f)
	before := interpret(t, b.f, args)
	require.NoError(t, FuseFuncWith(b.f, pol))
	require.NoError(t, b.verify(), g.Print(b.m))
	after := interpret(t, b.f, args)
	require.Len(t, after, len(before))
	for i := range before {
		require.True(t, before[i].Type.Equal(after[i].Type))
		for j := range before[i].Data {
			x, y := before[i].Data[j], after[i].Data[j]
			require.True(t, x == y || (math.IsNaN(x) && math.IsNaN(y)), "result %d element %d: %v before, %v after", i, j, x, y)
		}
	}
	var fusions []*g.Op
	for _, op := range b.f.Entry().Ops() {
		switch {
		case op.Name == FusionOp:
			fusions = append(fusions, op)
		case op.Name == ConstantOp:
			assert.False(t, isSplatConstant(op), "splat constant left at top level")
		case op.Name == g.ReturnOpName:
		default:
			t.Errorf("unexpected top-level op %s after fusion", op.Name)
		}
	}
	// running the pass again changes nothing
	text := g.Print(b.m)
	require.NoError(t, FuseFuncWith(b.f, pol))
	assert.Equal(t, text, g.Print(b.m))
	return fusions
}

// bodyNames lists the op names inside a fusion, without the terminator.
func bodyNames(f *g.Op) []string {
	var names []string
	for _, op := range f.Regions[0].Blocks[0].Ops() {
		if op.Name != ReturnOp {
			names = append(names, op.Name)
		}
	}
	return names
}

func kindOf(f *g.Op) string { return must(f.Str("kind")) }

func (b *fb) constant(r *rand.Rand, t *g.TensorType) *g.Value {
	c := Constant(randTensor(r, t), loc())
	b.f.Entry().Append(c)
	return c.Results[0]
}

func (b *fb) splat(v float64, t *g.TensorType) *g.Value {
	c := Splat(t.Elem, t.Shape, v, loc())
	b.f.Entry().Append(c)
	return c.Results[0]
}

func (b *fb) bin(name string, x, y *g.Value) *g.Value {
	return b.build(name, []*g.Value{x, y}, nil).Results[0]
}

func (b *fb) un(name string, x *g.Value) *g.Value {
	return b.build(name, []*g.Value{x}, nil).Results[0]
}

func (b *fb) bcast(x *g.Value, rt *g.TensorType, dims ...int64) *g.Value {
	return b.add(BroadcastInDim(x, rt, dims, loc())).Results[0]
}

// dense: x[M×K] · w[N×K]ᵀ + bias[N]
func (b *fb) dense(r *rand.Rand, x *g.Value, n int64) *g.Value {
	xt := x.Type.(*g.TensorType)
	m, k := xt.Shape[0], xt.Shape[1]
	w := b.constant(r, f32(n, k))
	bias := b.constant(r, f32(n))
	d := b.add(DotGeneral(x, w, DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{1}}, loc())).Results[0]
	return b.bin(AddOp, d, b.bcast(bias, f32(m, n), 1))
}

func TestFuseMLPTwoOutputFusions(t *testing.T) {
	r := rand.New(rand.NewSource(21))
	b := newFB(t, f32(2, 1, 4, 4))
	x := b.add(Reshape(b.arg(0), f32(2, 16), loc())).Results[0]
	h := b.dense(r, x, 8)
	h = b.bin(MaximumOp, h, b.splat(0, f32(2, 8)))
	y := b.dense(r, h, 4)
	b.ret(y)
	fs := fuseAndCheck(t, b, 1)
	require.Len(t, fs, 2)
	assert.Equal(t, "output", kindOf(fs[0]))
	assert.Equal(t, "output", kindOf(fs[1]))
	assert.Equal(t, []string{ConstantOp, ReshapeOp, DotGeneralOp, BroadcastInDimOp, AddOp, MaximumOp}, bodyNames(fs[0]))
	assert.Equal(t, []string{DotGeneralOp, BroadcastInDimOp, AddOp}, bodyNames(fs[1]))
	// operands in first-use order: x, w1, b1 / h, w2, b2
	require.Equal(t, 3, fs[0].NumOperands())
	assert.Equal(t, b.arg(0), fs[0].Operand(0))
	assert.Equal(t, fs[0].Results[0], fs[1].Operand(0))
	for _, f := range fs {
		for _, o := range f.Operands()[1:] {
			assert.Equal(t, ConstantOp, o.Def.Name)
		}
	}
}

func TestFuseSoftmax(t *testing.T) {
	b := newFB(t, f32(3, 5))
	x := b.arg(0)
	m := b.add(Reduce(x, b.splat(math.Inf(-1), f32()), []int64{1}, MaximumOp, loc())).Results[0]
	s := b.bin(SubtractOp, x, b.bcast(m, f32(3, 5), 0))
	e := b.un(ExponentialOp, s)
	sum := b.add(Reduce(e, b.splat(0, f32()), []int64{1}, AddOp, loc())).Results[0]
	y := b.bin(DivideOp, e, b.bcast(sum, f32(3, 5), 0))
	b.ret(y)
	fs := fuseAndCheck(t, b, 2)
	require.Len(t, fs, 4)
	kinds := []string{kindOf(fs[0]), kindOf(fs[1]), kindOf(fs[2]), kindOf(fs[3])}
	assert.Equal(t, []string{"input", "loop", "input", "loop"}, kinds)
	assert.Equal(t, []string{ConstantOp, ReduceOp}, bodyNames(fs[0]))
	assert.Equal(t, []string{BroadcastInDimOp, SubtractOp, ExponentialOp}, bodyNames(fs[1]))
	assert.Equal(t, []string{BroadcastInDimOp, DivideOp}, bodyNames(fs[3]))
	// exp has two users in different groups: its fusion result feeds both
	assert.Len(t, fs[1].Results[0].Uses(), 2)
}

func TestFuseConvBiasRelu(t *testing.T) {
	r := rand.New(rand.NewSource(22))
	b := newFB(t, f32(1, 3, 8, 8))
	w := b.constant(r, f32(4, 3, 3, 3))
	bias := b.constant(r, f32(4))
	c := b.add(Convolution(b.arg(0), w, ConvConfig{PadLow: []int64{1, 1}, PadHigh: []int64{1, 1}}, loc())).Results[0]
	y := b.bin(AddOp, c, b.bcast(bias, f32(1, 4, 8, 8), 1))
	y = b.bin(MaximumOp, y, b.splat(0, f32(1, 4, 8, 8)))
	b.ret(y)
	fs := fuseAndCheck(t, b, 3)
	require.Len(t, fs, 1)
	assert.Equal(t, "output", kindOf(fs[0]))
	assert.Equal(t, []string{ConstantOp, ConvolutionOp, BroadcastInDimOp, AddOp, MaximumOp}, bodyNames(fs[0]))
	assert.Equal(t, 3, fs[0].NumOperands())
}

// One bias broadcast used by two conv epilogues and the multiply after
// the second: each consumer gets its own copy, so no fusion materializes the broadcast
// and every fusion takes the 4-element bias as its operand.
func TestFuseSharedBroadcastDuplicated(t *testing.T) {
	r := rand.New(rand.NewSource(24))
	b := newFB(t, f32(1, 3, 8, 8))
	w1 := b.constant(r, f32(4, 3, 3, 3))
	w2 := b.constant(r, f32(4, 4, 3, 3))
	bias := b.constant(r, f32(4))
	bb := b.bcast(bias, f32(1, 4, 8, 8), 1)
	pad := ConvConfig{PadLow: []int64{1, 1}, PadHigh: []int64{1, 1}}
	c1 := b.add(Convolution(b.arg(0), w1, pad, loc())).Results[0]
	y1 := b.bin(AddOp, c1, bb)
	c2 := b.add(Convolution(y1, w2, pad, loc())).Results[0]
	y2 := b.bin(AddOp, c2, bb)
	b.ret(b.bin(MultiplyOp, y2, bb))
	fs := fuseAndCheck(t, b, 6)
	require.Len(t, fs, 2)
	assert.Equal(t, []string{BroadcastInDimOp, ConvolutionOp, AddOp}, bodyNames(fs[0]))
	assert.Equal(t, []string{BroadcastInDimOp, BroadcastInDimOp, ConvolutionOp, AddOp, MultiplyOp}, bodyNames(fs[1]))
	for _, f := range fs {
		assert.Contains(t, f.Operands(), bias, "the bias, not a broadcast tensor, is the operand")
	}
}

// An elementwise op computed from constants alone (a requantization's
// rounding term, here 2^(shift+14) per channel broadcast to full size),
// shared by two convolution epilogues: each epilogue computes its own
// copy, so no fusion without inputs materializes it at full size.
func TestFuseSharedConstantComputationDuplicated(t *testing.T) {
	r := rand.New(rand.NewSource(25))
	b := newFB(t, f32(1, 3, 8, 8))
	w1 := b.constant(r, f32(4, 3, 3, 3))
	w2 := b.constant(r, f32(4, 4, 3, 3))
	shift := b.constant(r, f32(4))
	term := b.un(ExponentialOp, b.bin(AddOp, b.bcast(shift, f32(1, 4, 8, 8), 1), b.splat(14, f32(1, 4, 8, 8))))
	pad := ConvConfig{PadLow: []int64{1, 1}, PadHigh: []int64{1, 1}}
	c1 := b.add(Convolution(b.arg(0), w1, pad, loc())).Results[0]
	y1 := b.bin(AddOp, c1, term)
	c2 := b.add(Convolution(y1, w2, pad, loc())).Results[0]
	b.ret(b.bin(AddOp, c2, term))
	fs := fuseAndCheck(t, b, 7)
	require.Len(t, fs, 2)
	for _, f := range fs {
		assert.Contains(t, bodyNames(f), ExponentialOp, "the shared term is computed in each epilogue")
		assert.Contains(t, f.Operands(), shift, "the per-channel constant, not a full-size tensor, is the operand")
	}
}

func TestFuseReduceWithElementwiseProducers(t *testing.T) {
	b := newFB(t, f32(4, 6))
	sq := b.bin(MultiplyOp, b.arg(0), b.arg(0))
	e := b.un(ExponentialOp, b.un(NegateOp, sq))
	s := b.add(Reduce(e, b.splat(0, f32()), []int64{0}, AddOp, loc())).Results[0]
	b.ret(s)
	fs := fuseAndCheck(t, b, 4)
	require.Len(t, fs, 1)
	assert.Equal(t, "input", kindOf(fs[0]))
	assert.Equal(t, []string{ConstantOp, MultiplyOp, NegateOp, ExponentialOp, ReduceOp}, bodyNames(fs[0]))
	assert.Equal(t, 1, fs[0].NumOperands(), "x is passed once although used twice")
}

func TestFuseProducerWithTwoUsers(t *testing.T) {
	b := newFB(t, f32(5))
	e := b.un(ExponentialOp, b.arg(0))
	r1 := b.un(NegateOp, e)
	r2 := b.un(AbsOp, e)
	sq := b.bin(MultiplyOp, r2, r2) // two uses by one op: still fusible
	b.ret(r1, sq)
	fs := fuseAndCheck(t, b, 5)
	require.Len(t, fs, 3)
	assert.Equal(t, []string{ExponentialOp}, bodyNames(fs[0]))
	assert.Equal(t, []string{NegateOp}, bodyNames(fs[1]))
	assert.Equal(t, []string{AbsOp, MultiplyOp}, bodyNames(fs[2]))
	for _, f := range fs {
		assert.Equal(t, "loop", kindOf(f))
	}
}

func TestFuseDotOperandSide(t *testing.T) {
	r := rand.New(rand.NewSource(23))
	b := newFB(t, f32(3, 4), f32(4, 3))
	w := b.constant(r, f32(5, 4))
	// arithmetic on a dot operand stays outside; layout-only ops join
	ex := b.un(ExponentialOp, b.arg(0))
	tr := b.add(Transpose(b.arg(1), []int64{1, 0}, loc())).Results[0]
	x := b.bin(AddOp, ex, tr)
	d := b.add(DotGeneral(x, w, DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{1}}, loc())).Results[0]
	d2 := b.add(DotGeneral(b.add(Transpose(d, []int64{1, 0}, loc())).Results[0], w, DotDims{LhsContracting: []int64{0}, RhsContracting: []int64{0}}, loc())).Results[0]
	b.ret(b.un(TanhOp, d2))
	fs := fuseAndCheck(t, b, 6)
	require.Len(t, fs, 3)
	assert.Equal(t, "loop", kindOf(fs[0]))
	assert.Equal(t, []string{ExponentialOp, TransposeOp, AddOp}, bodyNames(fs[0]))
	assert.Equal(t, []string{DotGeneralOp}, bodyNames(fs[1]))
	assert.Equal(t, "output", kindOf(fs[1]))
	// the second dot cannot absorb the first (one hero per fusion), but takes the transpose
	assert.Equal(t, []string{TransposeOp, DotGeneralOp, TanhOp}, bodyNames(fs[2]))
	assert.Equal(t, "output", kindOf(fs[2]))
}

func TestFuseSplatReturnedAndLocations(t *testing.T) {
	b := newFB(t, f32(2))
	c := b.splat(3, f32(2))
	y := b.bin(AddOp, b.arg(0), c)
	yl := y.Def.Loc
	b.ret(y, c)
	fs := fuseAndCheck(t, b, 7)
	require.Len(t, fs, 2)
	// the splat's own loop fusion stays where the constant was
	assert.Equal(t, []string{ConstantOp}, bodyNames(fs[0]))
	assert.Equal(t, 0, fs[0].NumOperands())
	assert.Equal(t, "loop", kindOf(fs[0]))
	assert.Equal(t, []string{ConstantOp, AddOp}, bodyNames(fs[1]))
	assert.Equal(t, yl, fs[1].Loc)
}

func TestFusionOpVerify(t *testing.T) {
	mk := func(kind string, argTy g.Type, retTy g.Type) *fb {
		b := newFB(t, f32(2))
		blk := g.NewBlock(argTy)
		var rv *g.Value = blk.Args[0]
		if !retTy.Equal(argTy) {
			c := Splat(retTy.(*g.TensorType).Elem, retTy.(*g.TensorType).Shape, 1, loc())
			blk.Append(c)
			rv = c.Results[0]
		}
		blk.Append(g.NewOp(ReturnOp, []*g.Value{rv}, nil, nil, loc()))
		op := b.op(FusionOp, b.f.Args(), []g.Type{f32(2)}, attrs("kind", g.StringAttr(kind)))
		op.AddRegion(g.NewRegion(blk))
		b.ret(op.Results...)
		return b
	}
	require.NoError(t, mk("loop", f32(2), f32(2)).verify())
	assert.Contains(t, mk("fancy", f32(2), f32(2)).verifyErr(), `attribute 'kind' must be one of ["loop" "input" "output" "opaque"]`)
	assert.Contains(t, mk("loop", f32(3), f32(3)).verifyErr(), "region argument #0 has type tensor<3xf32> but operand #0 has type tensor<2xf32>")
	assert.Contains(t, mk("loop", f32(2), f32(4)).verifyErr(), "region returns tensor<4xf32> as value #0 but result #0 has type tensor<2xf32>")

	// isolated from above
	b := newFB(t, f32(2))
	blk := g.NewBlock()
	blk.Append(g.NewOp(ReturnOp, []*g.Value{b.arg(0)}, nil, nil, loc()))
	op := b.op(FusionOp, nil, []g.Type{f32(2)}, attrs("kind", g.StringAttr("loop")))
	op.AddRegion(g.NewRegion(blk))
	b.ret(op.Results...)
	assert.Contains(t, b.verifyErr(), "does not dominate")

	// hlo.return outside a region op
	b2 := newFB(t, f32(2))
	b2.op(ReturnOp, b2.f.Args(), nil, nil)
	b2.ret(b2.arg(0))
	assert.Contains(t, b2.verifyErr(), "expects parent op to be one of")
}

// TestFuseRandomPrograms fuses random DAGs mixing elementwise ops, dots,
// reductions, layout ops and constants, and checks verification, identical
// results, at most one hero per fusion and the kind it implies.
func TestFuseRandomPrograms(t *testing.T) {
	for seed := int64(0); seed < 150; seed++ {
		r := rand.New(rand.NewSource(seed))
		ty := f32(4, 6)
		b := newFB(t, ty, ty, f32(6, 6))
		pool := []*g.Value{b.arg(0), b.arg(1)}
		pick := func() *g.Value { return pool[r.Intn(len(pool))] }
		weights := []*g.Value{b.arg(2), b.constant(r, f32(6, 6))}
		for step := 0; step < 4+r.Intn(10); step++ {
			var v *g.Value
			switch r.Intn(8) {
			case 0:
				v = b.un([]string{TanhOp, NegateOp, AbsOp, LogisticOp}[r.Intn(4)], pick())
			case 1:
				v = b.bin([]string{AddOp, SubtractOp, MultiplyOp, MaximumOp, MinimumOp}[r.Intn(5)], pick(), pick())
			case 2:
				v = b.add(DotGeneral(pick(), weights[r.Intn(2)], DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{r.Int63n(2)}}, loc())).Results[0]
			case 3:
				init := b.splat(0, f32())
				red := b.add(Reduce(pick(), init, []int64{1}, []string{AddOp, MaximumOp}[r.Intn(2)], loc())).Results[0]
				v = b.bcast(red, ty, 0)
			case 4:
				tr := b.add(Transpose(pick(), []int64{1, 0}, loc())).Results[0]
				v = b.add(Reshape(tr, ty, loc())).Results[0]
			case 5:
				v = b.bin(AddOp, pick(), b.splat(float64(r.Intn(5))-2, ty))
			case 6:
				x, y := pick(), pick()
				c := b.build(CompareOp, []*g.Value{x, y}, attrs("comparison_direction", g.StringAttr("LT"))).Results[0]
				v = b.build(SelectOp, []*g.Value{c, x, y}, nil).Results[0]
			case 7:
				conv := b.add(Convolution(b.add(Reshape(pick(), f32(1, 4, 6), loc())).Results[0], b.constant(r, f32(4, 4, 3)),
					ConvConfig{PadLow: []int64{1}, PadHigh: []int64{1}}, loc())).Results[0]
				v = b.add(Reshape(conv, ty, loc())).Results[0]
			}
			pool = append(pool, v)
		}
		var rets []*g.Value
		for k := 0; k <= r.Intn(3); k++ {
			rets = append(rets, pool[len(pool)-1-r.Intn(min(3, len(pool)))])
		}
		b.ret(rets...)
		for _, f := range fuseAndCheck(t, b, seed) {
			heroes := 0
			want := "loop"
			for _, n := range bodyNames(f) {
				switch n {
				case DotGeneralOp, ConvolutionOp:
					heroes++
					want = "output"
				case ReduceOp, ReduceWindowOp:
					heroes++
					want = "input"
				}
			}
			require.LessOrEqual(t, heroes, 1, "seed %d:\n%s", seed, g.Print(b.m))
			require.Equal(t, want, kindOf(f), "seed %d", seed)
		}
	}
}

// An epilogue whose links have several users (x·tanh(x) + x of a dense
// layer's x) joins the dot's output fusion: the loop group holding every
// user of the output group's root becomes its epilogue. A loop group that
// moves the root's data (a transpose of it) stays a fusion of its own.
func TestFuseMultiUserEpilogue(t *testing.T) {
	r := rand.New(rand.NewSource(31))
	b := newFB(t, f32(3, 4))
	x := b.dense(r, b.arg(0), 5)
	y := b.bin(AddOp, b.bin(MultiplyOp, x, b.un(TanhOp, x)), x)
	b.ret(y)
	fs := fuseAndCheck(t, b, 8)
	require.Len(t, fs, 1)
	assert.Equal(t, "output", kindOf(fs[0]))
	assert.Equal(t, []string{DotGeneralOp, BroadcastInDimOp, AddOp, TanhOp, MultiplyOp, AddOp}, bodyNames(fs[0]))

	b = newFB(t, f32(3, 4))
	x = b.dense(r, b.arg(0), 3)
	tr := b.add(Transpose(x, []int64{1, 0}, loc())).Results[0]
	b.ret(b.bin(AddOp, tr, x))
	fs = fuseAndCheck(t, b, 9)
	require.Len(t, fs, 2)
	assert.Equal(t, []string{DotGeneralOp, BroadcastInDimOp, AddOp}, bodyNames(fs[0]))
	assert.Equal(t, "loop", kindOf(fs[1]))
}

// TestFuseIntegerEpilogues: with FusePolicy.IntegerEpilogues an integer
// contraction's fusion keeps its integer epilogue (a bias in i32, the
// widening and shifting of a requantization) and leaves the float one
// (convert to f32, scale, bias, relu) to a loop fusion; without it the
// whole chain is one output fusion.
func TestFuseIntegerEpilogues(t *testing.T) {
	i8, i32t := g.NewTensor(g.I8, 3, 4), g.NewTensor(g.I32, 3, 5)
	build := func(float bool) *fb {
		r := rand.New(rand.NewSource(41))
		b := newFB(t, i8)
		w := b.constant(r, g.NewTensor(g.I8, 5, 4))
		d := b.add(DotGeneral(b.arg(0), w, DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{1}}, loc())).Results[0]
		acc := b.bin(AddOp, d, b.bcast(b.constant(r, g.NewTensor(g.I32, 5)), i32t, 1))
		if float {
			y := b.add(Convert(acc, g.F32, loc())).Results[0]
			y = b.bin(MultiplyOp, y, b.bcast(b.constant(r, f32(5)), f32(3, 5), 1))
			b.ret(b.bin(MaximumOp, y, b.splat(0, f32(3, 5))))
			return b
		}
		wide := b.add(Convert(acc, g.I64, loc())).Results[0]
		y := b.bin(ShiftRightArithmeticOp, b.bin(MultiplyOp, wide, b.splat(3, g.NewTensor(g.I64, 3, 5))), b.splat(2, g.NewTensor(g.I64, 3, 5)))
		b.ret(b.add(Convert(y, g.I8, loc())).Results[0])
		return b
	}
	pol := FusePolicy{IntegerEpilogues: true}
	fs := fuseAndCheck(t, build(true), 42)
	require.Len(t, fs, 1)
	fs = fuseWithAndCheck(t, build(true), 42, pol)
	require.Len(t, fs, 2)
	assert.Equal(t, "output", kindOf(fs[0]))
	assert.Equal(t, []string{DotGeneralOp, BroadcastInDimOp, AddOp}, bodyNames(fs[0]))
	assert.Equal(t, "loop", kindOf(fs[1]))
	assert.Contains(t, bodyNames(fs[1]), ConvertOp)
	fs = fuseWithAndCheck(t, build(false), 43, pol)
	require.Len(t, fs, 1, "an integer epilogue stays in the contraction's fusion")
	assert.Equal(t, "output", kindOf(fs[0]))
}

// TestFusePeelEpilogue: a multi-user epilogue that feeds a pad (fold-qdq's
// requantization before the zero-point pad of the next convolution)
// joins the contraction's output fusion, which then stores the narrow
// value, and the pad stays a loop fusion copying it; an epilogue whose
// pad value the epilogue's ops would have to read back stays in the loop
// fusion, and one that widens at its end stops before the widening.
func TestFusePeelEpilogue(t *testing.T) {
	i8 := g.NewTensor(g.I8, 3, 4)
	build := func(widen, padFromRoot bool) *fb {
		r := rand.New(rand.NewSource(51))
		b := newFB(t, i8)
		w := b.constant(r, g.NewTensor(g.I8, 5, 4))
		acc := b.add(DotGeneral(b.arg(0), w, DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{1}}, loc())).Results[0]
		out := g.I8
		if widen {
			out = g.I64
		} else {
			acc = b.add(Convert(acc, g.I64, loc())).Results[0]
		}
		at := g.AsTensor(acc.Type)
		y := b.bin(AddOp, b.bin(MultiplyOp, acc, b.splat(3, at)), b.bin(ShiftRightArithmeticOp, acc, b.splat(2, at)))
		y = b.bin(MinimumOp, b.bin(MaximumOp, y, b.splat(-100, at)), b.splat(100, at))
		y = b.add(Convert(y, out, loc())).Results[0]
		pv := b.splat(7, g.NewTensor(out))
		if padFromRoot {
			pv = b.add(Convert(b.add(Slice(acc, []int64{0, 0}, []int64{1, 1}, []int64{1, 1}, loc())).Results[0], out, loc())).Results[0]
			pv = b.add(Reshape(pv, g.NewTensor(out), loc())).Results[0]
		}
		b.ret(b.add(Pad(y, pv, []int64{1, 1}, []int64{1, 1}, []int64{0, 0}, loc())).Results[0])
		return b
	}
	fs := fuseAndCheck(t, build(false, false), 52)
	require.Len(t, fs, 2)
	assert.Equal(t, "output", kindOf(fs[0]))
	assert.Contains(t, bodyNames(fs[0]), ShiftRightArithmeticOp)
	assert.Equal(t, g.I8, g.AsTensor(fs[0].Results[0].Type).Elem, "the contraction's kernel stores the 8-bit value")
	assert.Equal(t, "loop", kindOf(fs[1]))
	assert.NotContains(t, bodyNames(fs[1]), ShiftRightArithmeticOp)

	fs = fuseAndCheck(t, build(false, true), 53)
	require.Len(t, fs, 2)
	assert.NotContains(t, bodyNames(fs[0]), ShiftRightArithmeticOp, "pad value from the root")
	assert.Contains(t, bodyNames(fs[1]), ShiftRightArithmeticOp, "pad value from the root")

	// Widening to i64 at the end: the contraction's kernel takes the
	// epilogue up to its last value as narrow as the i32 accumulator and
	// stores that; the widening convert joins the pad.
	fs = fuseAndCheck(t, build(true, false), 53)
	require.Len(t, fs, 2)
	assert.Equal(t, []string{DotGeneralOp, MultiplyOp, ShiftRightArithmeticOp, AddOp, MaximumOp, MinimumOp}, bodyNames(fs[0])[4:])
	assert.Equal(t, g.I32, g.AsTensor(fs[0].Results[0].Type).Elem)
	assert.Equal(t, []string{ConvertOp, PadOp}, bodyNames(fs[1])[1:])
}

// TestFuseDAGEpilogue: an epilogue whose links have several users (a
// requantization: the widened accumulator read twice) joins its
// contraction up to the narrow value it ends in, whatever reads that
// value: a reduction (max pooling's input fusion takes only the reduce),
// or the epilogue of another contraction (a residual add of two
// requantized results: the later contraction's kernel takes the add,
// the earlier one stores its 8-bit value).
func TestFuseDAGEpilogue(t *testing.T) {
	i8 := g.NewTensor(g.I8, 3, 4)
	requant := func(b *fb, acc *g.Value) *g.Value {
		w := b.add(Convert(acc, g.I64, loc())).Results[0]
		at := g.AsTensor(w.Type)
		y := b.bin(AddOp, b.bin(MultiplyOp, w, b.splat(3, at)), b.bin(ShiftRightArithmeticOp, w, b.splat(2, at)))
		y = b.bin(MinimumOp, b.bin(MaximumOp, y, b.splat(-100, at)), b.splat(100, at))
		return b.add(Convert(y, g.I8, loc())).Results[0]
	}
	dot := func(b *fb, r *rand.Rand, x *g.Value) *g.Value {
		return b.add(DotGeneral(x, b.constant(r, g.NewTensor(g.I8, 5, 4)), DotDims{LhsContracting: []int64{1}, RhsContracting: []int64{1}}, loc())).Results[0]
	}
	// Into a reduction.
	r := rand.New(rand.NewSource(61))
	b := newFB(t, i8)
	y := requant(b, dot(b, r, b.arg(0)))
	b.ret(b.add(Reduce(y, b.splat(-128, g.NewTensor(g.I8)), []int64{1}, MaximumOp, loc())).Results[0])
	fs := fuseAndCheck(t, b, 62)
	require.Len(t, fs, 2)
	assert.Equal(t, "output", kindOf(fs[0]))
	assert.Equal(t, g.I8, g.AsTensor(fs[0].Results[0].Type).Elem, "the contraction's kernel stores the 8-bit value")
	assert.Equal(t, "input", kindOf(fs[1]))
	assert.NotContains(t, bodyNames(fs[1]), ShiftRightArithmeticOp)

	// A residual join of two requantized contractions.
	r = rand.New(rand.NewSource(63))
	b = newFB(t, i8, i8)
	y1 := requant(b, dot(b, r, b.arg(0)))
	y2 := requant(b, dot(b, r, b.arg(1)))
	i32 := g.NewTensor(g.I32, 3, 5)
	wide := func(v *g.Value) *g.Value { return b.add(Convert(v, g.I32, loc())).Results[0] }
	sum := b.bin(AddOp, b.bin(MultiplyOp, wide(y1), b.splat(7, i32)), b.bin(MultiplyOp, wide(y2), b.splat(9, i32)))
	b.ret(requant(b, sum))
	fs = fuseAndCheck(t, b, 64)
	require.Len(t, fs, 2)
	for _, f := range fs {
		assert.Equal(t, "output", kindOf(f))
		assert.Equal(t, g.I8, g.AsTensor(f.Results[0].Type).Elem)
	}
	assert.Equal(t, 1, countIn(fs[0], ShiftRightArithmeticOp), "the first contraction's requantization")
	assert.Equal(t, 2, countIn(fs[1], ShiftRightArithmeticOp), "the second's, and the join's")

	// With integer-epilogues (the NPU, whose int8 epilogue holds the
	// join: a scaled tile operand and a second requantization) the same.
	r = rand.New(rand.NewSource(63))
	b = newFB(t, i8, i8)
	y1 = requant(b, dot(b, r, b.arg(0)))
	y2 = requant(b, dot(b, r, b.arg(1)))
	sum = b.bin(AddOp, b.bin(MultiplyOp, wide(y1), b.splat(7, i32)), b.bin(MultiplyOp, wide(y2), b.splat(9, i32)))
	b.ret(requant(b, sum))
	fs = fuseWithAndCheck(t, b, 64, FusePolicy{IntegerEpilogues: true})
	require.Len(t, fs, 2)
	for _, f := range fs {
		assert.Equal(t, "output", kindOf(f))
		assert.Equal(t, g.I8, g.AsTensor(f.Results[0].Type).Elem)
	}
	assert.Equal(t, 2, countIn(fs[1], ShiftRightArithmeticOp), "the second's, and the join's")
}

// countIn counts the ops named name in fusion f's body.
func countIn(f *g.Op, name string) int {
	n := 0
	for _, s := range bodyNames(f) {
		if s == name {
			n++
		}
	}
	return n
}
