package main

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets/cpu"
	"github.com/tessera-ml/tessera/targets/llvm"
)

func init() {
	// TestEveryGraphOpCompiledMatchesInterpreter's case for
	// graph.requantize (f32 in and out; TestIntegerKernelsBitExact checks
	// the integer path itself).
	opCases = append(opCases, opCase{"requantize", []string{"tensor<3x7xf32>"}, "tensor<3x7xf32>",
		`%c = graph.constant {value = dense<3.0e+04> : tensor<f32>} : tensor<f32>
    %s = graph.mul %arg0, %c : (tensor<3x7xf32>, tensor<f32>) -> tensor<3x7xf32>
    %acc = graph.cast %s : (tensor<3x7xf32>) -> tensor<3x7xi32>
    %m = graph.constant {value = dense<[1073741824, 1500000000, 2147483647, 1200000000, 1900000000, 1073741825, 2000000000]> : tensor<7xi32>} : tensor<7xi32>
    %sh = graph.constant {value = dense<[7, 8, 9, 6, 10, 7, 8]> : tensor<7xi32>} : tensor<7xi32>
    %z = graph.constant {value = dense<-5> : tensor<i8>} : tensor<i8>
    %q = graph.requantize %acc, %m, %sh, %z {axis = 1} : (tensor<3x7xi32>, tensor<7xi32>, tensor<7xi32>, tensor<i8>) -> tensor<3x7xi8>
    %0 = graph.cast %q : (tensor<3x7xi8>) -> tensor<3x7xf32>`})
}

// intModel builds @main(x: ui8) of the integer path the fold-qdq pass
// produces: acc = contraction(i32(x) − zx, w[, b]) in i32, then
// requantize per output channel with random multipliers whose scale puts
// the typical accumulator over the 8-bit range.
type intModel struct {
	r   *rand.Rand
	f   *graphir.Func
	loc graphir.Location
}

func (b *intModel) add(op *graphir.Op, err error) *graphir.Value {
	if err != nil {
		panic(err)
	}
	b.f.Entry().Append(op)
	return op.Results[0]
}

func (b *intModel) build(name string, a graphir.DictAttr, operands ...*graphir.Value) *graphir.Value {
	return b.add(graphir.Build(name, operands, a, b.loc))
}

// constant is a graph.constant of dt and shape with values from draw.
func (b *intModel) constant(dt graphir.DType, shape []int64, draw func(i int) float64) *graphir.Value {
	t := graphir.NewZeroTensor(graphir.NewTensor(dt, shape...))
	for i := range t.Data {
		t.Data[i] = draw(i)
	}
	return b.add(graphir.NewOp(graph.ConstantOp, nil, []graphir.Type{t.Type}, graphir.DictAttr{}.Set("value", t.ToDense()), b.loc), nil)
}

// requantize appends graph.requantize of acc along axis with n channels
// and k products per output (the accumulator's typical size is √k·73·74
// for uniform 8-bit operands), to out (ui8 or i8), bounded by lo and hi.
func (b *intModel) requantize(acc *graphir.Value, axis int, n, k int64, out graphir.DType, lo, hi int64) *graphir.Value {
	typical := math.Sqrt(float64(k)) * 73 * 74
	mult, shift := make([]float64, n), make([]float64, n)
	for c := range mult {
		m, s, ok := graph.QuantizedMultiplier(40 / typical * (0.5 + 1.5*b.r.Float64()))
		if !ok {
			panic("scale out of range")
		}
		mult[c], shift[c] = float64(m), float64(s)
	}
	mv := b.constant(graphir.I32, []int64{n}, func(i int) float64 { return mult[i] })
	sv := b.constant(graphir.I32, []int64{n}, func(i int) float64 { return shift[i] })
	zy := b.constant(out, nil, func(int) float64 { return float64(b.r.IntN(21) - 10 + int(max(0, lowest8(out)+128))) })
	a := graphir.DictAttr{}.Set("axis", graphir.IntAttr(int64(axis))).Set("min", graphir.IntAttr(lo)).Set("max", graphir.IntAttr(hi))
	return b.build(graph.RequantizeOp, a, acc, mv, sv, zy)
}

