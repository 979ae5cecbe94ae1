// Verifier errors of the hlo dialect, one chunk per rule, checked with
// --verify-diagnostics.
// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @add_shape_mismatch(%a: tensor<2x3xf32>, %b: tensor<3x2xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'hlo.add' op requires the same type for all operands and results}}
  %0 = "hlo.add"(%a, %b) : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @subtract_i1(%a: tensor<2xi1>) -> tensor<2xi1> {
  // expected-error@+1 {{'hlo.subtract' op does not accept i1 operands}}
  %0 = hlo.subtract %a, %a : tensor<2xi1>
  func.return %0 : tensor<2xi1>
}

// -----

func.func @exp_int(%a: tensor<2xi32>) -> tensor<2xi32> {
  // expected-error@+1 {{operand must have a floating-point element type}}
  %0 = hlo.exponential %a : tensor<2xi32>
  func.return %0 : tensor<2xi32>
}

// -----

func.func @compare_bad_direction(%a: tensor<2xf32>) -> tensor<2xi1> {
  // expected-error@+1 {{attribute 'comparison_direction' must be one of}}
  %0 = hlo.compare %a, %a {comparison_direction = "LESS"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xi1>
  func.return %0 : tensor<2xi1>
}

// -----

func.func @compare_result_not_i1(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{inferred result types (tensor<2xi1>) do not match the written types (tensor<2xf32>)}}
  %0 = hlo.compare %a, %a {comparison_direction = "EQ"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @select_pred_not_i1(%p: tensor<2xf32>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{predicate must have element type i1}}
  %0 = hlo.select %p, %a, %a : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @select_pred_shape(%p: tensor<3xi1>, %a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{predicate must be rank 0 or have the shape of on_true}}
  %0 = hlo.select %p, %a, %a : (tensor<3xi1>, tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @convert_shape(%a: tensor<2x3xf32>) -> tensor<6xi32> {
  // expected-error@+1 {{result shape must equal operand shape}}
  %0 = hlo.convert %a : (tensor<2x3xf32>) -> tensor<6xi32>
  func.return %0 : tensor<6xi32>
}

// -----

func.func @constant_type_mismatch() -> tensor<3xf32> {
  // expected-error@+1 {{inferred result types (tensor<2xf32>) do not match the written types (tensor<3xf32>)}}
  %0 = "hlo.constant"() {value = dense<[1.0, 2.0]> : tensor<2xf32>} : () -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @constant_no_value() -> tensor<3xf32> {
  // expected-error@+1 {{'hlo.constant' op requires attribute 'value'}}
  %0 = "hlo.constant"() : () -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @dot_contracting_size(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{contracting dimension 0 has size 3 on lhs (dim 1) but 4 on rhs (dim 0)}}
  %0 = hlo.dot_general %a, %b {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

func.func @dot_dim_out_of_range(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{lhs batching and contracting dimensions: dimension 2 is out of range for rank 2}}
  %0 = hlo.dot_general %a, %b {lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

func.func @dot_duplicate_dim(%a: tensor<3x3xf32>, %b: tensor<3x3xf32>) -> tensor<3xf32> {
  // expected-error@+1 {{dimension 0 appears more than once}}
  %0 = hlo.dot_general %a, %b {lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [1]} : (tensor<3x3xf32>, tensor<3x3xf32>) -> tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

func.func @dot_length_mismatch(%a: tensor<2x3xf32>, %b: tensor<3x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{lhs_contracting_dimensions and rhs_contracting_dimensions must have the same length, got 1 and 0}}
  %0 = hlo.dot_general %a, %b {lhs_contracting_dimensions = [1]} : (tensor<2x3xf32>, tensor<3x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

func.func @conv_groups(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error@+1 {{input feature dimension 4 is not divisible by feature_group_count 3}}
  %0 = hlo.convolution %x, %w {feature_group_count = 3} : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_rhs_features(%x: tensor<1x4x8x8xf32>, %w: tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error@+1 {{rhs input feature dimension must be 4 (input features 4 / feature_group_count 1), got 2}}
  %0 = hlo.convolution %x, %w : (tensor<1x4x8x8xf32>, tensor<6x2x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_strides_length(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error@+1 {{attribute 'window_strides' must have 2 elements (one per spatial dimension), got 1}}
  %0 = hlo.convolution %x, %w {window_strides = [1]} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_zero_stride(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error@+1 {{window_strides must be positive, got 0}}
  %0 = hlo.convolution %x, %w {window_strides = [1, 0]} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_bad_padding(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32> {
  // expected-error@+1 {{attribute 'padding' must be an array of 2 [low, high] integer pairs, got [1, 1]}}
  %0 = hlo.convolution %x, %w {padding = [1, 1]} : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x6x6xf32>
  func.return %0 : tensor<1x6x6x6xf32>
}

// -----

func.func @conv_rank(%x: tensor<4x8xf32>, %w: tensor<6x4xf32>) -> tensor<4x6xf32> {
  // expected-error@+1 {{lhs must have rank >= 3 (N×C×spatial...), got tensor<4x8xf32>}}
  %0 = hlo.convolution %x, %w : (tensor<4x8xf32>, tensor<6x4xf32>) -> tensor<4x6xf32>
  func.return %0 : tensor<4x6xf32>
}

// -----

func.func @conv_result(%x: tensor<1x4x8x8xf32>, %w: tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32> {
  // expected-error@+1 {{inferred result types (tensor<1x6x6x6xf32>) do not match the written types (tensor<1x6x8x8xf32>)}}
  %0 = hlo.convolution %x, %w : (tensor<1x4x8x8xf32>, tensor<6x4x3x3xf32>) -> tensor<1x6x8x8xf32>
  func.return %0 : tensor<1x6x8x8xf32>
}

// -----

func.func @broadcast_bad_size(%x: tensor<3xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{operand dimension 0 has size 3, which is neither 1 nor the size 4 of result dimension 1}}
  %0 = hlo.broadcast_in_dim %x {broadcast_dimensions = [1]} : (tensor<3xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @broadcast_dims_length(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{broadcast_dimensions must have one entry per operand dimension (1), got 2}}
  %0 = hlo.broadcast_in_dim %x {broadcast_dimensions = [0, 1]} : (tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_dim_out_of_range(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{broadcast_dimensions: dimension 2 is out of range for rank 2}}
  %0 = hlo.broadcast_in_dim %x {broadcast_dimensions = [2]} : (tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_no_dims(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'hlo.broadcast_in_dim' op requires attribute 'broadcast_dimensions'}}
  %0 = hlo.broadcast_in_dim %x : (tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @reshape_count(%x: tensor<2x3xf32>) -> tensor<7xf32> {
  // expected-error@+1 {{operand tensor<2x3xf32> has 6 elements but result tensor<7xf32> has 7}}
  %0 = hlo.reshape %x : (tensor<2x3xf32>) -> tensor<7xf32>
  func.return %0 : tensor<7xf32>
}

// -----

func.func @transpose_not_perm(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error@+1 {{permutation: dimension 1 appears more than once}}
  %0 = hlo.transpose %x {permutation = [1, 1]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  func.return %0 : tensor<3x2xf32>
}

// -----

func.func @pad_negative_interior(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{interior_padding must be non-negative, got -1}}
  %0 = hlo.pad %x, %v {edge_padding_low = [0, 0], edge_padding_high = [0, 0], interior_padding = [0, -1]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @pad_value_rank(%x: tensor<2x3xf32>, %v: tensor<1xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{padding value must be a rank-0 tensor<f32>, got tensor<1xf32>}}
  %0 = hlo.pad %x, %v {edge_padding_low = [0, 0], edge_padding_high = [0, 0]} : (tensor<2x3xf32>, tensor<1xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @pad_too_negative(%x: tensor<2x3xf32>, %v: tensor<f32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{padding makes dimension 0 negative (-1)}}
  %0 = hlo.pad %x, %v {edge_padding_low = [-2, 0], edge_padding_high = [-1, 0]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @slice_limit(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{dimension 0: need 0 <= start (3) <= limit (5) <= size (4)}}
  %0 = hlo.slice %x {start_indices = [3], limit_indices = [5]} : (tensor<4xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @slice_stride(%x: tensor<4xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{strides must be positive, got 0}}
  %0 = hlo.slice %x {start_indices = [0], limit_indices = [2], strides = [0]} : (tensor<4xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @concatenate_mismatch(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{operand #1 has size 4 in dimension 1, expected 3 (only dimension 0 may differ)}}
  %0 = hlo.concatenate %a, %b {dimension = 0} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @concatenate_dim(%a: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error@+1 {{dimension 2 is out of range for rank 2}}
  %0 = hlo.concatenate %a, %a {dimension = 2} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  func.return %0 : tensor<4x3xf32>
}

// -----

func.func @reduce_dim_range(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %z = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  // expected-error@+1 {{dimensions: dimension 2 is out of range for rank 2}}
  %0 = "hlo.reduce"(%x, %z) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = hlo.add %a, %b : tensor<f32>
    hlo.return %s : (tensor<f32>) -> ()
  }) {dimensions = [2]} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @reduce_init_rank(%x: tensor<4x8xf32>, %i: tensor<1xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{init value must be a rank-0 tensor<f32>, got tensor<1xf32>}}
  %0 = "hlo.reduce"(%x, %i) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = hlo.add %a, %b : tensor<f32>
    hlo.return %s : (tensor<f32>) -> ()
  }) {dimensions = [1]} : (tensor<4x8xf32>, tensor<1xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @reduce_body_args(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %z = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  // expected-error@+1 {{body must have 2 arguments (accumulator, element), got 1}}
  %0 = "hlo.reduce"(%x, %z) ({
  ^bb0(%a: tensor<f32>):
    hlo.return %a : (tensor<f32>) -> ()
  }) {dimensions = [1]} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @reduce_body_arg_type(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %z = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  // expected-error@+1 {{body argument #1 must be tensor<f32>, got tensor<1xf32>}}
  %0 = "hlo.reduce"(%x, %z) ({
  ^bb0(%a: tensor<f32>, %b: tensor<1xf32>):
    hlo.return %a : (tensor<f32>) -> ()
  }) {dimensions = [1]} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @reduce_body_returns_two(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  %z = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  // expected-error@+1 {{body must return exactly one tensor<f32> value}}
  %0 = "hlo.reduce"(%x, %z) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    hlo.return %a, %b : (tensor<f32>, tensor<f32>) -> ()
  }) {dimensions = [1]} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @reduce_result(%x: tensor<4x8xf32>) -> tensor<8xf32> {
  %z = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  // expected-error@+1 {{inferred result types (tensor<4xf32>) do not match the written types (tensor<8xf32>)}}
  %0 = "hlo.reduce"(%x, %z) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = hlo.add %a, %b : tensor<f32>
    hlo.return %s : (tensor<f32>) -> ()
  }) {dimensions = [1]} : (tensor<4x8xf32>, tensor<f32>) -> tensor<8xf32>
  func.return %0 : tensor<8xf32>
}

// -----

func.func @reduce_window_dims_length(%x: tensor<4x8xf32>) -> tensor<3x7xf32> {
  %z = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  // expected-error@+1 {{attribute 'window_dimensions' must have 2 elements (one per dimension), got 1}}
  %0 = "hlo.reduce_window"(%x, %z) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = hlo.add %a, %b : tensor<f32>
    hlo.return %s : (tensor<f32>) -> ()
  }) {window_dimensions = [2]} : (tensor<4x8xf32>, tensor<f32>) -> tensor<3x7xf32>
  func.return %0 : tensor<3x7xf32>
}

// -----

func.func @reduce_window_zero_window(%x: tensor<4x8xf32>) -> tensor<3x7xf32> {
  %z = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  // expected-error@+1 {{window_dimensions must be positive, got 0}}
  %0 = "hlo.reduce_window"(%x, %z) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = hlo.add %a, %b : tensor<f32>
    hlo.return %s : (tensor<f32>) -> ()
  }) {window_dimensions = [2, 0]} : (tensor<4x8xf32>, tensor<f32>) -> tensor<3x7xf32>
  func.return %0 : tensor<3x7xf32>
}

// -----

func.func @reduce_window_padding(%x: tensor<4x8xf32>) -> tensor<3x7xf32> {
  %z = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  // expected-error@+1 {{attribute 'padding' must be an array of 2 [low, high] integer pairs}}
  %0 = "hlo.reduce_window"(%x, %z) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = hlo.add %a, %b : tensor<f32>
    hlo.return %s : (tensor<f32>) -> ()
  }) {window_dimensions = [2, 2], padding = [[0, 0]]} : (tensor<4x8xf32>, tensor<f32>) -> tensor<3x7xf32>
  func.return %0 : tensor<3x7xf32>
}

// -----

func.func @fusion_kind(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{attribute 'kind' must be one of}}
  %0 = "hlo.fusion"(%x) ({
  ^bb0(%a: tensor<2xf32>):
    hlo.return %a : (tensor<2xf32>) -> ()
  }) {kind = "magic"} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @fusion_arg_type(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{region argument #0 has type tensor<3xf32> but operand #0 has type tensor<2xf32>}}
  %0 = "hlo.fusion"(%x) ({
  ^bb0(%a: tensor<3xf32>):
    %c = hlo.constant {value = dense<1.0> : tensor<2xf32>} : tensor<2xf32>
    hlo.return %c : (tensor<2xf32>) -> ()
  }) {kind = "loop"} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @fusion_return_type(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{region returns tensor<4xf32> as value #0 but result #0 has type tensor<2xf32>}}
  %0 = "hlo.fusion"(%x) ({
  ^bb0(%a: tensor<2xf32>):
    %c = hlo.constant {value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
    hlo.return %c : (tensor<4xf32>) -> ()
  }) {kind = "loop"} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @fusion_arg_count(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{region has 1 arguments but the op has 2 operands}}
  %0 = "hlo.fusion"(%x, %x) ({
  ^bb0(%a: tensor<2xf32>):
    hlo.return %a : (tensor<2xf32>) -> ()
  }) {kind = "loop"} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @return_outside_region(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+2 {{'hlo.return' op must be the last operation in its block}}
  // expected-error@+1 {{'hlo.return' op expects parent op to be one of 'hlo.fusion', 'hlo.reduce', 'hlo.reduce_window', 'hlo.scatter'}}
  hlo.return %x : (tensor<2xf32>) -> ()
  func.return %x : tensor<2xf32>
}

// -----

func.func @gather_float_indices(%w: tensor<10x4xf32>, %ids: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'hlo.gather' op start_indices must have an integer element type, got tensor<3xf32>}}
  %0 = hlo.gather %w, %ids {offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1, slice_sizes = [1, 4]} : (tensor<10x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @gather_collapsed_window(%w: tensor<10x4xf32>, %ids: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'hlo.gather' op collapsed_slice_dims: dimension 0 has slice size 2, expected at most 1}}
  %0 = hlo.gather %w, %ids {offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1, slice_sizes = [2, 4]} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @gather_slice_too_big(%w: tensor<10x4xf32>, %ids: tensor<3xi64>) -> tensor<3x5xf32> {
  // expected-error@+1 {{'hlo.gather' op slice_sizes[1] = 5 is out of range [0, 4]}}
  %0 = hlo.gather %w, %ids {offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1, slice_sizes = [1, 5]} : (tensor<10x4xf32>, tensor<3xi64>) -> tensor<3x5xf32>
  func.return %0 : tensor<3x5xf32>
}

// -----

func.func @gather_index_map(%w: tensor<10x4xf32>, %ids: tensor<3x2xi64>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'hlo.gather' op start_index_map must have one entry per index vector component (2), got 1}}
  %0 = hlo.gather %w, %ids {offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1, slice_sizes = [1, 4]} : (tensor<10x4xf32>, tensor<3x2xi64>) -> tensor<3x4xf32>
  func.return %0 : tensor<3x4xf32>
}

// -----

func.func @rnn_scan_mask(%xw: tensor<3x2x5xf32>, %rt: tensor<5x5xf32>, %h0: tensor<2x5xf32>, %m: tensor<2x3xi1>) -> tensor<2x5xf32> {
  // expected-error@+1 {{'hlo.rnn_scan' op mask must be tensor<3x2xi1> ([S, B]), got tensor<2x3xi1>}}
  %0:2 = hlo.rnn_scan %xw, %rt, %h0, %m {cell = "rnn", activations = ["Tanh"], activation_alpha = [0.0 : f32], activation_beta = [0.0 : f32]} : (tensor<3x2x5xf32>, tensor<5x5xf32>, tensor<2x5xf32>, tensor<2x3xi1>) -> (tensor<3x2x5xf32>, tensor<2x5xf32>)
  func.return %0#1 : tensor<2x5xf32>
}

// -----

func.func @rnn_scan_operands(%xw: tensor<3x2x5xf32>, %rt: tensor<5x5xf32>, %h0: tensor<2x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{'hlo.rnn_scan' op cell 'lstm' takes 5 operands (and an optional mask), got 3}}
  %0:3 = hlo.rnn_scan %xw, %rt, %h0 {cell = "lstm", activations = ["Sigmoid", "Tanh", "Tanh"], activation_alpha = [0.0 : f32, 0.0 : f32, 0.0 : f32], activation_beta = [0.0 : f32, 0.0 : f32, 0.0 : f32]} : (tensor<3x2x5xf32>, tensor<5x5xf32>, tensor<2x5xf32>) -> (tensor<3x2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>)
  func.return %0#1 : tensor<2x5xf32>
}

// -----

func.func @scatter_float_indices(%x: tensor<10x4xf32>, %ids: tensor<3xf32>, %u: tensor<3x4xf32>) -> tensor<10x4xf32> {
  // expected-error@+1 {{'hlo.scatter' op scatter_indices must have an integer element type, got tensor<3xf32>}}
  %0 = "hlo.scatter"(%x, %ids, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    hlo.return %b : tensor<f32>
  }) {update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1} : (tensor<10x4xf32>, tensor<3xf32>, tensor<3x4xf32>) -> tensor<10x4xf32>
  func.return %0 : tensor<10x4xf32>
}

// -----

func.func @scatter_updates_type(%x: tensor<10x4xf32>, %ids: tensor<3xi64>, %u: tensor<3x4xi32>) -> tensor<10x4xf32> {
  // expected-error@+1 {{'hlo.scatter' op updates must have the operand's element type f32, got tensor<3x4xi32>}}
  %0 = "hlo.scatter"(%x, %ids, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    hlo.return %b : tensor<f32>
  }) {update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1} : (tensor<10x4xf32>, tensor<3xi64>, tensor<3x4xi32>) -> tensor<10x4xf32>
  func.return %0 : tensor<10x4xf32>
}

// -----

func.func @scatter_window_rank(%x: tensor<10x4xf32>, %ids: tensor<3xi64>, %u: tensor<3x4xf32>) -> tensor<10x4xf32> {
  // expected-error@+1 {{'hlo.scatter' op update_window_dims (1) and inserted_window_dims (0) must together have the operand rank 2}}
  %0 = "hlo.scatter"(%x, %ids, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    hlo.return %b : tensor<f32>
  }) {update_window_dims = [1], inserted_window_dims = [], scatter_dims_to_operand_dims = [0], index_vector_dim = 1} : (tensor<10x4xf32>, tensor<3xi64>, tensor<3x4xf32>) -> tensor<10x4xf32>
  func.return %0 : tensor<10x4xf32>
}

// -----

func.func @scatter_batch_mismatch(%x: tensor<10x4xf32>, %ids: tensor<2xi64>, %u: tensor<3x4xf32>) -> tensor<10x4xf32> {
  // expected-error@+1 {{'hlo.scatter' op updates scatter dim 0 has size 3, but scatter_indices has 2 there}}
  %0 = "hlo.scatter"(%x, %ids, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    hlo.return %b : tensor<f32>
  }) {update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1} : (tensor<10x4xf32>, tensor<2xi64>, tensor<3x4xf32>) -> tensor<10x4xf32>
  func.return %0 : tensor<10x4xf32>
}

// -----

func.func @scatter_window_too_big(%x: tensor<10x4xf32>, %ids: tensor<3xi64>, %u: tensor<3x5xf32>) -> tensor<10x4xf32> {
  // expected-error@+1 {{'hlo.scatter' op updates window dim 1 has size 5, larger than operand dim 1 (4)}}
  %0 = "hlo.scatter"(%x, %ids, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    hlo.return %b : tensor<f32>
  }) {update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1} : (tensor<10x4xf32>, tensor<3xi64>, tensor<3x5xf32>) -> tensor<10x4xf32>
  func.return %0 : tensor<10x4xf32>
}

// -----

func.func @scatter_index_map(%x: tensor<10x4xf32>, %ids: tensor<3x2xi64>, %u: tensor<3xf32>) -> tensor<10x4xf32> {
  // expected-error@+1 {{'hlo.scatter' op scatter_dims_to_operand_dims must have one entry per index vector component (2), got 1}}
  %0 = "hlo.scatter"(%x, %ids, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    hlo.return %b : tensor<f32>
  }) {update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [0], index_vector_dim = 1} : (tensor<10x4xf32>, tensor<3x2xi64>, tensor<3xf32>) -> tensor<10x4xf32>
  func.return %0 : tensor<10x4xf32>
}

// -----

func.func @scatter_body_type(%x: tensor<10x4xf32>, %ids: tensor<3xi64>, %u: tensor<3x4xf32>) -> tensor<10x4xf32> {
  // expected-error@+1 {{'hlo.scatter' op body argument #0 must be tensor<f32>, got tensor<i32>}}
  %0 = "hlo.scatter"(%x, %ids, %u) ({
  ^bb0(%a: tensor<i32>, %b: tensor<f32>):
    hlo.return %b : tensor<f32>
  }) {update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1} : (tensor<10x4xf32>, tensor<3xi64>, tensor<3x4xf32>) -> tensor<10x4xf32>
  func.return %0 : tensor<10x4xf32>
}
