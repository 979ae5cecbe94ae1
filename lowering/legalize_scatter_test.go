package lowering

import (
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/schedule"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// A scatter case is a graph function (data, indices, updates) whose index
// operand is drawn in [lo, hi]: the ranges pass both ends of the indexed
// dims, so some indices are negative (they wrap), some out of range (the
// update is skipped) and many repeat (applied in row-major order).
type scatterCase struct {
	name, op string
	src      string
	lo, hi   int
}

func scatterCases() []scatterCase {
	el := func(name, data, ind, attrs string, lo, hi int) scatterCase {
		return scatterCase{"elements_" + name, graph.ScatterElementsOp, fmt.Sprintf(`func.func @main(%%x: %[1]s, %%i: %[2]s, %%u: %[3]s) -> %[1]s {
  %%0 = graph.scatter_elements %%x, %%i, %%u %[4]s: (%[1]s, %[2]s, %[3]s) -> %[1]s
  func.return %%0 : %[1]s
}`, data, ind, updatesOf(ind, data), attrs), lo, hi}
	}
	nd := func(name, data, ind, upd, attrs string, lo, hi int) scatterCase {
		return scatterCase{"nd_" + name, graph.ScatterNDOp, fmt.Sprintf(`func.func @main(%%x: %[1]s, %%i: %[2]s, %%u: %[3]s) -> %[1]s {
  %%0 = graph.scatter_nd %%x, %%i, %%u %[4]s: (%[1]s, %[2]s, %[3]s) -> %[1]s
  func.return %%0 : %[1]s
}`, data, ind, upd, attrs), lo, hi}
	}
	return []scatterCase{
		el("axis0_none", "tensor<5x3xf32>", "tensor<4x3xi64>", "", -6, 5),
		el("last_axis_add_i32", "tensor<3x7xi32>", "tensor<3x5xi32>", `{axis = -1, reduction = "add"} `, -8, 7),
		el("axis2_mul_f64", "tensor<2x3x4xf64>", "tensor<2x2x6xi64>", `{axis = 2, reduction = "mul"} `, -5, 4),
		el("rank1_max", "tensor<6xf32>", "tensor<9xi64>", `{reduction = "max"} `, -7, 6),
		el("axis1_min_i8", "tensor<4x5xi8>", "tensor<3x7xi32>", `{axis = 1, reduction = "min"} `, -6, 5),
		el("add_i1", "tensor<5xi1>", "tensor<6xi64>", `{reduction = "add"} `, -6, 5),
		el("empty_indices", "tensor<3x2xf32>", "tensor<0x2xi64>", `{reduction = "add"} `, 0, 1),
		nd("full_none", "tensor<4x5xf32>", "tensor<6x2xi64>", "tensor<6xf32>", "", -5, 4),
		nd("slices_add", "tensor<5x3x2xf32>", "tensor<2x3x1xi64>", "tensor<2x3x3x2xf32>", `{reduction = "add"} `, -6, 5),
		nd("rows_mul_i64", "tensor<3x4xi64>", "tensor<4x1xi32>", "tensor<4x4xi64>", `{reduction = "mul"} `, -4, 3),
		nd("one_vector_max", "tensor<4x6xf32>", "tensor<2xi64>", "tensor<f32>", `{reduction = "max"} `, -5, 4),
		nd("min_i32_batch2", "tensor<3x4x2xi32>", "tensor<2x2x2xi64>", "tensor<2x2x2xi32>", `{reduction = "min"} `, -4, 3),
		nd("empty_vectors_add", "tensor<4x2xf32>", "tensor<3x0xi64>", "tensor<3x4x2xf32>", `{reduction = "add"} `, 0, 1),
		nd("empty_indices", "tensor<4x2xf32>", "tensor<0x1xi64>", "tensor<0x2xf32>", "", 0, 1),
	}
}

// updatesOf is the updates type of a scatter_elements case: the indices'
// shape with the data's element type.
func updatesOf(ind, data string) string {
	elem := data[strings.LastIndexByte(data, 'x')+1:]
	return ind[:strings.LastIndexByte(ind, 'x')+1] + elem
}

// scatterArgs draws a case's arguments: the index operand in [lo, hi],
// data and updates with randomTensor.
func scatterArgs(f *graphir.Func, c scatterCase, rng *rand.Rand) []*graphir.Tensor {
	var args []*graphir.Tensor
	for i, in := range f.Type.Inputs {
		tt := graphir.AsTensor(in)
		if i != 1 {
			args = append(args, randomTensor(rng, tt, -2, 2))
			continue
		}
		x := graphir.NewZeroTensor(tt)
		for j := range x.Data {
			x.Data[j] = float64(c.lo + rng.Intn(c.hi-c.lo+1))
		}
		args = append(args, x)
	}
	return args
}

// TestLegalizeScatters: the graph interpreter, the legalized function, the
// fused one and its tensor IR (as lowered, and scheduled as lower-to-tir
// schedules it) agree exactly on random data and indices.
func TestLegalizeScatters(t *testing.T) {
	for i, c := range scatterCases() {
		t.Run(c.name, func(t *testing.T) {
			parse := func() *graphir.Module {
				m, err := graphir.Parse("case.mlir", []byte(c.src))
				require.NoError(t, err)
				require.NoError(t, graphir.Verify(m))
				return m
			}
			for trial := 0; trial < 3; trial++ {
				rng := rand.New(rand.NewSource(int64(i*10+trial) + 5))
				f := parse().Funcs[0]
				args := scatterArgs(f, c, rng)
				want, err := graphir.Interpret(f, args)
				require.NoError(t, err)
				lm := parse()
				runPipeline(t, lm, graph.LegalizeToHLOPassName)
				checkLowered(t, lm, nil, c.name)
				got, err := graphir.Interpret(lm.Funcs[0], args)
				require.NoError(t, err, "interpreting\n%s", graphir.Print(lm))
				requireClose(t, want, got, c.name)

				fm := parse()
				runPipeline(t, fm, graph.LegalizeToHLOPassName+",canonicalize,cse,fuse")
				got, err = graphir.Interpret(fm.Funcs[0], args)
				require.NoError(t, err)
				requireClose(t, want, got, c.name+" (fused)")
				tm, err := LowerToTIR(fm)
				require.NoError(t, err, "lowering\n%s", graphir.Print(fm))
				require.NoError(t, schedule.InlineElementwiseModule(tm))
				for _, sched := range []bool{false, true} {
					if sched {
						for k, kf := range tm.Funcs {
							if _, rec := kf.Attrs[tir.AttrRecurrence]; rec {
								sf, err := schedule.ScheduleRecurrence(kf, schedule.RecurrenceVectorBits)
								require.NoError(t, err)
								tm.Funcs[k] = sf
							}
						}
					}
					outs := runHost(t, tm, "main", args)
					require.Len(t, outs, 1)
					requireTIRClose(t, want[0], outs[0], 0, c.name)
				}
			}
		})
	}
}

// TestScatterCasesExercise: over the random draws of TestLegalizeScatters
// the scatter_elements cases do hit updates that land on one element
// twice, out-of-range indices and negative in-range ones, so the agreement
// above covers those paths.
func TestScatterCasesExercise(t *testing.T) {
	dup, out, neg := 0, 0, 0
	for i, c := range scatterCases() {
		m, err := graphir.Parse("case.mlir", []byte(c.src))
		require.NoError(t, err)
		require.NoError(t, graphir.Verify(m))
		f := m.Funcs[0]
		op := f.Entry().First()
		if c.op != graph.ScatterElementsOp {
			continue
		}
		x, ind := graphir.AsTensor(f.Type.Inputs[0]), graphir.AsTensor(f.Type.Inputs[1])
		axis := int(must(op.Int("axis")))
		if axis < 0 {
			axis += x.Rank()
		}
		s := x.Shape[axis]
		for trial := 0; trial < 3; trial++ {
			args := scatterArgs(f, c, rand.New(rand.NewSource(int64(i*10+trial)+5)))
			hits := map[string]int{}
			idx := make([]int64, ind.Rank())
			for u, v := range args[1].Data {
				k := int64(v)
				switch {
				case k < -s || k >= s:
					out++
					continue
				case k < 0:
					neg++
					k += s
				}
				rem := int64(u)
				for d := ind.Rank() - 1; d >= 0; d-- {
					idx[d] = rem % ind.Shape[d]
					rem /= ind.Shape[d]
				}
				idx[axis] = k
				if hits[fmt.Sprint(idx)]++; hits[fmt.Sprint(idx)] == 2 {
					dup++
				}
			}
		}
	}
	require.Positive(t, dup)
	require.Positive(t, out)
	require.Positive(t, neg)
}
