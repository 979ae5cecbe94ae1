// legalize-to-hlo of the elementwise ONNX ops (legalize_math.go,
// legalize_activation.go, legalize_compare.go): the hlo each rule produces.
// RUN: tessera-opt %s --split-input-file --legalize-to-hlo | FileCheck %s
// RUN: tessera-opt %s --split-input-file --legalize-to-hlo | FileCheck %s --check-prefix=NOGRAPH

// NOGRAPH-NOT: graph.

// CHECK-LABEL: func.func @exp
// CHECK-NEXT: %0 = hlo.exponential %arg0 : tensor<2x3xf32>
// CHECK-NEXT: func.return %0 : tensor<2x3xf32>
func.func @exp(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = graph.exp %x : tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @erf_floor_ceil_round_sign
// CHECK-NEXT: %0 = hlo.erf %arg0 : tensor<4xf32>
// CHECK-NEXT: %1 = hlo.floor %0 : tensor<4xf32>
// CHECK-NEXT: %2 = hlo.ceil %1 : tensor<4xf32>
// CHECK-NEXT: %3 = hlo.round_nearest_even %2 : tensor<4xf32>
// CHECK-NEXT: %4 = hlo.sign %3 : tensor<4xf32>
// CHECK-NEXT: func.return %4 : tensor<4xf32>
func.func @erf_floor_ceil_round_sign(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.erf %x : tensor<4xf32>
  %1 = graph.floor %0 : tensor<4xf32>
  %2 = graph.ceil %1 : tensor<4xf32>
  %3 = graph.round %2 : tensor<4xf32>
  %4 = graph.sign %3 : tensor<4xf32>
  func.return %4 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @reciprocal
// CHECK-NEXT: %0 = hlo.constant {value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
// CHECK-NEXT: %1 = hlo.divide %0, %arg0 : tensor<4xf32>
// CHECK-NEXT: func.return %1 : tensor<4xf32>
func.func @reciprocal(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.reciprocal %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @pow_broadcast
// CHECK-NEXT: %0 = hlo.broadcast_in_dim %arg1 {broadcast_dimensions = {{\[}}1]} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %1 = hlo.power %arg0, %0 : tensor<2x3xf32>
// CHECK-NEXT: func.return %1 : tensor<2x3xf32>
func.func @pow_broadcast(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = graph.pow %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @max_min
// CHECK-NEXT: %0 = hlo.broadcast_in_dim %arg0 {broadcast_dimensions = {{\[}}]} : (tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT: %1 = hlo.maximum %0, %arg1 : tensor<3xf32>
// CHECK-NEXT: %2 = hlo.minimum %1, %arg1 : tensor<3xf32>
// CHECK-NEXT: func.return %2 : tensor<3xf32>
func.func @max_min(%a: tensor<f32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = graph.max %a, %b : (tensor<f32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = graph.min %0, %b : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %1 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @cast
// CHECK-NEXT: %0 = hlo.convert %arg0 : (tensor<3xf32>) -> tensor<3xi32>
// CHECK-NEXT: func.return %0 : tensor<3xi32>
func.func @cast(%x: tensor<3xf32>) -> tensor<3xi32> {
  %0 = graph.cast %x : (tensor<3xf32>) -> tensor<3xi32>
  func.return %0 : tensor<3xi32>
}

// -----

// CHECK-LABEL: func.func @softplus
// CHECK-NEXT: %0 = hlo.constant {value = dense<0.0> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %1 = hlo.maximum %arg0, %0 : tensor<3xf32>
// CHECK-NEXT: %2 = hlo.abs %arg0 : tensor<3xf32>
// CHECK-NEXT: %3 = hlo.negate %2 : tensor<3xf32>
// CHECK-NEXT: %4 = hlo.exponential %3 : tensor<3xf32>
// CHECK-NEXT: %5 = hlo.constant {value = dense<1.0> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %6 = hlo.add %5, %4 : tensor<3xf32>
// CHECK-NEXT: %7 = hlo.log %6 : tensor<3xf32>
// CHECK-NEXT: %8 = hlo.add %1, %7 : tensor<3xf32>
// CHECK-NEXT: func.return %8 : tensor<3xf32>
func.func @softplus(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = graph.softplus %x : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @softsign
// CHECK-NEXT: %0 = hlo.constant {value = dense<1.0> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %1 = hlo.abs %arg0 : tensor<3xf32>
// CHECK-NEXT: %2 = hlo.add %0, %1 : tensor<3xf32>
// CHECK-NEXT: %3 = hlo.divide %arg0, %2 : tensor<3xf32>
// CHECK-NEXT: func.return %3 : tensor<3xf32>
func.func @softsign(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = graph.softsign %x : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @clip_both
// CHECK-NEXT: %0 = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %1 = hlo.constant {value = dense<6.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %2 = hlo.clamp %0, %arg0, %1 : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT: func.return %2 : tensor<3xf32>
func.func @clip_both(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = graph.clip %x {max = 6.0 : f32, min = 0.0 : f32} : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @clip_min
// CHECK-NEXT: %0 = hlo.constant {value = dense<-1.0> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %1 = hlo.maximum %arg0, %0 : tensor<3xf32>
// CHECK-NEXT: func.return %1 : tensor<3xf32>
func.func @clip_min(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = graph.clip %x {min = -1.0 : f32} : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @clip_none
// CHECK-NEXT: func.return %arg0 : tensor<3xf32>
func.func @clip_none(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = graph.clip %x : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @hard_sigmoid
// CHECK-NEXT: %0 = hlo.constant {value = dense<0.2> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %1 = hlo.multiply %arg0, %0 : tensor<3xf32>
// CHECK-NEXT: %2 = hlo.constant {value = dense<0.5> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %3 = hlo.add %1, %2 : tensor<3xf32>
// CHECK-NEXT: %4 = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %5 = hlo.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %6 = hlo.clamp %4, %3, %5 : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT: func.return %6 : tensor<3xf32>
func.func @hard_sigmoid(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = graph.hard_sigmoid %x : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @hard_swish
// CHECK-NEXT: %0 = hlo.constant {value = dense<0.16666667> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %1 = hlo.multiply %arg0, %0 : tensor<3xf32>
// CHECK-NEXT: %2 = hlo.constant {value = dense<0.5> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %3 = hlo.add %1, %2 : tensor<3xf32>
// CHECK-NEXT: %4 = hlo.constant {value = dense<0.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %5 = hlo.constant {value = dense<1.0> : tensor<f32>} : tensor<f32>
// CHECK-NEXT: %6 = hlo.clamp %4, %3, %5 : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
// CHECK-NEXT: %7 = hlo.multiply %arg0, %6 : tensor<3xf32>
// CHECK-NEXT: func.return %7 : tensor<3xf32>
func.func @hard_swish(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = graph.hard_swish %x : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @leaky_relu
// CHECK-NEXT: %0 = hlo.constant {value = dense<0.0> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %1 = hlo.compare %arg0, %0 {comparison_direction = "GE"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
// CHECK-NEXT: %2 = hlo.constant {value = dense<0.1> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %3 = hlo.multiply %arg0, %2 : tensor<3xf32>
// CHECK-NEXT: %4 = hlo.select %1, %arg0, %3 : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: func.return %4 : tensor<3xf32>
func.func @leaky_relu(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = graph.leaky_relu %x {alpha = 0.1 : f32} : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @elu
// CHECK-NEXT: %0 = hlo.constant {value = dense<1.0> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %1 = hlo.exponential %arg0 : tensor<3xf32>
// CHECK-NEXT: %2 = hlo.constant {value = dense<1.0> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %3 = hlo.subtract %1, %2 : tensor<3xf32>
// CHECK-NEXT: %4 = hlo.multiply %0, %3 : tensor<3xf32>
// CHECK-NEXT: %5 = hlo.constant {value = dense<0.0> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %6 = hlo.compare %arg0, %5 {comparison_direction = "GE"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
// CHECK-NEXT: %7 = hlo.select %6, %arg0, %4 : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: func.return %7 : tensor<3xf32>
func.func @elu(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = graph.elu %x : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @selu
// CHECK-NEXT: %0 = hlo.constant {value = dense<3.0> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %1 = hlo.multiply %arg0, %0 : tensor<3xf32>
// CHECK-NEXT: %2 = hlo.constant {value = dense<6.0> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %3 = hlo.exponential %arg0 : tensor<3xf32>
// CHECK-NEXT: %4 = hlo.constant {value = dense<1.0> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %5 = hlo.subtract %3, %4 : tensor<3xf32>
// CHECK-NEXT: %6 = hlo.multiply %2, %5 : tensor<3xf32>
// CHECK-NEXT: %7 = hlo.constant {value = dense<0.0> : tensor<3xf32>} : tensor<3xf32>
// CHECK-NEXT: %8 = hlo.compare %arg0, %7 {comparison_direction = "GT"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xi1>
// CHECK-NEXT: %9 = hlo.select %8, %1, %6 : (tensor<3xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK-NEXT: func.return %9 : tensor<3xf32>
func.func @selu(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = graph.selu %x {alpha = 2.0 : f32, gamma = 3.0 : f32} : tensor<3xf32>
  func.return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @prelu
// CHECK-NEXT: %0 = hlo.broadcast_in_dim %arg1 {broadcast_dimensions = {{\[}}1]} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %1 = hlo.constant {value = dense<0.0> : tensor<2x3xf32>} : tensor<2x3xf32>
// CHECK-NEXT: %2 = hlo.compare %arg0, %1 {comparison_direction = "GE"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: %3 = hlo.multiply %arg0, %0 : tensor<2x3xf32>
// CHECK-NEXT: %4 = hlo.select %2, %arg0, %3 : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: func.return %4 : tensor<2x3xf32>
func.func @prelu(%x: tensor<2x3xf32>, %s: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = graph.prelu %x, %s : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @greater_equal
// CHECK-NEXT: %0 = hlo.broadcast_in_dim %arg1 {broadcast_dimensions = {{\[}}]} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT: %1 = hlo.compare %arg0, %0 {comparison_direction = "GE"} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK-NEXT: func.return %1 : tensor<2x3xi1>
func.func @greater_equal(%a: tensor<2x3xf32>, %b: tensor<f32>) -> tensor<2x3xi1> {
  %0 = graph.greater_equal %a, %b : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xi1>
  func.return %0 : tensor<2x3xi1>
}

// -----

// CHECK-LABEL: func.func @logical
// CHECK-NEXT: %0 = hlo.not %arg0 : tensor<2x3xi1>
// CHECK-NEXT: %1 = hlo.broadcast_in_dim %arg1 {broadcast_dimensions = {{\[}}1]} : (tensor<3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: %2 = hlo.and %0, %1 : tensor<2x3xi1>
// CHECK-NEXT: %3 = hlo.broadcast_in_dim %arg1 {broadcast_dimensions = {{\[}}1]} : (tensor<3xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: %4 = hlo.or %3, %2 : tensor<2x3xi1>
// CHECK-NEXT: func.return %4 : tensor<2x3xi1>
func.func @logical(%a: tensor<2x3xi1>, %b: tensor<3xi1>) -> tensor<2x3xi1> {
  %0 = graph.not %a : tensor<2x3xi1>
  %1 = graph.and %0, %b : (tensor<2x3xi1>, tensor<3xi1>) -> tensor<2x3xi1>
  %2 = graph.or %b, %1 : (tensor<3xi1>, tensor<2x3xi1>) -> tensor<2x3xi1>
  func.return %2 : tensor<2x3xi1>
}

// -----

// CHECK-LABEL: func.func @where
// CHECK-NEXT: %0 = hlo.broadcast_in_dim %arg0 {broadcast_dimensions = {{\[}}0, 1]} : (tensor<2x1xi1>) -> tensor<2x3xi1>
// CHECK-NEXT: %1 = hlo.broadcast_in_dim %arg1 {broadcast_dimensions = {{\[}}1]} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: %2 = hlo.broadcast_in_dim %arg2 {broadcast_dimensions = {{\[}}]} : (tensor<f32>) -> tensor<2x3xf32>
// CHECK-NEXT: %3 = hlo.select %0, %1, %2 : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT: func.return %3 : tensor<2x3xf32>
func.func @where(%c: tensor<2x1xi1>, %a: tensor<3xf32>, %b: tensor<f32>) -> tensor<2x3xf32> {
  %0 = graph.where %c, %a, %b : (tensor<2x1xi1>, tensor<3xf32>, tensor<f32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @trig
// CHECK-NEXT: %0 = hlo.sine %arg0 : tensor<4xf32>
// CHECK-NEXT: %1 = hlo.cosine %0 : tensor<4xf32>
// CHECK-NEXT: %2 = hlo.tan %1 : tensor<4xf32>
// CHECK-NEXT: %3 = hlo.asin %2 : tensor<4xf32>
// CHECK-NEXT: %4 = hlo.acos %3 : tensor<4xf32>
// CHECK-NEXT: %5 = hlo.sinh %4 : tensor<4xf32>
// CHECK-NEXT: %6 = hlo.cosh %5 : tensor<4xf32>
// CHECK-NEXT: %7 = hlo.asinh %6 : tensor<4xf32>
// CHECK-NEXT: %8 = hlo.acosh %7 : tensor<4xf32>
// CHECK-NEXT: %9 = hlo.atanh %8 : tensor<4xf32>
// CHECK-NEXT: func.return %9 : tensor<4xf32>
func.func @trig(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.sin %x : tensor<4xf32>
  %1 = graph.cos %0 : tensor<4xf32>
  %2 = graph.tan %1 : tensor<4xf32>
  %3 = graph.asin %2 : tensor<4xf32>
  %4 = graph.acos %3 : tensor<4xf32>
  %5 = graph.sinh %4 : tensor<4xf32>
  %6 = graph.cosh %5 : tensor<4xf32>
  %7 = graph.asinh %6 : tensor<4xf32>
  %8 = graph.acosh %7 : tensor<4xf32>
  %9 = graph.atanh %8 : tensor<4xf32>
  func.return %9 : tensor<4xf32>
}

// -----

// fmod = 0: the remainder (the dividend's sign) moved to the divisor's
// sign; fmod = 1: the remainder itself.
// CHECK-LABEL: func.func @mod
// CHECK-NEXT: %0 = hlo.broadcast_in_dim %arg1 {broadcast_dimensions = {{\[}}1]} : (tensor<3xi32>) -> tensor<2x3xi32>
// CHECK-NEXT: %1 = hlo.remainder %arg0, %0 : tensor<2x3xi32>
// CHECK-NEXT: %2 = hlo.constant {value = dense<0> : tensor<2x3xi32>} : tensor<2x3xi32>
// CHECK-NEXT: %3 = hlo.compare %1, %2 {comparison_direction = "LT"}
// CHECK-NEXT: %4 = hlo.compare %0, %2 {comparison_direction = "LT"}
// CHECK-NEXT: %5 = hlo.compare %3, %4 {comparison_direction = "NE"} : tensor<2x3xi1>
// CHECK-NEXT: %6 = hlo.compare %1, %2 {comparison_direction = "NE"}
// CHECK-NEXT: %7 = hlo.and %6, %5 : tensor<2x3xi1>
// CHECK-NEXT: %8 = hlo.add %1, %0 : tensor<2x3xi32>
// CHECK-NEXT: %9 = hlo.select %7, %8, %1
// CHECK-NEXT: %10 = hlo.broadcast_in_dim %arg1
// CHECK-NEXT: %11 = hlo.remainder %arg0, %10 : tensor<2x3xi32>
// CHECK-NEXT: func.return %9, %11 : tensor<2x3xi32>, tensor<2x3xi32>
func.func @mod(%a: tensor<2x3xi32>, %b: tensor<3xi32>) -> (tensor<2x3xi32>, tensor<2x3xi32>) {
  %0 = graph.mod %a, %b : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  %1 = graph.mod %a, %b {fmod = 1} : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>
  func.return %0, %1 : tensor<2x3xi32>, tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @celu
// CHECK-NEXT: %0 = hlo.constant {value = dense<2.0> : tensor<4xf32>} : tensor<4xf32>
// CHECK-NEXT: %1 = hlo.divide %arg0, %0 : tensor<4xf32>
// CHECK-NEXT: %2 = hlo.exponential %1 : tensor<4xf32>
// CHECK-NEXT: %3 = hlo.constant {value = dense<1.0> : tensor<4xf32>} : tensor<4xf32>
// CHECK-NEXT: %4 = hlo.subtract %2, %3 : tensor<4xf32>
// CHECK-NEXT: %5 = hlo.multiply %0, %4 : tensor<4xf32>
// CHECK-NEXT: %6 = hlo.constant {value = dense<0.0> : tensor<4xf32>} : tensor<4xf32>
// CHECK-NEXT: %7 = hlo.maximum %arg0, %6 : tensor<4xf32>
// CHECK-NEXT: %8 = hlo.constant {value = dense<0.0> : tensor<4xf32>} : tensor<4xf32>
// CHECK-NEXT: %9 = hlo.minimum %5, %8 : tensor<4xf32>
// CHECK-NEXT: %10 = hlo.add %7, %9 : tensor<4xf32>
// CHECK-NEXT: func.return %10 : tensor<4xf32>
func.func @celu(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.celu %x {alpha = 2.0 : f32} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @shrink
// CHECK-NEXT: %0 = hlo.constant {value = dense<1.5> : tensor<4xf32>} : tensor<4xf32>
// CHECK-NEXT: %1 = hlo.compare %arg0, %0 {comparison_direction = "GT"}
// CHECK-NEXT: %2 = hlo.constant {value = dense<0.5> : tensor<4xf32>} : tensor<4xf32>
// CHECK-NEXT: %3 = hlo.subtract %arg0, %2 : tensor<4xf32>
// CHECK-NEXT: %4 = hlo.constant {value = dense<0.0> : tensor<4xf32>} : tensor<4xf32>
// CHECK-NEXT: %5 = hlo.select %1, %3, %4
// CHECK-NEXT: %6 = hlo.constant {value = dense<-1.5> : tensor<4xf32>} : tensor<4xf32>
// CHECK-NEXT: %7 = hlo.compare %arg0, %6 {comparison_direction = "LT"}
// CHECK-NEXT: %8 = hlo.constant {value = dense<0.5> : tensor<4xf32>} : tensor<4xf32>
// CHECK-NEXT: %9 = hlo.add %arg0, %8 : tensor<4xf32>
// CHECK-NEXT: %10 = hlo.select %7, %9, %5
// CHECK-NEXT: func.return %10 : tensor<4xf32>
func.func @shrink(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.shrink %x {lambd = 1.5 : f32, bias = 0.5 : f32} : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @mish
// CHECK: %8 = hlo.add %1, %7 : tensor<4xf32>
// CHECK-NEXT: %9 = hlo.tanh %8 : tensor<4xf32>
// CHECK-NEXT: %10 = hlo.multiply %arg0, %9 : tensor<4xf32>
// CHECK-NEXT: func.return %10 : tensor<4xf32>
func.func @mish(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.mish %x : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}
