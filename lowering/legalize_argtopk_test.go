package lowering

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/schedule"
)

// argTopKCases: argmax/argmin on every kind of axis (first, middle, last,
// negative), keepdims on and off, select_last_index, size-1 and odd axes;
// topk with k = 1, k = n, k = 0, largest and smallest, sorted = false, on
// every kind of axis. checkStructCases seeds ties (1.5 in one element of 8).
func argTopKCases() []structCase {
	var cs []structCase
	for _, op := range []string{graph.ArgMaxOp, graph.ArgMinOp} {
		add := func(name string, in []int64, a graphir.DictAttr) {
			cs = append(cs, structCase{name: op[len("graph."):] + "/" + name, op: op, in: in, attrs: a})
		}
		add("default", s(5, 3), nil)
		add("axis1", s(3, 7, 2), attrs("axis", 1))
		add("last_drop", s(4, 9), attrs("axis", -1, "keepdims", false))
		add("neg_middle", s(2, 5, 3, 2), attrs("axis", -3))
		add("select_last", s(3, 11), attrs("axis", 1, "select_last_index", true))
		add("select_last_drop_axis0", s(6, 4), attrs("keepdims", false, "select_last_index", true))
		add("1d", s(13), attrs("keepdims", false))
		add("size1_axis", s(3, 1, 4), attrs("axis", 1))
	}
	add := func(name string, in []int64, a graphir.DictAttr) {
		cs = append(cs, structCase{name: "topk/" + name, op: graph.TopKOp, in: in, attrs: a})
	}
	add("last_k3", s(3, 7), attrs("k", 3))
	add("k1", s(4, 5), attrs("k", 1))
	add("k_eq_n", s(2, 6), attrs("k", 6))
	add("k0", s(2, 6), attrs("k", 0))
	add("axis0_smallest", s(9, 2), attrs("k", 4, "axis", 0, "largest", false))
	add("middle", s(2, 5, 3), attrs("k", 2, "axis", 1))
	add("neg_middle_smallest", s(3, 4, 2, 3), attrs("k", 3, "axis", -3, "largest", false))
	add("unsorted", s(3, 5), attrs("k", 2, "sorted", false))
	add("1d_odd", s(11), attrs("k", 5, "axis", 0))
	add("size1_axis", s(4, 1), attrs("k", 1))
	return cs
}

func TestLegalizeArgTopKAgreement(t *testing.T) {
	checkStructCases(t, argTopKCases())
}

// checkExact runs src (one function @main) on args through the graph
// interpreter, the legalized hlo, the legalized-and-fused hlo and the
// tensor IR: all must give want exactly (NaN where want has NaN).
func checkExact(t *testing.T, src string, args []*graphir.Tensor, want [][]float64) {
	t.Helper()
	parse := func() *graphir.Module {
		m, err := graphir.ParseString("case.mlir", src)
		require.NoError(t, err)
		require.NoError(t, graphir.Verify(m))
		return m
	}
	same := func(what string, got []*graphir.Tensor) {
		require.Len(t, got, len(want), what)
		for i := range want {
			require.Len(t, got[i].Data, len(want[i]), what)
			for j, w := range want[i] {
				g := got[i].Data[j]
				ok := w == g && math.Signbit(w) == math.Signbit(g) || math.IsNaN(w) && math.IsNaN(g)
				require.True(t, ok, "%s: result %d element %d = %v, want %v (got %v)", what, i, j, g, w, got[i].Data)
			}
		}
	}
	m := parse()
	got, err := graphir.Interpret(m.Funcs[0], args)
	require.NoError(t, err)
	same("graph", got)
	for _, p := range []string{graph.LegalizeToHLOPassName, graph.LegalizeToHLOPassName + ",canonicalize,cse,fuse"} {
		lm := parse()
		runPipeline(t, lm, p)
		got, err := graphir.Interpret(lm.Funcs[0], args)
		require.NoError(t, err)
		same(p, got)
		if p == graph.LegalizeToHLOPassName {
			continue
		}
		tm, err := LowerToTIR(lm)
		require.NoError(t, err)
		require.NoError(t, schedule.InlineElementwiseModule(tm))
		outs := runHost(t, tm, "main", args)
		var tg []*graphir.Tensor
		for k, o := range outs {
			x := &graphir.Tensor{Type: got[k].Type, Data: append([]float64(nil), o.Floats...)}
			for _, v := range o.Ints {
				x.Data = append(x.Data, float64(v))
			}
			tg = append(tg, x)
		}
		same("tensor IR", tg)
	}
}

