package graphir_test

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

const negChain = `func.func @f(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = test.neg %a : tensor<3xf32>
  %1 = test.neg %0 : tensor<3xf32>
  %2 = test.add %1, %b : tensor<3xf32>
  %3 = test.add %1, %b : tensor<3xf32>
  %4 = test.add %2, %3 : tensor<3xf32>
  %5 = test.neg %4 : tensor<3xf32>
  func.return %4 : tensor<3xf32>
}`

func evalF(t *testing.T, m *graphir.Module, args ...[]float64) []float64 {
	t.Helper()
	f := m.Funcs[0]
	var ins []*graphir.Tensor
	for i, a := range args {
		ins = append(ins, &graphir.Tensor{Type: f.Type.Inputs[i].(*graphir.TensorType), Data: a})
	}
	out, err := graphir.Interpret(f, ins)
	require.NoError(t, err)
	return out[0].Data
}

func runPipeline(t *testing.T, m *graphir.Module, pipeline string) {
	t.Helper()
	require.NoError(t, graphir.RunPipeline(m, pipeline))
}

func TestCanonicalizeCSEDCEPreserveResults(t *testing.T) {
	a, b := []float64{1, -2, 3.5}, []float64{0.25, 4, -1}
	for _, pipeline := range []string{"canonicalize", "cse", "dce", "canonicalize,cse,dce", "builtin.module(func.func(cse),canonicalize)"} {
		m := graphLevel.MustParse(t, negChain)
		want := evalF(t, m, a, b)
		runPipeline(t, m, pipeline)
		assert.Equal(t, want, evalF(t, m, a, b), pipeline)
	}
}

func TestCanonicalizeFoldsAndDropsDeadOps(t *testing.T) {
	m := graphLevel.MustParse(t, negChain)
	runPipeline(t, m, "canonicalize")
	out := graphir.Print(m)
	assert.NotContains(t, out, "test.neg", "neg(neg(x)) must fold and the dead neg must go")
	assert.Equal(t, 4, m.Funcs[0].Entry().Len())
}

func TestCSEMergesDuplicates(t *testing.T) {
	m := graphLevel.MustParse(t, negChain)
	removed := graphir.CSE(m.Funcs[0])
	assert.Equal(t, 1, removed)
	assert.Equal(t, 1, strings.Count(graphir.Print(m), "test.add %1, %arg1"))
}

func TestCSEKeepsDifferentConstants(t *testing.T) {
	m := graphLevel.MustParse(t, `func.func @f() -> tensor<2xf32> {
  %0 = test.const {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %1 = test.const {value = dense<[1.0, 3.0]> : tensor<2xf32>} : tensor<2xf32>
  %2 = test.const {value = dense<[1.0, 2.0]> : tensor<2xf32>} : tensor<2xf32>
  %3 = test.add %0, %1 : tensor<2xf32>
  %4 = test.add %3, %2 : tensor<2xf32>
  func.return %4 : tensor<2xf32>
}`)
	assert.Equal(t, 1, graphir.CSE(m.Funcs[0]))
	assert.Equal(t, []float64{3, 7}, evalF(t, m))
}

func TestCSEDoesNotCrossIsolatedRegions(t *testing.T) {
	m := graphLevel.MustParse(t, `func.func @f(%a: tensor<f32>) -> tensor<f32> {
  %0 = test.neg %a : tensor<f32>
  %1 = "test.region"(%a) ({
  ^bb0(%x: tensor<f32>):
    %2 = test.neg %x : tensor<f32>
    %3 = test.neg %x : tensor<f32>
    %4 = test.add %2, %3 : tensor<f32>
    test.yield %4 : tensor<f32>
  }) : (tensor<f32>) -> tensor<f32>
  %5 = test.add %0, %1 : tensor<f32>
  func.return %5 : tensor<f32>
}`)
	assert.Equal(t, 1, graphir.CSE(m.Funcs[0]))
	require.NoError(t, graphir.Verify(m))
	assert.Equal(t, []float64{-6}, evalF(t, m, []float64{2}))
}

