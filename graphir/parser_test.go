package graphir_test

import (
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

var roundTripCases = map[string]string{
	"symbolic dimensions": `func.func @s(%x: tensor<?x3x?xf32, ["batch", "seq"]>) -> tensor<?x3xf32, ["(batch*seq - 1) floordiv 2 + 1"]> {
  %0 = "foo.collapse"(%x) {t = tensor<?xi8, ["n"]>} : (tensor<?x3x?xf32, ["batch", "seq"]>) -> tensor<?x3xf32, ["batch*seq"]>
  %1 = "foo.pool"(%0) : (tensor<?x3xf32, ["batch*seq"]>) -> tensor<?x3xf32, ["(batch*seq - 1) floordiv 2 + 1"]>
  func.return %1 : tensor<?x3xf32, ["(batch*seq - 1) floordiv 2 + 1"]>
}`,
	"pretty ops": `func.func @f(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = test.add %a, %b : tensor<2x3xf32>
  %1 = test.neg %0 : tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}`,
	"generic ops, multi results, unregistered": `module {
  func.func @g(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>) {
    %r:2 = "foo.split"(%x) {axis = 0} : (tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>)
    %s = "foo.id"(%r#1) : (tensor<4xi32>) -> tensor<4xi32>
    func.return %r#0, %s : tensor<4xi32>, tensor<4xi32>
  }
}`,
	"every attribute kind": `func.func @a() {
  "foo.attrs"() {a = 1, b = -7 : i32, c = 2.5 : f32, d = 1.0e-30 : f64, e = "str \"quoted\" \\ \0A", f = true, g = false,
    h = [1, [2, 3], "x"], i = {inner = [], z = 1 : i8}, j = tensor<1x2xbf16>, k = (tensor<f32>) -> (), l, m = unit,
    n = dense<[[1.5, -2.0], [0.0, 3.25]]> : tensor<2x2xf32>, o = dense<7> : tensor<3x3xi64>, p = dense<[true, false]> : tensor<2xi1>,
    q = dense<1.0> : tensor<f16>, r = index, s = 0x7FC00000 : f32, t = dense<"0x0000803F00000040"> : tensor<2xf32>,
    u = dense<[0x7F800000, 0xFF800000]> : tensor<2xf32>, v = dense<[]> : tensor<0xf32>, "quoted key" = 3} : () -> ()
  func.return
}`,
	"regions and block arguments": `func.func @r(%x: tensor<f32>, %y: tensor<f32>) -> tensor<f32> {
  %0 = "test.region"(%x, %y) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = test.add %a, %b : tensor<f32>
    test.yield %1 : tensor<f32>
  }) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<f32>
}`,
	"private function, attributes, two functions": `module @m attributes {tessera.version = "0"} {
  func.func private @decl(%x: tensor<1xf32>) -> tensor<1xf32> attributes {note = 1} {
    func.return %x : tensor<1xf32>
  }
  func.func @"weird name"() {
    func.return
  }
}`,
	"locations": `func.func @l(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = test.neg %x : tensor<2xf32> loc("model.py":12:5)
  %1 = test.neg %0 : tensor<2xf32> loc(unknown)
  %2 = test.neg %1 : tensor<2xf32> loc("model.py")
  func.return %2 : tensor<2xf32> loc("x.mlir":3:1)
} loc("model.py":10:1)`,
	"unsigned, i16, f16 and bf16 types and constants": `func.func @u(%a: tensor<2xui8>, %b: tensor<3xi16>) -> tensor<2xui64> {
  "foo.attrs"() {a = 255 : ui8, b = 18446744073709551615 : ui64, c = -32768 : i16, d = 65535 : ui16, e = 4294967295 : ui32,
    f = dense<[0, 255]> : tensor<2xui8>, g = dense<[18446744073709551615, 9223372036854775808]> : tensor<2xui64>,
    h = dense<[-32768, 32767, 7]> : tensor<3xi16>, i = dense<[0.5, -65504.0]> : tensor<2xf16>, j = dense<[1.0, 3.3895314e+38]> : tensor<2xbf16>,
    k = dense<"0x00FF"> : tensor<2xui8>, l = dense<"0xFFFFFFFFFFFFFFFF0100000000000000"> : tensor<2xui64>, m = dense<"0x0080FF7F"> : tensor<2xi16>,
    n = dense<"0x01000000FFFFFFFF"> : tensor<2xui32>, o = dense<"0xFFFF0000"> : tensor<2xui16>} : () -> ()
  %0 = "foo.cast"(%a) : (tensor<2xui8>) -> tensor<2xui64>
  func.return %0 : tensor<2xui64>
}`,
	"functional pretty type": `func.func @c() -> tensor<2xi64> {
  %0 = test.const {value = dense<[1, 2]> : tensor<2xi64>} : tensor<2xi64>
  test.print %0, %0 : (tensor<2xi64>, tensor<2xi64>) -> ()
  func.return %0 : tensor<2xi64>
}`,
}

// A location naming only a file, loc("model.py"), parses to a Location
// with a File and no line (as at the tensor level) and prints back as
// written.
func TestFileOnlyLocation(t *testing.T) {
	m := graphLevel.MustParse(t, roundTripCases["locations"])
	ops := m.Funcs[0].Entry().Ops()
	assert.Equal(t, graphir.Location{File: "model.py"}, ops[2].Loc)
	assert.Equal(t, `loc("model.py")`, graphir.FormatLoc(ops[2].Loc))
	out := graphir.PrintWith(m, graphir.PrintOptions{DebugInfo: true})
	assert.Contains(t, out, `%2 = test.neg %1 : tensor<2xf32> loc("model.py")`)
}

func TestRoundTrip(t *testing.T) {
	for name, src := range roundTripCases {
		t.Run(name, func(t *testing.T) { graphLevel.RoundTrip(t, src) })
	}
}

func TestPrintedForm(t *testing.T) {
	out := graphLevel.RoundTrip(t, roundTripCases["pretty ops"])
	assert.Equal(t, `module {
  func.func @f(%arg0: tensor<2x3xf32>, %arg1: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = test.add %arg0, %arg1 : tensor<2x3xf32>
    %1 = test.neg %0 : tensor<2x3xf32>
    func.return %1 : tensor<2x3xf32>
  }
}
`, out)
	gen := graphir.PrintWith(graphLevel.MustParse(t, out), graphir.PrintOptions{Generic: true})
	assert.Contains(t, gen, `%0 = "test.add"(%arg0, %arg1) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>`)
	assert.Contains(t, gen, `"func.return"(%1) : (tensor<2x3xf32>) -> ()`)
	assert.Contains(t, gen, `{function_type = (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>, sym_name = "f"}`)
}

func TestAttributeValues(t *testing.T) {
	m := graphLevel.MustParse(t, roundTripCases["every attribute kind"])
	op := m.Funcs[0].Entry().First()
	assert.Equal(t, int64(-7), op.Attr("b").(*graphir.IntegerAttr).Value)
	assert.Equal(t, "i32", op.Attr("b").(*graphir.IntegerAttr).Type.String())
	assert.Equal(t, "str \"quoted\" \\ \n", string(op.Attr("e").(graphir.StringAttr)))
	assert.True(t, math.IsNaN(op.Attr("s").(*graphir.FloatAttr).Value))
	assert.Equal(t, []float64{1, 2}, op.Attr("t").(*graphir.DenseElementsAttr).Values())
	u := op.Attr("u").(*graphir.DenseElementsAttr).Values()
	assert.True(t, math.IsInf(u[0], 1) && math.IsInf(u[1], -1))
	o := op.Attr("o").(*graphir.DenseElementsAttr)
	assert.True(t, o.IsSplat())
	assert.Len(t, o.Values(), 9)
	assert.Equal(t, graphir.UnitAttr{}, op.Attr("l"))
	assert.Equal(t, graphir.BoolAttr(true), op.Attr("f"))
}

func TestFloatPrintingRoundTrips(t *testing.T) {
	for _, v := range []float64{0.1, 1, -2.5, 1e-45, 3.4028234663852886e38, 123456789, 1.17549435e-38, math.Inf(1), math.Inf(-1), math.NaN(), -0.0} {
		f32 := float64(float32(v))
		d := &graphir.DenseElementsAttr{Type: graphir.NewTensor(graphir.F32, 1), Floats: []float64{f32}}
		src := "func.func @f() {\n  \"x.c\"() {v = " + graphir.FormatAttr(d) + "} : () -> ()\n  func.return\n}"
		m := graphLevel.MustParse(t, src)
		got := m.Funcs[0].Entry().First().Attr("v").(*graphir.DenseElementsAttr).Floats[0]
		if math.IsNaN(f32) {
			assert.True(t, math.IsNaN(got))
			continue
		}
		assert.Equal(t, math.Float64bits(f32), math.Float64bits(got), "value %v printed as %s", v, graphir.FormatAttr(d))
	}
}

func TestElidedConstants(t *testing.T) {
	src := `func.func @f() -> tensor<300xf32> {
  %0 = test.const {value = dense<0.5> : tensor<300xf32>} : tensor<300xf32>
  func.return %0 : tensor<300xf32>
}`
	m := graphLevel.MustParse(t, src)
	d := m.Funcs[0].Entry().First().Attr("value").(*graphir.DenseElementsAttr)
	d.Floats = make([]float64, 300)
	el := graphir.PrintWith(m, graphir.PrintOptions{ElideLargerThan: graphir.DefaultElideThreshold})
	require.Contains(t, el, "dense_resource<__elided__> : tensor<300xf32>")
	m2 := graphLevel.MustParse(t, el)
	_, err := graphir.Interpret(m2.Funcs[0], nil)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "elided")
	assert.Contains(t, graphir.Print(m), "dense<[0.0, 0.0")
}

