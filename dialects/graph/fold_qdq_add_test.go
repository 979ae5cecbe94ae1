package graph

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

// qdqAddCase is a QDQ add: a and b quantized per tensor (scale, zero
// point, 8-bit type), dequantized and added, act applied to %c giving
// %r, and %r quantized (scale sy, zero point zy of type y, attributes
// qAttrs).
type qdqAddCase struct {
	name            string
	a, b, r         string // operand and act-result shapes, e.g. "3x17"
	qa, qb, qy      string // 8-bit types: ui8 or i8
	sa, sb, sy      string
	za, zb, zy      string
	act             string // lines defining %r from %c, "" for none
	qAttrs          string
	lo, hi          float64 // the requantize's expected bounds
	broadcastResult string  // the add's result shape ("" : a's)
}

func (c qdqAddCase) source() string {
	res := c.broadcastResult
	if res == "" {
		res = c.a
	}
	act := c.act
	if act == "" {
		act = fmt.Sprintf("  %%r = graph.reshape %%c {shape = [%s]} : (tensor<%sxf32>) -> tensor<%sxf32>\n", strings.ReplaceAll(res, "x", ", "), res, res)
	}
	return fmt.Sprintf(`func.func @main(%%a: tensor<%[1]sxf32>, %%b: tensor<%[2]sxf32>) -> tensor<%[3]sx%[6]s> {
  %%sa = graph.constant {value = dense<%[7]s> : tensor<f32>} : tensor<f32>
  %%za = graph.constant {value = dense<%[10]s> : tensor<%[4]s>} : tensor<%[4]s>
  %%aq = graph.quantize_linear %%a, %%sa, %%za : (tensor<%[1]sxf32>, tensor<f32>, tensor<%[4]s>) -> tensor<%[1]sx%[4]s>
  %%ad = graph.dequantize_linear %%aq, %%sa, %%za : (tensor<%[1]sx%[4]s>, tensor<f32>, tensor<%[4]s>) -> tensor<%[1]sxf32>
  %%sb = graph.constant {value = dense<%[8]s> : tensor<f32>} : tensor<f32>
  %%zb = graph.constant {value = dense<%[11]s> : tensor<%[5]s>} : tensor<%[5]s>
  %%bq = graph.quantize_linear %%b, %%sb, %%zb : (tensor<%[2]sxf32>, tensor<f32>, tensor<%[5]s>) -> tensor<%[2]sx%[5]s>
  %%bd = graph.dequantize_linear %%bq, %%sb, %%zb : (tensor<%[2]sx%[5]s>, tensor<f32>, tensor<%[5]s>) -> tensor<%[2]sxf32>
  %%c = graph.add %%ad, %%bd : (tensor<%[1]sxf32>, tensor<%[2]sxf32>) -> tensor<%[15]sxf32>
%[13]s  %%sy = graph.constant {value = dense<%[9]s> : tensor<f32>} : tensor<f32>
  %%zy = graph.constant {value = dense<%[12]s> : tensor<%[6]s>} : tensor<%[6]s>
  %%y = graph.quantize_linear %%r, %%sy, %%zy%[14]s : (tensor<%[3]sxf32>, tensor<f32>, tensor<%[6]s>) -> tensor<%[3]sx%[6]s>
  func.return %%y : tensor<%[3]sx%[6]s>
}`, c.a, c.b, c.r, c.qa, c.qb, c.qy, c.sa, c.sb, c.sy, c.za, c.zb, c.zy, act, c.qAttrs, res)
}

func qdqAddCases() []qdqAddCase {
	return []qdqAddCase{
		{name: "relu/ui8", a: "3x17", b: "3x17", r: "3x17", qa: "ui8", qb: "ui8", qy: "ui8", sa: "0.0213", sb: "0.0537", sy: "0.0611", za: "128", zb: "100", zy: "10",
			act: "  %r = graph.relu %c : tensor<3x17xf32>\n", lo: 10, hi: 255},
		{name: "broadcast/i8", a: "2x3x5", b: "5", r: "2x3x5", qa: "i8", qb: "i8", qy: "i8", sa: "0.0297", sb: "0.0113", sy: "0.0352", za: "-3", zb: "5", zy: "2",
			lo: -128, hi: 127},
		{name: "reduce-range", a: "4x9", b: "4x9", r: "4x9", qa: "ui8", qb: "ui8", qy: "ui8", sa: "0.0419", sb: "0.0383", sy: "0.0709", za: "64", zb: "60", zy: "0",
			act: "  %r = graph.relu %c : tensor<4x9xf32>\n", qAttrs: " {max = 127}", lo: 0, hi: 127},
		{name: "scales-500x-apart", a: "5x11", b: "5x11", r: "5x11", qa: "ui8", qb: "ui8", qy: "ui8", sa: "0.00103", sb: "0.5071", sy: "0.4133", za: "128", zb: "128", zy: "128",
			lo: 0, hi: 255},
		{name: "clip/ui8", a: "3x17", b: "3x17", r: "3x17", qa: "ui8", qb: "ui8", qy: "ui8", sa: "0.0207", sb: "0.0193", sy: "0.0311", za: "128", zb: "128", zy: "100",
			act: "  %r = graph.clip %c {min = -1.0 : f32, max = 2.0 : f32} : tensor<3x17xf32>\n", lo: 68, hi: 164},
		{name: "relu+maxpool", a: "1x2x6x6", b: "1x2x6x6", r: "1x2x3x3", qa: "ui8", qb: "ui8", qy: "ui8", sa: "0.0221", sb: "0.0317", sy: "0.0409", za: "120", zb: "130", zy: "0",
			act: "  %p = graph.relu %c : tensor<1x2x6x6xf32>\n  %r = graph.max_pool2d %p {kernel = [2, 2], strides = [2, 2]} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>\n", lo: 0, hi: 255},
	}
}