// lowest8 is the lowest value of an 8-bit type.
func lowest8(dt graphir.DType) float64 {
	if dt == graphir.UI8 {
		return 0
	}
	return -128
}

// newIntModel starts @main(x: ui8 of shape) with xs = i32(x) − zx.
func newIntModel(r *rand.Rand, shape []int64) (*intModel, *graphir.Value) {
	loc := graphir.Location{File: "int8.mlir", Line: 1, Col: 1}
	b := &intModel{r: r, loc: loc, f: graphir.NewFunc("main", &graphir.FunctionType{Inputs: []graphir.Type{graphir.NewTensor(graphir.UI8, shape...)}}, loc)}
	x := b.f.Args()[0]
	xi := b.add(graphir.NewOp(graph.CastOp, []*graphir.Value{x}, []graphir.Type{graphir.NewTensor(graphir.I32, shape...)}, nil, loc), nil)
	zx := b.constant(graphir.I32, nil, func(int) float64 { return float64(100 + r.IntN(56)) })
	return b, b.build(graph.SubOp, nil, xi, zx)
}

// module finishes @main returning y.
func (b *intModel) module(y *graphir.Value) *graphir.Module {
	b.f.Entry().Append(graphir.NewOp(graphir.ReturnOpName, []*graphir.Value{y}, nil, nil, b.loc))
	b.f.Type.Results = []graphir.Type{y.Type}
	m := &graphir.Module{}
	m.AddFunc(b.f)
	return m
}

// randomConvAttrs are conv2d attributes with g groups and random
// strides (up to 2 and 3), padding (up to 1, 2, 1, 1) and dilation (up to
// 2 in height).
func randomConvAttrs(r *rand.Rand, g int64) graphir.DictAttr {
	return graphir.DictAttr{}.Set("groups", graphir.IntAttr(g)).
		Set("strides", graphir.I64Array(int64(1+r.IntN(2)), int64(1+r.IntN(3)))).
		Set("pads", graphir.I64Array(int64(r.IntN(2)), int64(r.IntN(3)), int64(r.IntN(2)), int64(r.IntN(2)))).
		Set("dilations", graphir.I64Array(int64(1+r.IntN(2)), 1))
}

// randomIntConv is a grouped, strided, padded, dilated integer
// convolution with bias and requantization (to ui8 or i8, sometimes
// with ReLU's bound, sometimes max-pooled).
func randomIntConv(r *rand.Rand) *graphir.Module {
	g := int64(1 + r.IntN(3))
	c, o := g*int64(1+r.IntN(4)), g*int64(1+r.IntN(5))
	kh, kw := int64(1+r.IntN(3)), int64(1+r.IntN(3))
	shape := []int64{int64(1 + r.IntN(2)), c, int64(5 + r.IntN(6)), int64(5 + r.IntN(6))}
	b, xs := newIntModel(r, shape)
	w := b.constant(graphir.I32, []int64{o, c / g, kh, kw}, func(int) float64 { return float64(r.IntN(255) - 127) })
	bias := b.constant(graphir.I32, []int64{o}, func(int) float64 { return float64(r.IntN(20001) - 10000) })
	acc := b.build(graph.Conv2DOp, randomConvAttrs(r, g), xs, w, bias)
	out, lo, hi := graphir.UI8, int64(0), int64(255)
	if r.IntN(2) == 0 {
		out, lo, hi = graphir.I8, -128, 127
	}
	if r.IntN(2) == 0 {
		lo += 20 // a fused ReLU's bound at a zero point of 20 above the lowest
	}
	y := b.requantize(acc, 1, o, c/g*kh*kw, out, lo, hi)
	if r.IntN(2) == 0 { // max pooling of the 8-bit values, as fold-qdq leaves it
		pa := graphir.DictAttr{}.Set("kernel", graphir.I64Array(2, 2)).Set("strides", graphir.I64Array(2, 1)).
			Set("pads", graphir.I64Array(0, 1, 1, 0)).Set("ceil_mode", graphir.BoolAttr(true))
		y = b.build(graph.MaxPool2DOp, pa, y)
	}
	return b.module(y)
}

