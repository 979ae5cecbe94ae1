package lowering

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// Agreement cases for the unsigned, i16, f16 and bf16 element types and
// graph.bit_shift (run by TestLegalizeElementwiseExtAgreement): the graph
// interpreter, the hlo interpreter (after legalize-to-hlo and after fuse)
// and the tensor IR interpreter compute the same values. Integer values
// are drawn over each type's whole range (ui64 below 2^40, where the
// reference evaluators' float64 is exact), so unsigned wrap-around,
// comparisons of values ≥ 2^(bits-1), unsigned division and shifts by the
// width or more are exercised.

// wideDraw draws values over dt's range; divisor inputs (index 1 when
// nonZero) are never 0.
func wideDraw(nonZero bool) func(r *rand.Rand, i int, dt graphir.DType) float64 {
	return func(r *rand.Rand, i int, dt graphir.DType) float64 {
		var v float64
		switch dt {
		case graphir.UI8:
			v = float64(r.IntN(256))
		case graphir.UI16:
			v = float64(r.IntN(1 << 16))
		case graphir.UI32:
			v = float64(r.Uint32())
		case graphir.UI64:
			v = float64(r.Uint64() >> 24)
		case graphir.I16:
			v = float64(r.IntN(1<<16) - 1<<15)
		case graphir.I8:
			v = float64(r.IntN(256) - 128)
		default:
			v = ewDrawFloat(r)
		}
		if nonZero && i == 1 && v == 0 {
			v = 3
		}
		return v
	}
}

// ewDrawFloat is a float in [-3, 3) or, a third of the time, an edge value.
func ewDrawFloat(r *rand.Rand) float64 {
	if r.IntN(3) == 0 {
		return ewEdgeValues[r.IntN(len(ewEdgeValues))]
	}
	return 6*r.Float64() - 3
}

// shiftDraw draws full-range values (input 0) and shift amounts up to 3
// past the width (input 1).
func shiftDraw(r *rand.Rand, i int, dt graphir.DType) float64 {
	if i == 1 {
		return float64(r.IntN(dt.Bits() + 4))
	}
	return wideDraw(false)(r, 0, dt)
}

// rangeDraw draws floats in [lo, hi).
func rangeDraw(lo, hi float64) func(r *rand.Rand, i int, dt graphir.DType) float64 {
	return func(r *rand.Rand, _ int, _ graphir.DType) float64 { return lo + (hi-lo)*r.Float64() }
}

