// Symbolic dimensions the hlo level refuses, one chunk per rule, checked
// with --verify-diagnostics: an hlo op that does not take symbolic
// dimensions (hlo.gather), and the
// checks of the hlo ops that do, which compare dimension expressions and
// name the symbol where they need a constant (hlo.pad pads static
// dimensions only).
// RUN: tessera-opt %s --split-input-file --verify-diagnostics --legalize-to-hlo

func.func @gather_not_symbolic(%w: tensor<?x4xf32, ["n"]>, %ids: tensor<3xi64>) -> tensor<3x4xf32> {
  // expected-error@+1 {{'hlo.gather' op does not take symbolic dimensions yet ('n'); pin them with --fix-dim n=N}}
  %r = hlo.gather %w, %ids {offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1, slice_sizes = [1, 4]} : (tensor<?x4xf32, ["n"]>, tensor<3xi64>) -> tensor<3x4xf32>
  func.return %r : tensor<3x4xf32>
}

// -----

func.func @pad_symbolic(%x: tensor<?x3xf32, ["n"]>, %v: tensor<f32>) -> tensor<?x5xf32, ["n+1"]> {
  // expected-error@+1 {{'hlo.pad' op a padded dimension (dimension 0 of tensor<?x3xf32, ["n"]>) is symbolic (n) and must be a constant here; pin it with --fix-dim n=N}}
  %r = hlo.pad %x, %v {edge_padding_high = [0, 1], edge_padding_low = [1, 1]} : (tensor<?x3xf32, ["n"]>, tensor<f32>) -> tensor<?x5xf32, ["n+1"]>
  func.return %r : tensor<?x5xf32, ["n+1"]>
}

// -----

func.func @add_different_symbols(%a: tensor<?x3xf32, ["n"]>, %b: tensor<?x3xf32, ["m"]>) -> tensor<?x3xf32, ["n"]> {
  // expected-error@+1 {{'hlo.add' op requires the same type for all operands and results}}
  %r = "hlo.add"(%a, %b) : (tensor<?x3xf32, ["n"]>, tensor<?x3xf32, ["m"]>) -> tensor<?x3xf32, ["n"]>
  func.return %r : tensor<?x3xf32, ["n"]>
}

// -----

func.func @reshape_counts_differ(%x: tensor<?x4xf32, ["n"]>) -> tensor<?x2xf32, ["n"]> {
  // expected-error@+1 {{'hlo.reshape' op operand tensor<?x4xf32, ["n"]> has 4*n elements but result tensor<?x2xf32, ["n"]> has 2*n}}
  %r = hlo.reshape %x : (tensor<?x4xf32, ["n"]>) -> tensor<?x2xf32, ["n"]>
  func.return %r : tensor<?x2xf32, ["n"]>
}

// -----

func.func @broadcast_other_symbol(%x: tensor<?xf32, ["n"]>) -> tensor<2x?xf32, ["m"]> {
  // expected-error@+1 {{'hlo.broadcast_in_dim' op operand dimension 0 has size n, which is neither 1 nor the size m of result dimension 1}}
  %r = hlo.broadcast_in_dim %x {broadcast_dimensions = [1]} : (tensor<?xf32, ["n"]>) -> tensor<2x?xf32, ["m"]>
  func.return %r : tensor<2x?xf32, ["m"]>
}

// -----

func.func @dot_contracting_symbols(%a: tensor<2x?xf32, ["n"]>, %b: tensor<?x3xf32, ["m"]>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'hlo.dot_general' op contracting dimension 0 has size n on lhs (dim 1) but m on rhs (dim 0)}}
  %r = hlo.dot_general %a, %b {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]} : (tensor<2x?xf32, ["n"]>, tensor<?x3xf32, ["m"]>) -> tensor<2x3xf32>
  func.return %r : tensor<2x3xf32>
}

// -----

func.func @conv_symbolic_channels(%x: tensor<1x?x5x5xf32, ["c"]>, %k: tensor<2x3x3x3xf32>) -> tensor<1x2x3x3xf32> {
  // expected-error@+1 {{'hlo.convolution' op the input feature count (dimension 1 of tensor<1x?x5x5xf32, ["c"]>) is symbolic (c) and must be a constant here; pin it with --fix-dim c=N}}
  %r = hlo.convolution %x, %k : (tensor<1x?x5x5xf32, ["c"]>, tensor<2x3x3x3xf32>) -> tensor<1x2x3x3xf32>
  func.return %r : tensor<1x2x3x3xf32>
}

// -----

func.func @slice_inside_symbol(%x: tensor<?x4xf32, ["n"]>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'hlo.slice' op the size of a slice to 2 (dimension 0 of tensor<?x4xf32, ["n"]>) is symbolic (n) and must be a constant here; pin it with --fix-dim n=N}}
  %r = hlo.slice %x {limit_indices = [2, 4], start_indices = [0, 0]} : (tensor<?x4xf32, ["n"]>) -> tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
