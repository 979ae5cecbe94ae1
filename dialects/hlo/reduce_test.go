package hlo

import (
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	g "github.com/tessera-ml/tessera/graphir"
)

// reduceFunc builds main(x, init) { r = name(x, init) body; return r }.
func reduceFunc(t *testing.T, name string, x *g.TensorType, a g.DictAttr, body func(b *g.Block) []*g.Value) (*fb, *g.Op) {
	b := newFB(t, x, tt(x.Elem))
	op, err := g.Build(name, b.f.Args(), a, loc())
	require.NoError(t, err)
	blk := g.NewBlock(tt(x.Elem), tt(x.Elem))
	rets := body(blk)
	blk.Append(g.NewOp(ReturnOp, rets, nil, nil, loc()))
	op.AddRegion(g.NewRegion(blk))
	b.f.Entry().Append(op)
	b.ret(op.Results...)
	return b, op
}

func binBody(name string, swap bool) func(b *g.Block) []*g.Value {
	return func(b *g.Block) []*g.Value {
		x, y := b.Args[0], b.Args[1]
		if swap {
			x, y = y, x
		}
		op, _ := g.Build(name, []*g.Value{x, y}, nil, loc())
		b.Append(op)
		return op.Results
	}
}

// absSumBody: acc + |x|, which the evaluator runs through EvalBlock.
func absSumBody(b *g.Block) []*g.Value {
	abs, _ := g.Build(AbsOp, []*g.Value{b.Args[1]}, nil, loc())
	b.Append(abs)
	add, _ := g.Build(AddOp, []*g.Value{b.Args[0], abs.Results[0]}, nil, loc())
	b.Append(add)
	return add.Results
}

// selectMaxBody: acc >= x ? acc : x, a slow-path maximum.
func selectMaxBody(b *g.Block) []*g.Value {
	cmp, _ := g.Build(CompareOp, []*g.Value{b.Args[0], b.Args[1]}, attrs("comparison_direction", g.StringAttr("GE")), loc())
	b.Append(cmp)
	sel, _ := g.Build(SelectOp, []*g.Value{cmp.Results[0], b.Args[0], b.Args[1]}, nil, loc())
	b.Append(sel)
	return sel.Results
}

func TestReduceByHand(t *testing.T) {
	x := tensorOf(f32(2, 3), 1, -2, 3, 4, 5, -6)
	zero := tensorOf(f32(), 0)
	cases := []struct {
		dims []int64
		body func(*g.Block) []*g.Value
		init *g.Tensor
		want []float64
	}{
		{[]int64{1}, binBody(AddOp, false), zero, []float64{2, 3}},
		{[]int64{0}, binBody(AddOp, true), zero, []float64{5, 3, -3}},
		{[]int64{0, 1}, binBody(MaximumOp, false), tensorOf(f32(), math.Inf(-1)), []float64{5}},
		{[]int64{1}, binBody(MinimumOp, true), tensorOf(f32(), 100), []float64{-2, -6}},
		{[]int64{1}, binBody(MultiplyOp, false), tensorOf(f32(), 1), []float64{-6, -120}},
		{[]int64{1}, absSumBody, tensorOf(f32(), 0.5), []float64{6.5, 15.5}},
		{nil, binBody(AddOp, false), zero, x.Data},
	}
	for i, c := range cases {
		b, op := reduceFunc(t, ReduceOp, x.Type, attrs("dimensions", ints(c.dims...)), c.body)
		require.NoError(t, b.verify(), "case %d", i)
		out := interpret(t, b.f, []*g.Tensor{x, c.init})
		assert.Equal(t, c.want, out[0].Data, "case %d", i)
		assert.True(t, out[0].Type.Equal(op.Results[0].Type))
	}
}

