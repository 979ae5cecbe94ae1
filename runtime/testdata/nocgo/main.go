// Command nocgo loads the runtime tests' shared object and calls it; the
// runtime tests build it with CGO_ENABLED=0 to show purego needs no cgo.
package main

import (
	"fmt"
	"os"

	rt "github.com/tessera-ml/tessera/runtime"
)

func main() {
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(so string) error {
	if err := rt.SetNumThreads(3); err != nil {
		return err
	}
	lib, err := rt.OpenCopy(so)
	if err != nil {
		return err
	}
	defer lib.Close()
	e, err := lib.Func("t_main",
		[]rt.TensorSpec{{DType: rt.Float32, Shape: []int64{2, 3}}, {DType: rt.Float32, Shape: []int64{3, 4}}},
		[]rt.TensorSpec{{DType: rt.Float32, Shape: []int64{2, 4}}})
	if err != nil {
		return err
	}
	x, _ := rt.FromSlice([]int64{2, 3}, []float32{1, 2, 3, 4, 5, 6})
	w, _ := rt.FromSlice([]int64{3, 4}, []float32{1, 0, 0, 2, 0, 1, 0, 3, 0, 0, 1, 4})
	y, _ := rt.NewTensor(rt.Float32, []int64{2, 4})
	if err := e.Call([]*rt.Tensor{x, w}, []*rt.Tensor{y}); err != nil {
		return err
	}
	env, err := lib.Func("t_env", nil, []rt.TensorSpec{{DType: rt.Int64, Shape: []int64{2}}})
	if err != nil {
		return err
	}
	threads, _ := rt.NewTensor(rt.Int64, []int64{2})
	if err := env.Call(nil, []*rt.Tensor{threads}); err != nil {
		return err
	}
	ys, _ := y.Float32s()
	ts, _ := threads.Int64s()
	fmt.Printf("cgo=%v y=%v threads=%d/%d\n", cgoEnabled, ys, ts[0], ts[1])
	return nil
}