var locRE = regexp.MustCompile(`^[^:\s]+:\d+:\d+: error: `)

// badInputs are malformed modules; each must give a located error (from
// the parser or the verifier) containing the given text, and never panic.
var badInputs = []struct{ name, src, want string }{
	{"empty op name", `func.func @f() { ""() : () -> () func.return }`, "empty operation name"},
	{"negative unsigned", `func.func @f() { "foo.attrs"() {a = dense<[-1]> : tensor<1xui8>} : () -> () func.return }`, "negative integer literal -1 for unsigned type ui8"},
	{"unsigned out of range", `func.func @f() { "foo.attrs"() {a = 256 : ui8} : () -> () func.return }`, "integer literal 256 out of range for ui8"},
	{"ui64 out of range", `func.func @f() { "foo.attrs"() {a = 18446744073709551616 : ui64} : () -> () func.return }`, "out of range for ui64"},
	{"i16 out of range", `func.func @f() { "foo.attrs"() {a = dense<[40000]> : tensor<1xi16>} : () -> () func.return }`, "integer literal 40000 out of range for i16"},
	{"f16 hex too wide", `func.func @f() { "foo.attrs"() {a = dense<[0x17C00]> : tensor<1xf16>} : () -> () func.return }`, "does not fit in f16"},
	{"unknown element type", `func.func @f(%a: tensor<2xu8>) { func.return }`, ""},
	{"missing paren", `func.func @f() { "x.y"( : () -> () }`, "unexpected"},
	{"truncated file", `func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = test.neg %a : tensor<2xf32>`, "unexpected"},
	{"truncated in type", `func.func @f(%a: tensor<2xf32`, ""},
	{"truncated attr dict", `func.func @f() { "x.y"() {a = [1, 2 : () -> ()`, "unexpected"},
	{"garbage token", "func.func @f() { \x01 }", ""},
	{"unknown custom op", `func.func @f(%a: tensor<2xf32>) { foo.bar %a : tensor<2xf32> func.return }`, "custom op 'foo.bar' is unknown"},
	{"unregistered generic op", `func.func @f() { "foo.bar"() : () -> () func.return }`, "is not registered"},
	{"undefined value", `func.func @f() -> tensor<2xf32> { func.return %x : tensor<2xf32> }`, "use of undeclared SSA value name '%x'"},
	{"redefined value", `func.func @f(%a: tensor<2xf32>) { %0 = test.neg %a : tensor<2xf32>
  %0 = test.neg %a : tensor<2xf32>
  func.return }`, "redefinition of SSA value '%0'"},
	{"operand type mismatch", `func.func @f(%a: tensor<2xf32>) { %0 = test.neg %a : tensor<3xf32> func.return }`, "expects different type than prior uses"},
	{"too many operands", `func.func @f(%a: tensor<2xf32>) { %0 = "test.neg"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32> func.return }`, "expects 1 operands, got 2"},
	{"too few operands", `func.func @f(%a: tensor<2xf32>) { %0 = "test.add"(%a) : (tensor<2xf32>) -> tensor<2xf32> func.return }`, "expects 2 operands, got 1"},
	{"type list length", `func.func @f(%a: tensor<2xf32>) { %0 = "test.add"(%a, %a) : (tensor<2xf32>) -> tensor<2xf32> func.return }`, "has 2 operands but its type lists 1"},
	{"result count", `func.func @f(%a: tensor<2xf32>) { %0 = "test.print"(%a) : (tensor<2xf32>) -> () func.return }`, "defines 0 results but 1 were bound"},
	{"shape mismatch", `func.func @f(%a: tensor<2xf32>, %b: tensor<3xf32>) { %0 = "test.add"(%a, %b) : (tensor<2xf32>, tensor<3xf32>) -> tensor<2xf32> func.return }`, "requires the same type for all operands and results"},
	{"wrong result type", `func.func @f(%a: tensor<2xf32>) { %0 = "test.neg"(%a) : (tensor<2xf32>) -> tensor<2xf16> func.return }`, "requires the same type"},
	{"missing required attr", `func.func @f() { test.attrs : () -> () func.return }`, "requires attribute 'i'"},
	{"attr wrong kind", `func.func @f() { test.attrs {i = "one"} : () -> () func.return }`, "attribute 'i' must be an integer"},
	{"attr array length", `func.func @f() { test.attrs {i = 1, ints = [1, 2, 3]} : () -> () func.return }`, "must have 2 elements"},
	{"attr array element kind", `func.func @f() { test.attrs {i = 1, ints = [1, 2.0]} : () -> () func.return }`, "must be an integer array"},
	{"attr enum", `func.func @f() { test.attrs {i = 1, mode = "output"} : () -> () func.return }`, "must be one of"},
	{"unknown attr", `func.func @f() { test.attrs {i = 1, bogus = 2} : () -> () func.return }`, "does not accept attribute 'bogus'"},
	{"op verifier", `func.func @f() { test.attrs {i = -1} : () -> () func.return }`, "must be non-negative"},
	{"duplicate attr", `func.func @f() { test.attrs {i = 1, i = 2} : () -> () func.return }`, "duplicate key 'i'"},
	{"integer out of range", `func.func @f() { test.attrs {i = 300 : i8} : () -> () func.return }`, "out of range for i8"},
	{"float literal for int type", `func.func @f() { test.attrs {i = 1.5 : i32} : () -> () func.return }`, "floating point literal"},
	{"unknown type", `func.func @f(%a: tensor<2xq7>) { func.return }`, "unknown element type"},
	{"unknown scalar type", `func.func @f(%a: foo) { func.return }`, "unknown type 'foo'"},
	{"dynamic dim", `func.func @f(%a: tensor<?x2xf32>) { func.return }`, "dynamic dimension '?' in tensor<?x2xf32> has no expression"},
	{"constant symbolic dim", `func.func @f(%a: tensor<?x2xf32, ["3"]>) { func.return }`, `"3" is a constant; write it as a static dimension`},
	{"more expressions than dims", `func.func @f(%a: tensor<?x2xf32, ["n", "m"]>) { func.return }`, "has 1 more symbolic expressions than '?' dimensions"},
	{"bad symbolic expression", `func.func @f(%a: tensor<?x2xf32, ["n floordiv m"]>) { func.return }`, "floordiv needs a positive constant divisor"},
	{"unquoted encoding", `func.func @f(%a: tensor<?x2xf32, [n]>) { func.return }`, "must list quoted expressions"},
	{"encoding not a list", `func.func @f(%a: tensor<?x2xf32, "n">) { func.return }`, "must list its symbolic dimensions"},
	{"bad dim", `func.func @f(%a: tensor<2x-1xf32>) { func.return }`, "invalid dimension"},
	{"dense count", `func.func @f() { %0 = test.const {value = dense<[1.0, 2.0, 3.0]> : tensor<2xf32>} : tensor<2xf32> func.return }`, "dimension 0 of the dense literal has 3 elements"},
	{"dense nesting", `func.func @f() { %0 = test.const {value = dense<[1.0, 2.0]> : tensor<2x1xf32>} : tensor<2x1xf32> func.return }`, "expected a nested list"},
	{"dense bool for float", `func.func @f() { %0 = test.const {value = dense<true> : tensor<2xf32>} : tensor<2xf32> func.return }`, ""},
	{"dense bad element", `func.func @f() { %0 = test.const {value = dense<[1.0, abc]> : tensor<2xf32>} : tensor<2xf32> func.return }`, "invalid float literal abc"},
	{"dense hex size", `func.func @f() { %0 = test.const {value = dense<"0x0000"> : tensor<2xf32>} : tensor<2xf32> func.return }`, "hex dense literal has 2 bytes"},
	{"dense non-tensor", `func.func @f() { "x.c"() {v = dense<1.0> : f32} : () -> () func.return }`, "dense elements need a tensor type"},
	{"dense_resource blob", `func.func @f() { "x.c"() {v = dense_resource<blob1> : tensor<2xf32>} : () -> () func.return }`, "dense_resource blobs are not supported"},
	{"missing return", `func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> { %0 = test.neg %a : tensor<2xf32> }`, "must end with 'func.return'"},
	{"return type mismatch", `func.func @f(%a: tensor<2xf32>) -> tensor<3xf32> { func.return %a : tensor<2xf32> }`, "returns (tensor<3xf32>)"},
	{"return count mismatch", `func.func @f(%a: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>) { func.return %a : tensor<2xf32> }`, "but the enclosing function"},
	{"terminator not last", `func.func @f(%a: tensor<2xf32>) -> tensor<2xf32> { func.return %a : tensor<2xf32>
  %0 = test.neg %a : tensor<2xf32>
  func.return %0 : tensor<2xf32> }`, "must be the last operation"},
	{"region not terminated", `func.func @f(%a: tensor<f32>) -> tensor<f32> { %0 = "test.region"(%a) ({
  ^bb0(%x: tensor<f32>):
    %1 = test.neg %x : tensor<f32>
  }) : (tensor<f32>) -> tensor<f32>
  func.return %0 : tensor<f32> }`, "must end with a terminator"},
	{"isolated region uses outer value", `func.func @f(%a: tensor<f32>) -> tensor<f32> { %0 = "test.region"() ({
    %1 = test.neg %a : tensor<f32>
    test.yield %1 : tensor<f32>
  }) : () -> tensor<f32>
  func.return %0 : tensor<f32> }`, "does not dominate this use"},
	{"redefined function", "func.func @f() { func.return }\nfunc.func @f() { func.return }", "redefinition of symbol '@f'"},
	{"op at module level", `module { %0 = "x.y"() : () -> tensor<f32> }`, "only functions may appear at module level"},
	{"nested module", `func.func @f() { module { } func.return }`, "'module' may only appear at the top level"},
	{"nested func", `func.func @f() { func.func @g() { func.return } func.return }`, "may only appear at module level"},
	{"generic func without type", `"func.func"() ({ "func.return"() : () -> () }) {sym_name = "f"} : () -> ()`, "requires a string 'sym_name' and a function type"},
	{"pretty types count", `func.func @f(%a: tensor<2xf32>) { %0 = test.neg %a : tensor<2xf32>, tensor<2xf32> func.return }`, "expected a single type"},
	{"missing types", `func.func @f(%a: tensor<2xf32>) { %0 = test.neg %a func.return }`, ""},
	{"custom form of region op", `func.func @f() { test.region : () -> () func.return }`, "has no custom form"},
	{"bad loc", `func.func @f() { func.return loc(#loc1) }`, ""},
	{"multi-block function", `func.func @f() { func.return
^bb1:
  func.return }`, "must have a single block"},
	{"unterminated string", `func.func @f() { "x.y() : () -> () }`, ""},
	{"result count zero", `func.func @f(%a: tensor<2xf32>) { %0:0 = test.neg %a : tensor<2xf32> func.return }`, "expected a positive result count"},
}