// randomIntMatMul is an integer matmul (2-D or batched activations, a
// K×N constant weight) plus bias, requantized per output column.
func randomIntMatMul(r *rand.Rand) *graphir.Module {
	k, n := int64(1+r.IntN(70)), int64(1+r.IntN(40))
	shape := []int64{int64(1 + r.IntN(9)), k}
	if r.IntN(2) == 0 {
		shape = []int64{int64(1 + r.IntN(3)), int64(1 + r.IntN(5)), k}
	}
	b, xs := newIntModel(r, shape)
	w := b.constant(graphir.I32, []int64{k, n}, func(int) float64 { return float64(r.IntN(255) - 127) })
	acc := b.build(graph.MatMulOp, nil, xs, w)
	acc = b.build(graph.AddOp, nil, acc, b.constant(graphir.I32, []int64{n}, func(int) float64 { return float64(r.IntN(2001) - 1000) }))
	return b.module(b.requantize(acc, len(shape)-1, n, k, graphir.UI8, 0, 255))
}

// randomInt8MatMul is a matmul of the ui8 activations themselves by an
// i8 constant weight into i32 (fold-qdq's form for symmetric weights),
// plus a bias, requantized: K a multiple of 4 in most draws (the int8
// rule's vpdpbusd nest on a VNNI processor), N below and above 16 with
// and without a column tail, 2-D or batched activations.
func randomInt8MatMul(r *rand.Rand) *graphir.Module {
	return randomInt8MatMulTo(r, graphir.UI8, 0, 255)
}

// randomInt8MatMulTo is randomInt8MatMul requantized to out (ui8 or i8)
// within [lo, hi].
func randomInt8MatMulTo(r *rand.Rand, out graphir.DType, lo, hi int64) *graphir.Module {
	k, n := int64(4*(1+r.IntN(40))), int64(1+r.IntN(70))
	if r.IntN(4) == 0 {
		k = int64(1 + r.IntN(70))
	}
	shape := []int64{int64(1 + r.IntN(20)), k}
	if r.IntN(3) == 0 {
		shape = []int64{int64(1 + r.IntN(3)), int64(1 + r.IntN(9)), k}
	}
	b, _ := newIntModel(r, shape)
	x := b.f.Args()[0]
	w := b.constant(graphir.I8, []int64{k, n}, func(int) float64 { return float64(r.IntN(256) - 128) })
	acc := b.build(graph.MatMulOp, nil, x, w)
	acc = b.build(graph.AddOp, nil, acc, b.constant(graphir.I32, []int64{n}, func(int) float64 { return float64(r.IntN(200001) - 100000) }))
	return b.module(b.requantize(acc, len(shape)-1, n, k, out, lo, hi))
}

// randomInt8Conv is a convolution of the ui8 input itself by an i8
// constant weight into i32 with an i32 bias (fold-qdq's form when the
// input's zero point is 0 or nothing is padded), requantized: input
// channels a multiple of 4 and 16 or more outputs in most draws (the int8
// rule's vpdpbusd nest on a VNNI processor), otherwise any; strides,
// padding, dilation, and groups in some draws.
func randomInt8Conv(r *rand.Rand) *graphir.Module {
	g := int64(1)
	if r.IntN(4) == 0 {
		g = int64(2 + r.IntN(2))
	}
	c, o := g*int64(4*(1+r.IntN(6))), g*int64(1+r.IntN(40))
	if r.IntN(4) == 0 {
		c = g * int64(1+r.IntN(9))
	}
	kh, kw := int64(1+r.IntN(3)), int64(1+r.IntN(3))
	shape := []int64{int64(1 + r.IntN(2)), c, int64(5 + r.IntN(8)), int64(5 + r.IntN(8))}
	b, _ := newIntModel(r, shape)
	w := b.constant(graphir.I8, []int64{o, c / g, kh, kw}, func(int) float64 { return float64(r.IntN(256) - 128) })
	bias := b.constant(graphir.I32, []int64{o}, func(int) float64 { return float64(r.IntN(200001) - 100000) })
	acc := b.build(graph.Conv2DOp, randomConvAttrs(r, g), b.f.Args()[0], w, bias)
	return b.module(b.requantize(acc, 1, o, c/g*kh*kw, graphir.UI8, 0, 255))
}