// TestArgTopKSpecialValues: ties, ±0, ±inf and NaN give the documented
// results (NaN is the most extreme value, ties go by position) at every
// level, exactly: values keep ±inf, NaN and the sign of zero.
func TestArgTopKSpecialValues(t *testing.T) {
	inf, nan, negz := math.Inf(1), math.NaN(), math.Copysign(0, -1)
	x := &graphir.Tensor{Type: graphir.NewTensor(graphir.F32, 4, 5), Data: []float64{
		1, 3, 3, -2, 3, // ties at the maximum
		-inf, -inf, -inf, -inf, -inf, // all −inf
		2, nan, inf, nan, -inf, // NaN beats +inf
		0, negz, -1, negz, 0, // signed zeros tie
	}}
	src := `func.func @main(%x: tensor<4x5xf32>) -> (tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4x3xf32>, tensor<4x3xi64>, tensor<4x3xf32>, tensor<4x3xi64>) {
  %0 = graph.argmax %x {axis = 1, keepdims = false} : (tensor<4x5xf32>) -> tensor<4xi64>
  %1 = graph.argmax %x {axis = 1, keepdims = false, select_last_index = true} : (tensor<4x5xf32>) -> tensor<4xi64>
  %2 = graph.argmin %x {axis = 1, keepdims = false} : (tensor<4x5xf32>) -> tensor<4xi64>
  %3 = graph.argmin %x {axis = 1, keepdims = false, select_last_index = true} : (tensor<4x5xf32>) -> tensor<4xi64>
  %4:2 = graph.topk %x {k = 3} : (tensor<4x5xf32>) -> (tensor<4x3xf32>, tensor<4x3xi64>)
  %5:2 = graph.topk %x {k = 3, largest = false} : (tensor<4x5xf32>) -> (tensor<4x3xf32>, tensor<4x3xi64>)
  func.return %0, %1, %2, %3, %4#0, %4#1, %5#0, %5#1 : tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4xi64>, tensor<4x3xf32>, tensor<4x3xi64>, tensor<4x3xf32>, tensor<4x3xi64>
}`
	checkExact(t, src, []*graphir.Tensor{x}, [][]float64{
		{1, 0, 1, 0},
		{4, 4, 3, 4},
		{3, 0, 1, 2},
		{3, 4, 3, 2},
		{3, 3, 3, -inf, -inf, -inf, nan, nan, inf, 0, negz, negz},
		{1, 2, 4, 0, 1, 2, 1, 3, 2, 0, 1, 3},
		{-2, 1, 3, -inf, -inf, -inf, nan, nan, -inf, -1, 0, negz},
		{3, 0, 1, 0, 1, 2, 1, 3, 4, 2, 0, 1},
	})
}

