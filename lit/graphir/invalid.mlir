// Parser and verifier errors of the core, checked with --verify-diagnostics
// (each chunk must produce exactly the expected diagnostics).
// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @undefined(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{use of undeclared SSA value name '%y'}}
  func.return %y : tensor<2xf32>
}

// -----

func.func @use_before_def(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{use of undeclared SSA value name '%0'}}
  %0 = "graph.add"(%x, %0) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @redefined(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = graph.relu %x : tensor<2xf32>
  %0 = graph.relu %x : tensor<2xf32> // expected-error {{redefinition of SSA value '%0'}}
  func.return %0 : tensor<2xf32>
}

// -----

func.func @no_terminator(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@below {{function '@no_terminator' must end with 'func.return'}}
  %0 = graph.relu %x : tensor<2xf32>
}

// -----

func.func @wrong_return(%x: tensor<2xf32>) -> tensor<3xf32> {
  func.return %x : tensor<2xf32>
  // expected-error@above {{'func.return' op has types (tensor<2xf32>) but the enclosing function '@wrong_return' returns (tensor<3xf32>)}}
}

// -----

func.func @type_mismatch_at_use(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "graph.relu"(%x) : (tensor<2xf32>) -> tensor<3xf32>
  // expected-error@+1 {{use of value '%0' expects different type than prior uses}}
  func.return %0 : tensor<2xf32>
}

// -----

func.func @unknown_attr(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.relu' op does not accept attribute 'bogus'}}
  %0 = "graph.relu"(%x) {bogus = 1} : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @unregistered(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.nosuch' op is not registered}}
  %0 = "graph.nosuch"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

// expected-note@+1 {{previous definition here}}
func.func @twice(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}
// expected-error@+1 {{redefinition of symbol '@twice'}}
func.func @twice(%x: tensor<2xf32>) -> tensor<2xf32> {
  func.return %x : tensor<2xf32>
}

// -----

func.func @arity(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.relu' op expects 1 operands, got 2}}
  %0 = "graph.relu"(%x, %x) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @bad_type(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{unknown element type "f33"}}
  %0 = "graph.relu"(%x) : (tensor<2xf32>) -> tensor<2xf33>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @dynamic(%x: tensor<?xf32>) { // expected-error {{dynamic dimension '?' in tensor<?xf32> has no expression}}
  func.return
}

// -----

func.func @dense_shape() -> tensor<2x3xf32> {
  // expected-error@+1 {{tensor<2x3xf32>}}
  %0 = "graph.constant"() {value = dense<[1.0, 2.0]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @missing_attr(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32> {
  // expected-error@+1 {{'graph.max_pool2d' op requires attribute 'kernel'}}
  %0 = "graph.max_pool2d"(%x) : (tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  func.return %0 : tensor<1x1x4x4xf32>
}

// -----

func.func @syntax(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{unexpected token}}
  %0 = "graph.relu"(%x : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

// expected-error@+2 {{end of file}}
func.func @truncated(%x: tensor<2xf32>) -> tensor<2xf32> {