// randomU8Input is a uniform random ui8 tensor for @main's only input.
func randomU8Input(t *testing.T, r *rand.Rand, m *graphir.Module) *rt.Tensor {
	xt := graphir.AsTensor(m.Funcs[0].Type.Inputs[0])
	x := make([]uint8, xt.NumElements())
	for j := range x {
		x[j] = uint8(r.IntN(256))
	}
	in, err := rt.FromSlice(xt.Shape, x)
	require.NoError(t, err)
	return in
}

// dot8CPUs are processors of each instruction set for 8-bit dot products
// (cpu.Dot8), native first.
var dot8CPUs = []string{"native", "haswell", "alderlake", "skylake-avx512", "sapphirerapids"}

// TestIntegerKernelsBitExact: compiled integer convolutions (strides,
// padding, dilation, groups), matmuls — of i32 operands and of the 8-bit
// operands themselves (vpdpbusd on a VNNI machine; the 8-bit cases rotate
// through dot8CPUs' instruction sets where this machine runs them) —
// requantization and
// 8-bit max pooling equal the graph interpreter exactly on random inputs
// (a property test over random shapes and attributes).
func TestIntegerKernelsBitExact(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 26))
	for i := range 24 {
		m := randomIntConv(r)
		switch i % 4 {
		case 1:
			m = randomIntMatMul(r)
		case 2:
			m = randomInt8MatMul(r)
		case 3:
			m = randomInt8Conv(r)
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			require.NoError(t, graphir.Verify(m))
			src := graphir.Print(m)
			in := randomU8Input(t, r, m)
			want := interpret(t, src, []*rt.Tensor{in})
			var flags []string
			if mcpu := dot8CPUs[(i/4)%len(dot8CPUs)]; i%4 >= 2 && llvm.HostHas(cpu.Dot8(mcpu)) {
				flags = []string{"--mcpu", mcpu}
			}
			got := runDTypeModel(t, src, []*rt.Tensor{in}, 1, flags...)
			require.Equal(t, want[0].Data, got[0].Float64Values(), "%v %s", flags, src)
			spread := map[float64]bool{}
			for _, v := range want[0].Data {
				spread[v] = true
			}
			require.Greater(t, len(spread), min(10, len(want[0].Data)/2), "the outputs use the 8-bit range")
		})
	}
}

// TestONNXFoldQDQ: an ONNX QLinearConv whose weight, scales and int32
// bias are initializers (testdata/make_qlinearconv.py) imports in QDQ
// form with --fold-qdq and runs as an integer convolution and
// graph.requantize, within one quantization step of the float path and
// equal to it on almost every element.
func TestONNXFoldQDQ(t *testing.T) {
	dir := t.TempDir()
	model := filepath.Join("testdata", "qlinearconv.onnx")
	r := rand.New(rand.NewPCG(5, 6))
	x := make([]uint8, 3*9*8)
	for i := range x {
		x[i] = uint8(r.IntN(256))
	}
	in, err := rt.FromSlice([]int64{1, 3, 9, 8}, x)
	require.NoError(t, err)
	xp := filepath.Join(dir, "x.npy")
	require.NoError(t, rt.WriteNPY(xp, in))
	var outs [2][]float64
	for i, flags := range [][]string{nil, {"--fold-qdq", "--print-ir-after", "fold-qdq"}} {
		y := filepath.Join(dir, fmt.Sprintf("y%d.npy", i))
		_, stderr, code := tessera(append([]string{"run", model, "--input", xp, "--output", y}, flags...)...)
		require.Equal(t, 0, code, stderr)
		if i == 1 {
			require.Contains(t, stderr, "graph.requantize")
			require.Regexp(t, `graph.conv2d .*xui8>, tensor<5x3x3x3xi8>, tensor<5xi32>\) -> tensor<1x5x5x4xi32>`, stderr)
		}
		yt, err := rt.ReadNPY(y)
		require.NoError(t, err)
		outs[i] = yt.Float64Values()
	}
	same := 0
	for i, w := range outs[0] {
		require.InDelta(t, w, outs[1][i], 1, "element %d", i)
		if w == outs[1][i] {
			same++
		}
	}
	require.GreaterOrEqual(t, float64(same), 0.97*float64(len(outs[0])))
}

