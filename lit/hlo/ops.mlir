// Every hlo op parses, verifies and prints back in its pretty form (generic
// form for the region ops); the printed text parses again to the same IR,
// and so does the generic form.
// RUN: tessera-opt %s | tessera-opt | FileCheck %s
// RUN: tessera-opt %s --mlir-print-op-generic | tessera-opt | FileCheck %s

// CHECK-LABEL: func.func @binary
// CHECK-NEXT: %0 = hlo.add %arg0, %arg1 : tensor<2x3xf32>
// CHECK-NEXT: %1 = hlo.subtract %arg0, %arg1 : tensor<2x3xf32>
// CHECK-NEXT: %2 = hlo.multiply %arg0, %arg1 : tensor<2x3xf32>
// CHECK-NEXT: %3 = hlo.divide %arg0, %arg1 : tensor<2x3xf32>
// CHECK-NEXT: %4 = hlo.maximum %arg0, %arg1 : tensor<2x3xf32>
// CHECK-NEXT: %5 = hlo.minimum %arg0, %arg1 : tensor<2x3xf32>
// CHECK-NEXT: %6 = hlo.power %arg0, %arg1 : tensor<2x3xf32>
// CHECK-NEXT: %7 = hlo.add %arg2, %arg2 : tensor<4xi32>
func.func @binary(%a: tensor<2x3xf32>, %b: tensor<2x3xf32>, %i: tensor<4xi32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>) {
  %0 = hlo.add %a, %b : tensor<2x3xf32>
  %1 = hlo.subtract %a, %b : tensor<2x3xf32>
  %2 = hlo.multiply %a, %b : tensor<2x3xf32>
  %3 = "hlo.divide"(%a, %b) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = hlo.maximum %a, %b : tensor<2x3xf32>
  %5 = hlo.minimum %a, %b : tensor<2x3xf32>
  %6 = hlo.power %a, %b : tensor<2x3xf32>
  %7 = hlo.add %i, %i : tensor<4xi32>
  func.return %0, %1, %2, %3, %4, %5, %6, %7 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @unary
// CHECK-NEXT: %0 = hlo.negate %arg0 : tensor<5xf32>
// CHECK-NEXT: %1 = hlo.exponential %0 : tensor<5xf32>
// CHECK-NEXT: %2 = hlo.log %1 : tensor<5xf32>
// CHECK-NEXT: %3 = hlo.tanh %2 : tensor<5xf32>
// CHECK-NEXT: %4 = hlo.logistic %3 : tensor<5xf32>
// CHECK-NEXT: %5 = hlo.rsqrt %4 : tensor<5xf32>
// CHECK-NEXT: %6 = hlo.sqrt %5 : tensor<5xf32>
// CHECK-NEXT: %7 = hlo.abs %6 : tensor<5xf32>
// CHECK-NEXT: func.return %7 : tensor<5xf32>
func.func @unary(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = hlo.negate %x : tensor<5xf32>
  %1 = hlo.exponential %0 : tensor<5xf32>
  %2 = hlo.log %1 : tensor<5xf32>
  %3 = "hlo.tanh"(%2) : (tensor<5xf32>) -> tensor<5xf32>
  %4 = hlo.logistic %3 : tensor<5xf32>
  %5 = hlo.rsqrt %4 : tensor<5xf32>
  %6 = hlo.sqrt %5 : tensor<5xf32>
  %7 = hlo.abs %6 : tensor<5xf32>
  func.return %7 : tensor<5xf32>
}

// CHECK-LABEL: func.func @compare_select_convert
// CHECK-NEXT: %0 = hlo.compare %arg0, %arg1 {comparison_direction = "GE"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK-NEXT: %1 = hlo.select %0, %arg0, %arg1 : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %2 = hlo.select %arg2, %arg0, %arg1 : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK-NEXT: %3 = hlo.convert %1 : (tensor<4xf32>) -> tensor<4xi32>
// CHECK-NEXT: %4 = hlo.convert %0 : (tensor<4xi1>) -> tensor<4xf16>
func.func @compare_select_convert(%a: tensor<4xf32>, %b: tensor<4xf32>, %p: tensor<i1>) -> (tensor<4xf32>, tensor<4xi32>, tensor<4xf16>) {
  %0 = hlo.compare %a, %b {comparison_direction = "GE"} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %1 = hlo.select %0, %a, %b : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %2 = hlo.select %p, %a, %b : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = hlo.convert %1 : (tensor<4xf32>) -> tensor<4xi32>
  %4 = "hlo.convert"(%0) : (tensor<4xi1>) -> tensor<4xf16>
  func.return %2, %3, %4 : tensor<4xf32>, tensor<4xi32>, tensor<4xf16>
}

// CHECK-LABEL: func.func @constant
// CHECK-NEXT: %0 = hlo.constant {value = dense<{{\[\[}}1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
// CHECK-NEXT: %1 = hlo.constant {value = dense<0.0> : tensor<2x2xf32>} : tensor<2x2xf32>
// CHECK-NEXT: %2 = hlo.constant {value = dense<7> : tensor<i64>} : tensor<i64>
func.func @constant() -> (tensor<2x2xf32>, tensor<2x2xf32>, tensor<i64>) {
  %0 = hlo.constant {value = dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>} : tensor<2x2xf32>
  %1 = "hlo.constant"() {value = dense<0.0> : tensor<2x2xf32>} : () -> tensor<2x2xf32>
  %2 = hlo.constant {value = dense<7> : tensor<i64>} : tensor<i64>
  func.return %0, %1, %2 : tensor<2x2xf32>, tensor<2x2xf32>, tensor<i64>
}

// CHECK-LABEL: func.func @dot_general
// CHECK-NEXT: %0 = hlo.dot_general %arg0, %arg1 {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]} : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %1 = hlo.dot_general %arg2, %arg3 {lhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_batching_dimensions = [0], rhs_contracting_dimensions = [1]} : (tensor<4x3x5xf32>, tensor<4x5x6xf32>) -> tensor<4x3x6xf32>
// CHECK-NEXT: %2 = hlo.dot_general %arg0, %arg0 : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16x2x16xf32>
func.func @dot_general(%x: tensor<2x16xf32>, %w: tensor<8x16xf32>, %a: tensor<4x3x5xf32>, %b: tensor<4x5x6xf32>) -> (tensor<2x8xf32>, tensor<4x3x6xf32>, tensor<2x16x2x16xf32>) {
  %0 = hlo.dot_general %x, %w {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]} : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
  %1 = "hlo.dot_general"(%a, %b) {lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]} : (tensor<4x3x5xf32>, tensor<4x5x6xf32>) -> tensor<4x3x6xf32>
  %2 = hlo.dot_general %x, %x : (tensor<2x16xf32>, tensor<2x16xf32>) -> tensor<2x16x2x16xf32>
  func.return %0, %1, %2 : tensor<2x8xf32>, tensor<4x3x6xf32>, tensor<2x16x2x16xf32>
}