func TestDCEKeepsImpureAndTerminators(t *testing.T) {
	m := graphLevel.MustParse(t, `func.func @f(%a: tensor<2xf32>) {
  %0 = test.neg %a : tensor<2xf32>
  %1 = test.neg %0 : tensor<2xf32>
  %2 = test.neg %a : tensor<2xf32>
  test.print %2 : (tensor<2xf32>) -> ()
  func.return
}`)
	assert.Equal(t, 2, graphir.DCE(m.Funcs[0]))
	assert.Equal(t, 3, m.Funcs[0].Entry().Len())
}

func TestPipelineErrors(t *testing.T) {
	for text, want := range map[string]string{
		"cse,nope":              "unknown pass 'nope'",
		"cse,,dce":              "empty pass name",
		"canonicalize{bogus=1}": "pass 'canonicalize' has no option 'bogus'",
		"func.func(cse":         "unbalanced",
		"cse)":                  "unbalanced",
	} {
		_, err := graphir.ParsePipeline(text)
		require.Error(t, err, text)
		assert.Contains(t, err.Error(), want, text)
	}
	ps, err := graphir.ParsePipeline("")
	require.NoError(t, err)
	assert.Empty(t, ps)
}

type breakingPass struct{}

func (breakingPass) Name() string { return "break-ir" }
func (breakingPass) Run(m *graphir.Module) error {
	ret := m.Funcs[0].Entry().Last()
	ret.Erase()
	return nil
}

func TestVerifyAfterEachPass(t *testing.T) {
	m := graphLevel.MustParse(t, negChain)
	err := graphir.RunPasses(m, graphir.VerifyOptions{}, breakingPass{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "must end with 'func.return'")
	assert.Contains(t, err.Error(), "note: the IR is invalid after pass 'break-ir'")
}

func TestRewriterCreateAndConvergence(t *testing.T) {
	m := graphLevel.MustParse(t, negChain)
	f := m.Funcs[0]
	// add(x, y) -> neg(neg(add(x,y))) would loop forever; the driver must stop.
	loop := &graphir.Pattern{Name: "grow", Root: "test.add", Rewrite: func(op *graphir.Op, rw *graphir.Rewriter) bool {
		n, err := rw.Create(op, "test.neg", []*graphir.Value{op.Operand(0)}, nil)
		require.NoError(t, err)
		op.SetOperand(0, n.Result(0))
		rw.Modified(op)
		return true
	}}
	_, err := graphir.ApplyPatternsGreedily(f, []*graphir.Pattern{loop})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "did not converge")
}

func TestInterpretChecksArguments(t *testing.T) {
	m := graphLevel.MustParse(t, negChain)
	_, err := graphir.Interpret(m.Funcs[0], nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "expects 2 arguments, got 0")
	bad := &graphir.Tensor{Type: graphir.NewTensor(graphir.F32, 4), Data: make([]float64, 4)}
	_, err = graphir.Interpret(m.Funcs[0], []*graphir.Tensor{bad, bad})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "argument #0: expected tensor<3xf32>, got tensor<4xf32>")
}

