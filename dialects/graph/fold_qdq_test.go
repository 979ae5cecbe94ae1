package graph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

// qdqModel is a QDQ contraction returning its 8-bit result: x quantized
// (ui8, zero point 128), the contraction CONTRACTION of the dequantized x
// and an int8 weight dequantized per output channel (WEIGHT, SCALES,
// AXIS), then ACT, then quantized with scale 0.05, zero point ZY and
// attributes QATTRS.
const qdqModel = `func.func @main(%x: tensor<XTYPE>) -> tensor<YTYPE> {
  %sx = graph.constant {value = dense<0.02> : tensor<f32>} : tensor<f32>
  %zx = graph.constant {value = dense<128> : tensor<ui8>} : tensor<ui8>
  %xq = graph.quantize_linear %x, %sx, %zx : (tensor<XTYPE>, tensor<f32>, tensor<ui8>) -> tensor<XQTYPE>
  %xd = graph.dequantize_linear %xq, %sx, %zx : (tensor<XQTYPE>, tensor<f32>, tensor<ui8>) -> tensor<XTYPE>
  %wq = graph.constant {value = dense<1> : tensor<WEIGHTxi8>} : tensor<WEIGHTxi8>
  %sw = graph.constant {value = dense<0.01> : tensor<SCALESxf32>} : tensor<SCALESxf32>
  %zw = graph.constant {value = dense<0> : tensor<SCALESxi8>} : tensor<SCALESxi8>
  %wd = graph.dequantize_linear %wq, %sw, %zw {axis = AXIS} : (tensor<WEIGHTxi8>, tensor<SCALESxf32>, tensor<SCALESxi8>) -> tensor<WEIGHTxf32>
  %b = graph.constant {value = dense<0.1> : tensor<BIASxf32>} : tensor<BIASxf32>
  %bq = graph.constant {value = dense<300> : tensor<BIASxi32>} : tensor<BIASxi32>
  %bs = graph.constant {value = dense<0.0002> : tensor<BIASxf32>} : tensor<BIASxf32>
  %bz = graph.constant {value = dense<0> : tensor<BIASxi32>} : tensor<BIASxi32>
  %bd = graph.dequantize_linear %bq, %bs, %bz {axis = 0} : (tensor<BIASxi32>, tensor<BIASxf32>, tensor<BIASxi32>) -> tensor<BIASxf32>
  %c = CONTRACTION
ACT  %sy = graph.constant {value = dense<0.05> : tensor<f32>} : tensor<f32>
  %zy = graph.constant {value = dense<ZY> : tensor<YELEM>} : tensor<YELEM>
  %y = graph.quantize_linear %a, %sy, %zyQATTRS : (tensor<ATYPE>, tensor<f32>, tensor<YELEM>) -> tensor<YTYPE>
  func.return %y : tensor<YTYPE>
}`

// qdqCase fills qdqModel.
type qdqCase struct {
	name                                 string
	x, weight, scales, bias, axis, y, zy string
	yElem                                string
	contraction                          string // %c = ...
	act                                  string // lines defining %a from %c
	aType                                string
	qAttrs                               string // the output quantize's attributes: "" or " {max = 127}"
}

func (c qdqCase) source() string {
	r := strings.NewReplacer("XQTYPE", strings.Replace(c.x, "xf32", "xui8", 1), "XTYPE", c.x, "WEIGHT", c.weight, "SCALES", c.scales, "BIAS", c.bias,
		"AXIS", c.axis, "CONTRACTION", c.contraction, "ACT", c.act, "ATYPE", c.aType, "YTYPE", c.y, "YELEM", c.yElem, "ZY", c.zy, "QATTRS", c.qAttrs)
	return r.Replace(qdqModel)
}