func dtypeAgreeCases() []ewCase {
	t := func(dt graphir.DType, shape ...int64) *graphir.TensorType { return graphir.NewTensor(dt, shape...) }
	var cs []ewCase
	ints := []graphir.DType{graphir.UI8, graphir.UI16, graphir.UI32, graphir.UI64, graphir.I16}
	for _, dt := range ints {
		a, b := t(dt, 3, 5), t(dt, 5)
		for _, op := range []string{"add", "sub", "max", "min", "equal", "less", "greater_equal"} {
			if op == "sub" && dt == graphir.UI64 {
				continue // wraps past 2^53: inexact in the float64 reference
			}
			cs = append(cs, ewCase{name: op + "/" + dt.String(), op: "graph." + op, inputs: []*graphir.TensorType{a, b}, draw: wideDraw(false)})
		}
		cs = append(cs,
			ewCase{name: "mul/" + dt.String(), op: "graph.mul", inputs: []*graphir.TensorType{a, b}},
			ewCase{name: "div/" + dt.String(), op: "graph.div", inputs: []*graphir.TensorType{a, b}, draw: wideDraw(true)},
			ewCase{name: "abs/" + dt.String(), op: "graph.abs", inputs: []*graphir.TensorType{a}, draw: wideDraw(false)},
			ewCase{name: "sign/" + dt.String(), op: "graph.sign", inputs: []*graphir.TensorType{a}, draw: wideDraw(false)},
		)
		for _, fmod := range []int{0, 1} {
			cs = append(cs, ewCase{name: fmt.Sprintf("mod/%s/fmod%d", dt, fmod), op: "graph.mod", inputs: []*graphir.TensorType{a, b}, attrs: attrs("fmod", fmod), draw: wideDraw(false)})
		}
		if dt.IsUnsigned() {
			for _, dir := range []string{"LEFT", "RIGHT"} {
				cs = append(cs, ewCase{name: "bit_shift/" + dir + "/" + dt.String(), op: "graph.bit_shift",
					inputs: []*graphir.TensorType{t(dt, 4, 7), t(dt, 7)}, attrs: attrs("direction", dir), draw: shiftDraw})
			}
		}
	}
	cs = append(cs, ewCase{name: "neg/i16", op: "graph.neg", inputs: []*graphir.TensorType{t(graphir.I16, 9)}, draw: wideDraw(false)},
		ewCase{name: "bit_shift/rank0", op: "graph.bit_shift", inputs: []*graphir.TensorType{t(graphir.UI8), t(graphir.UI8, 11)}, attrs: attrs("direction", "LEFT"), draw: shiftDraw})
	for _, dt := range []graphir.DType{graphir.F16, graphir.BF16} {
		for _, op := range []string{"add", "sub", "mul", "div", "max", "min"} {
			cs = append(cs, ewCase{name: op + "/" + dt.String(), op: "graph." + op, inputs: []*graphir.TensorType{t(dt, 3, 7), t(dt, 7)}})
		}
		for _, op := range []string{"neg", "abs", "sqrt", "exp"} {
			cs = append(cs, ewCase{name: op + "/" + dt.String(), op: "graph." + op, inputs: []*graphir.TensorType{t(dt, 13)}})
		}
	}
	casts := []struct {
		from, to graphir.DType
		draw     func(r *rand.Rand, i int, dt graphir.DType) float64
	}{
		{graphir.UI8, graphir.F32, wideDraw(false)}, {graphir.UI64, graphir.F64, wideDraw(false)}, {graphir.UI32, graphir.F16, wideDraw(false)},
		{graphir.I16, graphir.UI16, wideDraw(false)}, {graphir.UI16, graphir.I16, wideDraw(false)}, {graphir.UI32, graphir.I64, wideDraw(false)},
		{graphir.UI8, graphir.I8, wideDraw(false)}, {graphir.I8, graphir.UI32, wideDraw(false)}, {graphir.I8, graphir.UI64, rangeDraw(0, 128)}, // negatives wrap past 2^53
		{graphir.UI64, graphir.UI8, wideDraw(false)}, {graphir.UI16, graphir.BF16, wideDraw(false)}, {graphir.I16, graphir.I1, wideDraw(false)},
		{graphir.F32, graphir.UI8, rangeDraw(0, 255.9)}, {graphir.F64, graphir.UI64, rangeDraw(0, 1e12)}, {graphir.F32, graphir.I16, rangeDraw(-3e4, 3e4)},
		{graphir.F32, graphir.F16, nil}, {graphir.F64, graphir.F16, nil}, {graphir.F64, graphir.BF16, nil}, {graphir.F32, graphir.BF16, nil},
		{graphir.F16, graphir.BF16, nil}, {graphir.BF16, graphir.F16, nil}, {graphir.F16, graphir.F64, nil}, {graphir.BF16, graphir.F32, nil},
		{graphir.F16, graphir.I32, rangeDraw(-100, 100)}, {graphir.BF16, graphir.UI8, rangeDraw(0, 200)}, {graphir.I64, graphir.BF16, nil},
	}
	for _, c := range casts {
		cs = append(cs, ewCase{name: "cast/" + c.from.String() + "_" + c.to.String(), op: "graph.cast", inputs: []*graphir.TensorType{t(c.from, 17)},
			result: t(c.to, 17), draw: c.draw, noEdge: c.draw != nil})
	}
	// f64 values just off the f16/bf16 ties, where rounding through f32
	// first would round differently.
	cs = append(cs, ewCase{name: "cast/f64_f16/near-ties", op: "graph.cast", inputs: []*graphir.TensorType{t(graphir.F64, 16)}, result: t(graphir.F16, 16),
		draw: func(r *rand.Rand, _ int, _ graphir.DType) float64 {
			return math.Ldexp(float64(2*r.IntN(1024)+2049), -11+r.IntN(8)) * (1 + float64(r.IntN(3)-1)*math.Ldexp(1, -40))
		}})
	return cs
}

// quantDraw draws a quantize/dequantize case's operands: x with edge
// values (input 0, wide integers when quantized), scales in (0.005, 1.005)
// (input 1) and zero points over their type's range (input 2).
func quantDraw(r *rand.Rand, i int, dt graphir.DType) float64 {
	switch {
	case i == 1:
		return 0.005 + r.Float64()
	case dt == graphir.I32:
		return float64(r.IntN(2001) - 1000)
	default:
		return wideDraw(false)(r, i, dt)
	}
}

