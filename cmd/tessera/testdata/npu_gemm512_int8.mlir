// GEMM 512×512×512 in the int8 datapath (the NPU's utilization check):
// ui8 activations times i8 weights, accumulated in i32.
module {
  func.func @main(%a: tensor<512x512xui8>, %b: tensor<512x512xi8>) -> tensor<512x512xi32> {
    %0 = graph.matmul %a, %b : (tensor<512x512xui8>, tensor<512x512xi8>) -> tensor<512x512xi32>
    func.return %0 : tensor<512x512xi32>
  }
}