// TestVNNICode: a ui8 × i8 matmul with a constant weight (a column tail,
// rows the register tile does not divide) and a padded, strided ui8 ×
// i8 convolution compile, by --mcpu, to 512-bit vpdpbusd (AVX-512 VNNI:
// sapphirerapids), its exact vpmaddubsw emulation on 512-bit vectors
// (AVX-512BW: skylake-avx512), 256-bit VEX vpdpbusd (AVX-VNNI:
// alderlake) and the emulation on 256-bit vectors (AVX2: haswell), the
// 256-bit ones without a zmm register; the code of each that this
// machine can run equals the interpreter, and so does the native code.
func TestVNNICode(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 4))
	mm, _ := newIntModel(r, []int64{37, 96})
	w := mm.constant(graphir.I8, []int64{96, 45}, func(int) float64 { return float64(r.IntN(256) - 128) })
	acc := mm.build(graph.MatMulOp, nil, mm.f.Args()[0], w)
	conv, _ := newIntModel(r, []int64{1, 16, 9, 10})
	cw := conv.constant(graphir.I8, []int64{32, 16, 3, 3}, func(int) float64 { return float64(r.IntN(256) - 128) })
	a := graphir.DictAttr{}.Set("pads", graphir.I64Array(1, 1, 1, 1)).Set("strides", graphir.I64Array(2, 1))
	cacc := conv.build(graph.Conv2DOp, a, conv.f.Args()[0], cw)
	models := map[string]*graphir.Module{
		"matmul": mm.module(mm.requantize(acc, 1, 45, 96, graphir.UI8, 0, 255)),
		"conv":   conv.module(conv.requantize(cacc, 1, 32, 144, graphir.UI8, 0, 255)),
	}
	for name, m := range models {
		t.Run(name, func(t *testing.T) { checkVNNICode(t, graphir.Print(m), r) })
	}
}

// checkVNNICode checks src (one ui8 input) as TestVNNICode says.
func checkVNNICode(t *testing.T, src string, r *rand.Rand) {
	model := filepath.Join(t.TempDir(), "q.mlir")
	require.NoError(t, os.WriteFile(model, []byte(src), 0o644))
	kinds := map[string][2]bool{"sapphirerapids": {true, false}, "skylake-avx512": {false, true}, "alderlake": {true, false}, "haswell": {false, true}}
	for mcpu, want := range kinds {
		asm, stderr, code := tessera("compile", model, "--emit", "asm", "--mcpu", mcpu)
		require.Equal(t, 0, code, stderr)
		require.Equal(t, want, [2]bool{strings.Contains(asm, "vpdpbusd"), strings.Contains(asm, "vpmaddubsw")}, mcpu)
		require.Equal(t, cpu.Dot8(mcpu).Bits() == 512, strings.Contains(asm, "zmm"), mcpu)
	}
	m, err := graphir.ParseString("q.mlir", src)
	require.NoError(t, err)
	shape := graphir.AsTensor(m.Funcs[0].Type.Inputs[0]).Shape
	x := make([]uint8, graphir.NewTensor(graphir.UI8, shape...).NumElements())
	for i := range x {
		x[i] = uint8(r.IntN(256))
	}
	in, err := rt.FromSlice(shape, x)
	require.NoError(t, err)
	want := interpret(t, src, []*rt.Tensor{in})
	require.Equal(t, want[0].Data, runDTypeModel(t, src, []*rt.Tensor{in}, 1)[0].Float64Values())
	for mcpu := range kinds {
		if !llvm.HostHas(cpu.Dot8(mcpu)) {
			t.Logf("this machine has no %v: the %s code is not run", cpu.Dot8(mcpu), mcpu)
			continue
		}
		require.Equal(t, want[0].Data, runDTypeModel(t, src, []*rt.Tensor{in}, 1, "--mcpu", mcpu)[0].Float64Values(), mcpu)
	}
}