// quantAgreeCases are quantize_linear and dequantize_linear per tensor
// and per axis, ui8, i8 and i32, and quantize_linear with min and max.
func quantAgreeCases() []ewCase {
	t := func(dt graphir.DType, shape ...int64) *graphir.TensorType { return graphir.NewTensor(dt, shape...) }
	var cs []ewCase
	for _, q := range []graphir.DType{graphir.UI8, graphir.I8} {
		cs = append(cs,
			ewCase{name: "quantize_linear/" + q.String(), op: "graph.quantize_linear", inputs: []*graphir.TensorType{f32t(3, 7), f32t(), t(q)}, draw: quantDraw},
			ewCase{name: "quantize_linear/axis/" + q.String(), op: "graph.quantize_linear", inputs: []*graphir.TensorType{f32t(3, 7), f32t(7), t(q, 7)}, attrs: attrs("axis", -1), draw: quantDraw},
			ewCase{name: "dequantize_linear/" + q.String(), op: "graph.dequantize_linear", inputs: []*graphir.TensorType{t(q, 3, 7), f32t(1), t(q, 1)}, draw: quantDraw},
			ewCase{name: "dequantize_linear/axis/" + q.String(), op: "graph.dequantize_linear", inputs: []*graphir.TensorType{t(q, 3, 7), f32t(3), t(q, 3)}, attrs: attrs("axis", 0), draw: quantDraw},
		)
	}
	return append(cs,
		// bounded: PyTorch's reduce_range (ui8 in [0, 127], zero points
		// above 127 drawn too) and a narrowed i8 range per axis
		ewCase{name: "quantize_linear/max=127/ui8", op: "graph.quantize_linear", inputs: []*graphir.TensorType{f32t(3, 7), f32t(), t(graphir.UI8)}, attrs: attrs("max", 127), draw: quantDraw},
		ewCase{name: "quantize_linear/axis/bounds/i8", op: "graph.quantize_linear", inputs: []*graphir.TensorType{f32t(3, 7), f32t(7), t(graphir.I8, 7)}, attrs: attrs("axis", -1, "min", -20, "max", 90), draw: quantDraw},
		ewCase{name: "quantize_linear/i32", op: "graph.quantize_linear", inputs: []*graphir.TensorType{t(graphir.I32, 11), f32t(), t(graphir.I8)}, draw: quantDraw},
		ewCase{name: "dequantize_linear/i32", op: "graph.dequantize_linear", inputs: []*graphir.TensorType{t(graphir.I32, 11), f32t(), t(graphir.I32)}, draw: quantDraw})
}

// requantAgreeCases are graph.requantize per tensor and per axis, to ui8
// and i8, with and without fused bounds.
func requantAgreeCases() []ewCase {
	t := func(dt graphir.DType, shape ...int64) *graphir.TensorType { return graphir.NewTensor(dt, shape...) }
	i32 := graphir.I32
	return []ewCase{
		{name: "requantize/ui8", op: "graph.requantize", inputs: []*graphir.TensorType{t(i32, 3, 17), t(i32), t(i32), t(graphir.UI8)}, draw: requantDraw},
		{name: "requantize/axis/i8", op: "graph.requantize", inputs: []*graphir.TensorType{t(i32, 2, 5, 3), t(i32, 5), t(i32, 5), t(graphir.I8, 1)}, draw: requantDraw},
		{name: "requantize/relu/ui8", op: "graph.requantize", inputs: []*graphir.TensorType{t(i32, 4, 9), t(i32, 9), t(i32, 9), t(graphir.UI8)}, attrs: attrs("axis", -1, "min", 20, "max", 200), draw: requantDraw},
	}
}

// requantDraw draws a requantize case's operands: accumulators of every
// magnitude up to 2^31 (input 0), multipliers in [2^30, 2^31) (input 1),
// shifts over the accepted range (input 2) and zero points (input 3).
func requantDraw(r *rand.Rand, i int, dt graphir.DType) float64 {
	switch i {
	case 0:
		v := float64(r.Int64N(1 << r.IntN(32)))
		if r.IntN(2) == 0 {
			v = -v
		}
		return v
	case 1:
		return float64(1<<30 + r.IntN(1<<30))
	case 2:
		return float64(-14 + r.IntN(46))
	}
	return wideDraw(false)(r, i, dt)
}

