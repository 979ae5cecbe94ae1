// Package runtime loads code compiled by Tessera and moves tensors in and
// out of it.
//
// A compiled model is a shared object exporting one C function per entry
// point (DESIGN.md, "Object code ABI"):
//
//	int32_t <prefix>_<func>(const T *in0, ..., T *out0, ...)
//
// with one pointer per tensor to row-major elements, inputs then outputs,
// returning 0 on success. Open or OpenCopy loads the shared object with
// purego (no cgo needed), Library.Func binds a symbol to the tensor specs
// of its arguments, and Entry.Call / Entry.Bench run it on Tensors, which
// ReadNPY and WriteNPY exchange with NumPy .npy files.
//
//	lib, err := runtime.OpenCopy("lenet5.so")
//	...
//	defer lib.Close()
//	main, err := lib.Func(runtime.EntrySymbol("lenet5", "main"),
//		[]runtime.TensorSpec{{Name: "x", DType: runtime.Float32, Shape: []int64{1, 1, 28, 28}}},
//		[]runtime.TensorSpec{{Name: "y", DType: runtime.Float32, Shape: []int64{1, 10}}})
//	x, err := runtime.ReadNPY("x.npy")
//	y, err := runtime.NewTensor(runtime.Float32, []int64{1, 10})
//	err = main.Call([]*runtime.Tensor{x}, []*runtime.Tensor{y})
//	err = runtime.WriteNPY("y.npy", y)
//
// The package name shadows the standard library's runtime; importers that
// need both rename one (the tests use rt).
package runtime
