package graph

import (
	"math"
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
	m := parseModule(t, calibrationModel)
	f := m.Funcs[0]
	x := batchOf(0.3, -1, 0.7, 0.05, 0.9, 0.45, -0.2, 0.6)
	want, err := graphir.Interpret(f, x)
	require.NoError(t, err)
	ranges, err := Calibrate(InterpreterEvaluator(f, QuantizedInputs(f)), [][]*graphir.Tensor{x}, QuantizedInputs(f), CalibrateOptions{})
	require.NoError(t, err)
	require.NoError(t, QuantizeStatic(f, ranges))
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
	assert.ErrorContains(t, QuantizeStatic(parseModule(t, calibrationModel).Funcs[0], nil), "has no calibrated range")
}

func TestActivationParams(t *testing.T) {
	s, z := activationParams(Range{-1, 3})
	assert.InDelta(t, 4.0/255, s, 1e-9)
	assert.Equal(t, 64.0, z)
	s, z = activationParams(Range{0, 0})
	assert.Equal(t, 1.0, s)
	assert.Equal(t, 0.0, z)
	_, z = activationParams(Range{-2, 0})
	assert.Equal(t, 255.0, z)
	assert.False(t, math.IsNaN(s))
}
