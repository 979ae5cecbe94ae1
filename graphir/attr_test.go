package graphir_test

import (
	"math"
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

func TestDictAttrIsPersistent(t *testing.T) {
	base := make(graphir.DictAttr, 0, 8).Set("a", graphir.IntAttr(1)).Set("c", graphir.IntAttr(3))
	x := base.Set("b", graphir.IntAttr(2))
	y := base.Set("b", graphir.IntAttr(20))
	z := base.Set("a", graphir.IntAttr(10)).Delete("c")
	assert.Equal(t, `{a = 1, c = 3}`, graphir.FormatAttr(base))
	assert.Equal(t, `{a = 1, b = 2, c = 3}`, graphir.FormatAttr(x))
	assert.Equal(t, `{a = 1, b = 20, c = 3}`, graphir.FormatAttr(y))
	assert.Equal(t, `{a = 10}`, graphir.FormatAttr(z))
	assert.Nil(t, x.Get("zz"))
}

func TestHexConstantsRoundTrip(t *testing.T) {
	src := `func.func @f() {
  "x.c"() {a = dense<[[1.5, -2.0, 3.25e-30], [0.1, 7.0, -0.0]]> : tensor<2x3xf32>, b = dense<[1, -2, 9007199254740993]> : tensor<3xi64>,
    c = dense<[true, false, true]> : tensor<3xi1>, d = dense<[0.1, 0.2]> : tensor<2xf64>, e = dense<[-128, 127]> : tensor<2xi8>,
    f = dense<[1.0, 0.5]> : tensor<2xf16>, g = dense<4.0> : tensor<3xf32>} : () -> ()
  func.return
}`
	m := graphLevel.MustParse(t, src)
	hexText := graphir.PrintWith(m, graphir.PrintOptions{HexLargerThan: 1})
	assert.Contains(t, hexText, `a = dense<"0x0000C03F000000C0`)
	assert.Contains(t, hexText, `c = dense<[true, false, true]> : tensor<3xi1>`, "i1 stays decimal")
	assert.Contains(t, hexText, `f = dense<[1.0, 0.5]> : tensor<2xf16>`, "f16 stays decimal")
	assert.Contains(t, hexText, `g = dense<4.0> : tensor<3xf32>`, "splats stay decimal")
	assert.Equal(t, graphir.Print(m), graphir.Print(graphLevel.MustParse(t, hexText)), "hex form parses back to the same values")
	if opt := mlirOpt(); opt != "" {
		gen := graphir.PrintWith(m, graphir.PrintOptions{Generic: true, HexLargerThan: 1})
		cmd := exec.Command(opt, "--allow-unregistered-dialect", "-")
		cmd.Stdin = strings.NewReader(gen)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "mlir-opt rejected:\n%s\n%s", gen, out)
	}
}

func TestHexBoolsAreBitPacked(t *testing.T) {
	m := graphLevel.MustParse(t, `func.func @f() {
  "x.c"() {a = dense<"0x0501"> : tensor<9xi1>, b = dense<"0x01"> : tensor<12xi1>} : () -> ()
  func.return
}`)
	op := m.Funcs[0].Entry().First()
	assert.Equal(t, []float64{1, 0, 1, 0, 0, 0, 0, 0, 1}, op.Attr("a").(*graphir.DenseElementsAttr).Values())
	assert.True(t, op.Attr("b").(*graphir.DenseElementsAttr).IsSplat())
	_, err := graphir.ParseString("x.mlir", `func.func @f() {
  "x.c"() {a = dense<"0x050100"> : tensor<9xi1>} : () -> ()
  func.return
}`)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "one bit per element")
}

// TestRawDense checks float data held as raw bytes: hex literals parse to
// Raw (the bytes kept, not widened), Len/At/Values read it, it prints
// (decimal and hex) and compares equal to the same values held as
// Floats, and the verifier refuses a length that is not whole elements.
func TestRawDense(t *testing.T) {
	src := `func.func @f() {
  "x.c"() {a = dense<"0x0000C03F000000C0000080FF"> : tensor<3xf32>, b = dense<"0x0000803F"> : tensor<4xf32>} : () -> ()
  func.return
}`
	m := graphLevel.MustParse(t, src)
	op := m.Funcs[0].Entry().First()
	a := op.Attr("a").(*graphir.DenseElementsAttr)
	require.NotNil(t, a.Raw, "a hex literal keeps its bytes")
	require.Nil(t, a.Floats)
	assert.Equal(t, 3, a.Len())
	assert.Equal(t, []float64{1.5, -2, math.Inf(-1)}, a.Values())
	b := op.Attr("b").(*graphir.DenseElementsAttr)
	assert.True(t, b.IsSplat(), "one raw element stands for all")
	assert.Equal(t, []float64{1, 1, 1, 1}, b.Values())
	floats := &graphir.DenseElementsAttr{Type: a.Type, Floats: []float64{1.5, -2, math.Inf(-1)}}
	assert.True(t, graphir.AttrEqual(a, floats))
	assert.Equal(t, a.Raw, floats.FloatBytes())
	assert.Equal(t, `dense<[1.5, -2.0, 0xFF800000]> : tensor<3xf32>`, graphir.FormatAttr(a))
	assert.Contains(t, graphir.PrintWith(m, graphir.PrintOptions{HexLargerThan: 1}), `a = dense<"0x0000C03F000000C0000080FF">`)

	bad := graphir.NewRawDense(graphir.NewTensor(graphir.F32, 2), []byte{1, 2, 3, 4, 5})
	f := graphir.NewFunc("g", &graphir.FunctionType{}, graphir.Location{})
	f.Entry().Append(graphir.NewOp("x.c", nil, nil, graphir.DictAttr{}.Set("w", bad), graphir.Location{}))
	f.Entry().Append(graphir.NewOp("func.return", nil, nil, nil, graphir.Location{}))
	err := graphir.Verify(&graphir.Module{Funcs: []*graphir.Func{f}})
	require.Error(t, err, "5 raw bytes are not whole f32 elements")
}