func TestReduceFastPathMatchesSlowPath(t *testing.T) {
	r := rand.New(rand.NewSource(5))
	x := randTensor(r, f32(4, 5, 6))
	init := tensorOf(f32(), math.Inf(-1))
	for _, dims := range [][]int64{{0}, {2, 0}, {1}, {0, 1, 2}} {
		a := func() g.DictAttr { return attrs("dimensions", ints(dims...)) }
		fast, op := reduceFunc(t, ReduceOp, x.Type, a(), binBody(MaximumOp, true))
		require.NotNil(t, fastBody(op.Regions[0].Blocks[0]))
		slow, op2 := reduceFunc(t, ReduceOp, x.Type, a(), selectMaxBody)
		require.Nil(t, fastBody(op2.Regions[0].Blocks[0]))
		assert.Equal(t, interpret(t, fast.f, []*g.Tensor{x, init})[0].Data, interpret(t, slow.f, []*g.Tensor{x, init})[0].Data)
	}
	// sum with a slow body acc + |x| vs fast add on |x| computed outside
	sum, _ := reduceFunc(t, ReduceOp, x.Type, attrs("dimensions", ints(1)), binBody(AddOp, false))
	absX := evalOne(t, AbsOp, []*g.Tensor{x}, nil, nil)
	abs, _ := reduceFunc(t, ReduceOp, x.Type, attrs("dimensions", ints(1)), absSumBody)
	zero := tensorOf(f32(), 0)
	assert.Equal(t, interpret(t, sum.f, []*g.Tensor{absX, zero})[0].Data, interpret(t, abs.f, []*g.Tensor{x, zero})[0].Data)
}

func TestReduceBuilder(t *testing.T) {
	b := newFB(t, f32(3, 4), f32())
	op := b.add(Reduce(b.arg(0), b.arg(1), []int64{1}, AddOp, loc()))
	b.ret(op.Results...)
	require.NoError(t, b.verify())
	out := interpret(t, b.f, []*g.Tensor{tensorOf(f32(3, 4), 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12), tensorOf(f32(), 1)})
	assert.Equal(t, []float64{11, 27, 43}, out[0].Data)
}

func TestReduceVerifyErrors(t *testing.T) {
	x := f32(2, 3)
	dims := func(d ...int64) g.DictAttr { return attrs("dimensions", ints(d...)) }
	cases := []struct {
		a    g.DictAttr
		body func(b *g.Block) []*g.Value
		args []g.Type // body arg types, nil: two tensor<f32>
		want string
	}{
		{dims(2), binBody(AddOp, false), nil, "dimension 2 is out of range for rank 2"},
		{dims(1, 1), binBody(AddOp, false), nil, "dimension 1 appears more than once"},
		{nil, binBody(AddOp, false), nil, "requires attribute 'dimensions'"},
		{dims(1), func(b *g.Block) []*g.Value { return []*g.Value{b.Args[0], b.Args[1]} }, nil, "body must return exactly one tensor<f32> value"},
		{dims(1), func(b *g.Block) []*g.Value { return []*g.Value{b.Args[0]} }, []g.Type{f32()}, "body must have 2 arguments"},
		{dims(1), func(b *g.Block) []*g.Value { return []*g.Value{b.Args[0]} }, []g.Type{f32(), f32(1)}, "body argument #1 must be tensor<f32>, got tensor<1xf32>"},
		{dims(1), func(b *g.Block) []*g.Value {
			c := Splat(g.F32, []int64{2}, 1, loc())
			b.Append(c)
			return c.Results
		}, nil, "body must return exactly one tensor<f32> value"},
	}
	for i, c := range cases {
		b := newFB(t, x, f32())
		op := b.op(ReduceOp, b.f.Args(), []g.Type{f32(2)}, c.a)
		argTys := c.args
		if argTys == nil {
			argTys = []g.Type{f32(), f32()}
		}
		blk := g.NewBlock(argTys...)
		blk.Append(g.NewOp(ReturnOp, c.body(blk), nil, nil, loc()))
		op.AddRegion(g.NewRegion(blk))
		b.ret(op.Results...)
		assert.Contains(t, b.verifyErr(), c.want, "case %d", i)
	}
	// init must be rank 0 of the element type
	b := newFB(t, x, f32(1))
	op := b.op(ReduceOp, b.f.Args(), []g.Type{f32(2)}, dims(1))
	blk := g.NewBlock(f32(), f32())
	blk.Append(g.NewOp(ReturnOp, []*g.Value{blk.Args[0]}, nil, nil, loc()))
	op.AddRegion(g.NewRegion(blk))
	b.ret(op.Results...)
	assert.Contains(t, b.verifyErr(), "init value must be a rank-0 tensor<f32>, got tensor<1xf32>")
	// missing region
	b2 := newFB(t, x, f32())
	op = b2.op(ReduceOp, b2.f.Args(), []g.Type{f32(2)}, dims(1))
	b2.ret(op.Results...)
	assert.Contains(t, b2.verifyErr(), "expects 1 regions, got 0")
}