func qdqCases() []qdqCase {
	conv := "graph.conv2d %xd, %wd, %b {groups = 2, strides = [2, 2], pads = [1, 0, 1, 2]} : (tensor<2x4x9x8xf32>, tensor<6x2x3x3xf32>, tensor<6xf32>) -> tensor<2x6x5x4xf32>"
	convCase := qdqCase{x: "2x4x9x8xf32", weight: "6x2x3x3", scales: "6", bias: "6", axis: "0", contraction: conv}
	var cs []qdqCase
	for _, a := range []struct{ name, act, elem, zy string }{
		{"conv/relu/ui8", "  %a = graph.relu %c : tensor<2x6x5x4xf32>\n", "ui8", "10"},
		{"conv/none/i8", "  %a = graph.neg %c : tensor<2x6x5x4xf32>\n", "i8", "-3"}, // neg is not foldable: stays float
		{"conv/clip/i8", "  %a = graph.clip %c {min = -0.5 : f32, max = 1.0 : f32} : tensor<2x6x5x4xf32>\n", "i8", "-3"},
	} {
		c := convCase
		c.name, c.act, c.yElem, c.zy, c.aType, c.y = a.name, a.act, a.elem, a.zy, "2x6x5x4xf32", "2x6x5x4x"+a.elem
		cs = append(cs, c)
	}
	flat := convCase
	flat.name, flat.yElem, flat.zy, flat.aType, flat.y = "conv/relu+flatten/ui8", "ui8", "0", "2x120xf32", "2x120xui8"
	flat.act = "  %r = graph.relu %c : tensor<2x6x5x4xf32>\n  %a = graph.flatten %r {axis = 1} : (tensor<2x6x5x4xf32>) -> tensor<2x120xf32>\n"
	qbias := convCase // QLinearConv's form: an i32 bias dequantized
	qbias.name, qbias.act, qbias.yElem, qbias.zy, qbias.aType, qbias.y = "conv/i32-bias/ui8", "  %a = graph.relu %c : tensor<2x6x5x4xf32>\n", "ui8", "7", "2x6x5x4xf32", "2x6x5x4xui8"
	qbias.contraction = strings.Replace(conv, "%xd, %wd, %b ", "%xd, %wd, %bd ", 1)
	pool := convCase
	pool.name, pool.yElem, pool.zy, pool.aType, pool.y = "conv/relu+maxpool/ui8", "ui8", "3", "2x6x3x2xf32", "2x6x3x2xui8"
	pool.act = "  %r = graph.relu %c : tensor<2x6x5x4xf32>\n  %a = graph.max_pool2d %r {kernel = [2, 2], strides = [2, 2], ceil_mode = true} : (tensor<2x6x5x4xf32>) -> tensor<2x6x3x2xf32>\n"
	mm := qdqCase{name: "matmul/3d/ui8", x: "2x3x20xf32", weight: "20x7", scales: "7", bias: "7", axis: "1", yElem: "ui8", zy: "128", aType: "2x3x7xf32", y: "2x3x7xui8",
		contraction: "graph.matmul %xd, %wd : (tensor<2x3x20xf32>, tensor<20x7xf32>) -> tensor<2x3x7xf32>", act: "  %a = graph.add %c, %b : (tensor<2x3x7xf32>, tensor<7xf32>) -> tensor<2x3x7xf32>\n"}
	mmPlain := mm
	mmPlain.name, mmPlain.act = "matmul/plain/ui8", "  %a = graph.relu %c : tensor<2x3x7xf32>\n"
	gemm := qdqCase{name: "gemm/transB/i8", x: "5x20xf32", weight: "7x20", scales: "7", bias: "7", axis: "0", yElem: "i8", zy: "5", aType: "5x7xf32", y: "5x7xi8",
		contraction: "graph.gemm %xd, %wd, %b {transB = true} : (tensor<5x20xf32>, tensor<7x20xf32>, tensor<7xf32>) -> tensor<5x7xf32>", act: "  %a = graph.relu %c : tensor<5x7xf32>\n"}
	gemmN := gemm
	gemmN.name, gemmN.weight, gemmN.axis, gemmN.yElem, gemmN.y = "gemm/per-tensor/ui8", "20x7", "1", "ui8", "5x7xui8"
	gemmN.scales, gemmN.zy = "1", "100"
	gemmN.contraction = "graph.gemm %xd, %wd, %b : (tensor<5x20xf32>, tensor<20x7xf32>, tensor<7xf32>) -> tensor<5x7xf32>"
	// Three input channels and 16 outputs: symmetric weights get a zero
	// fourth channel, x a fourth channel of its zero point (one graph.pad
	// with the spatial padding).
	rgb := qdqCase{name: "conv/rgb/ui8", x: "1x3x7x6xf32", weight: "16x3x3x3", scales: "16", bias: "16", axis: "0", yElem: "ui8", zy: "4", aType: "1x16x4x3xf32", y: "1x16x4x3xui8",
		contraction: "graph.conv2d %xd, %wd, %b {strides = [2, 2], pads = [1, 1, 1, 0]} : (tensor<1x3x7x6xf32>, tensor<16x3x3x3xf32>, tensor<16xf32>) -> tensor<1x16x4x3xf32>", act: "  %a = graph.relu %c : tensor<1x16x4x3xf32>\n"}
	return append(append(cs, flat, qbias, pool, mm, mmPlain, gemm, gemmN), append(reduceRangeCases(cs[0], mmPlain), rgb)...)
}

