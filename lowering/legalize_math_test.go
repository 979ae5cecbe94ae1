package lowering

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Agreement of the elementwise ONNX ops (legalize_math.go,
// legalize_activation.go, legalize_compare.go): a one-op graph function is
// interpreted, legalized (then also fused, then also lowered to tensor IR and
// run by the tensor IR interpreter) and must compute the same values on
// random inputs that include edge values (±0, ±inf, NaN, tiny and large
// magnitudes, integers and half-integers).

// ewCase is one elementwise agreement case. Inputs have explicit types (i1
// operands are drawn as 0/1); result is the written result type (needed by
// graph.cast only; nil = inferred). noEdge draws plain values in [-3, 3)
// only (casts to integers, whose out-of-range conversion is unspecified).
type ewCase struct {
	name   string
	op     string
	inputs []*graphir.TensorType
	attrs  graphir.DictAttr
	result *graphir.TensorType
	noEdge bool
	// draw, when set, gives input i's elements (already of its dtype's
	// values; Round is applied after).
	draw func(r *rand.Rand, i int, dt graphir.DType) float64
}

func f32t(shape ...int64) *graphir.TensorType { return graphir.NewTensor(graphir.F32, shape...) }
func i1t(shape ...int64) *graphir.TensorType  { return graphir.NewTensor(graphir.I1, shape...) }

// ewEdgeValues are mixed into the random inputs.
var ewEdgeValues = []float64{0, math.Copysign(0, -1), 1, -1, 2, -2, 0.5, -0.5, 3, -3, 1e-30, -1e-30, 100, -100,
	math.Inf(1), math.Inf(-1), math.NaN(), 2.5, -2.5}

// ewArgs draws the inputs of f: i1 as 0/1, integers in [-9, 9] (unsigned:
// [0, 18]), floats in [-3, 3) with about a third of them edge values; or
// what draw gives.
func ewArgs(f *graphir.Func, seed uint64, edge bool, draw func(*rand.Rand, int, graphir.DType) float64) []*graphir.Tensor {
	r := rand.New(rand.NewPCG(seed, 0xe1e))
	var out []*graphir.Tensor
	for i, ty := range f.Type.Inputs {
		tt := graphir.AsTensor(ty)
		x := graphir.NewZeroTensor(tt)
		for j := range x.Data {
			switch {
			case draw != nil:
				x.Data[j] = draw(r, i, tt.Elem)
			case tt.Elem.IsUnsigned():
				x.Data[j] = float64(r.IntN(19))
			case tt.Elem == graphir.I1:
				x.Data[j] = float64(r.IntN(2))
			case tt.Elem.IsInt():
				x.Data[j] = float64(r.IntN(19) - 9)
			case edge && r.IntN(3) == 0:
				x.Data[j] = ewEdgeValues[r.IntN(len(ewEdgeValues))]
			default:
				x.Data[j] = 6*r.Float64() - 3
			}
		}
		out = append(out, x.Round())
	}
	return out
}

// ewModule builds @main(args) { %r = op(args) {attrs}; return %r }.
func ewModule(t *testing.T, c ewCase) *graphir.Module {
	t.Helper()
	in := make([]graphir.Type, len(c.inputs))
	for i, x := range c.inputs {
		in[i] = x
	}
	f := graphir.NewFunc("main", &graphir.FunctionType{Inputs: in}, caseLoc)
	var op *graphir.Op
	if c.result != nil {
		op = graphir.NewOp(c.op, f.Args(), []graphir.Type{c.result}, c.attrs, caseLoc)
	} else {
		var err error
		op, err = graphir.Build(c.op, f.Args(), c.attrs, caseLoc)
		require.NoError(t, err, "building %s", c.name)
	}
	f.Entry().Append(op)
	f.Entry().Append(graphir.NewOp(graphir.ReturnOpName, op.Results, nil, nil, caseLoc))
	f.Type.Results = []graphir.Type{op.Results[0].Type}
	m := &graphir.Module{}
	m.AddFunc(f)
	require.NoError(t, graphir.Verify(m), "graph IR of %s", c.name)
	return m
}

// elementwiseExtCases gathers the cases of the three op families.
func elementwiseExtCases() []ewCase {
	return append(append(append(append(append(mathAgreeCases(), activationAgreeCases()...), compareAgreeCases()...), dtypeAgreeCases()...), quantAgreeCases()...), requantAgreeCases()...)
}

// unaryOps are the registered graph ops of one operand, no attributes and
// an inferred result type (exp, atan, relu, not, ...): mathAgreeCases
// gives each a case for every element type it accepts, so a new op is
// checked without editing a list.
func unaryOps() []string {
	var ops []string
	for _, name := range graphir.RegisteredOps() {
		d := graphir.LookupOp(name)
		if strings.HasPrefix(name, "graph.") && d.Operands.Min == 1 && d.Operands.Max == 1 && len(d.Attrs) == 0 && d.Infer != nil && d.Traits&graphir.Elementwise != 0 {
			ops = append(ops, name)
		}
	}
	return ops
}

func mathAgreeCases() []ewCase {
	var cs []ewCase
	for _, op := range unaryOps() {
		name := strings.TrimPrefix(op, "graph.")
		for _, in := range []*graphir.TensorType{f32t(4, 9), f32t(), graphir.NewTensor(graphir.I32, 13), i1t(6)} {
			if _, err := graphir.Build(op, []*graphir.Value{graphir.NewBlock(in).Args[0]}, nil, caseLoc); err != nil {
				continue // op does not take in's element type
			}
			cs = append(cs, ewCase{name: name + "/" + in.String(), op: op, inputs: []*graphir.TensorType{in}})
		}
	}
	for _, op := range []string{"erf", "atan", "sin", "cos", "tan", "asin", "acos", "sinh", "cosh", "asinh", "acosh", "atanh",
		"floor", "ceil", "sign"} { // single hlo ops: composites round every step in f16
		cs = append(cs, ewCase{name: op + "/f16", op: "graph." + op, inputs: []*graphir.TensorType{graphir.NewTensor(graphir.F16, 11)}})
	}
	for _, op := range []string{"pow", "max", "min"} {
		cs = append(cs,
			ewCase{name: op + "/same", op: "graph." + op, inputs: []*graphir.TensorType{f32t(3, 7), f32t(3, 7)}},
			ewCase{name: op + "/bcast", op: "graph." + op, inputs: []*graphir.TensorType{f32t(4, 1, 5), f32t(3, 1)}},
			ewCase{name: op + "/rank0", op: "graph." + op, inputs: []*graphir.TensorType{f32t(), f32t(2, 3)}},
		)
	}
	i := func(dt graphir.DType, shape ...int64) *graphir.TensorType { return graphir.NewTensor(dt, shape...) }
	for _, dt := range []graphir.DType{graphir.I8, graphir.I32, graphir.I64} {
		for _, fmod := range []int{0, 1} {
			cs = append(cs, ewCase{name: fmt.Sprintf("mod/%s/fmod%d", dt, fmod), op: "graph.mod", inputs: []*graphir.TensorType{i(dt, 4, 9), i(dt, 9)}, attrs: attrs("fmod", fmod)})
		}
	}
	cs = append(cs,
		ewCase{name: "mod/f32", op: "graph.mod", inputs: []*graphir.TensorType{f32t(3, 1, 5), f32t(4, 1)}, attrs: attrs("fmod", 1)},
		ewCase{name: "mod/f16", op: "graph.mod", inputs: []*graphir.TensorType{i(graphir.F16, 11), i(graphir.F16, 11)}, attrs: attrs("fmod", 1)},
		ewCase{name: "mod/f64", op: "graph.mod", inputs: []*graphir.TensorType{i(graphir.F64, 7), i(graphir.F64)}, attrs: attrs("fmod", 1)},
		ewCase{name: "mod/i32/default", op: "graph.mod", inputs: []*graphir.TensorType{i(graphir.I32), i(graphir.I32, 2, 3)}},
	)
	cs = append(cs,
		ewCase{name: "max/i32", op: "graph.max", inputs: []*graphir.TensorType{graphir.NewTensor(graphir.I32, 9), graphir.NewTensor(graphir.I32, 9)}},
		ewCase{name: "cast/f32_i1", op: "graph.cast", inputs: []*graphir.TensorType{f32t(5, 5)}, result: i1t(5, 5)},
		ewCase{name: "cast/f32_i32", op: "graph.cast", inputs: []*graphir.TensorType{f32t(5, 5)}, result: graphir.NewTensor(graphir.I32, 5, 5), noEdge: true},
		ewCase{name: "cast/i1_f32", op: "graph.cast", inputs: []*graphir.TensorType{i1t(7)}, result: f32t(7)},
		ewCase{name: "cast/f32_f32", op: "graph.cast", inputs: []*graphir.TensorType{f32t(3)}, result: f32t(3)},
	)
	return cs
}

// TestLegalizeElementwiseExtAgreement: every case agrees after
// legalize-to-hlo, after legalize-to-hlo,fuse and after lowering to tensor
// IR (TestLegalizeAgreement checks that every graph op has a case).
func TestLegalizeElementwiseExtAgreement(t *testing.T) {
	for i, c := range elementwiseExtCases() {
		t.Run(c.name, func(t *testing.T) {
			f := ewModule(t, c).Funcs[0]
			for trial := 0; trial < 3; trial++ {
				args := ewArgs(f, uint64(i*10+trial), !c.noEdge, c.draw)
				want, err := graphir.Interpret(f, args)
				require.NoError(t, err)

				lm := ewModule(t, c)
				runPipeline(t, lm, graph.LegalizeToHLOPassName)
				checkLowered(t, lm, &caseLoc, c.name)
				got, err := graphir.Interpret(lm.Funcs[0], args)
				require.NoError(t, err, "interpreting\n%s", graphir.Print(lm))
				ewRequireClose(t, want, got, c.name)

				fm := ewModule(t, c)
				runPipeline(t, fm, graph.LegalizeToHLOPassName+",fuse")
				got, err = graphir.Interpret(fm.Funcs[0], args)
				require.NoError(t, err, "interpreting\n%s", graphir.Print(fm))
				ewRequireClose(t, want, got, c.name+" (fused)")

				tm, err := LowerToTIR(fm)
				require.NoError(t, err, "lowering\n%s", graphir.Print(fm))
				text := tir.Print(tm)
				back, err := tir.ParseString("lowered.tir", text)
				require.NoError(t, err, text)
				require.Equal(t, text, tir.Print(back))
				res := runHost(t, tm, "main", args)
				require.Len(t, res, 1)
				requireTIRClose(t, want[0], res[0], 1e-5, c.name+" (tensor IR)")
			}
		})
	}
}

// ewRequireClose is requireClose with exact agreement on NaN and ±inf.
func ewRequireClose(t *testing.T, want, got []*graphir.Tensor, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	for i := range want {
		require.True(t, want[i].Type.Equal(got[i].Type), "%s: result #%d type %s, want %s", what, i, got[i].Type, want[i].Type)
		for j, w := range want[i].Data {
			g := got[i].Data[j]
			switch {
			case math.IsNaN(w):
				require.True(t, math.IsNaN(g), "%s: result #%d[%d] = %g, want NaN", what, i, j, g)
			case math.IsInf(w, 0):
				require.Equal(t, w, g, "%s: result #%d[%d]", what, i, j)
			default:
				require.LessOrEqual(t, math.Abs(g-w), 1e-5*math.Max(1, math.Abs(w)),
					"%s: result #%d[%d] = %.9g, want %.9g", what, i, j, g, w)
			}
		}
	}
}
