package graph

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

// calibrationModel is y = relu(x) · W + b with x of 4×8 values.
const calibrationModel = `func.func @main(%x: tensor<4x8xf32>) -> tensor<4x3xf32> {
  %w = graph.constant {value = dense<[[0.5, -1.0, 0.25], [1.0, 0.5, -0.5], [-0.25, 0.75, 1.0], [0.1, 0.2, 0.3], [0.5, -1.0, 0.25], [1.0, 0.5, -0.5], [-0.25, 0.75, 1.0], [0.1, 0.2, -2.0]]> : tensor<8x3xf32>} : tensor<8x3xf32>
  %b = graph.constant {value = dense<[0.1, -0.2, 0.3]> : tensor<3xf32>} : tensor<3xf32>
  %r = graph.relu %x : tensor<4x8xf32>
  %y = graph.gemm %r, %w, %b : (tensor<4x8xf32>, tensor<8x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  func.return %y : tensor<4x3xf32>
}`

// batchOf is a 4×8 batch holding vals (repeated).
func batchOf(vals ...float64) []*graphir.Tensor {
	x := graphir.NewZeroTensor(graphir.NewTensor(graphir.F32, 4, 8))
	for i := range x.Data {
		x.Data[i] = vals[i%len(vals)]
	}
	return []*graphir.Tensor{x}
}

// TestCalibrationMethods: minmax takes the extremes, percentile drops a
// rare outlier, entropy clips a long tail, and every range holds 0.
func TestCalibrationMethods(t *testing.T) {
	m := parseModule(t, calibrationModel)
	f := m.Funcs[0]
	values := QuantizedInputs(f)
	require.Len(t, values, 1, "the gemm's activation operand")
	var batches [][]*graphir.Tensor
	for i := 0; i < 40; i++ {
		vals := make([]float64, 32)
		for k := range vals {
			vals[k] = float64((i*32+k)%100) / 100 // 0 … 0.99
		}
		if i == 7 {
			vals[3] = 1000 // one outlier in 1280 values
		}
		batches = append(batches, batchOf(vals...))
	}
	get := func(o CalibrateOptions) Range {
		r, err := Calibrate(InterpreterEvaluator(f, values), batches, values, o)
		require.NoError(t, err)
		return r[values[0]]
	}
	assert.Equal(t, Range{0, 1000}, get(CalibrateOptions{}))
	p := get(CalibrateOptions{Method: CalibratePercentile, Percentile: 99.9})
	assert.Equal(t, 0.0, p.Lo)
	assert.Less(t, p.Hi, 2.0, "the outlier is clipped: %v", p)
	assert.GreaterOrEqual(t, p.Hi, 0.98)
	e := get(CalibrateOptions{Method: CalibrateEntropy})
	assert.Equal(t, 0.0, e.Lo)
	assert.Less(t, e.Hi, 100.0, "entropy clips the tail: %v", e)
	calls := 0
	_, err := Calibrate(InterpreterEvaluator(f, values), batches, values, CalibrateOptions{Method: CalibrateEntropy, Progress: func(done, total int) {
		calls++
		assert.Equal(t, 80, total, "two passes")
	}})
	require.NoError(t, err)
	assert.Equal(t, 80, calls)
	_, err = Calibrate(InterpreterEvaluator(f, values), batches, values, CalibrateOptions{Method: "kl"})
	assert.ErrorContains(t, err, "unknown calibration method 'kl'")
	_, err = Calibrate(InterpreterEvaluator(f, values), batches, values, CalibrateOptions{Method: CalibratePercentile, Percentile: 20})
	assert.ErrorContains(t, err, "percentile 20 must be in (50, 100]")
}

// TestQuantizeStatic: the rewrite reads the activation through a ui8
// Q/DQ pair and the weight as an int8 constant dequantized per output
// column; the quantized model stays within a quantization step of the
// float one, and a constant per-channel scale is max|w|/127.
func TestQuantizeStatic(t *testing.T) {
	m, x, want, ranges := calibratedModel(t)
	f := m.Funcs[0]
	require.NoError(t, QuantizeStatic(f, ranges, QuantizeOptions{}))
	require.NoError(t, graphir.Verify(m))
	assert.Equal(t, 1, countOps(m, QuantizeLinearOp))
	assert.Equal(t, 2, countOps(m, DequantizeLinearOp))
	var wq *graphir.DenseElementsAttr
	var scales []float64
	f.Walk(func(op *graphir.Op) {
		if op.Name != DequantizeLinearOp {
			return
		}
		if d := ConstantOf(op.Operand(0)); d != nil {
			wq = d
			scales = ConstantOf(op.Operand(1)).Values()
			axis, _ := op.Int("axis")
			assert.Equal(t, int64(1), axis, "per output column of W (K×N)")
		}
	})
	require.NotNil(t, wq)
	assert.Equal(t, graphir.I8, wq.Type.Elem)
	assert.InDeltaSlice(t, []float64{1.0 / 127, 1.0 / 127, 2.0 / 127}, scales, 1e-7)
	got, err := graphir.Interpret(f, x)
	require.NoError(t, err)
	for i := range want[0].Data {
		assert.InDelta(t, want[0].Data[i], got[0].Data[i], 0.05, "element %d", i)
	}
	assert.NotEqual(t, want[0].Data, got[0].Data, "quantization changes the values")
	assert.ErrorContains(t, QuantizeStatic(parseModule(t, calibrationModel).Funcs[0], nil, QuantizeOptions{}), "has no calibrated range")
}