func TestBadInputsGiveLocatedErrors(t *testing.T) {
	require.GreaterOrEqual(t, len(badInputs), 30)
	for _, c := range badInputs {
		t.Run(c.name, func(t *testing.T) {
			var err error
			require.NotPanics(t, func() {
				var m *graphir.Module
				m, err = graphir.ParseString("bad.mlir", c.src)
				if err == nil {
					err = graphir.Verify(m)
				}
			})
			require.Error(t, err, "input was accepted")
			msg := err.Error()
			assert.Regexp(t, locRE, msg)
			assert.True(t, strings.HasPrefix(msg, "bad.mlir:"), "error not located in the input file: %s", msg)
			assert.Contains(t, msg, c.want)
		})
	}
}

func TestErrorLocationsPointAtTheOp(t *testing.T) {
	_, err := graphir.ParseString("f.mlir", "func.func @f() {\n  func.return\n  %0 = \"x.y\"(%nope) : (tensor<f32>) -> tensor<f32>\n}")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "f.mlir:3:14: error: use of undeclared SSA value name '%nope'")
	m, err := graphir.ParseString("f.mlir", "func.func @f(%a: tensor<2xf32>) {\n  %0 = \"test.neg\"(%a, %a) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n  func.return\n}")
	require.NoError(t, err)
	err = graphir.Verify(m)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "f.mlir:2:8: error: 'test.neg' op expects 1 operands, got 2")
}

// TestLitInputsRoundTrip round-trips every parseable lit test input; the
// lit files hold the ops of every dialect.
func TestLitInputsRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("../lit/*/*.mlir")
	for _, f := range files {
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for i, chunk := range strings.Split(string(src), "// -----") {
			m, err := graphir.ParseString(f, chunk)
			if err != nil || graphir.VerifyWith(m, graphir.VerifyOptions{AllowUnregistered: true}) != nil {
				continue // invalid.mlir cases
			}
			out := graphir.Print(m)
			m2, err := graphir.ParseString(f, out)
			require.NoError(t, err, "%s chunk %d: printed form does not parse:\n%s", f, i, out)
			require.Equal(t, out, graphir.Print(m2), "%s chunk %d", f, i)
		}
	}
}