// reduceRangeCases are QDQ contractions whose output quantize has
// PyTorch's reduce_range bound max = 127 (ui8): a convolution through
// relu, one through a clip that narrows the bound further, and a matmul.
func reduceRangeCases(conv, mm qdqCase) []qdqCase {
	conv.name, conv.qAttrs = "conv/relu/ui8/max=127", " {max = 127}"
	clip := conv
	clip.name, clip.act = "conv/clip/ui8/max=127", "  %a = graph.clip %c {min = -0.5 : f32, max = 1.0 : f32} : tensor<2x6x5x4xf32>\n"
	mm.name, mm.zy, mm.qAttrs = "matmul/plain/ui8/max=127", "64", " {max = 127}"
	return []qdqCase{conv, clip, mm}
}

// randomizeQDQ gives the case's weight random int8 values, its weight
// zero points random small values (asymmetric weights; 0 with symmetric:
// the 8-bit operands are then multiplied themselves), its scales random
// values in [0.002, 0.02), its float bias values in ±0.5 and its i32
// bias values in ±2500.
func randomizeQDQ(t *testing.T, f *graphir.Func, r *rand.Rand, symmetric bool) {
	var consts []*graphir.Op
	f.Walk(func(op *graphir.Op) {
		if op.Name == ConstantOp {
			consts = append(consts, op)
		}
	})
	require.Len(t, consts, 11)
	fill := func(op *graphir.Op, draw func() float64) {
		d := ConstantOf(op.Results[0])
		x := graphir.NewZeroTensor(d.Type)
		for i := range x.Data {
			x.Data[i] = draw()
		}
		op.SetAttr("value", x.Round().ToDense())
	}
	fill(consts[2], func() float64 { return float64(r.IntN(255) - 127) })
	fill(consts[3], func() float64 { return 0.002 + 0.018*r.Float64() })
	fill(consts[4], func() float64 {
		if symmetric {
			return 0
		}
		return float64(r.IntN(7) - 3)
	})
	fill(consts[5], func() float64 { return r.Float64() - 0.5 })
	fill(consts[6], func() float64 { return float64(r.IntN(5001) - 2500) })
}

// qdqArgs draws x over the quantizer's range (±2.5).
func qdqArgs(f *graphir.Func, r *rand.Rand) []*graphir.Tensor {
	x := graphir.NewZeroTensor(graphir.AsTensor(f.Type.Inputs[0]))
	for i := range x.Data {
		x.Data[i] = 5*r.Float64() - 2.5
	}
	return []*graphir.Tensor{x.Round()}
}

// TestFoldQDQ: each foldable QDQ contraction becomes an i32 contraction
// and one graph.requantize (no quantize, dequantize or float contraction
// left), and its 8-bit result stays within one quantization step of the
// float QDQ path, equal on almost every element; an op the fold does not
// absorb keeps the float path.
func TestFoldQDQ(t *testing.T) {
	for _, c := range qdqCases() {
		for _, sym := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/symmetric=%v", c.name, sym), func(t *testing.T) { checkFoldQDQ(t, c, sym) })
		}
	}
}