// perTensor replaces the last graph.requantize's per-channel multipliers
// and shifts by scalars (QLinearConv's per-tensor scales).
func perTensor(m *graphir.Module, r *rand.Rand) {
	var rq *graphir.Op
	for _, op := range m.Funcs[0].Entry().Ops() {
		if op.Name == graph.RequantizeOp {
			rq = op
		}
	}
	mult, shift, _ := graph.QuantizedMultiplier(1e-4 * (0.5 + r.Float64()))
	for i, v := range []int64{mult, shift} {
		t := graphir.NewZeroTensor(graphir.NewTensor(graphir.I32))
		t.Data[0] = float64(v)
		c := graphir.NewOp(graph.ConstantOp, nil, []graphir.Type{t.Type}, graphir.DictAttr{}.Set("value", t.ToDense()), rq.Loc)
		m.Funcs[0].Entry().InsertBefore(rq, c)
		rq.SetOperand(1+i, c.Results[0])
	}
}

// TestNPUInt8BitExact runs fold-qdq's integer kernels — ui8 activations
// times i8 weights into i32 with a bias, requantized per channel (or per
// tensor) to ui8 or i8 — on the NPU's int8 datapath: matmuls (2-D and batched,
// K and N with and without block tails) and convolutions (strides,
// padding, dilation, groups). Every contraction runs on the NPU, most
// with the requantization there (alu.mulq in the program), and the
// results equal the graph interpreter exactly.
func TestNPUInt8BitExact(t *testing.T) {
	r := rand.New(rand.NewPCG(27, 11))
	requantOnNPU := 0
	const n = 12
	for i := range n {
		m := randomInt8MatMul(r)
		switch {
		case i%2 == 1:
			m = randomInt8Conv(r)
		case i%4 == 0:
			m = randomInt8MatMulTo(r, graphir.I8, -100, 127) // an i8 output, a bound inside its range
		}
		if i%4 == 2 {
			perTensor(m, r)
		}
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			require.NoError(t, graphir.Verify(m))
			src := graphir.Print(m)
			dir := t.TempDir()
			model := filepath.Join(dir, "m.mlir")
			require.NoError(t, os.WriteFile(model, []byte(src), 0o644))
			part, stderr, code := tessera("compile", model, "--target", "npu", "--emit", "partition")
			require.Equal(t, 0, code, stderr)
			require.Contains(t, part, "npu MAC fraction: 1.0000", part)
			asm, stderr, code := tessera("compile", model, "--target", "npu", "--emit", "npu-asm")
			require.Equal(t, 0, code, stderr)
			if strings.Contains(asm, "alu.mulq") {
				requantOnNPU++
			}
			in := randomU8Input(t, r, m)
			want := interpret(t, src, []*rt.Tensor{in})
			got := runDTypeModel(t, src, []*rt.Tensor{in}, 1, "--target", "npu")
			require.Equal(t, want[0].Data, got[0].Float64Values(), "%s", src)
		})
	}
	require.GreaterOrEqual(t, requantOnNPU, n/2, "kernels with the requantization on the NPU")
}

// TestNPUInt8ShiftBelowOne: a requantization whose shift is below 1 (a
// real multiplier of 0.5 or more) cannot be computed exactly by the NPU's
// mulq then shr; the run is refused with the shift named, not answered
// inexactly.
func TestNPUInt8ShiftBelowOne(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 9))
	m := randomInt8MatMul(r)
	var rq *graphir.Op
	for _, op := range m.Funcs[0].Entry().Ops() {
		if op.Name == graph.RequantizeOp {
			rq = op
		}
	}
	shifts, err := graphir.TensorFromDense(graph.ConstantOf(rq.Operand(2)))
	require.NoError(t, err)
	shifts.Data[0] = 0
	c := graphir.NewOp(graph.ConstantOp, nil, []graphir.Type{shifts.Type}, graphir.DictAttr{}.Set("value", shifts.ToDense()), rq.Loc)
	m.Funcs[0].Entry().InsertBefore(rq, c)
	rq.SetOperand(2, c.Results[0])
	require.NoError(t, graphir.Verify(m))
	dir := t.TempDir()
	model := filepath.Join(dir, "m.mlir")
	require.NoError(t, os.WriteFile(model, []byte(graphir.Print(m)), 0o644))
	xt := graphir.AsTensor(m.Funcs[0].Type.Inputs[0])
	x, err := rt.NewTensor(rt.Uint8, xt.Shape)
	require.NoError(t, err)
	in := filepath.Join(dir, "x.npy")
	require.NoError(t, rt.WriteNPY(in, x))
	out, stderr, code := tessera("run", model, "--target", "npu", "--input", in)
	require.Equal(t, 1, code, out)
	assert.Contains(t, stderr, "requantization shift 0 is below 1")
	assert.Equal(t, 1, strings.Count(strings.TrimSpace(stderr), "\n")+1, stderr)
}

