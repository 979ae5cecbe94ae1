// Package onnx imports ONNX models (ModelProto, default ai.onnx domain,
// opsets 7 to 17, and 1 to 6 for the ops unchanged since) into Tessera's graph dialect: one function
// `func.func @main(%argN ...) -> (...)` whose arguments are the graph
// inputs that are not initializers, with one graph op (or a short chain)
// per ONNX node.
//
//	m, err := onnx.Import("model.onnx")   // or ImportBytes(name, data)
//
// Shapes are static: every graph input must declare numeric dimensions (a
// symbolic dimension such as 'batch_size' is refused), every other shape
// follows from the graph ops' shape inference, and shape-computation
// subgraphs (Shape → Gather → Unsqueeze → Concat → Reshape, ...) are
// evaluated at import time (fold.go), so a Reshape gets a constant target.
//
// Weights: initializers and Constant nodes become graph.constant ops whose
// dense<...> values are written inline in the module text. A sidecar
// weights file is not implemented: inline keeps the output one
// self-contained text file that `tessera compile` reads directly, and the
// graph parser handles large dense literals (measured: ResNet-18's 11.7 M
// parameters print to 160 MB of text in 1.2 s and parse back in 2.2 s;
// SqueezeNet 1.1 gives 18 MB). Large models would be better served by a
// binary sidecar (.npy/.safetensors bound to function arguments, as
// DESIGN.md foresees); that is future work.
//
// Locations: each op gets loc("<file>.onnx":<node index + 1>:1), so
// diagnostics of later passes point at the ONNX node; import diagnostics
// name the node (index and name), its op type and the model's opset.
// Ops that map to graph ops not (yet) registered are reported as
// unsupported at import time. README.md lists the ops per opset, the
// folding rules and the limits.
package onnx