// checkFoldQDQ is TestFoldQDQ's check of case c with random weights
// (symmetric or not).
func checkFoldQDQ(t *testing.T, c qdqCase, sym bool) {
	src := c.source()
	r := rand.New(rand.NewPCG(7, uint64(len(c.name))))
	ref := parseModule(t, src)
	randomizeQDQ(t, ref.Funcs[0], r, sym)
	m := parseModule(t, graphir.Print(ref))
	foldable := !strings.Contains(c.act, "graph.neg") && !strings.Contains(c.act, "graph.add")
	n := FoldQDQ(m.Funcs[0])
	require.NoError(t, graphir.Verify(m), graphir.Print(m))
	if !foldable && !sym {
		assert.Equal(t, 0, n)
		assert.Equal(t, graphir.Print(ref), graphir.Print(m), "unchanged")
		return
	}
	require.Equal(t, 1, n, graphir.Print(m))
	requantized := 1
	if !foldable { // the 8-bit contraction dequantized in place, the float consumer kept
		requantized = 0
		assert.Equal(t, 2, countOps(m, QuantizeLinearOp), "x's and y's quantize")
		assert.Equal(t, 1, countOps(m, CastOp), "i32 → f32")
	}
	assert.Equal(t, requantized, countOps(m, RequantizeOp))
	dqs := 0
	if c.name != "conv/i32-bias/ui8" {
		dqs = 1 // the unused i32 bias's
	}
	assert.Equal(t, dqs, countOps(m, DequantizeLinearOp), "%s", graphir.Print(m))
	assert.Equal(t, 2-requantized, countOps(m, QuantizeLinearOp), "only x's quantize is left")
	for trial := range 3 {
		want, got := compareFolded(t, ref, m, qdqArgs(ref.Funcs[0], r), trial, 10)
		if c.qAttrs != "" {
			assert.LessOrEqual(t, slices.Max(got.Data), 127.0, "trial %d: max = 127", trial)
			if !strings.Contains(c.act, "graph.clip") {
				assert.Contains(t, want.Data, 127.0, "trial %d: the bound is reached", trial)
			}
		}
	}
}

// compareFolded interprets the QDQ module ref and its folded form m on
// args and checks the folded 8-bit result: within one quantization step
// of ref's everywhere, equal on at least 97% of the elements, and ref's
// taking more than distinct values (the inputs use the 8-bit range). It
// returns both results.
func compareFolded(t *testing.T, ref, m *graphir.Module, args []*graphir.Tensor, trial, distinct int) (want, got *graphir.Tensor) {
	t.Helper()
	ws, err := graphir.Interpret(ref.Funcs[0], args)
	require.NoError(t, err)
	gs, err := graphir.Interpret(m.Funcs[0], args)
	require.NoError(t, err)
	want, got = ws[0], gs[0]
	require.True(t, want.Type.Equal(got.Type))
	same := 0
	for i, w := range want.Data {
		require.InDelta(t, w, got.Data[i], 1, "trial %d element %d", trial, i)
		if w == got.Data[i] {
			same++
		}
	}
	assert.GreaterOrEqual(t, float64(same), 0.97*float64(len(want.Data)), "trial %d: %d of %d equal", trial, same, len(want.Data))
	assert.Greater(t, len(slices.Compact(slices.Sorted(slices.Values(want.Data)))), distinct, "trial %d: the values spread", trial)
	return want, got
}

// TestFoldQDQReduceRange: the requantize takes the output quantize's
// bounds (max = 127), narrowed by a relu or clip (TestFoldQDQ checks the
// values of these cases).
func TestFoldQDQReduceRange(t *testing.T) {
	want := map[string][2]int64{
		"conv/relu/ui8/max=127":    {10, 127}, // relu: the zero point
		"conv/clip/ui8/max=127":    {0, 30},   // clip [-0.5, 1]: 10 ∓ 10, 10 + 20
		"matmul/plain/ui8/max=127": {64, 127},
	}
	for _, c := range qdqCases() {
		bounds, ok := want[c.name]
		if !ok {
			continue
		}
		delete(want, c.name)
		m := parseModule(t, c.source())
		require.Equal(t, 1, FoldQDQ(m.Funcs[0]), c.name)
		require.NoError(t, graphir.Verify(m))
		m.Funcs[0].Walk(func(op *graphir.Op) {
			if op.Name == RequantizeOp {
				lo, _ := op.Int("min")
				hi, _ := op.Int("max")
				assert.Equal(t, bounds, [2]int64{lo, hi}, c.name)
			}
		})
		assert.Equal(t, 1, countOps(m, RequantizeOp), c.name)
	}
	assert.Empty(t, want, "cases not found")
}

