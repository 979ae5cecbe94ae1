package graph

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

// evalCase is a hand-computed evaluation: op on x with attrs gives a
// tensor of shape want with data (f32 rounding applied to want).
type evalCase struct {
	name  string
	op    string
	x     *graphir.Tensor
	attrs graphir.DictAttr
	shape []int64
	want  []float64
}

func runEvalCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := evalOp(t, c.op, c.attrs, c.x)
			require.Equal(t, append([]int64{}, c.shape...), append([]int64{}, got.Type.Shape...))
			want := make([]float64, len(c.want))
			for i, w := range c.want {
				want[i] = graphir.RoundTo(c.x.Type.Elem, w)
			}
			requireClose(t, want, got.Data, 1e-7)
		})
	}
}

func TestReduceEval(t *testing.T) {
	x := tensor([]int64{2, 3}, 1, -2, 3, 4, 5, -6)
	inf := math.Inf(1)
	empty := tensor([]int64{2, 0})
	ints := &graphir.Tensor{Type: graphir.NewTensor(graphir.I32, 2, 2), Data: []float64{7, -3, 2, 9}}
	runEvalCases(t, []evalCase{
		{"sum axis0", ReduceSumOp, x, attrs("axes", []int64{0}), []int64{1, 3}, []float64{5, 3, -3}},
		{"sum all keep", ReduceSumOp, x, nil, []int64{1, 1}, []float64{5}},
		{"sum all drop", ReduceSumOp, x, attrs("keepdims", false), []int64{}, []float64{5}},
		{"sum empty axes", ReduceSumOp, x, attrs("axes", []int64{}, "keepdims", false), []int64{}, []float64{5}},
		{"sum noop", ReduceSumOp, x, attrs("noop_with_empty_axes", true), []int64{2, 3}, []float64{1, -2, 3, 4, 5, -6}},
		{"sum noop ignored with axes", ReduceSumOp, x, attrs("axes", []int64{1}, "noop_with_empty_axes", true), []int64{2, 1}, []float64{2, 3}},
		{"mean neg axis", ReduceMeanOp, x, attrs("axes", []int64{-1}, "keepdims", false), []int64{2}, []float64{2.0 / 3, 1}},
		{"max both axes", ReduceMaxOp, x, attrs("axes", []int64{1, -2}), []int64{1, 1}, []float64{5}},
		{"max axis1", ReduceMaxOp, x, attrs("axes", []int64{1}, "keepdims", false), []int64{2}, []float64{3, 5}},
		{"min axis0", ReduceMinOp, x, attrs("axes", []int64{0}, "keepdims", false), []int64{3}, []float64{1, -2, -6}},
		{"prod", ReduceProdOp, x, attrs("axes", []int64{1}), []int64{2, 1}, []float64{-6, -120}},
		{"l2", ReduceL2Op, tensor([]int64{2, 2}, 3, 4, -5, 12), attrs("axes", []int64{1}), []int64{2, 1}, []float64{5, 13}},
		{"log_sum_exp", ReduceLogSumExpOp, tensor([]int64{2}, 0, math.Log(3)), nil, []int64{1}, []float64{math.Log(4)}},
		{"log_sum_exp large", ReduceLogSumExpOp, tensor([]int64{2}, 1000, 1000), attrs("keepdims", false), []int64{}, []float64{1000 + math.Log(2)}},
		{"log_sum_exp -inf", ReduceLogSumExpOp, tensor([]int64{2}, -inf, -inf), nil, []int64{1}, []float64{-inf}},
		{"log_sum_exp +inf", ReduceLogSumExpOp, tensor([]int64{2}, inf, 3), nil, []int64{1}, []float64{inf}},
		{"rank0", ReduceMaxOp, tensor([]int64{}, 2.5), nil, []int64{}, []float64{2.5}},
		{"empty sum", ReduceSumOp, empty, attrs("axes", []int64{1}), []int64{2, 1}, []float64{0, 0}},
		{"empty prod", ReduceProdOp, empty, attrs("axes", []int64{1}), []int64{2, 1}, []float64{1, 1}},
		{"empty max", ReduceMaxOp, empty, attrs("axes", []int64{1}), []int64{2, 1}, []float64{-inf, -inf}},
		{"empty min", ReduceMinOp, empty, attrs("axes", []int64{1}), []int64{2, 1}, []float64{inf, inf}},
		{"empty mean", ReduceMeanOp, empty, attrs("axes", []int64{1}), []int64{2, 1}, []float64{math.NaN(), math.NaN()}},
		{"empty l2", ReduceL2Op, empty, attrs("axes", []int64{1}), []int64{2, 1}, []float64{0, 0}},
		{"empty log_sum_exp", ReduceLogSumExpOp, empty, attrs("axes", []int64{1}), []int64{2, 1}, []float64{-inf, -inf}},
		{"empty kept dim", ReduceSumOp, empty, attrs("axes", []int64{0}, "keepdims", false), []int64{0}, nil},
		{"int sum", ReduceSumOp, ints, attrs("axes", []int64{0}), []int64{1, 2}, []float64{9, 6}},
		{"int max", ReduceMaxOp, ints, attrs("keepdims", false), []int64{}, []float64{9}},
		{"int min empty", ReduceMinOp, &graphir.Tensor{Type: graphir.NewTensor(graphir.I32, 0)}, nil, []int64{1}, []float64{math.MaxInt32}},
		{"log_softmax", LogSoftmaxOp, tensor([]int64{3}, 1, 2, 3), nil, []int64{3}, []float64{-2.4076059644443806, -1.4076059644443804, -0.40760596444438046}},
		{"log_softmax axis0", LogSoftmaxOp, tensor([]int64{2, 2}, 1000, 0, 1000, 0), attrs("axis", 0), []int64{2, 2}, []float64{-math.Ln2, -math.Ln2, -math.Ln2, -math.Ln2}},
		{"log_softmax neg axis", LogSoftmaxOp, tensor([]int64{2, 2}, 0, 0, 5, 5), attrs("axis", -1), []int64{2, 2}, []float64{-math.Ln2, -math.Ln2, -math.Ln2, -math.Ln2}},
	})
}

