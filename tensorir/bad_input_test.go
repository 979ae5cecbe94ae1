package tensorir_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/tensorir"
)

type badInput struct {
	name string
	src  string
	want string // the full first line of the error: file:line:col: error: message
}

// badInputs are malformed texts; each must give one located parse error.
var badInputs = []badInput{
	{"empty function name", `tir.func @() {}`, `bad.tir:1:10: error: expected a symbol name after '@'`},
	{"missing body", `tir.func @f()`, `bad.tir:1:14: error: unexpected token end of file (expected "{" loc(...))`},
	{"unknown statement", "tir.func @f() {\n  tir.frobnicate\n}", `bad.tir:2:3: error: unexpected token "tir.frobnicate" (expected "}")`},
	{"undefined buffer", "tir.func @f() {\n  %A[0] = 1.0\n}", `bad.tir:2:3: error: use of undefined buffer %A`},
	{"undefined variable", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[%i] = 1.0\n}", `bad.tir:2:6: error: use of undefined value %i`},
	{"buffer used as scalar", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[0] = %A\n}", `bad.tir:2:11: error: buffer %A used as a scalar; load an element with %A[...]`},
	{"scalar used as buffer", "tir.func @f(%n: index, out %A: buffer<4xf32>) {\n  %n[0] = 1.0\n}", `bad.tir:2:3: error: %n is a scalar, not a buffer`},
	{"redefinition", "tir.func @f(out %A: buffer<4xf32>) {\n  tir.for %A = 0 to 4 {\n  }\n}", `bad.tir:2:3: error: redefinition of %A`},
	{"shadowing loop", "tir.func @f() {\n  tir.for %i = 0 to 4 {\n    tir.for %i = 0 to 4 {\n    }\n  }\n}", `bad.tir:3:5: error: redefinition of %i`},
	{"unknown dtype", `tir.func @f(%A: buffer<4xf31>) {}`, `bad.tir:1:17: error: unknown dtype 'f31' in buffer type`},
	{"unknown scalar dtype", `tir.func @f(%n: int) {}`, `bad.tir:1:13: error: unknown dtype 'int' of parameter %n`},
	{"unknown function", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[0] = frob(1.0)\n}", `bad.tir:2:11: error: unknown function 'frob'`},
	{"wrong arity", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[0] = pow(1.0)\n}", `bad.tir:2:11: error: 'pow' expects 2 arguments, got 1`},
	{"select arity", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[0] = select(true, 1.0)\n}", `bad.tir:2:11: error: 'select' expects 3 arguments, got 2`},
	{"int literal out of range", "tir.func @f(out %A: buffer<4xi8>) {\n  %A[0] = 128 : i8\n}", `bad.tir:2:11: error: integer literal 128 is out of range for i8`},
	{"int64 overflow", "tir.func @f(out %A: buffer<4xi64>) {\n  %A[0] = 9223372036854775808 : i64\n}", `bad.tir:2:11: error: integer literal 9223372036854775808 is out of range for i64`},
	{"float literal overflow", "tir.func @f(out %A: buffer<4xf16>) {\n  %A[0] = 70000.0 : f16\n}", `bad.tir:2:11: error: float literal 70000.0 is out of range for f16`},
	{"int literal of float type", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[0] = 1 : f32\n}", `bad.tir:2:11: error: integer literal 1 cannot have dtype f32; write 1.0`},
	{"float literal of int type", "tir.func @f(out %A: buffer<4xi32>) {\n  %A[0] = 1.5 : i32\n}", `bad.tir:2:11: error: float literal 1.5 cannot have dtype i32`},
	{"hex without dtype", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[0] = 0x7F800000\n}", `bad.tir:2:11: error: hexadecimal literal 0x7F800000 needs a float dtype (0x7F800000 : f32)`},
	{"hex too wide", "tir.func @f(out %A: buffer<4xf16>) {\n  %A[0] = 0x7F800000 : f16\n}", `bad.tir:2:11: error: hexadecimal literal 0x7F800000 is wider than f16`},
	{"unterminated string", `tir.func @f() attributes {a = "x} {}`, `bad.tir:1:31: error: unterminated string literal`},
	{"bad character", "tir.func @f() {\n  ?\n}", `bad.tir:2:3: error: unexpected character '?'`},
	{"chained comparison", "tir.func @f(out %A: buffer<4xi1>) {\n  %A[0] = 1 < 2 < 3\n}", `bad.tir:2:17: error: comparisons do not chain; add parentheses`},
	{"duplicate function", "tir.func @f() {\n}\ntir.func @f() {\n}", `bad.tir:3:1: error: redefinition of function @f`},
	{"duplicate attribute", `tir.func @f() attributes {a = 1, a = 2} {}`, `bad.tir:1:34: error: duplicate attribute 'a'`},
	{"partial bindings", "tir.func @f() {\n  tir.for %i = 0 to 4 {\n    tir.block \"b\"(%v = spatial(0:4, %i), %w = spatial(0:4)) {\n    }\n  }\n}", `bad.tir:3:5: error: block 'b': every iteration variable needs a binding (kind(min:end, value))`},
	{"scalar with role", `tir.func @f(out %n: index) {}`, `bad.tir:1:13: error: scalar parameter %n cannot have role 'out'`},
	{"buffer option twice", `tir.func @f(%A: buffer<4xf32, "local", "shared">) {}`, `bad.tir:1:40: error: buffer type gives its scope twice`},
	{"zero alignment", `tir.func @f(%A: buffer<4xf32, align = 0>) {}`, `bad.tir:1:31: error: buffer alignment must be a positive integer, got 0`},
	{"bad thread tag string", "tir.func @f() {\n  tir.for %i = 0 to 4 thread_binding(threadIdx.x) {\n  }\n}", `bad.tir:2:23: error: unexpected token "thread_binding" (expected "{")`},
	{"unterminated buffer type", `tir.func @f(%A: buffer<4x`, `bad.tir:1:23: error: unexpected token "<" (expected ")" ("attributes" "{")? "{" loc(...))`},
	{"vector literal", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[0] = 1.0 : f32x4\n}", `bad.tir:2:11: error: a literal must have a scalar dtype, not f32x4`},
	{"negated hex", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[0] = -0x7F800000 : f32\n}", `bad.tir:2:11: error: hexadecimal literal cannot be negated; give the sign bit`},
	{"missing exponent digits", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[0] = 1.0e\n}", `bad.tir:2:11: error: expected exponent digits in float literal`},
	{"unknown cast dtype", "tir.func @f(out %A: buffer<4xf32>) {\n  %A[0] = cast<float>(1)\n}", `bad.tir:2:11: error: unknown dtype 'float' in cast`},
}

func TestBadInputs(t *testing.T) {
	require.GreaterOrEqual(t, len(badInputs), 20)
	for _, c := range badInputs {
		t.Run(c.name, func(t *testing.T) {
			_, err := tensorir.ParseString("bad.tir", c.src)
			require.Error(t, err)
			assert.Equal(t, c.want, err.Error())
		})
	}
}
