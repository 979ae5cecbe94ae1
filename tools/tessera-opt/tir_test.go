package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const mlp = `func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = graph.matmul %x, %w : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = graph.relu %0 : tensor<2x4xf32>
  %2 = graph.sigmoid %1 : tensor<2x4xf32>
  func.return %2 : tensor<2x4xf32>
}
`

const tirKernel = `tir.func @k(%A: buffer<4xf32>, out %B: buffer<4xf32>) {
  tir.allocate %T: buffer<4xf32, "local"> {
    tir.for %i = 0 to 4 {
      tir.block "t"(%vi = spatial(0:4, %i)) reads(%A[0:4]) writes(%T[%vi]) {
        %T[%vi] = %A[%vi * 1 + 0] * 2.0
      }
    }
    tir.for %i = 0 to 4 {
      tir.block "b"(%vi = spatial(0:4, %i)) reads(%T[0:4]) writes(%B[%vi]) {
        %B[%vi] = exp(%T[%vi])
      }
    }
  }
}
`

func TestLowerToTIRFlag(t *testing.T) {
	out, errs, code := opt(mlp, "--legalize-to-hlo", "--fuse", "--lower-to-tir")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, out, "tir.func @fused_0(%in0: buffer<2x3xf32>, %in1: buffer<3x4xf32>, out %out0: buffer<2x4xf32>) attributes {tessera.kernel} {")
	assert.Contains(t, out, `tir.block "dot_general"`)
	assert.Contains(t, out, `tir.block "logistic"`)
	assert.Contains(t, out, "tir.func @main(%arg0: buffer<2x3xf32>, %arg1: buffer<3x4xf32>, out %out0: buffer<2x4xf32>) attributes {tessera.host} {\n  tir.call @fused_0(%arg0, %arg1, %out0)\n}")

	// The printed tensor IR is a valid input (stdin, detected by its text).
	again, errs, code := opt(out)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, out, again)

	// Tensor-level flags apply after --lower-to-tir, in order.
	inl, errs, code := opt(mlp, "--legalize-to-hlo", "--fuse", "--lower-to-tir", "--inline-elementwise")
	require.Equal(t, 0, code, errs)
	assert.NotContains(t, inl, `tir.block "maximum"`)
	assert.Contains(t, inl, "sigmoid(max(%t0[%v0, %v1], 0.0))")
	viaText, errs, code := opt(out, "--inline-elementwise")
	require.Equal(t, 0, code, errs)
	assert.Equal(t, inl, viaText)

	// --print-ir-after names tensor-level steps too.
	_, errs, code = opt(mlp, "--legalize-to-hlo", "--fuse", "--lower-to-tir", "--print-ir-after=lower-to-tir")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "// -----// IR Dump After lower-to-tir //----- //\ntir.func @fused_0")

	// Locations of the graph ops reach the tensor IR.
	dbg, errs, code := opt(mlp, "--legalize-to-hlo", "--fuse", "--lower-to-tir", "--mlir-print-debuginfo")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, dbg, `tir.call @fused_0(%arg0, %arg1, %out0) loc("<stdin>":4:8)`)
}

func TestTIRInput(t *testing.T) {
	p := writeFile(t, "k.tir", "// a comment first\n"+tirKernel)
	out, errs, code := opt("", p)
	require.Equal(t, 0, code, errs)
	assert.Equal(t, tirKernel, out)

	simp, errs, code := opt("", p, "--simplify")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, simp, "%T[%vi] = %A[%vi] * 2.0\n")

	inl, errs, code := opt("", p, "--inline-elementwise", "--print-ir-after=inline-elementwise")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, inl, "%B[%vi] = exp(%A[%vi * 1 + 0] * 2.0)")
	assert.Contains(t, errs, "// -----// IR Dump After inline-elementwise //----- //")

	llvm, errs, code := opt("", p, "--codegen")
	require.Equal(t, 0, code, errs)
	assert.Contains(t, llvm, "define ")
	assert.Contains(t, llvm, "@k")

	// Located diagnostics at the tensor level.
	bad := writeFile(t, "bad.tir", "tir.func @k(out %B: buffer<4xf32>) {\n  %B[0] = %nope[1]\n}\n")
	_, errs, code = opt("", bad)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "bad.tir:2:11: error: use of undefined buffer %nope")
	invalid := writeFile(t, "inv.tir", "tir.func @k(out %B: buffer<4xf32>) {\n  %B[0] = 1.0 : f64\n}\n")
	_, errs, code = opt("", invalid)
	assert.Equal(t, 1, code)
	assert.Contains(t, errs, "inv.tir:2:3: error: store to buffer %B of f32: value has dtype f64")
}

func TestTIRVerifyDiagnosticsAndSplit(t *testing.T) {
	src := `tir.func @a(out %B: buffer<4xf32>) {
  // expected-error@+1 {{store to buffer %B of f32: value has dtype f64}}
  %B[0] = 1.0 : f64
}
// -----
tir.func @b(out %B: buffer<4xf32>) {
  %B[0] = 1.0
}
`
	p := writeFile(t, "v.tir", src)
	out, errs, code := opt("", p, "--split-input-file", "--verify-diagnostics")
	assert.Equal(t, 0, code, errs)
	assert.Contains(t, out, "tir.func @b")
	assert.NotContains(t, out, "tir.func @a")
}

func TestTIRLevelErrors(t *testing.T) {
	p := writeFile(t, "k.tir", tirKernel)
	for _, c := range []struct {
		stdin string
		args  []string
		want  string
	}{
		{mlp, []string{"--simplify"}, "<stdin>: error: 'simplify' runs on tensor IR: put lower-to-tir before it (or give tensor IR as input)"},
		{mlp, []string{"--codegen"}, "'codegen' runs on tensor IR: put lower-to-tir before it"},
		{mlp, []string{"--legalize-to-hlo", "--fuse", "--lower-to-tir", "--cse"}, "pass 'cse' runs on graph or hlo IR, but the IR is tensor IR by then"},
		{mlp, []string{"--legalize-to-hlo", "--fuse", "--lower-to-tir", "--lower-to-tir"}, "pass 'lower-to-tir' runs on graph or hlo IR, but the IR is tensor IR by then"},
		{"", []string{p, "--lower-to-tir"}, "k.tir: error: pass 'lower-to-tir' runs on graph or hlo IR, but the IR is tensor IR by then"},
		{"", []string{p, "--canonicalize"}, "pass 'canonicalize' runs on graph or hlo IR, but the IR is tensor IR by then"},
		{"", []string{p, "--codegen", "--simplify"}, "'simplify' runs on tensor IR, but the IR is compiled code by then"},
		{"", []string{p, "--default-schedule=target=gpu"}, "unknown target \"gpu\" (known targets: cpu, cuda, npu)"},
		{mlp, []string{"--legalize-to-hlo", "--lower-to-tir"}, "<stdin>:2:8: error: 'hlo.dot_general' op lower-to-tir: expects the output of the fuse pass"},
	} {
		_, errs, code := opt(c.stdin, c.args...)
		assert.Equal(t, 1, code, strings.Join(c.args, " "))
		assert.Contains(t, errs, c.want, strings.Join(c.args, " "))
	}
}

func TestHelpListsTIRFlags(t *testing.T) {
	out, _, code := opt("", "--help")
	require.Equal(t, 0, code)
	for _, f := range []string{"--lower-to-tir", "--simplify", "--inline-elementwise", "--default-schedule", "--apply-tuning-records", "--codegen"} {
		assert.Contains(t, out, f)
	}
}