// TestReduceEvalRandom checks every reduction on random data against a
// direct nested-loop reference over a 3-D input, all axis subsets.
func TestReduceEvalRandom(t *testing.T) {
	rng := newRNG(5)
	x := randTensor(rng, 3, 4, 5)
	ref := map[string]func(vs []float64) float64{
		ReduceSumOp: func(vs []float64) float64 {
			s := 0.0
			for _, v := range vs {
				s += v
			}
			return s
		},
		ReduceMeanOp: func(vs []float64) float64 {
			s := 0.0
			for _, v := range vs {
				s += v
			}
			return s / float64(len(vs))
		},
		ReduceMaxOp: func(vs []float64) float64 {
			m := math.Inf(-1)
			for _, v := range vs {
				m = math.Max(m, v)
			}
			return m
		},
		ReduceMinOp: func(vs []float64) float64 {
			m := math.Inf(1)
			for _, v := range vs {
				m = math.Min(m, v)
			}
			return m
		},
		ReduceProdOp: func(vs []float64) float64 {
			p := 1.0
			for _, v := range vs {
				p *= v
			}
			return p
		},
		ReduceL2Op: func(vs []float64) float64 {
			s := 0.0
			for _, v := range vs {
				s += v * v
			}
			return math.Sqrt(s)
		},
		ReduceLogSumExpOp: func(vs []float64) float64 {
			s := 0.0
			for _, v := range vs {
				s += math.Exp(v)
			}
			return math.Log(s)
		},
	}
	for op, f := range ref {
		for mask := 1; mask < 8; mask++ {
			var axes []int64
			for d := 0; d < 3; d++ {
				if mask&(1<<d) != 0 {
					axes = append(axes, int64(d))
				}
			}
			got := evalOp(t, op, attrs("axes", axes, "keepdims", false), x)
			// Reference: group elements by their kept coordinates.
			groups := map[int64][]float64{}
			for i, v := range x.Data {
				idx := unravel(int64(i), x.Shape())
				key := int64(0)
				for d := 0; d < 3; d++ {
					if mask&(1<<d) == 0 {
						key = key*x.Shape()[d] + idx[d]
					}
				}
				groups[key] = append(groups[key], v)
			}
			require.Len(t, got.Data, len(groups))
			for k, vs := range groups {
				assert.InDelta(t, graphir.RoundTo(graphir.F32, f(vs)), got.Data[k], 1e-6*math.Max(1, math.Abs(f(vs))), "%s axes %v", op, axes)
			}
		}
	}
}

func TestReduceErrors(t *testing.T) {
	for _, c := range []struct {
		op    string
		x     *graphir.TensorType
		attrs graphir.DictAttr
		msg   string
	}{
		{ReduceSumOp, tt(2, 3), attrs("axes", []int64{2}), "axis 2 is out of range for rank 2 (expected [-2, 1])"},
		{ReduceSumOp, tt(2, 3), attrs("axes", []int64{-3}), "axis -3 is out of range"},
		{ReduceMaxOp, tt(2, 3), attrs("axes", []int64{1, -1}), "axes [1, -1] names dimension 1 more than once"},
		{ReduceMeanOp, graphir.NewTensor(graphir.I32, 2), nil, "requires a floating-point element type"},
		{ReduceL2Op, graphir.NewTensor(graphir.I64, 2), nil, "requires a floating-point element type"},
		{ReduceLogSumExpOp, graphir.NewTensor(graphir.I8, 2), nil, "requires a floating-point element type"},
		{ReduceSumOp, graphir.NewTensor(graphir.I1, 2), nil, "requires a numeric element type"},
		{ReduceSumOp, tt(2), attrs("keepdims", 1), "keepdims"},
		{ReduceSumOp, tt(2), attrs("axes", 1), "axes"},
		{LogSoftmaxOp, tt(2, 3), attrs("axis", 2), "axis 2 is out of range for rank 2"},
		{LogSoftmaxOp, tt(), nil, "input must have rank at least 1"},
		{LogSoftmaxOp, graphir.NewTensor(graphir.I32, 3), nil, "requires a floating-point element type"},
	} {
		err := checkOp(c.op, []*graphir.TensorType{c.x}, c.attrs)
		require.Error(t, err, "%s %v", c.op, c.attrs)
		assert.Contains(t, err.Error(), c.msg)
	}
}