// TestRequantizeConstantTerms: graph.requantize with a constant multiplier
// and shift (fold-qdq's form) legalizes with its per-channel terms as i64
// constants; per channel and per tensor, at the ends of the multiplier's
// and shift's ranges, it equals the exact graph reference after
// legalize-to-hlo, after fuse and as tensor IR.
func TestRequantizeConstantTerms(t *testing.T) {
	mults := "[1073741824, 2147483647, 1500000000, 1999999999, 1073741825]"
	shifts := "[-14, 31, 0, 7, 30]"
	for _, c := range []struct {
		name, m, s, mt, out, attrs string
		ms, ss                     []float64
	}{
		{"axis", mults, shifts, "tensor<5xi32>", "ui8", "{axis = 1, min = 3, max = 250}",
			[]float64{1073741824, 2147483647, 1500000000, 1999999999, 1073741825}, []float64{-14, 31, 0, 7, 30}},
		{"tensor", "1700071377", "15", "tensor<i32>", "i8", "", []float64{1700071377}, []float64{15}},
		{"tensor/shift-14", "1073741824", "-14", "tensor<i32>", "i8", "{min = -100}", []float64{1073741824}, []float64{-14}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src := fmt.Sprintf(`func.func @main(%%acc: tensor<4x5xi32>) -> tensor<4x5x%[5]s> {
  %%m = graph.constant {value = dense<%[1]s> : %[3]s} : %[3]s
  %%s = graph.constant {value = dense<%[2]s> : %[3]s} : %[3]s
  %%z = graph.constant {value = dense<7> : tensor<%[5]s>} : tensor<%[5]s>
  %%0 = graph.requantize %%acc, %%m, %%s, %%z %[4]s : (tensor<4x5xi32>, %[3]s, %[3]s, tensor<%[5]s>) -> tensor<4x5x%[5]s>
  func.return %%0 : tensor<4x5x%[5]s>
}`, c.m, c.s, c.mt, c.attrs, c.out)
			parse := func() *graphir.Module {
				m, err := graphir.ParseString("requantize.mlir", src)
				require.NoError(t, err)
				return m
			}
			f := parse().Funcs[0]
			lm := parse()
			runPipeline(t, lm, graph.LegalizeToHLOPassName)
			assert.NotContains(t, graphir.Print(lm), "hlo.shift_left", "the terms are constants")
			fm := parse()
			runPipeline(t, fm, graph.LegalizeToHLOPassName+",fuse")
			tm, err := LowerToTIR(fm)
			require.NoError(t, err)
			for trial := range 4 {
				args := requantArgs(uint64(trial), c.ms, c.ss)
				want, err := graphir.Interpret(f, args)
				require.NoError(t, err)
				for _, m := range []*graphir.Module{lm, fm} {
					got, err := graphir.Interpret(m.Funcs[0], args)
					require.NoError(t, err)
					require.Equal(t, want[0].Data, got[0].Data, "%s trial %d", graphir.Print(m), trial)
				}
				res := runHost(t, tm, "main", args)
				requireTIRClose(t, want[0], res[0], 0, c.name+" (tensor IR)")
			}
		})
	}
}

// requantArgs draws a 4×5 accumulator whose requantized values mostly fall
// within ±300 (the bounds and rounding are then exercised, not only
// saturation) for channel c's multiplier ms[c] and shift ss[c] (one of
// each: per tensor), with 0 and the i32 extremes mixed in.
func requantArgs(seed uint64, ms, ss []float64) []*graphir.Tensor {
	r := rand.New(rand.NewPCG(seed, 0x7e9))
	acc := graphir.NewZeroTensor(graphir.NewTensor(graphir.I32, 4, 5))
	edges := []float64{0, math.MaxInt32, math.MinInt32, 1, -1}
	for i := range acc.Data {
		c := (i % 5) % len(ms)
		v := math.Round((600*r.Float64() - 300) * math.Ldexp(1, 31+int(ss[c])) / ms[c])
		if i < len(edges) {
			v = edges[i]
		}
		acc.Data[i] = math.Max(math.Min(v, math.MaxInt32), math.MinInt32)
	}
	return []*graphir.Tensor{acc}
}