// calibratedModel is calibrationModel with one batch x, its float
// results and the batch's calibrated ranges.
func calibratedModel(t *testing.T) (*graphir.Module, []*graphir.Tensor, []*graphir.Tensor, map[*graphir.Value]Range) {
	m := parseModule(t, calibrationModel)
	f := m.Funcs[0]
	x := batchOf(0.3, -1, 0.7, 0.05, 0.9, 0.45, -0.2, 0.6)
	want, err := graphir.Interpret(f, x)
	require.NoError(t, err)
	values := QuantizedInputs(f)
	ranges, err := Calibrate(InterpreterEvaluator(f, values), [][]*graphir.Tensor{x}, values, CalibrateOptions{})
	require.NoError(t, err)
	return m, x, want, ranges
}

func TestActivationParams(t *testing.T) {
	s, z := activationParams(Range{-1, 3}, 255)
	assert.InDelta(t, 4.0/255, s, 1e-9)
	assert.Equal(t, 64.0, z)
	s, z = activationParams(Range{0, 0}, 255)
	assert.Equal(t, 1.0, s)
	assert.Equal(t, 0.0, z)
	_, z = activationParams(Range{-2, 0}, 255)
	assert.Equal(t, 255.0, z)
	assert.False(t, math.IsNaN(s))
	// reduce_range: 7 bits
	s, z = activationParams(Range{-1, 3}, ReducedActivationMax)
	assert.InDelta(t, 4.0/127, s, 1e-9)
	assert.Equal(t, 32.0, z)
	_, z = activationParams(Range{-2, 0}, ReducedActivationMax)
	assert.Equal(t, 127.0, z)
}

// TestQuantizeStaticReduceRange: with ReduceRange every activation's
// quantize carries max = 127 and a zero point in [0, 127] (scale
// (hi − lo)/127), the weights stay symmetric int8 (max|w|/127), the
// quantized values stay within [0, 127] and the model close to the float
// one.
func TestQuantizeStaticReduceRange(t *testing.T) {
	m, x, want, ranges := calibratedModel(t)
	f := m.Funcs[0]
	values := QuantizedInputs(f)
	r := Range{-0.4, ranges[values[0]].Hi} // relu's range widened: a zero point other than 0
	ranges[values[0]] = r
	require.NoError(t, QuantizeStatic(f, ranges, QuantizeOptions{ReduceRange: true}))
	require.NoError(t, graphir.Verify(m))
	assert.Regexp(t, `graph.quantize_linear %[0-9]+, %[0-9]+, %[0-9]+ \{max = 127\} : \(tensor<4x8xf32>`, graphir.Print(m))
	var q *graphir.Op
	f.Walk(func(op *graphir.Op) {
		switch op.Name {
		case QuantizeLinearOp:
			q = op
		case DequantizeLinearOp:
			if d := ConstantOf(op.Operand(0)); d != nil {
				assert.Equal(t, graphir.I8, d.Type.Elem)
				assert.InDeltaSlice(t, []float64{1.0 / 127, 1.0 / 127, 2.0 / 127}, ConstantOf(op.Operand(1)).Values(), 1e-7, "weights: max|w|/127 as without reduce_range")
			}
		}
	})
	require.NotNil(t, q)
	hi, err := q.Int("max")
	require.NoError(t, err)
	assert.Equal(t, int64(127), hi)
	assert.InDelta(t, (r.Hi-r.Lo)/127, ConstantOf(q.Operand(1)).Values()[0], 1e-7)
	zp := ConstantOf(q.Operand(2)).Values()[0]
	assert.Equal(t, 39.0, zp, "round(0.4 / (1.3/127))")
	scale := ConstantOf(q.Operand(1)).Values()[0]
	qx := evalOp(t, QuantizeLinearOp, q.Attrs, x[0], tensor(nil, scale), typed(graphir.UI8, nil, zp))
	assert.Equal(t, 127.0, slices.Max(qx.Data), "the calibrated maximum quantizes to 127")
	assert.Equal(t, 0.0, slices.Min(qx.Data), "x's -1 below the range")
	got, err := graphir.Interpret(f, x)
	require.NoError(t, err)
	for i := range want[0].Data {
		assert.InDelta(t, want[0].Data[i], got[0].Data[i], 0.1, "element %d", i)
	}
}