// naiveReduceWindow pads and dilates the input with init explicitly, then
// folds every window with f.
func naiveReduceWindow(x *g.Tensor, init float64, c WindowConfig, f func(a, b float64) float64) ([]int64, []float64) {
	r := x.Type.Rank()
	pshape := make([]int64, r)
	for d := 0; d < r; d++ {
		pshape[d] = c.PadLow[d] + (x.Type.Shape[d]-1)*c.BaseDilations[d] + 1 + c.PadHigh[d]
	}
	P := g.NewZeroTensor(f32(pshape...))
	for i := range P.Data {
		P.Data[i] = init
	}
	ps := g.Strides(pshape)
	idx := make([]int64, r)
	for i, v := range x.Data {
		unravel(int64(i), x.Type.Shape, idx)
		var o int64
		ok := true
		for d := range idx {
			p := c.PadLow[d] + idx[d]*c.BaseDilations[d]
			if p < 0 || p >= pshape[d] {
				ok = false
			}
			o += p * ps[d]
		}
		if ok {
			P.Data[o] = v
		}
	}
	oshape := make([]int64, r)
	for d := 0; d < r; d++ {
		oshape[d] = (pshape[d]-((c.WindowDimensions[d]-1)*c.WindowDilations[d]+1))/c.WindowStrides[d] + 1
	}
	out := make([]float64, g.NewTensor(g.F32, oshape...).NumElements())
	wn := g.NewTensor(g.F32, c.WindowDimensions...).NumElements()
	widx := make([]int64, r)
	for o := range out {
		unravel(int64(o), oshape, idx)
		acc := init
		for w := int64(0); w < wn; w++ {
			unravel(w, c.WindowDimensions, widx)
			var off int64
			for d := 0; d < r; d++ {
				off += (idx[d]*c.WindowStrides[d] + widx[d]*c.WindowDilations[d]) * ps[d]
			}
			acc = float64(float32(f(acc, P.Data[off])))
		}
		out[o] = acc
	}
	return oshape, out
}