// TestArgTopKIntegers: i32 and i64 inputs (integer ties, the type's
// extremes) agree exactly at every level.
func TestArgTopKIntegers(t *testing.T) {
	x := &graphir.Tensor{Type: graphir.NewTensor(graphir.I32, 2, 4), Data: []float64{
		math.MinInt32, 7, math.MaxInt32, 7,
		-3, -3, math.MinInt32, math.MinInt32,
	}}
	y := &graphir.Tensor{Type: graphir.NewTensor(graphir.I64, 3), Data: []float64{5, -1 << 40, 5}}
	src := `func.func @main(%x: tensor<2x4xi32>, %y: tensor<3xi64>) -> (tensor<2x1xi64>, tensor<4xi64>, tensor<2x2xi32>, tensor<2x2xi64>, tensor<3xi64>, tensor<3xi64>) {
  %0 = graph.argmax %x {axis = 1} : (tensor<2x4xi32>) -> tensor<2x1xi64>
  %1 = graph.argmin %x {keepdims = false, select_last_index = true} : (tensor<2x4xi32>) -> tensor<4xi64>
  %2:2 = graph.topk %x {k = 2, largest = false} : (tensor<2x4xi32>) -> (tensor<2x2xi32>, tensor<2x2xi64>)
  %3:2 = graph.topk %y {k = 3} : (tensor<3xi64>) -> (tensor<3xi64>, tensor<3xi64>)
  func.return %0, %1, %2#0, %2#1, %3#0, %3#1 : tensor<2x1xi64>, tensor<4xi64>, tensor<2x2xi32>, tensor<2x2xi64>, tensor<3xi64>, tensor<3xi64>
}`
	checkExact(t, src, []*graphir.Tensor{x, y}, [][]float64{
		{2, 0},
		{0, 1, 1, 1},
		{math.MinInt32, 7, math.MinInt32, math.MinInt32},
		{0, 1, 2, 3},
		{5, 5, -1 << 40},
		{0, 2, 1},
	})
}

// TestArgTopKManyTies: inputs drawn from three values, so most elements
// tie, on random shapes and axes; every level agrees with the evaluator.
func TestArgTopKManyTies(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	var cs []structCase
	for i := 0; i < 12; i++ {
		in := s(int64(1+rng.Intn(4)), int64(1+rng.Intn(6)), int64(1+rng.Intn(3)))
		ax := rng.Intn(3)
		k := rng.Intn(int(in[ax]) + 1)
		cs = append(cs,
			structCase{name: fmt.Sprintf("topk/%v_ax%d_k%d", in, ax, k), op: graph.TopKOp, in: in, attrs: attrs("axis", ax, "k", k, "largest", i%2 == 0)},
			structCase{name: fmt.Sprintf("argmax/%v_ax%d", in, ax), op: graph.ArgMaxOp, in: in, attrs: attrs("axis", ax, "select_last_index", i%3 == 0)})
	}
	for i, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			m := structModule(t, c)
			x := graphir.NewZeroTensor(graphir.AsTensor(m.Funcs[0].Type.Inputs[0]))
			r := rand.New(rand.NewSource(int64(i)))
			for j := range x.Data {
				x.Data[j] = float64(r.Intn(3)) - 1
			}
			want, err := graphir.Interpret(m.Funcs[0], []*graphir.Tensor{x})
			require.NoError(t, err)
			var ws [][]float64
			for _, w := range want {
				ws = append(ws, w.Data)
			}
			checkExact(t, graphir.Print(m), []*graphir.Tensor{x}, ws)
		})
	}
}

// TestArgTopKDiagnostics: the verifiers' messages.
func TestArgTopKDiagnostics(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{`%0 = graph.argmax %x {axis = 2} : (tensor<4x3xf32>) -> tensor<4x1xi64>`, "axis 2 is out of range for rank 2 (expected [-2, 1])"},
		{`%0 = graph.argmax %x : (tensor<4x3xf32>) -> tensor<1x3xf32>`, "result type"},
		{`%0:2 = graph.topk %x {k = 4} : (tensor<4x3xf32>) -> (tensor<4x4xf32>, tensor<4x4xi64>)`, "k = 4 exceeds the size 3 of dimension 1 (the axis) of tensor<4x3xf32>"},
		{`%0:2 = graph.topk %x {k = -1, axis = 0} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xi64>)`, "k = -1 must not be negative"},
	} {
		src := "func.func @main(%x: tensor<4x3xf32>) {\n  " + c.src + "\n  func.return\n}"
		m, err := graphir.ParseString("bad.mlir", src)
		if err == nil {
			err = graphir.Verify(m)
		}
		require.Error(t, err, c.src)
		assert.Contains(t, err.Error(), c.want, c.src)
	}
}