// TestQuantizeStaticShapes covers the other contractions: a grouped,
// strided convolution (per output channel weights along axis 0), a gemm
// with transB (axis 0), a matmul with a 3-D constant (per tensor) and a
// matmul of two activations (both quantized); the quantized model stays
// close to the float one.
func TestQuantizeStaticShapes(t *testing.T) {
	src := `func.func @main(%x: tensor<1x4x6x6xf32>, %a: tensor<2x3x5xf32>) -> (tensor<1x3xf32>, tensor<2x3x2xf32>, tensor<2x3x3xf32>) {
  %w = graph.constant {value = dense<0.5> : tensor<6x2x3x3xf32>} : tensor<6x2x3x3xf32>
  %c = graph.conv2d %x, %w {groups = 2, strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<1x4x6x6xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x3x3xf32>
  %f = graph.flatten %c {axis = 1} : (tensor<1x6x3x3xf32>) -> tensor<1x54xf32>
  %g = graph.constant {value = dense<0.25> : tensor<3x54xf32>} : tensor<3x54xf32>
  %y = graph.gemm %f, %g {transB = true} : (tensor<1x54xf32>, tensor<3x54xf32>) -> tensor<1x3xf32>
  %m = graph.constant {value = dense<-0.75> : tensor<2x5x2xf32>} : tensor<2x5x2xf32>
  %z = graph.matmul %a, %m : (tensor<2x3x5xf32>, tensor<2x5x2xf32>) -> tensor<2x3x2xf32>
  %at = graph.transpose %a {perm = [0, 2, 1]} : (tensor<2x3x5xf32>) -> tensor<2x5x3xf32>
  %s = graph.matmul %a, %at : (tensor<2x3x5xf32>, tensor<2x5x3xf32>) -> tensor<2x3x3xf32>
  func.return %y, %z, %s : tensor<1x3xf32>, tensor<2x3x2xf32>, tensor<2x3x3xf32>
}`
	m := parseModule(t, src)
	f := m.Funcs[0]
	rng := newRNG(3)
	args := []*graphir.Tensor{randTensor(rng, 1, 4, 6, 6), randTensor(rng, 2, 3, 5)}
	want, err := graphir.Interpret(f, args)
	require.NoError(t, err)
	values := QuantizedInputs(f)
	require.Len(t, values, 4, "x, the flattened conv, a, a transposed")
	ranges, err := Calibrate(InterpreterEvaluator(f, values), [][]*graphir.Tensor{args}, values, CalibrateOptions{})
	require.NoError(t, err)
	require.NoError(t, QuantizeStatic(f, ranges, QuantizeOptions{}))
	require.NoError(t, graphir.Verify(m))
	assert.Equal(t, 4, countOps(m, QuantizeLinearOp))
	assert.Equal(t, 7, countOps(m, DequantizeLinearOp), "4 activations, 3 weights")
	got, err := graphir.Interpret(f, args)
	require.NoError(t, err)
	for r := range want {
		scale := 0.0
		for _, v := range want[r].Data {
			scale = math.Max(scale, math.Abs(v))
		}
		for i := range want[r].Data {
			assert.InDelta(t, want[r].Data[i], got[r].Data[i], 0.03*scale, "result %d element %d", r, i)
		}
	}
}

// residualModel is two residual blocks: x → conv → relu → conv, + x,
// relu (y); y → conv, + y, relu → conv (the f32 result). With OUT
// "%r2" the second block's relu is the result instead (read as float).
const residualModel = `func.func @main(%x: tensor<1x4x6x6xf32>) -> tensor<OUTTYPE> {
  %w1 = graph.constant {value = dense<[W]> : tensor<4x4x3x3xf32>} : tensor<4x4x3x3xf32>
  %w2 = graph.constant {value = dense<[W]> : tensor<4x4x3x3xf32>} : tensor<4x4x3x3xf32>
  %w3 = graph.constant {value = dense<[W]> : tensor<4x4x3x3xf32>} : tensor<4x4x3x3xf32>
  %w4 = graph.constant {value = dense<[W]> : tensor<4x4x3x3xf32>} : tensor<4x4x3x3xf32>
  %c1 = graph.conv2d %x, %w1 {pads = [1, 1, 1, 1]} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %r1 = graph.relu %c1 : tensor<1x4x6x6xf32>
  %c2 = graph.conv2d %r1, %w2 {pads = [1, 1, 1, 1]} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %s1 = graph.add %c2, %x : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %y = graph.relu %s1 : tensor<1x4x6x6xf32>
  %c3 = graph.conv2d %y, %w3 {pads = [1, 1, 1, 1]} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  %s2 = graph.add %c3, %y : (tensor<1x4x6x6xf32>, tensor<1x4x6x6xf32>) -> tensor<1x4x6x6xf32>
  %r2 = graph.relu %s2 : tensor<1x4x6x6xf32>
  %c4 = graph.conv2d %r2, %w4 {pads = [1, 1, 1, 1]} : (tensor<1x4x6x6xf32>, tensor<4x4x3x3xf32>) -> tensor<1x4x6x6xf32>
  func.return OUT : tensor<OUTTYPE>
}`