// qdqAddArgs draws a and b over ±(range of their quantizers) and a bit
// beyond (saturation).
func qdqAddArgs(f *graphir.Func, r *rand.Rand) []*graphir.Tensor {
	var args []*graphir.Tensor
	for i, in := range f.Type.Inputs {
		x := graphir.NewZeroTensor(graphir.AsTensor(in))
		span := []float64{6, 140}[i]
		for k := range x.Data {
			x.Data[k] = span * (r.Float64() - 0.5)
		}
		args = append(args, x.Round())
	}
	return args
}

// TestFoldQDQAdd: each QDQ add becomes an integer add (i32 weights of the
// 8-bit operands) and one graph.requantize with the quantize's bounds
// narrowed by a relu or clip, no float add left; its 8-bit result stays
// within one step of the float QDQ path and equals it on almost every
// element (the scales are not round decimals: with 0.02, 0.05 and 0.06
// a sixth of the sums would be exact ties, which the float quantize
// rounds to even and requantize half up).
func TestFoldQDQAdd(t *testing.T) {
	for _, c := range qdqAddCases() {
		t.Run(c.name, func(t *testing.T) {
			ref := parseModule(t, c.source())
			m := parseModule(t, c.source())
			require.Equal(t, 1, FoldQDQ(m.Funcs[0]), graphir.Print(m))
			require.NoError(t, graphir.Verify(m), graphir.Print(m))
			text := graphir.Print(m)
			assert.Equal(t, 1, countOps(m, RequantizeOp), text)
			assert.Zero(t, countOps(m, DequantizeLinearOp), text)
			assert.Equal(t, 2, countOps(m, QuantizeLinearOp), "a's and b's: %s", text)
			m.Funcs[0].Walk(func(op *graphir.Op) {
				if op.Name == AddOp {
					assert.Equal(t, graphir.I32, graphir.AsTensor(op.Results[0].Type).Elem, "no float add: %s", text)
				}
				if op.Name == RequantizeOp {
					lo, _ := op.Int("min")
					hi, _ := op.Int("max")
					assert.Equal(t, [2]float64{c.lo, c.hi}, [2]float64{float64(lo), float64(hi)})
				}
			})
			r := rand.New(rand.NewPCG(11, uint64(len(c.name))))
			for trial := range 4 {
				compareFolded(t, ref, m, qdqAddArgs(ref.Funcs[0], r), trial, 8)
			}
		})
	}
}

// A float user of the add's result, a per-channel dequantize of an
// addend, and an output scale out of the multiplier's range keep the
// float add.
func TestFoldQDQAddRefusals(t *testing.T) {
	c := qdqAddCases()[0]
	for _, edit := range []struct{ name, from, to string }{
		{"two users", "  %r = graph.relu %c : tensor<3x17xf32>\n", "  %r = graph.relu %c : tensor<3x17xf32>\n  %extra = graph.neg %c : tensor<3x17xf32>\n"},
		{"tiny output scale", "dense<0.0611> : tensor<f32>", "dense<1.0e+12> : tensor<f32>"},
		{"per-channel addend", "  %c = graph.add %ad, %bd", "  %sa3 = graph.constant {value = dense<[0.02, 0.03, 0.04]> : tensor<3xf32>} : tensor<3xf32>\n  %za3 = graph.constant {value = dense<128> : tensor<3xui8>} : tensor<3xui8>\n  %ad3 = graph.dequantize_linear %aq, %sa3, %za3 {axis = 0} : (tensor<3x17xui8>, tensor<3xf32>, tensor<3xui8>) -> tensor<3x17xf32>\n  %c = graph.add %ad3, %bd"},
	} {
		t.Run(edit.name, func(t *testing.T) {
			src := strings.Replace(c.source(), edit.from, edit.to, 1)
			require.NotEqual(t, c.source(), src)
			m := parseModule(t, src)
			before := graphir.Print(m)
			assert.Equal(t, 0, FoldQDQ(m.Funcs[0]))
			assert.Equal(t, before, graphir.Print(m))
		})
	}
}