// A float consumer of the contraction's result, a per-channel x
// quantization and a scale out of the multiplier's range keep the float
// path (with asymmetric weights: symmetric ones would fold the
// contraction as 8-bit integers dequantized in place, TestFoldQDQ).
func TestFoldQDQRefusals(t *testing.T) {
	c := qdqCases()[0]
	asym := func(src string) string {
		return strings.Replace(src, "%zw = graph.constant {value = dense<0> : tensor<6xi8>}", "%zw = graph.constant {value = dense<1> : tensor<6xi8>}", 1)
	}
	for _, edit := range []struct{ name, from, to string }{
		{"two users", "  %a = graph.relu %c : tensor<2x6x5x4xf32>\n", "  %a = graph.relu %c : tensor<2x6x5x4xf32>\n  %extra = graph.neg %c : tensor<2x6x5x4xf32>\n"},
		{"tiny output scale", "dense<0.05> : tensor<f32>", "dense<1.0e+12> : tensor<f32>"},
		{"per-channel zero point of x", "  %wq = graph.constant", "  %zx4 = graph.constant {value = dense<[1, 2, 3, 4]> : tensor<4xui8>} : tensor<4xui8>\n  %sx4 = graph.constant {value = dense<0.02> : tensor<4xf32>} : tensor<4xf32>\n  %xd4 = graph.dequantize_linear %xq, %sx4, %zx4 : (tensor<2x4x9x8xui8>, tensor<4xf32>, tensor<4xui8>) -> tensor<2x4x9x8xf32>\n  %wq = graph.constant"},
	} {
		t.Run(edit.name, func(t *testing.T) {
			src := asym(strings.Replace(c.source(), edit.from, edit.to, 1))
			if edit.name == "per-channel zero point of x" {
				src = strings.Replace(src, "graph.conv2d %xd,", "graph.conv2d %xd4,", 1)
			}
			require.NotEqual(t, asym(c.source()), src)
			m := parseModule(t, src)
			before := graphir.Print(m)
			assert.Equal(t, 0, FoldQDQ(m.Funcs[0]))
			assert.Equal(t, before, graphir.Print(m))
		})
	}
}

// The pass is registered for tessera-opt and the pipeline.
func TestFoldQDQPass(t *testing.T) {
	m := parseModule(t, qdqCases()[0].source())
	require.NoError(t, graphir.RunPipeline(m, FoldQDQPassName))
	require.NoError(t, graphir.Verify(m))
	assert.Equal(t, 1, countOps(m, RequantizeOp))
	text := graphir.Print(m)
	assert.Contains(t, text, fmt.Sprintf("%s %%", RequantizeOp))
	// ui8 x and symmetric i8 weights: the 8-bit operands themselves, x
	// padded with its zero point (128) first, the weights' sums times 128
	// times 128 taken from the bias.
	assert.Regexp(t, `graph.pad %[0-9]+ \{pads = \[0, 0, 1, 0, 0, 0, 1, 2\], value = 128.0 : f32\} : \(tensor<2x4x9x8xui8>\) -> tensor<2x4x11x10xui8>`, text)
	assert.Regexp(t, `graph.conv2d %[0-9]+, %[0-9]+, %[0-9]+ \{groups = 2, pads = \[0, 0, 0, 0\], strides = \[2, 2\]\} : \(tensor<2x4x11x10xui8>, tensor<6x2x3x3xi8>, tensor<6xi32>\) -> tensor<2x6x5x4xi32>`, text)
	// An RGB input: one graph.pad adds the fourth channel and the rows and
	// columns.
	m = parseModule(t, qdqCases()[len(qdqCases())-1].source())
	require.NoError(t, graphir.RunPipeline(m, FoldQDQPassName))
	assert.Regexp(t, `graph.pad %[0-9]+ \{pads = \[0, 0, 1, 1, 0, 1, 1, 0\], value = 128.0 : f32\} : \(tensor<1x3x7x6xui8>\) -> tensor<1x4x9x7xui8>`, graphir.Print(m))
	assert.Contains(t, graphir.Print(m), "(tensor<1x4x9x7xui8>, tensor<16x4x3x3xi8>, tensor<16xi32>) -> tensor<1x16x4x3xi32>")
	// With a zero point of 0 the padding stays in the convolution.
	m = parseModule(t, strings.Replace(qdqCases()[0].source(), "dense<128> : tensor<ui8>", "dense<0> : tensor<ui8>", 1))
	require.NoError(t, graphir.RunPipeline(m, FoldQDQPassName))
	assert.Regexp(t, `graph.conv2d %arg0|graph.conv2d %[0-9]+, %[0-9]+, %[0-9]+ \{groups = 2, pads = \[1, 0, 1, 2\], strides = \[2, 2\]\} : \(tensor<2x4x9x8xui8>, tensor<6x2x3x3xi8>, tensor<6xi32>\)`, graphir.Print(m))
	assert.NotContains(t, graphir.Print(m), "graph.pad")
}