// TestNarrowDot8: a ui8 × i8 convolution whose activations come from a
// requantization bounded by 127 (7-bit activations: tessera quantize
// --reduce-range) compiles for AVX2 (haswell) to one vpmaddubsw per four
// products instead of the exact two-instruction split, which the same
// model with activations up to 255 keeps; both equal the interpreter
// exactly, with activations at the bound and weights at −128 and 127.
func TestNarrowDot8(t *testing.T) {
	counts := map[int64]int{}
	for _, hi := range []int64{127, 255} {
		r := rand.New(rand.NewPCG(8, 9))
		b, _ := newIntModel(r, []int64{1, 16, 9, 10})
		w1 := b.constant(graphir.I8, []int64{32, 16, 3, 3}, func(int) float64 { return float64(r.IntN(256) - 128) })
		pads := graphir.DictAttr{}.Set("pads", graphir.I64Array(1, 1, 1, 1))
		a1 := b.build(graph.Conv2DOp, pads, b.f.Args()[0], w1)
		x2 := b.requantize(a1, 1, 32, 144, graphir.UI8, 0, hi)
		w2 := b.constant(graphir.I8, []int64{24, 32, 3, 3}, func(i int) float64 { return []float64{-128, 127}[i%2] })
		a2 := b.build(graph.Conv2DOp, pads.Set("strides", graphir.I64Array(2, 1)), x2, w2)
		m := b.module(b.requantize(a2, 1, 24, 288, graphir.UI8, 0, 255))
		src := graphir.Print(m)
		model := filepath.Join(t.TempDir(), "q.mlir")
		require.NoError(t, os.WriteFile(model, []byte(src), 0o644))
		ll, stderr, code := tessera("compile", model, "--emit", "llvm", "--mcpu", "haswell")
		require.Equal(t, 0, code, stderr)
		counts[hi] = strings.Count(ll, "call <16 x i16> @llvm.x86.avx2.pmadd.ub.sw(")
		in := randomU8Input(t, r, m)
		want := interpret(t, src, []*rt.Tensor{in})
		if llvm.HostHas(llvm.Dot8AVX2) {
			require.Equal(t, want[0].Data, runDTypeModel(t, src, []*rt.Tensor{in}, 1, "--mcpu", "haswell")[0].Float64Values(), "max %d", hi)
		}
	}
	// The second convolution's step takes one vpmaddubsw per 256-bit half
	// instead of two; the first convolution's (full-range input) two.
	require.Positive(t, counts[127])
	require.Less(t, counts[127], counts[255])
}

