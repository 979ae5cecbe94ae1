// Every verifier error of graph.einsum, one per chunk.
// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @f0(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.einsum' op equation "ij#->i": invalid character '#' at offset 2 (expected letters a-z and A-Z, ',', '...', '->' and spaces)}}
  %0 = graph.einsum %x {equation = "ij#->i"} : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @f1(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.einsum' op equation "i..j->i": '.' at offset 1 is not part of an ellipsis '...'}}
  %0 = graph.einsum %x {equation = "i..j->i"} : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @f2(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'graph.einsum' op equation "...i...": term "...i..." has more than one ellipsis}}
  %0 = graph.einsum %x {equation = "...i..."} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @f3(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.einsum' op equation "ij->i->i": more than one '->' (the second at offset 5)}}
  %0 = graph.einsum %x {equation = "ij->i->i"} : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @f4(%x: tensor<2x3xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'graph.einsum' op equation "ij,jk->ik": 2 input terms for 1 operands}}
  %0 = graph.einsum %x {equation = "ij,jk->ik"} : (tensor<2x3xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @f5(%x: tensor<2x3xf32>, %y: tensor<3x4x5xf32>) -> tensor<2x4xf32> {
  // expected-error@+1 {{'graph.einsum' op equation "ij,jk->ik": term #1 "jk" has 2 subscripts but operand #1 has rank 3 (tensor<3x4x5xf32>)}}
  %0 = graph.einsum %x, %y {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<3x4x5xf32>) -> tensor<2x4xf32>
  func.return %0 : tensor<2x4xf32>
}

// -----

func.func @f6(%x: tensor<2x3xf32>, %y: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error@+1 {{'graph.einsum' op equation "ij,jk->ik": subscript 'j' has size 3 in operand #0 (tensor<2x3xf32>) but 4 in operand #1 (tensor<4x5xf32>)}}
  %0 = graph.einsum %x, %y {equation = "ij,jk->ik"} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  func.return %0 : tensor<2x5xf32>
}

// -----

func.func @f7(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.einsum' op equation "ii->i": subscript 'i' is repeated in term #0 "ii" over dimensions of sizes 2 and 3 of operand #0 (tensor<2x3xf32>)}}
  %0 = graph.einsum %x {equation = "ii->i"} : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}

// -----

func.func @f8(%x: tensor<2x3xf32>) -> tensor<4xf32> {
  // expected-error@+1 {{'graph.einsum' op equation "ij->k": output subscript 'k' does not appear in any input term}}
  %0 = graph.einsum %x {equation = "ij->k"} : (tensor<2x3xf32>) -> tensor<4xf32>
  func.return %0 : tensor<4xf32>
}

// -----

func.func @f9(%x: tensor<2x2xf32>) -> tensor<2x2xf32> {
  // expected-error@+1 {{'graph.einsum' op equation "ij->ii": output subscript 'i' appears more than once}}
  %0 = graph.einsum %x {equation = "ij->ii"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  func.return %0 : tensor<2x2xf32>
}

// -----

func.func @f10(%x: tensor<2x3x4xf32>, %y: tensor<5x4xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'graph.einsum' op equation "...i,...i->...": the ellipsis dimensions do not broadcast: operand #0 has [2, 3], operand #1 has [5]}}
  %0 = graph.einsum %x, %y {equation = "...i,...i->..."} : (tensor<2x3x4xf32>, tensor<5x4xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @f11(%x: tensor<5x2x3xf32>) -> tensor<2x3xf32> {
  // expected-error@+1 {{'graph.einsum' op equation "...ij->ij": the output "ij" has no ellipsis but the inputs' ellipsis stands for 1 dimensions (numpy.einsum refuses this; write '...' in the output)}}
  %0 = graph.einsum %x {equation = "...ij->ij"} : (tensor<5x2x3xf32>) -> tensor<2x3xf32>
  func.return %0 : tensor<2x3xf32>
}

// -----

func.func @f12(%x: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error@+1 {{'graph.einsum' op operands must be numeric, got tensor<3xi1>}}
  %0 = graph.einsum %x {equation = "i->i"} : (tensor<3xi1>) -> tensor<3xi1>
  func.return %0 : tensor<3xi1>
}

// -----

func.func @f13(%x: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error@+1 {{'graph.einsum' op inferred result types (tensor<2x3xf32>) do not match the written types (tensor<2xf32>)}}
  %0 = graph.einsum %x {equation = "ij"} : (tensor<2x3xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
