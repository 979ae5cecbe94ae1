// Package onnxpb holds the Go protobuf bindings of ONNX's onnx.proto
// (copied unchanged from the onnx Python package of Debian's
// python3-onnx, /usr/lib/python3/dist-packages/onnx/onnx.proto, Apache-2.0,
// see the SPDX header of onnx.proto).
//
// onnx.pb.go is generated with protoc 3.21.12 (Debian's protobuf-compiler,
// libprotoc 3.21.12) and protoc-gen-go v1.36.12
// (go install google.golang.org/protobuf/cmd/protoc-gen-go@v1.36.12);
// rerun `go generate` in this folder to regenerate it.
package onnxpb

//go:generate protoc --proto_path=. --go_out=. --go_opt=paths=source_relative --go_opt=Monnx.proto=github.com/tessera-ml/tessera/dialects/graph/onnx/onnxpb onnx.proto
