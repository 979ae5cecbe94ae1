// Verifier errors of graph.lstm, graph.gru and graph.rnn, one per chunk.
// RUN: tessera-opt %s --split-input-file --verify-diagnostics

func.func @wrong_w(%x: tensor<4x2x3xf32>, %w: tensor<1x16x3xf32>, %r: tensor<1x20x5xf32>) -> tensor<1x2x5xf32> {
  // expected-error@+1 {{'graph.lstm' op W must have shape [1, 20, 3] (hidden_size 5, 1 direction(s), layout 0), got tensor<1x16x3xf32>}}
  %0:3 = graph.lstm %x, %w, %r {hidden_size = 5} : (tensor<4x2x3xf32>, tensor<1x16x3xf32>, tensor<1x20x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
  func.return %0#1 : tensor<1x2x5xf32>
}

// -----

func.func @bidirectional_states(%x: tensor<4x2x3xf32>, %w: tensor<2x15x3xf32>, %r: tensor<2x15x5xf32>, %b: tensor<2x30xf32>, %h: tensor<1x2x5xf32>) -> tensor<2x2x5xf32> {
  // expected-error@+1 {{'graph.gru' op initial_h must have shape [2, 2, 5] (hidden_size 5, 2 direction(s), layout 0), got tensor<1x2x5xf32>}}
  %0:2 = graph.gru %x, %w, %r, %b, %h {hidden_size = 5, direction = "bidirectional"} : (tensor<4x2x3xf32>, tensor<2x15x3xf32>, tensor<2x15x5xf32>, tensor<2x30xf32>, tensor<1x2x5xf32>) -> (tensor<4x2x2x5xf32>, tensor<2x2x5xf32>)
  func.return %0#1 : tensor<2x2x5xf32>
}

// -----

func.func @unsupported_activation(%x: tensor<4x2x3xf32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>) -> tensor<1x2x5xf32> {
  // expected-error@+1 {{'graph.rnn' op unsupported activation 'Gelu' (supported: Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh, HardSigmoid, Elu, Softsign, Softplus)}}
  %0:2 = graph.rnn %x, %w, %r {hidden_size = 5, activations = ["Gelu"]} : (tensor<4x2x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  func.return %0#1 : tensor<1x2x5xf32>
}

// -----

func.func @activation_count(%x: tensor<4x2x3xf32>, %w: tensor<1x20x3xf32>, %r: tensor<1x20x5xf32>) -> tensor<1x2x5xf32> {
  // expected-error@+1 {{'graph.lstm' op activations must list 3 names (3 per direction), got 2}}
  %0:3 = graph.lstm %x, %w, %r {hidden_size = 5, activations = ["Sigmoid", "Tanh"]} : (tensor<4x2x3xf32>, tensor<1x20x3xf32>, tensor<1x20x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
  func.return %0#1 : tensor<1x2x5xf32>
}

// -----

func.func @clip(%x: tensor<4x2x3xf32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>) -> tensor<1x2x5xf32> {
  // expected-error@+1 {{'graph.rnn' op clip must be positive, got -1}}
  %0:2 = graph.rnn %x, %w, %r {hidden_size = 5, clip = -1.0 : f32} : (tensor<4x2x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  func.return %0#1 : tensor<1x2x5xf32>
}

// -----

func.func @layout(%x: tensor<4x2x3xf32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>) -> tensor<1x2x5xf32> {
  // expected-error@+1 {{'graph.rnn' op layout must be 0 or 1, got 2}}
  %0:2 = graph.rnn %x, %w, %r {hidden_size = 5, layout = 2} : (tensor<4x2x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  func.return %0#1 : tensor<1x2x5xf32>
}

// -----

func.func @sequence_lens_count(%x: tensor<4x2x3xf32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>) -> tensor<1x2x5xf32> {
  // expected-error@+1 {{'graph.rnn' op sequence_lens must have one length per batch entry (2), got 3}}
  %0:2 = graph.rnn %x, %w, %r {hidden_size = 5, sequence_lens = [4, 4, 1]} : (tensor<4x2x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  func.return %0#1 : tensor<1x2x5xf32>
}

// -----

func.func @sequence_lens_range(%x: tensor<4x2x3xf32>, %w: tensor<1x5x3xf32>, %r: tensor<1x5x5xf32>) -> tensor<1x2x5xf32> {
  // expected-error@+1 {{'graph.rnn' op sequence_lens[1] = 5 is outside [0, 4] (the sequence length)}}
  %0:2 = graph.rnn %x, %w, %r {hidden_size = 5, sequence_lens = [4, 5]} : (tensor<4x2x3xf32>, tensor<1x5x3xf32>, tensor<1x5x5xf32>) -> (tensor<4x1x2x5xf32>, tensor<1x2x5xf32>)
  func.return %0#1 : tensor<1x2x5xf32>
}