// residualSource fills residualModel with pseudo-random weights and the
// result out (%c4 or %r2).
func residualSource(out string) string {
	r := rand.New(rand.NewPCG(5, 6))
	nested := func(n int, inner func() string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = inner()
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	w := nested(4, func() string {
		return nested(4, func() string {
			return nested(3, func() string {
				return nested(3, func() string { return fmt.Sprintf("%.4f", (r.Float64()-0.5)*0.5) })
			})
		})
	})
	return strings.NewReplacer("[W]", w, "OUTTYPE", "1x4x6x6xf32", "OUT", out).Replace(residualModel)
}

// TestQuantizeResidual: PTQ quantizes a residual add's operands when its
// result is quantized again (the block input once, for its convolution
// and the add), and fold-qdq then leaves no float add: both blocks
// become integer convolutions and integer adds, and the model stays close
// to the float one. An add whose result is read as float (a model
// output) stays float, and so does the add feeding it.
func TestQuantizeResidual(t *testing.T) {
	m := parseModule(t, residualSource("%c4"))
	f := m.Funcs[0]
	names := map[*graphir.Value]string{f.Entry().Args[0]: "x"}
	f.Walk(func(op *graphir.Op) {
		if op.Name == ReluOp || op.Name == Conv2DOp {
			names[op.Results[0]] = fmt.Sprint(len(names))
		}
	})
	var got []string
	for _, v := range QuantizedInputs(f) {
		got = append(got, names[v])
	}
	// x, r1, then the first add's c2 (and x again), y, c3, r2.
	assert.Equal(t, []string{"x", "2", "3", "4", "5", "6"}, got)

	r := rand.New(rand.NewPCG(7, 8))
	batch := func() []*graphir.Tensor {
		x := graphir.NewZeroTensor(graphir.NewTensor(graphir.F32, 1, 4, 6, 6))
		for i := range x.Data {
			x.Data[i] = r.Float64()*4 - 2
		}
		return []*graphir.Tensor{x.Round()}
	}
	var batches [][]*graphir.Tensor
	for range 8 {
		batches = append(batches, batch())
	}
	values := QuantizedInputs(f)
	ranges, err := Calibrate(InterpreterEvaluator(f, values), batches, values, CalibrateOptions{})
	require.NoError(t, err)
	ref := parseModule(t, residualSource("%c4"))
	require.NoError(t, QuantizeStatic(f, ranges, QuantizeOptions{}))
	assert.Equal(t, 6, countOps(m, QuantizeLinearOp), "one per activation: x is shared by its convolution and the add")
	assert.Equal(t, 6, FoldQDQ(f), graphir.Print(m))
	require.NoError(t, graphir.Verify(m))
	f.Walk(func(op *graphir.Op) {
		if op.Name == AddOp {
			assert.Equal(t, graphir.I32, graphir.AsTensor(op.Results[0].Type).Elem, "no float add left")
		}
	})
	assert.Equal(t, 5, countOps(m, RequantizeOp), "three convolutions and two adds; the last convolution is dequantized in place")
	x := batch()
	want, err := graphir.Interpret(ref.Funcs[0], x)
	require.NoError(t, err)
	out, err := graphir.Interpret(f, x)
	require.NoError(t, err)
	var sig, noise float64
	for i, w := range want[0].Data {
		sig += w * w
		noise += (w - out[0].Data[i]) * (w - out[0].Data[i])
	}
	assert.Greater(t, 10*math.Log10(sig/noise), 25.0, "SQNR (dB)")

	// The second block's result read as float: neither add is quantized.
	f = parseModule(t, strings.Replace(residualSource("%r2"), "%c4 = graph.conv2d %r2", "%c4 = graph.conv2d %y", 1)).Funcs[0]
	assert.Len(t, QuantizedInputs(f), 3, "x, r1, y (for c3 and c4)")
}