// randomInt8Residual is a residual block in fold-qdq's integer form: x
// (the ui8 input, [M, K], or an i8 activation computed from it) through
// requantized matmuls to y (ui8, [M, K]), then fold-qdq's residual add
// acc = ka·y + kb·x + c in i32 (ka, kb in
// [1, 2^16], either side of the ALU's 16-bit immediates, or below 300),
// requantized to ui8 — per tensor (as fold-qdq's add) or per channel.
func randomInt8Residual(r *rand.Rand) *graphir.Module {
	m, k, n := int64(1+r.IntN(20)), int64(1+r.IntN(70)), int64(1+r.IntN(70))
	b, _ := newIntModel(r, []int64{m, k})
	layer := func(in *graphir.Value, kin, out int64, dt graphir.DType) *graphir.Value {
		w := b.constant(graphir.I8, []int64{kin, out}, func(int) float64 { return float64(r.IntN(256) - 128) })
		acc := b.build(graph.MatMulOp, nil, in, w)
		acc = b.build(graph.AddOp, nil, acc, b.constant(graphir.I32, []int64{out}, func(int) float64 { return float64(r.IntN(200001) - 100000) }))
		return b.requantize(acc, 1, out, kin, dt, int64(lowest8(dt)), int64(lowest8(dt))+255)
	}
	x := b.f.Args()[0] // the addend: the ui8 input, or an i8 activation
	var y *graphir.Value
	if r.IntN(2) == 0 {
		x = layer(x, k, k, graphir.I8)
		y = layer(x, k, k, graphir.UI8)
	} else {
		y = layer(layer(x, k, n, graphir.UI8), n, k, graphir.UI8)
	}
	wide := func(v *graphir.Value) *graphir.Value {
		return b.add(graphir.NewOp(graph.CastOp, []*graphir.Value{v}, []graphir.Type{graphir.NewTensor(graphir.I32, m, k)}, nil, b.loc), nil)
	}
	// scales below 300 in some draws, with a requantization fine enough
	// that an addend off by one step changes outputs
	var ks [2]float64
	for i := range ks {
		ks[i] = float64(1 + r.IntN(1<<16))
		if r.IntN(2) == 0 {
			ks[i] = float64(1 + r.IntN(300))
		}
	}
	scale := func(v float64) *graphir.Value { return b.constant(graphir.I32, nil, func(int) float64 { return v }) }
	acc := b.build(graph.AddOp, nil, b.build(graph.MulOp, nil, wide(y), scale(ks[0])), b.build(graph.MulOp, nil, wide(x), scale(ks[1])))
	acc = b.build(graph.AddOp, nil, acc, b.constant(graphir.I32, nil, func(int) float64 { return float64(r.IntN(1<<16) - 1<<15) }))
	typical := max(ks[0], ks[1]) * 255 / (73 * 74) // requantize's accumulator of √k·73·74
	mod := b.module(b.requantize(acc, 1, k, int64(max(1, typical*typical)), graphir.UI8, 0, 255))
	if r.IntN(2) == 0 {
		perTensor(mod, r)
	}
	return mod
}

// TestNPUInt8Residual: fold-qdq's integer residual add runs in the second
// contraction's int8 epilogue on the NPU — the addend loaded as a tile,
// scaled on the ALU (alu.mul), added, requantized a second time — with
// no host kernel, bit-exact with the graph interpreter.
func TestNPUInt8Residual(t *testing.T) {
	r := rand.New(rand.NewPCG(29, 3))
	signed := 0 // cases whose addend is i8 (LOAD acc sign-extends it)
	for i := range 8 {
		m := randomInt8Residual(r)
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			require.NoError(t, graphir.Verify(m))
			src := graphir.Print(m)
			model := filepath.Join(t.TempDir(), "m.mlir")
			require.NoError(t, os.WriteFile(model, []byte(src), 0o644))
			part, stderr, code := tessera("compile", model, "--target", "npu", "--emit", "partition")
			require.Equal(t, 0, code, stderr)
			require.NotContains(t, part, "host", part)
			require.Contains(t, part, "npu MAC fraction: 1.0000", part)
			asm, stderr, code := tessera("compile", model, "--target", "npu", "--emit", "npu-asm")
			require.Equal(t, 0, code, stderr)
			require.Contains(t, asm, "alu.mul ", "the addend's scale")
			if signedLoad.MatchString(asm) {
				signed++
			}
			in := randomU8Input(t, r, m)
			want := interpret(t, src, []*rt.Tensor{in})
			got := runDTypeModel(t, src, []*rt.Tensor{in}, 1, "--target", "npu")
			require.Equal(t, want[0].Data, got[0].Float64Values(), "%s", src)
		})
	}
	require.GreaterOrEqual(t, signed, 2, "cases with an i8 addend")
}

// signedLoad is an accumulator LOAD of i8 bytes in NPU assembly.
var signedLoad = regexp.MustCompile(`load\.acc [^\n]*dtype=i8`)