func TestRoundToDTypes(t *testing.T) {
	assert.Equal(t, float64(float32(0.1)), graphir.RoundTo(graphir.F32, 0.1))
	assert.Equal(t, 0.0999755859375, graphir.RoundTo(graphir.F16, 0.1))
	assert.Equal(t, 65504.0, graphir.RoundTo(graphir.F16, 65504))
	assert.Equal(t, 0.10009765625, graphir.RoundTo(graphir.BF16, 0.1))
	assert.Equal(t, -128.0, graphir.RoundTo(graphir.I8, 128))
	assert.Equal(t, 1.0, graphir.RoundTo(graphir.I1, -3))
	assert.Equal(t, -2.0, graphir.RoundTo(graphir.I32, -2.7))
	assert.Equal(t, -32768.0, graphir.RoundTo(graphir.I16, 32768))
	assert.Equal(t, 254.0, graphir.RoundTo(graphir.UI8, -2), "unsigned wraps modulo 2^8")
	assert.Equal(t, 1.0, graphir.RoundTo(graphir.UI8, 257.9))
	assert.Equal(t, 65535.0, graphir.RoundTo(graphir.UI16, -1))
	assert.Equal(t, 4294967295.0, graphir.RoundTo(graphir.UI32, -1))
	assert.Equal(t, 3.0, graphir.RoundTo(graphir.UI64, 3.5))
	assert.Equal(t, int64(-1), graphir.IntBits(graphir.UI64, graphir.RoundTo(graphir.UI64, -1)), "ui64 -1 wraps to 2^64-1")
	assert.Equal(t, float64(1<<63), graphir.IntValue(graphir.UI64, math.MinInt64))
	// f64 → f16 rounds once: 1 + 2^-11 + 2^-40 is above the tie between 1
	// and 1 + 2^-10, which rounding through float32 (to the tie, then to
	// even) would miss. numpy: np.float16(1 + 2**-11 + 2**-40) == 1.0009765625.
	assert.Equal(t, 1+math.Ldexp(1, -10), graphir.RoundTo(graphir.F16, 1+math.Ldexp(1, -11)+math.Ldexp(1, -40)))
	assert.Equal(t, 1.0, graphir.RoundTo(graphir.F16, 1+math.Ldexp(1, -11)), "tie to even")
	assert.Equal(t, 1+math.Ldexp(1, -7), graphir.RoundTo(graphir.BF16, 1+math.Ldexp(1, -8)+math.Ldexp(1, -40)))
	assert.Equal(t, math.Inf(-1), graphir.RoundTo(graphir.F16, -65520))
	assert.Equal(t, math.Ldexp(1, -24), graphir.RoundTo(graphir.F16, math.Ldexp(1.5, -25)), "subnormal")
	assert.Equal(t, uint16(0x3C00), graphir.F16Bits(1))
	assert.Equal(t, -2.0, graphir.F16Value(0xC000))
}

func TestNewDTypes(t *testing.T) {
	for _, s := range []string{"i16", "ui8", "ui16", "ui32", "ui64", "f16", "bf16"} {
		d, ok := graphir.ParseDType(s)
		require.True(t, ok, s)
		assert.Equal(t, s, d.String())
		assert.True(t, d.IsInt() || d.IsFloat(), s)
	}
	assert.True(t, graphir.UI8.IsUnsigned() && !graphir.UI8.IsSignedInt())
	assert.True(t, graphir.I16.IsSignedInt() && !graphir.I16.IsUnsigned())
	assert.False(t, graphir.I1.IsUnsigned() || graphir.I1.IsSignedInt())
	assert.Equal(t, 16, graphir.UI16.Bits())
	assert.Equal(t, 64, graphir.UI64.Bits())
	tt, err := graphir.ParseTensorType("tensor<2x3xui16>")
	require.NoError(t, err)
	assert.Equal(t, "tensor<2x3xui16>", tt.String())
	_, err = graphir.ParseTensorType("tensor<2xu8>")
	assert.ErrorContains(t, err, "ui8")
}

func TestCloneRemapsOperandsAndRegions(t *testing.T) {
	m := graphLevel.MustParse(t, `func.func @f(%a: tensor<f32>, %b: tensor<f32>) -> tensor<f32> {
  %0 = "test.region"(%a, %b) ({
  ^bb0(%x: tensor<f32>, %y: tensor<f32>):
    %1 = test.add %x, %y : tensor<f32>
    test.yield %1 : tensor<f32>
  }) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}`)
	f := m.Funcs[0]
	orig := f.Entry().First()
	mapping := map[*graphir.Value]*graphir.Value{f.Args()[0]: f.Args()[1]}
	c := orig.Clone(mapping)
	f.Entry().InsertBefore(f.Entry().Last(), c)
	f.Entry().Last().SetOperand(0, c.Result(0))
	require.NoError(t, graphir.Verify(m))
	assert.Equal(t, []float64{6}, evalF(t, m, []float64{1}, []float64{3}), "clone computes b+b")
	assert.NotSame(t, orig.Regions[0].Entry(), c.Regions[0].Entry())
	assert.Same(t, c.Result(0), mapping[orig.Result(0)])
}

func TestBuildChecksOperandCount(t *testing.T) {
	m := graphLevel.MustParse(t, negChain)
	_, err := graphir.Build("test.neg", m.Funcs[0].Args(), nil, graphir.Location{File: "b.mlir", Line: 1, Col: 1})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "b.mlir:1:1: error: 'test.neg' op expects 1 operands, got 2")
}