func TestReduceWindowAgainstNaive(t *testing.T) {
	r := rand.New(rand.NewSource(11))
	cases := []struct {
		shape []int64
		c     WindowConfig
		body  string
		init  float64
	}{
		{[]int64{1, 2, 7, 6}, WindowConfig{WindowDimensions: []int64{1, 1, 3, 3}, WindowStrides: []int64{1, 1, 2, 2}, PadLow: []int64{0, 0, 1, 1}, PadHigh: []int64{0, 0, 1, 1}}, MaximumOp, math.Inf(-1)},
		{[]int64{1, 2, 7, 6}, WindowConfig{WindowDimensions: []int64{1, 1, 2, 3}, WindowStrides: []int64{1, 1, 2, 2}, PadLow: []int64{0, 0, 0, 2}, PadHigh: []int64{0, 0, 1, 0}}, AddOp, 0},
		{[]int64{5, 6}, WindowConfig{WindowDimensions: []int64{2, 2}, WindowDilations: []int64{2, 1}, BaseDilations: []int64{1, 2}, PadLow: []int64{1, -1}, PadHigh: []int64{2, 1}}, AddOp, 0.5},
		{[]int64{9}, WindowConfig{WindowDimensions: []int64{4}, WindowStrides: []int64{3}, PadLow: []int64{-2}, PadHigh: []int64{3}}, MinimumOp, 10},
	}
	fns := map[string]func(a, b float64) float64{MaximumOp: math.Max, AddOp: func(a, b float64) float64 { return a + b }, MinimumOp: math.Min}
	for i, tc := range cases {
		x := randTensor(r, f32(tc.shape...))
		b, _ := reduceFunc(t, ReduceWindowOp, x.Type, tc.c.Attrs(), binBody(tc.body, false))
		require.NoError(t, b.verify())
		out := interpret(t, b.f, []*g.Tensor{x, tensorOf(f32(), tc.init)})[0]
		full := tc.c
		rk := len(tc.shape)
		for _, s := range []*[]int64{&full.WindowStrides, &full.BaseDilations, &full.WindowDilations} {
			if *s == nil {
				*s = make([]int64, rk)
				for j := range *s {
					(*s)[j] = 1
				}
			}
		}
		shape, want := naiveReduceWindow(x, tc.init, full, fns[tc.body])
		require.Equal(t, shape, out.Type.Shape, "case %d", i)
		assert.Equal(t, want, out.Data, "case %d", i)
	}
}

func TestReduceWindowByHand(t *testing.T) {
	// 1-D sum, window 2, stride 1, padding [1, 1]: [0+1, 1+2, 2+3, 3+0]
	b := newFB(t, f32(3), f32())
	op := b.add(ReduceWindow(b.arg(0), b.arg(1), WindowConfig{WindowDimensions: []int64{2}, PadLow: []int64{1}, PadHigh: []int64{1}}, AddOp, loc()))
	b.ret(op.Results...)
	require.NoError(t, b.verify())
	out := interpret(t, b.f, []*g.Tensor{tensorOf(f32(3), 1, 2, 3), tensorOf(f32(), 0)})
	assert.Equal(t, []float64{1, 3, 5, 3}, out[0].Data)
}

func TestReduceWindowVerifyErrors(t *testing.T) {
	x := f32(4, 4)
	base := func() g.DictAttr { return WindowConfig{WindowDimensions: []int64{2, 2}}.Attrs() }
	cases := []struct {
		a    g.DictAttr
		want string
	}{
		{nil, "requires attribute 'window_dimensions'"},
		{attrs("window_dimensions", ints(2)), "'window_dimensions' must have 2 elements"},
		{attrs("window_dimensions", ints(2, 0)), "window_dimensions must be positive"},
		{base().Set("window_strides", ints(1, 0)), "window_strides must be positive"},
		{base().Set("base_dilations", ints(0, 1)), "base_dilations must be positive"},
		{base().Set("window_dilations", ints(1, -2)), "window_dilations must be positive"},
		{base().Set("padding", g.ArrayAttr{ints(0, 0)}), "array of 2 [low, high] integer pairs"},
		{base().Set("padding", g.ArrayAttr{ints(0, 0), ints(-3, -3)}), "makes dimension 1 negative"},
		{base().Set("window_strides", ints(1, 1, 1)), "'window_strides' must have 2 elements"},
	}
	for i, c := range cases {
		b := newFB(t, x, f32())
		op := b.op(ReduceWindowOp, b.f.Args(), []g.Type{f32(3, 3)}, c.a)
		blk := g.NewBlock(f32(), f32())
		blk.Append(g.NewOp(ReturnOp, []*g.Value{blk.Args[0]}, nil, nil, loc()))
		op.AddRegion(g.NewRegion(blk))
		b.ret(op.Results...)
		assert.Contains(t, b.verifyErr(), c.want, "case %d", i)
	}
}
