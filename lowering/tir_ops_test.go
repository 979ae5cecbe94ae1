package lowering

import (
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/schedule"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// opCase is a one-op (or few-op) hlo function checked end to end: fuse,
// LowerToTIR, interpret the host function, compare with graphir.Interpret.
type opCase struct {
	name   string
	src    string
	lo, hi float64 // range of random float inputs (default [-2, 2))
}

// elementwiseCases derives a case for every registered elementwise hlo op
// of one or two same-typed operands (compare, select, convert and clamp,
// whose operands differ, are in otherCases) and every element type its
// verifier accepts, so a new op is checked without editing a list. Ops
// whose reference gives NaN at -1 (log, sqrt, ...) get inputs in [0.05, 4).
func elementwiseCases() []opCase {
	var cs []opCase
	for _, name := range graphir.RegisteredOps() {
		def := graphir.LookupOp(name)
		if !strings.HasPrefix(name, "hlo.") || def.Traits&graphir.SameOperandsAndResultType == 0 || def.Operands.Max > 2 {
			continue
		}
		n := def.Operands.Min
		for _, dt := range []string{"f32", "f16", "f64", "i32", "i8", "i1"} {
			ty := "tensor<3x5x" + dt + ">"
			args := []string{"%a: " + ty, "%b: " + ty}[:n]
			uses := []string{"%a", "%b"}[:n]
			src := fmt.Sprintf("func.func @main(%s) -> %s {\n  %%0 = %s %s : %s\n  func.return %%0 : %s\n}", strings.Join(args, ", "), ty, name, strings.Join(uses, ", "), ty, ty)
			m, err := graphir.Parse("case.mlir", []byte(src))
			if err != nil || graphir.Verify(m) != nil {
				continue // the op does not take dt
			}
			c := opCase{name: strings.TrimPrefix(name, "hlo.") + "_" + dt, src: src}
			if nanAtMinusOne(def) {
				c.lo, c.hi = 0.05, 4
			}
			cs = append(cs, c)
		}
	}
	// Integer power with a constant exponent (negative bases included).
	cs = append(cs, opCase{name: "power_i32_negative", src: `func.func @main(%a: tensor<5xi32>) -> tensor<5xi32> {
  %b = hlo.constant {value = dense<[-1, 2, 0, 5, 3]> : tensor<5xi32>} : tensor<5xi32>
  %c = hlo.constant {value = dense<[-3, -2, -1, -4, -1]> : tensor<5xi32>} : tensor<5xi32>
  %0 = hlo.power %b, %c : tensor<5xi32>
  %1 = hlo.add %0, %a : tensor<5xi32>
  func.return %1 : tensor<5xi32>
}`})
	cs = append(cs, opCase{name: "power_i32_const", src: `func.func @main(%a: tensor<7xi32>) -> tensor<7xi32> {
  %e = hlo.constant {value = dense<3> : tensor<7xi32>} : tensor<7xi32>
  %0 = hlo.power %a, %e : tensor<7xi32>
  func.return %0 : tensor<7xi32>
}`})
	return cs
}

// nanAtMinusOne reports whether an elementwise op's reference evaluator
// gives NaN when every operand is -1 in f64 (its domain excludes negatives).
func nanAtMinusOne(def *graphir.OpDef) bool {
	t := graphir.NewTensor(graphir.F64)
	args := make([]*graphir.Value, def.Operands.Min)
	ins := make([]*graphir.Tensor, len(args))
	for i := range args {
		args[i] = graphir.NewBlock(t).Args[0]
		ins[i] = &graphir.Tensor{Type: t, Data: []float64{-1}}
	}
	op := graphir.NewOp(def.Name, args, []graphir.Type{t}, nil, graphir.Location{})
	out, err := def.Eval(op, ins)
	return err == nil && math.IsNaN(out[0].Data[0])
}

func reduceBody(t, body string) string {
	return fmt.Sprintf(`({
  ^bb0(%%acc: %s, %%x: %s):
%s
  })`, t, t, body)
}

func otherCases() []opCase {
	var cs []opCase
	add := func(name, src string) { cs = append(cs, opCase{name: name, src: src}) }
	for _, dir := range []string{"EQ", "NE", "LT", "LE", "GT", "GE"} {
		add("compare_select_"+dir, fmt.Sprintf(`func.func @main(%%a: tensor<4x5xi32>, %%b: tensor<4x5xi32>, %%x: tensor<4x5xf32>, %%y: tensor<4x5xf32>) -> tensor<4x5xf32> {
  %%c = hlo.compare %%a, %%b {comparison_direction = "%s"} : (tensor<4x5xi32>, tensor<4x5xi32>) -> tensor<4x5xi1>
  %%0 = hlo.select %%c, %%x, %%y : (tensor<4x5xi1>, tensor<4x5xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  func.return %%0 : tensor<4x5xf32>
}`, dir))
	}
	add("compare_f32", `func.func @main(%a: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<6xi1> {
  %0 = hlo.compare %a, %b {comparison_direction = "LT"} : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xi1>
  func.return %0 : tensor<6xi1>
}`)
	add("clamp_scalar_bounds", `func.func @main(%x: tensor<3x4xf32>) -> tensor<3x4xf32> {
  %lo = hlo.constant {value = dense<-0.5> : tensor<f32>} : tensor<f32>
  %hi = hlo.constant {value = dense<1.25> : tensor<f32>} : tensor<f32>
  %0 = hlo.clamp %lo, %x, %hi : (tensor<f32>, tensor<3x4xf32>, tensor<f32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}`)
	add("clamp_tensor_bounds_i32", `func.func @main(%lo: tensor<6xi32>, %x: tensor<6xi32>, %hi: tensor<6xi32>) -> tensor<6xi32> {
  %0 = hlo.clamp %lo, %x, %hi : (tensor<6xi32>, tensor<6xi32>, tensor<6xi32>) -> tensor<6xi32>
  func.return %0 : tensor<6xi32>
}`)
	add("select_scalar_pred", `func.func @main(%p: tensor<i1>, %x: tensor<3x2xf32>, %y: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0 = hlo.select %p, %x, %y : (tensor<i1>, tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}`)
	for _, pair := range [][2]string{{"f32", "i32"}, {"f32", "i8"}, {"i32", "f32"}, {"f32", "f16"}, {"f32", "bf16"}, {"i1", "f32"}, {"f32", "i1"}, {"i32", "i8"}, {"f32", "f64"}, {"i8", "i64"}} {
		add("convert_"+pair[0]+"_"+pair[1], fmt.Sprintf(`func.func @main(%%a: tensor<3x4x%s>) -> tensor<3x4x%s> {
  %%0 = hlo.convert %%a : (tensor<3x4x%s>) -> tensor<3x4x%s>
  func.return %%0 : tensor<3x4x%s>
}`, pair[0], pair[1], pair[0], pair[1], pair[1]))
	}
	// dot_general: matmul, transposed operands, batch dims in odd places, no contraction.
	add("dot_matmul", `func.func @main(%a: tensor<5x7xf32>, %b: tensor<7x3xf32>) -> tensor<5x3xf32> {
  %0 = hlo.dot_general %a, %b {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]} : (tensor<5x7xf32>, tensor<7x3xf32>) -> tensor<5x3xf32>
  func.return %0 : tensor<5x3xf32>
}`)
	add("dot_transposed", `func.func @main(%a: tensor<7x5xf32>, %b: tensor<3x7xf32>) -> tensor<5x3xf32> {
  %0 = hlo.dot_general %a, %b {lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [1]} : (tensor<7x5xf32>, tensor<3x7xf32>) -> tensor<5x3xf32>
  func.return %0 : tensor<5x3xf32>
}`)
	add("dot_batch", `func.func @main(%a: tensor<4x2x3x5xf32>, %b: tensor<5x2x4x6xf32>) -> tensor<2x4x3x6xf32> {
  %0 = hlo.dot_general %a, %b {lhs_batching_dimensions = [1, 0], rhs_batching_dimensions = [1, 2], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [0]} : (tensor<4x2x3x5xf32>, tensor<5x2x4x6xf32>) -> tensor<2x4x3x6xf32>
  func.return %0 : tensor<2x4x3x6xf32>
}`)
	add("dot_two_contracting", `func.func @main(%a: tensor<3x4x5xf32>, %b: tensor<5x2x3xf32>) -> tensor<4x2xf32> {
  %0 = hlo.dot_general %a, %b {lhs_contracting_dimensions = [0, 2], rhs_contracting_dimensions = [2, 0]} : (tensor<3x4x5xf32>, tensor<5x2x3xf32>) -> tensor<4x2xf32>
  func.return %0 : tensor<4x2xf32>
}`)
	add("dot_outer_i32", `func.func @main(%a: tensor<3xi32>, %b: tensor<4xi32>) -> tensor<3x4xi32> {
  %0 = hlo.dot_general %a, %b : (tensor<3xi32>, tensor<4xi32>) -> tensor<3x4xi32>
  func.return %0 : tensor<3x4xi32>
}`)
	// convolution variants.
	add("conv_basic", `func.func @main(%x: tensor<2x3x7x6xf32>, %w: tensor<4x3x3x2xf32>) -> tensor<2x4x5x5xf32> {
  %0 = hlo.convolution %x, %w : (tensor<2x3x7x6xf32>, tensor<4x3x3x2xf32>) -> tensor<2x4x5x5xf32>
  func.return %0 : tensor<2x4x5x5xf32>
}`)
	add("conv_stride_pad", `func.func @main(%x: tensor<1x3x8x7xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x3xf32> {
  %0 = hlo.convolution %x, %w {window_strides = [2, 3], padding = [[1, 1], [2, 0]]} : (tensor<1x3x8x7xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x3xf32>
  func.return %0 : tensor<1x4x4x3xf32>
}`)
	add("conv_groups_dilation", `func.func @main(%x: tensor<1x3x8x8xf32>, %w: tensor<6x1x3x3xf32>) -> tensor<1x6x8x8xf32> {
  %0 = hlo.convolution %x, %w {feature_group_count = 3, rhs_dilation = [2, 2], padding = [[2, 2], [2, 2]]} : (tensor<1x3x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x8x8xf32>
  func.return %0 : tensor<1x6x8x8xf32>
}`)
	add("conv_lhs_dilation_1d", `func.func @main(%x: tensor<2x2x5xf32>, %w: tensor<3x2x3xf32>) -> tensor<2x3x9xf32> {
  %0 = hlo.convolution %x, %w {lhs_dilation = [2], padding = [[1, 1]]} : (tensor<2x2x5xf32>, tensor<3x2x3xf32>) -> tensor<2x3x9xf32>
  func.return %0 : tensor<2x3x9xf32>
}`)
	add("conv_hwio_kernel_stride", `func.func @main(%x: tensor<1x4x9x8xf32>, %w: tensor<3x2x2x6xf32>) -> tensor<1x6x4x5xf32> {
  %0 = hlo.convolution %x, %w {feature_group_count = 2, window_strides = [2, 2], padding = [[1, 0], [1, 1]], kernel_output_feature_dimension = 3, kernel_input_feature_dimension = 2, kernel_spatial_dimensions = [0, 1]} : (tensor<1x4x9x8xf32>, tensor<3x2x2x6xf32>) -> tensor<1x6x4x5xf32>
  func.return %0 : tensor<1x6x4x5xf32>
}`)
	add("conv_negative_padding_groups2", `func.func @main(%x: tensor<1x4x9x9xf32>, %w: tensor<6x2x2x2xf32>) -> tensor<1x6x3x3xf32> {
  %0 = hlo.convolution %x, %w {feature_group_count = 2, window_strides = [3, 3], padding = [[-1, 0], [0, -1]]} : (tensor<1x4x9x9xf32>, tensor<6x2x2x2xf32>) -> tensor<1x6x3x3xf32>
  func.return %0 : tensor<1x6x3x3xf32>
}`)
	add("conv_nhwc_depthwise_stride", `func.func @main(%x: tensor<2x9x8x4xf32>, %w: tensor<3x3x1x4xf32>) -> tensor<2x5x4x4xf32> {
  %0 = hlo.convolution %x, %w {feature_group_count = 4, window_strides = [2, 2], padding = [[1, 1], [1, 0]], input_batch_dimension = 0, input_feature_dimension = 3, input_spatial_dimensions = [1, 2], kernel_output_feature_dimension = 3, kernel_input_feature_dimension = 2, kernel_spatial_dimensions = [0, 1], output_batch_dimension = 0, output_feature_dimension = 3, output_spatial_dimensions = [1, 2]} : (tensor<2x9x8x4xf32>, tensor<3x3x1x4xf32>) -> tensor<2x5x4x4xf32>
  func.return %0 : tensor<2x5x4x4xf32>
}`)
	add("conv_scrambled_layouts", `func.func @main(%x: tensor<7x3x2x6xf32>, %w: tensor<4x3x3x2xf32>) -> tensor<5x4x2x5xf32> {
  %0 = hlo.convolution %x, %w {input_batch_dimension = 2, input_feature_dimension = 1, input_spatial_dimensions = [0, 3], output_batch_dimension = 2, output_feature_dimension = 1, output_spatial_dimensions = [3, 0]} : (tensor<7x3x2x6xf32>, tensor<4x3x3x2xf32>) -> tensor<5x4x2x5xf32>
  func.return %0 : tensor<5x4x2x5xf32>
}`)
	// reduce over each dim with add/max/min/mul and multi-op bodies.
	for _, d := range []string{"[0]", "[1]", "[2]", "[0, 2]", "[0, 1, 2]"} {
		for _, b := range []struct{ name, op, init string }{{"add", "add", "0.0"}, {"max", "maximum", "0xFF800000"}, {"min", "minimum", "0x7F800000"}, {"mul", "multiply", "1.0"}} {
			rt := map[string]string{"[0]": "tensor<4x5xf32>", "[1]": "tensor<3x5xf32>", "[2]": "tensor<3x4xf32>", "[0, 2]": "tensor<4xf32>", "[0, 1, 2]": "tensor<f32>"}[d]
			body := fmt.Sprintf("    %%r = hlo.%s %%acc, %%x : tensor<f32>\n    hlo.return %%r : tensor<f32>", b.op)
			add("reduce_"+b.name+"_"+d, fmt.Sprintf(`func.func @main(%%a: tensor<3x4x5xf32>) -> %s {
  %%init = hlo.constant {value = dense<%s> : tensor<f32>} : tensor<f32>
  %%0 = "hlo.reduce"(%%a, %%init) %s {dimensions = %s} : (tensor<3x4x5xf32>, tensor<f32>) -> %s
  func.return %%0 : %s
}`, rt, b.init, reduceBody("tensor<f32>", body), d, rt, rt))
		}
	}
	add("reduce_sum_of_squares_init_arg", `func.func @main(%a: tensor<3x6xf32>, %init: tensor<f32>) -> tensor<3xf32> {
  %0 = "hlo.reduce"(%a, %init) `+reduceBody("tensor<f32>", `    %s = hlo.multiply %x, %x : tensor<f32>
    %h = hlo.constant {value = dense<0.5> : tensor<f32>} : tensor<f32>
    %t = hlo.multiply %s, %h : tensor<f32>
    %r = hlo.add %acc, %t : tensor<f32>
    hlo.return %r : tensor<f32>`)+` {dimensions = [1]} : (tensor<3x6xf32>, tensor<f32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}`)
	add("reduce_max_abs_i32", `func.func @main(%a: tensor<5x3xi32>) -> tensor<3xi32> {
  %init = hlo.constant {value = dense<0> : tensor<i32>} : tensor<i32>
  %0 = "hlo.reduce"(%a, %init) `+reduceBody("tensor<i32>", `    %m = hlo.abs %x : tensor<i32>
    %r = hlo.maximum %acc, %m : tensor<i32>
    hlo.return %r : tensor<i32>`)+` {dimensions = [0]} : (tensor<5x3xi32>, tensor<i32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}`)
	add("reduce_any_i1", `func.func @main(%a: tensor<4x3xi1>) -> tensor<4xi1> {
  %init = hlo.constant {value = dense<false> : tensor<i1>} : tensor<i1>
  %0 = "hlo.reduce"(%a, %init) `+reduceBody("tensor<i1>", `    %r = hlo.add %acc, %x : tensor<i1>
    hlo.return %r : tensor<i1>`)+` {dimensions = [1]} : (tensor<4x3xi1>, tensor<i1>) -> tensor<4xi1>
  func.return %0 : tensor<4xi1>
}`)
	// reduce_window: pooling, padding, dilations, strides.
	maxBody := reduceBody("tensor<f32>", "    %r = hlo.maximum %acc, %x : tensor<f32>\n    hlo.return %r : tensor<f32>")
	addBody := reduceBody("tensor<f32>", "    %r = hlo.add %acc, %x : tensor<f32>\n    hlo.return %r : tensor<f32>")
	add("reduce_window_maxpool", `func.func @main(%a: tensor<2x3x8x7xf32>) -> tensor<2x3x4x3xf32> {
  %init = hlo.constant {value = dense<0xFF800000> : tensor<f32>} : tensor<f32>
  %0 = "hlo.reduce_window"(%a, %init) `+maxBody+` {window_dimensions = [1, 1, 2, 2], window_strides = [1, 1, 2, 2]} : (tensor<2x3x8x7xf32>, tensor<f32>) -> tensor<2x3x4x3xf32>
  func.return %0 : tensor<2x3x4x3xf32>
}`)
	add("reduce_window_sum_padded", `func.func @main(%a: tensor<5x6xf32>) -> tensor<3x4xf32> {
  %init = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %0 = "hlo.reduce_window"(%a, %init) `+addBody+` {window_dimensions = [3, 3], window_strides = [2, 2], padding = [[1, 1], [1, 2]]} : (tensor<5x6xf32>, tensor<f32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}`)
	add("reduce_window_dilated", `func.func @main(%a: tensor<9x8xf32>) -> tensor<2x5xf32> {
  %init = hlo.constant {value = dense<0xFF800000> : tensor<f32>} : tensor<f32>
  %0 = "hlo.reduce_window"(%a, %init) `+maxBody+` {window_dimensions = [3, 2], window_strides = [3, 1], window_dilations = [2, 3], padding = [[1, 0], [0, 0]]} : (tensor<9x8xf32>, tensor<f32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}`)
	add("reduce_window_base_dilation", `func.func @main(%a: tensor<4x3xf32>) -> tensor<6x5xf32> {
  %init = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %0 = "hlo.reduce_window"(%a, %init) `+addBody+` {window_dimensions = [2, 2], base_dilations = [2, 2], padding = [[0, 0], [1, 0]]} : (tensor<4x3xf32>, tensor<f32>) -> tensor<6x5xf32>
  func.return %0 : tensor<6x5xf32>
}`)
	// shape ops.
	add("broadcast_vector", `func.func @main(%a: tensor<3xf32>) -> tensor<2x3x4xf32> {
  %0 = hlo.broadcast_in_dim %a {broadcast_dimensions = [1]} : (tensor<3xf32>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}`)
	add("broadcast_size1_dims", `func.func @main(%a: tensor<1x4x1xf32>) -> tensor<3x4x5xf32> {
  %0 = hlo.broadcast_in_dim %a {broadcast_dimensions = [0, 1, 2]} : (tensor<1x4x1xf32>) -> tensor<3x4x5xf32>
  func.return %0 : tensor<3x4x5xf32>
}`)
	add("broadcast_scalar_permuted", `func.func @main(%a: tensor<f32>, %b: tensor<5x2xi32>) -> (tensor<3x2xf32>, tensor<2x4x5xi32>) {
  %0 = hlo.broadcast_in_dim %a {broadcast_dimensions = []} : (tensor<f32>) -> tensor<3x2xf32>
  %1 = hlo.broadcast_in_dim %b {broadcast_dimensions = [2, 0]} : (tensor<5x2xi32>) -> tensor<2x4x5xi32>
  func.return %0, %1 : tensor<3x2xf32>, tensor<2x4x5xi32>
}`)
	add("reshape", `func.func @main(%a: tensor<2x3x5xf32>) -> tensor<5x6xf32> {
  %0 = hlo.reshape %a : (tensor<2x3x5xf32>) -> tensor<5x6xf32>
  func.return %0 : tensor<5x6xf32>
}`)
	add("reshape_rank0_and_up", `func.func @main(%a: tensor<1x1xf32>, %b: tensor<6xi32>) -> (tensor<f32>, tensor<3x1x2xi32>) {
  %0 = hlo.reshape %a : (tensor<1x1xf32>) -> tensor<f32>
  %1 = hlo.reshape %b : (tensor<6xi32>) -> tensor<3x1x2xi32>
  func.return %0, %1 : tensor<f32>, tensor<3x1x2xi32>
}`)
	add("transpose", `func.func @main(%a: tensor<2x3x5xf32>) -> tensor<5x2x3xf32> {
  %0 = hlo.transpose %a {permutation = [2, 0, 1]} : (tensor<2x3x5xf32>) -> tensor<5x2x3xf32>
  func.return %0 : tensor<5x2x3xf32>
}`)
	add("pad_edge_interior", `func.func @main(%a: tensor<3x4xf32>, %v: tensor<f32>) -> tensor<8x6xf32> {
  %0 = hlo.pad %a, %v {edge_padding_low = [1, 2], edge_padding_high = [2, 0], interior_padding = [1, 0]} : (tensor<3x4xf32>, tensor<f32>) -> tensor<8x6xf32>
  func.return %0 : tensor<8x6xf32>
}`)
	add("pad_negative", `func.func @main(%a: tensor<5x6xi32>) -> tensor<4x10xi32> {
  %v = hlo.constant {value = dense<-7> : tensor<i32>} : tensor<i32>
  %0 = hlo.pad %a, %v {edge_padding_low = [-1, 1], edge_padding_high = [0, -2], interior_padding = [0, 1]} : (tensor<5x6xi32>, tensor<i32>) -> tensor<4x10xi32>
  func.return %0 : tensor<4x10xi32>
}`)
	add("slice_strides", `func.func @main(%a: tensor<7x9xf32>) -> tensor<3x3xf32> {
  %0 = hlo.slice %a {start_indices = [1, 2], limit_indices = [7, 9], strides = [2, 3]} : (tensor<7x9xf32>) -> tensor<3x3xf32>
  func.return %0 : tensor<3x3xf32>
}`)
	add("concatenate", `func.func @main(%a: tensor<2x3xf32>, %b: tensor<2x1xf32>, %c: tensor<2x4xf32>) -> tensor<2x8xf32> {
  %0 = hlo.concatenate %a, %b, %c {dimension = 1} : (tensor<2x3xf32>, tensor<2x1xf32>, tensor<2x4xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}`)
	// The static case of get_dimension_size (the symbolic one: the
	// symbolic lowering tests' means).
	add("get_dimension_size", `func.func @main(%a: tensor<2x7xf32>) -> tensor<2x7xf32> {
  %0 = hlo.get_dimension_size %a {dimension = 1} : (tensor<2x7xf32>) -> tensor<i32>
  %1 = hlo.convert %0 : (tensor<i32>) -> tensor<f32>
  %2 = hlo.broadcast_in_dim %1 {broadcast_dimensions = []} : (tensor<f32>) -> tensor<2x7xf32>
  %3 = hlo.divide %a, %2 : tensor<2x7xf32>
  func.return %3 : tensor<2x7xf32>
}`)
	add("concatenate_dim0_i32", `func.func @main(%a: tensor<1x3xi32>, %b: tensor<4x3xi32>) -> tensor<5x3xi32> {
  %0 = hlo.concatenate %a, %b {dimension = 0} : (tensor<1x3xi32>, tensor<4x3xi32>) -> tensor<5x3xi32>
  func.return %0 : tensor<5x3xi32>
}`)
	// hlo.gather with indices from −3 to 11: some start indices are clamped.
	gather := func(name, src string) {
		cs = append(cs, opCase{name: name, src: src, lo: -3, hi: 12})
	}
	gather("gather_embedding", `func.func @main(%w: tensor<10x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = hlo.gather %w, %ids {offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2, slice_sizes = [1, 4]} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  %1 = hlo.exponential %0 : tensor<2x3x4xf32>
  func.return %1 : tensor<2x3x4xf32>
}`)
	gather("gather_nd_window_i32", `func.func @main(%x: tensor<6x7x3xf32>, %ids: tensor<4x2xi32>) -> tensor<2x4x3xf32> {
  %0 = hlo.gather %x, %ids {offset_dims = [0, 2], collapsed_slice_dims = [0], start_index_map = [1, 0], index_vector_dim = 1, slice_sizes = [1, 2, 3]} : (tensor<6x7x3xf32>, tensor<4x2xi32>) -> tensor<2x4x3xf32>
  func.return %0 : tensor<2x4x3xf32>
}`)
	gather("gather_index_vector_first", `func.func @main(%x: tensor<5x9xi32>, %ids: tensor<2x3x2xi64>) -> tensor<3x2xi32> {
  %0 = hlo.gather %x, %ids {offset_dims = [], collapsed_slice_dims = [0, 1], start_index_map = [0, 1], index_vector_dim = 0, slice_sizes = [1, 1]} : (tensor<5x9xi32>, tensor<2x3x2xi64>) -> tensor<3x2xi32>
  func.return %0 : tensor<3x2xi32>
}`)
	// hlo.scatter: integer operands are drawn in [-9, 9], so some start
	// indices are negative or past the end (those windows are skipped) and
	// many repeat (applied in row-major order of the updates).
	scatter := func(name, body, src string) {
		add(name, strings.Replace(src, "BODY", body, 1))
	}
	replace := reduceBody("tensor<f64>", "    hlo.return %x : tensor<f64>")
	scatter("scatter_add_rows", reduceBody("tensor<f32>", "    %r = hlo.add %acc, %x : tensor<f32>\n    hlo.return %r : tensor<f32>"), `func.func @main(%x: tensor<10x3xf32>, %ids: tensor<7xi64>, %u: tensor<7x3xf32>) -> tensor<10x3xf32> {
  %0 = "hlo.scatter"(%x, %ids, %u) BODY {update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1} : (tensor<10x3xf32>, tensor<7xi64>, tensor<7x3xf32>) -> tensor<10x3xf32>
  %1 = hlo.exponential %0 : tensor<10x3xf32>
  func.return %1 : tensor<10x3xf32>
}`)
	scatter("scatter_replace_points_i32", reduceBody("tensor<i32>", "    hlo.return %x : tensor<i32>"), `func.func @main(%x: tensor<9x8xi32>, %ids: tensor<3x5x2xi32>, %u: tensor<3x5xi32>) -> tensor<9x8xi32> {
  %0 = "hlo.scatter"(%x, %ids, %u) BODY {update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2} : (tensor<9x8xi32>, tensor<3x5x2xi32>, tensor<3x5xi32>) -> tensor<9x8xi32>
  func.return %0 : tensor<9x8xi32>
}`)
	scatter("scatter_max_window_vector_first", reduceBody("tensor<f32>", "    %r = hlo.maximum %acc, %x : tensor<f32>\n    hlo.return %r : tensor<f32>"), `func.func @main(%x: tensor<4x9x3xf32>, %ids: tensor<1x6xi64>, %u: tensor<2x6x3xf32>) -> tensor<4x9x3xf32> {
  %0 = "hlo.scatter"(%x, %ids, %u) BODY {update_window_dims = [0, 2], inserted_window_dims = [1], scatter_dims_to_operand_dims = [1], index_vector_dim = 0} : (tensor<4x9x3xf32>, tensor<1x6xi64>, tensor<2x6x3xf32>) -> tensor<4x9x3xf32>
  func.return %0 : tensor<4x9x3xf32>
}`)
	scatter("scatter_mul_i8_scalar_index", reduceBody("tensor<i8>", "    %r = hlo.multiply %acc, %x : tensor<i8>\n    hlo.return %r : tensor<i8>"), `func.func @main(%x: tensor<7x2xi8>, %i: tensor<i32>, %u: tensor<2xi8>) -> tensor<7x2xi8> {
  %0 = "hlo.scatter"(%x, %i, %u) BODY {update_window_dims = [0], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 0} : (tensor<7x2xi8>, tensor<i32>, tensor<2xi8>) -> tensor<7x2xi8>
  func.return %0 : tensor<7x2xi8>
}`)
	scatter("scatter_or_i1_constant_indices", reduceBody("tensor<i1>", "    %r = hlo.add %acc, %x : tensor<i1>\n    hlo.return %r : tensor<i1>"), `func.func @main(%x: tensor<5xi1>, %u: tensor<4xi1>) -> tensor<5xi1> {
  %ids = hlo.constant {value = dense<[[4], [0], [4], [7]]> : tensor<4x1xi64>} : tensor<4x1xi64>
  %0 = "hlo.scatter"(%x, %ids, %u) BODY {update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1} : (tensor<5xi1>, tensor<4x1xi64>, tensor<4xi1>) -> tensor<5xi1>
  func.return %0 : tensor<5xi1>
}`)
	scatter("scatter_replace_f64_empty_updates", replace, `func.func @main(%x: tensor<3x2xf64>, %ids: tensor<0x1xi64>, %u: tensor<0x2xf64>) -> tensor<3x2xf64> {
  %0 = "hlo.scatter"(%x, %ids, %u) BODY {update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1} : (tensor<3x2xf64>, tensor<0x1xi64>, tensor<0x2xf64>) -> tensor<3x2xf64>
  func.return %0 : tensor<3x2xf64>
}`)
	// hlo.rnn_scan: one kernel with a loop over time; an LSTM with a
	// splat initial state and peepholes, a reverse GRU with
	// linear_before_reset and clip, an RNN whose gate dim needs a tail.
	add("rnn_scan_lstm", `func.func @main(%xw: tensor<3x2x8xf32>, %rt: tensor<2x8xf32>, %c0: tensor<2x2xf32>, %p: tensor<6xf32>) -> (tensor<3x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %h0 = hlo.constant {value = dense<0.5> : tensor<2x2xf32>} : tensor<2x2xf32>
  %0:3 = hlo.rnn_scan %xw, %rt, %h0, %c0, %p {cell = "lstm", activations = ["Sigmoid", "Tanh", "Tanh"], activation_alpha = [0.0, 0.0, 0.0], activation_beta = [0.0, 0.0, 0.0]} : (tensor<3x2x8xf32>, tensor<2x8xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<6xf32>) -> (tensor<3x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
  func.return %0#0, %0#1, %0#2 : tensor<3x2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}`)
	add("rnn_scan_gru_reverse", `func.func @main(%xw: tensor<4x1x9xf32>, %rt: tensor<3x9xf32>, %h0: tensor<1x3xf32>, %rbh: tensor<3xf32>) -> (tensor<4x1x3xf32>, tensor<1x3xf32>) {
  %0:2 = hlo.rnn_scan %xw, %rt, %h0, %rbh {cell = "gru", activations = ["HardSigmoid", "Tanh"], activation_alpha = [0.2, 0.0], activation_beta = [0.5, 0.0], clip = 1.5, linear_before_reset = true, reverse = true} : (tensor<4x1x9xf32>, tensor<3x9xf32>, tensor<1x3xf32>, tensor<3xf32>) -> (tensor<4x1x3xf32>, tensor<1x3xf32>)
  func.return %0#0, %0#1 : tensor<4x1x3xf32>, tensor<1x3xf32>
}`)
	add("rnn_scan_rnn_tail", `func.func @main(%xw: tensor<2x3x21xf32>, %rt: tensor<21x21xf32>, %h0: tensor<3x21xf32>) -> (tensor<2x3x21xf32>, tensor<3x21xf32>) {
  %0:2 = hlo.rnn_scan %xw, %rt, %h0 {cell = "rnn", activations = ["Tanh"], activation_alpha = [0.0], activation_beta = [0.0]} : (tensor<2x3x21xf32>, tensor<21x21xf32>, tensor<3x21xf32>) -> (tensor<2x3x21xf32>, tensor<3x21xf32>)
  func.return %0#0, %0#1 : tensor<2x3x21xf32>, tensor<3x21xf32>
}`)
	// Zero-sized operands: an empty concatenation piece, a reduction over an
	// empty dim (the result is the init), a zero-sized result.
	add("empty_pieces", `func.func @main(%a: tensor<2x0xf32>, %b: tensor<2x3xf32>, %c: tensor<0x4xf32>) -> (tensor<2x3xf32>, tensor<4xf32>, tensor<0x4xf32>) {
  %0 = hlo.concatenate %a, %b {dimension = 1} : (tensor<2x0xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %init = hlo.constant {value = dense<1.5> : tensor<f32>} : tensor<f32>
  %1 = "hlo.reduce"(%c, %init) `+reduceBody("tensor<f32>", "    %r = hlo.add %acc, %x : tensor<f32>\n    hlo.return %r : tensor<f32>")+` {dimensions = [0]} : (tensor<0x4xf32>, tensor<f32>) -> tensor<4xf32>
  %2 = hlo.exponential %c : tensor<0x4xf32>
  func.return %0, %1, %2 : tensor<2x3xf32>, tensor<4xf32>, tensor<0x4xf32>
}`)
	add("reduce_no_dims", `func.func @main(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %init = hlo.constant {value = dense<0.25> : tensor<f32>} : tensor<f32>
  %0 = "hlo.reduce"(%a, %init) `+reduceBody("tensor<f32>", "    %r = hlo.add %acc, %x : tensor<f32>\n    hlo.return %r : tensor<f32>")+` {dimensions = []} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}`)
	// A hand-written fusion: a non-splat constant inside it becomes a
	// kernel-level tir.constant; results that are a region argument or a
	// value returned twice are copied inside the kernel.
	add("fusion_constant_and_copies", `func.func @main(%a: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0:3 = "hlo.fusion"(%a) ({
  ^bb0(%x: tensor<3xf32>):
    %c = hlo.constant {value = dense<[1.0, 2.0, 3.5]> : tensor<3xf32>} : tensor<3xf32>
    %s = hlo.add %x, %c : tensor<3xf32>
    %e = hlo.exponential %s : tensor<3xf32>
    hlo.return %e, %x, %e : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
  }) {kind = "loop"} : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>)
  func.return %0#0, %0#1, %0#2 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}`)
	// Constants, results that are arguments, constants or duplicates (copy kernels).
	add("results_need_copies", `func.func @main(%a: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = hlo.constant {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
  %0 = hlo.add %a, %w : tensor<2x2xf32>
  func.return %0, %a, %w, %0 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>
}`)
	add("fusion_returning_intermediate", `func.func @main(%a: tensor<3x4xf32>, %w: tensor<4x2xf32>) -> (tensor<3x4xf32>, tensor<3x2xf32>) {
  %0 = hlo.tanh %a : tensor<3x4xf32>
  %1 = hlo.dot_general %0, %w {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]} : (tensor<3x4xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
  func.return %0, %1 : tensor<3x4xf32>, tensor<3x2xf32>
}`)
	return cs
}

// lowerAndCompare runs the case end to end (with and without
// InlineElementwise) on random inputs.
func lowerAndCompare(t *testing.T, m *graphir.Module, rng *rand.Rand, lo, hi float64, inline bool) {
	t.Helper()
	f := m.Funcs[0]
	args := make([]*graphir.Tensor, len(f.Type.Inputs))
	for i, in := range f.Type.Inputs {
		args[i] = randomTensor(rng, graphir.AsTensor(in), lo, hi)
	}
	want, err := graphir.Interpret(f, args)
	require.NoError(t, err)
	runPipeline(t, m, "fuse")
	tm, err := LowerToTIR(m)
	require.NoError(t, err)
	if inline {
		require.NoError(t, schedule.InlineElementwiseModule(tm))
		require.NoError(t, tir.Verify(tm))
	}
	// The printed module parses back to the same text.
	text := tir.Print(tm)
	back, err := tir.ParseString("lowered.tir", text)
	require.NoError(t, err, text)
	require.Equal(t, text, tir.Print(back))
	got := runHost(t, tm, f.Name, args)
	require.Len(t, got, len(want))
	for i := range want {
		requireTIRClose(t, want[i], got[i], 1e-5, "result #%d of\n%s", i, text)
	}
}

func TestLowerEveryHLOOp(t *testing.T) {
	cases := append(elementwiseCases(), otherCases()...)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for _, inline := range []bool{false, true} {
				m, err := graphir.Parse(c.name+".mlir", []byte(c.src))
				require.NoError(t, err)
				lo, hi := c.lo, c.hi
				if lo == 0 && hi == 0 {
					lo, hi = -2, 2
				}
				lowerAndCompare(t, m, rand.New(rand.NewSource(int64(len(c.name)))), lo, hi, inline)
			}
		})
	}
}

// TestLowerEveryOpCovered makes sure the cases above exercise every
// registered hlo op (all but hlo.fusion and hlo.return, which the fuse
// pass and lower-to-tir handle structurally).
func TestLowerEveryOpCovered(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range append(elementwiseCases(), otherCases()...) {
		for _, w := range strings.Fields(strings.NewReplacer("\"", " ", "(", " ").Replace(c.src)) {
			if strings.HasPrefix(w, "hlo.") {
				seen[w] = true
			}
		}
	}
	for _, op := range graphir.RegisteredOps() {
		if strings.HasPrefix(op, "hlo.") && op != hlo.FusionOp && op != hlo.ReturnOp {
			require.True(t, seen[op], "no case uses %s", op)
		}
	}
}