// CHECK-LABEL: func.func @convolution
// CHECK-NEXT: %0 = hlo.convolution %arg0, %arg1 : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
// CHECK-NEXT: %1 = hlo.convolution %arg0, %arg1 {padding = {{\[\[}}1, 1], [1, 1]], window_strides = [2, 2]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
// CHECK-NEXT: %2 = hlo.convolution %arg0, %arg2 {feature_group_count = 3, lhs_dilation = [1, 1], padding = {{\[\[}}2, 2], [2, 2]], rhs_dilation = [2, 2]} : (tensor<1x3x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x8x8xf32>
// CHECK-NEXT: %3 = hlo.convolution %arg3, %arg4 {lhs_dilation = [2], padding = {{\[\[}}1, 1]]} : (tensor<2x2x5xf32>, tensor<3x2x3xf32>) -> tensor<2x3x9xf32>
func.func @convolution(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>, %dw: tensor<6x1x3x3xf32>, %x1: tensor<2x2x5xf32>, %w1: tensor<3x2x3xf32>) -> (tensor<1x4x6x6xf32>, tensor<1x4x4x4xf32>, tensor<1x6x8x8xf32>, tensor<2x3x9xf32>) {
  %0 = hlo.convolution %x, %w : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x6x6xf32>
  %1 = hlo.convolution %x, %w {window_strides = [2, 2], padding = [[1, 1], [1, 1]]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %2 = "hlo.convolution"(%x, %dw) {feature_group_count = 3, rhs_dilation = [2, 2], lhs_dilation = [1, 1], padding = [[2, 2], [2, 2]]} : (tensor<1x3x8x8xf32>, tensor<6x1x3x3xf32>) -> tensor<1x6x8x8xf32>
  %3 = hlo.convolution %x1, %w1 {lhs_dilation = [2], padding = [[1, 1]]} : (tensor<2x2x5xf32>, tensor<3x2x3xf32>) -> tensor<2x3x9xf32>
  func.return %0, %1, %2, %3 : tensor<1x4x6x6xf32>, tensor<1x4x4x4xf32>, tensor<1x6x8x8xf32>, tensor<2x3x9xf32>
}

// CHECK-LABEL: func.func @reduce
// CHECK-NEXT: %0 = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %1 = "hlo.reduce"(%arg0, %0) ({
// CHECK-NEXT: ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
// CHECK-NEXT: %2 = hlo.add %arg1, %arg2 : tensor<f32>
// CHECK-NEXT: hlo.return %2 : tensor<f32>
// CHECK-NEXT: }) {dimensions = [1]} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK-NEXT: %3 = "hlo.reduce"(%arg0, %0) ({
// CHECK-NEXT: ^bb0(%arg3: tensor<f32>, %arg4: tensor<f32>):
// CHECK-NEXT: %4 = hlo.abs %arg4 : tensor<f32>
// CHECK-NEXT: %5 = hlo.maximum %arg3, %4 : tensor<f32>
// CHECK-NEXT: hlo.return %5 : tensor<f32>
// CHECK-NEXT: }) {dimensions = [0, 1]} : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
func.func @reduce(%x: tensor<4x8xf32>) -> (tensor<4xf32>, tensor<f32>) {
  %zero = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
  %0 = "hlo.reduce"(%x, %zero) ({
  ^bb0(%acc: tensor<f32>, %e: tensor<f32>):
    %s = hlo.add %acc, %e : tensor<f32>
    "hlo.return"(%s) : (tensor<f32>) -> ()
  }) {dimensions = [1]} : (tensor<4x8xf32>, tensor<f32>) -> tensor<4xf32>
  %1 = "hlo.reduce"(%x, %zero) ({
  ^bb0(%acc: tensor<f32>, %e: tensor<f32>):
    %a = hlo.abs %e : tensor<f32>
    %m = hlo.maximum %acc, %a : tensor<f32>
    hlo.return %m : (tensor<f32>) -> ()
  }) {dimensions = [0, 1]} : (tensor<4x8xf32>, tensor<f32>) -> tensor<f32>
  func.return %0, %1 : tensor<4xf32>, tensor<f32>
}

// CHECK-LABEL: func.func @reduce_window
// CHECK: "hlo.reduce_window"(%arg0, %0) ({
// CHECK-NEXT: ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):
// CHECK-NEXT: %2 = hlo.maximum %arg2, %arg3 : tensor<f32>
// CHECK-NEXT: hlo.return %2 : tensor<f32>
// CHECK-NEXT: }) {padding = {{\[\[}}0, 0], [0, 0], [1, 1], [1, 1]], window_dimensions = [1, 1, 3, 3], window_strides = [1, 1, 2, 2]} : (tensor<1x2x7x7xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
// CHECK: "hlo.reduce_window"
// CHECK: {base_dilations = [2], window_dilations = [2], window_dimensions = [2]} : (tensor<5xf32>, tensor<f32>) -> tensor<7xf32>
func.func @reduce_window(%x: tensor<1x2x7x7xf32>, %y: tensor<5xf32>) -> (tensor<1x2x4x4xf32>, tensor<7xf32>) {
  %ninf = hlo.constant {value = dense<0xFF800000> : tensor<f32>} : tensor<f32>
  %0 = "hlo.reduce_window"(%x, %ninf) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = hlo.maximum %a, %b : tensor<f32>
    hlo.return %m : (tensor<f32>) -> ()
  }) {window_dimensions = [1, 1, 3, 3], window_strides = [1, 1, 2, 2], padding = [[0, 0], [0, 0], [1, 1], [1, 1]]} : (tensor<1x2x7x7xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
  %1 = "hlo.reduce_window"(%y, %ninf) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = hlo.add %a, %b : tensor<f32>
    hlo.return %s : (tensor<f32>) -> ()
  }) {window_dimensions = [2], window_dilations = [2], base_dilations = [2]} : (tensor<5xf32>, tensor<f32>) -> tensor<7xf32>
  func.return %0, %1 : tensor<1x2x4x4xf32>, tensor<7xf32>
}

// CHECK-LABEL: func.func @shape
// CHECK-NEXT: %0 = hlo.broadcast_in_dim %arg0 {broadcast_dimensions = [1]} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %1 = hlo.reshape %0 : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT: %2 = hlo.transpose %1 {permutation = [1, 0]} : (tensor<3x2xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %3 = hlo.pad %2, %arg1 {edge_padding_high = [0, -1], edge_padding_low = [1, 2], interior_padding = [1, 0]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x4xf32>
// CHECK-NEXT: %4 = hlo.slice %3 {limit_indices = [4, 3], start_indices = [1, 0], strides = [2, 1]} : (tensor<4x4xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %5 = hlo.concatenate %4, %2, %0 {dimension = 0} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<6x3xf32>
func.func @shape(%x: tensor<3xf32>, %v: tensor<f32>) -> tensor<6x3xf32> {
  %0 = hlo.broadcast_in_dim %x {broadcast_dimensions = [1]} : (tensor<3xf32>) -> tensor<2x3xf32>
  %1 = hlo.reshape %0 : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = hlo.transpose %1 {permutation = [1, 0]} : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %3 = hlo.pad %2, %v {edge_padding_low = [1, 2], edge_padding_high = [0, -1], interior_padding = [1, 0]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x4xf32>
  %4 = "hlo.slice"(%3) {start_indices = [1, 0], limit_indices = [4, 3], strides = [2, 1]} : (tensor<4x4xf32>) -> tensor<2x3xf32>
  %5 = hlo.concatenate %4, %2, %0 {dimension = 0} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<6x3xf32>
  func.return %5 : tensor<6x3xf32>
}

// CHECK-LABEL: func.func @get_dimension_size
// CHECK-NEXT: %0 = hlo.get_dimension_size %arg0 {dimension = 1} : (tensor<2x?xf32, ["n"]>) -> tensor<i32>
// CHECK-NEXT: %1 = hlo.get_dimension_size %arg0 {dimension = 0} : (tensor<2x?xf32, ["n"]>) -> tensor<i32>
func.func @get_dimension_size(%x: tensor<2x?xf32, ["n"]>) -> (tensor<i32>, tensor<i32>) {
  %0 = hlo.get_dimension_size %x {dimension = 1} : (tensor<2x?xf32, ["n"]>) -> tensor<i32>
  %1 = "hlo.get_dimension_size"(%x) {dimension = 0} : (tensor<2x?xf32, ["n"]>) -> tensor<i32>
  func.return %0, %1 : tensor<i32>, tensor<i32>
}

// CHECK-LABEL: func.func @fusion
// CHECK-NEXT: %0 = "hlo.fusion"(%arg0, %arg1) ({
// CHECK-NEXT: ^bb0(%arg2: tensor<2x16xf32>, %arg3: tensor<8x16xf32>):
// CHECK-NEXT: %1 = hlo.constant {value = dense<0.0> : tensor<2x8xf32>} : tensor<2x8xf32>
// CHECK-NEXT: %2 = hlo.dot_general %arg2, %arg3 {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]} : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: %3 = hlo.maximum %2, %1 : tensor<2x8xf32>
// CHECK-NEXT: hlo.return %3 : tensor<2x8xf32>
// CHECK-NEXT: }) {kind = "output"} : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
// CHECK-NEXT: func.return %0 : tensor<2x8xf32>
func.func @fusion(%x: tensor<2x16xf32>, %w: tensor<8x16xf32>) -> tensor<2x8xf32> {
  %0 = "hlo.fusion"(%x, %w) ({
  ^bb0(%a: tensor<2x16xf32>, %b: tensor<8x16xf32>):
    %z = hlo.constant {value = dense<0.0> : tensor<2x8xf32>} : tensor<2x8xf32>
    %d = hlo.dot_general %a, %b {lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [1]} : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
    %r = hlo.maximum %d, %z : tensor<2x8xf32>
    "hlo.return"(%r) : (tensor<2x8xf32>) -> ()
  }) {kind = "output"} : (tensor<2x16xf32>, tensor<8x16xf32>) -> tensor<2x8xf32>
  func.return %0 : tensor<2x8xf32>
}

// CHECK-LABEL: func.func @gather(
// CHECK-NEXT: %0 = hlo.gather %arg0, %arg1 {collapsed_slice_dims = [0], index_vector_dim = 2, offset_dims = [2], slice_sizes = [1, 4], start_index_map = [0]} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
func.func @gather(%w: tensor<10x4xf32>, %ids: tensor<2x3xi64>) -> tensor<2x3x4xf32> {
  %0 = hlo.gather %w, %ids {offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2, slice_sizes = [1, 4]} : (tensor<10x4xf32>, tensor<2x3xi64>) -> tensor<2x3x4xf32>
  func.return %0 : tensor<2x3x4xf32>
}

// CHECK-LABEL: func.func @scatter(
// CHECK-NEXT: %0 = "hlo.scatter"(%arg0, %arg1, %arg2) ({
// CHECK-NEXT: ^bb0(%[[C:.*]]: tensor<f32>, %[[N:.*]]: tensor<f32>):
// CHECK-NEXT: %[[S:.*]] = hlo.add %[[C]], %[[N]] : tensor<f32>
// CHECK-NEXT: hlo.return %[[S]] : tensor<f32>
// CHECK-NEXT: }) {index_vector_dim = 1, inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], update_window_dims = [1]} : (tensor<10x4xf32>, tensor<3xi64>, tensor<3x4xf32>) -> tensor<10x4xf32>
// CHECK-NEXT: %[[R:.*]] = "hlo.scatter"(%0, %arg3, %arg4) ({
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<f32>, %[[N2:.*]]: tensor<f32>):
// CHECK-NEXT: hlo.return %[[N2]] : tensor<f32>
// CHECK-NEXT: }) {index_vector_dim = 2, inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [1, 0], update_window_dims = []} : (tensor<10x4xf32>, tensor<2x3x2xi32>, tensor<2x3xf32>) -> tensor<10x4xf32>
// CHECK-NEXT: func.return %[[R]] : tensor<10x4xf32>
func.func @scatter(%x: tensor<10x4xf32>, %ids: tensor<3xi64>, %rows: tensor<3x4xf32>, %pts: tensor<2x3x2xi32>, %vals: tensor<2x3xf32>) -> tensor<10x4xf32> {
  %0 = "hlo.scatter"(%x, %ids, %rows) ({
  ^bb0(%cur: tensor<f32>, %new: tensor<f32>):
    %s = hlo.add %cur, %new : tensor<f32>
    hlo.return %s : tensor<f32>
  }) {update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1} : (tensor<10x4xf32>, tensor<3xi64>, tensor<3x4xf32>) -> tensor<10x4xf32>
  %1 = "hlo.scatter"(%0, %pts, %vals) ({
  ^bb0(%cur: tensor<f32>, %new: tensor<f32>):
    hlo.return %new : tensor<f32>
  }) {update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [1, 0], index_vector_dim = 2} : (tensor<10x4xf32>, tensor<2x3x2xi32>, tensor<2x3xf32>) -> tensor<10x4xf32>
  func.return %1 : tensor<10x4xf32>
}
