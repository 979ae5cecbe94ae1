package cuda

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// cudaDriver is the CUDA driver API (libcuda.so.1) through purego: no cgo
// and no toolkit, the _v2 entry points of the 64-bit API. It holds the
// primary context of device 0, current on the calling OS thread (the
// runtime locks it: every method runs on the thread that made the driver).
//
// Written from NVIDIA's driver API reference (cuda.h); it runs only where
// a GPU and its driver exist, which the CI machines lack.
type cudaDriver struct {
	lib uintptr
	ctx uintptr
	dev int32

	cuInit                    func(flags uint32) int32
	cuDeviceGet               func(dev *int32, ordinal int32) int32
	cuDevicePrimaryCtxRetain  func(ctx *uintptr, dev int32) int32
	cuDevicePrimaryCtxRelease func(dev int32) int32
	cuCtxSetCurrent           func(ctx uintptr) int32
	cuCtxSynchronize          func() int32
	cuModuleLoadDataEx        func(mod *uintptr, image unsafe.Pointer, n uint32, opts *int32, vals *uintptr) int32
	cuModuleGetFunction       func(fn *uintptr, mod uintptr, name *byte) int32
	cuMemAlloc                func(p *uint64, bytes uint64) int32
	cuMemFree                 func(p uint64) int32
	cuMemcpyHtoD              func(dst uint64, src unsafe.Pointer, bytes uint64) int32
	cuMemcpyDtoH              func(dst unsafe.Pointer, src uint64, bytes uint64) int32
	cuLaunchKernel            func(fn uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params *unsafe.Pointer, extra *unsafe.Pointer) int32
	cuEventCreate             func(ev *uintptr, flags uint32) int32
	cuEventRecord             func(ev uintptr, stream uintptr) int32
	cuEventSynchronize        func(ev uintptr) int32
	cuEventElapsedTime        func(ms *float32, start, end uintptr) int32
	cuEventDestroy            func(ev uintptr) int32
	cuGetErrorString          func(code int32, str **byte) int32
	allocs                    map[uint64]bool
	jitLogBytes               int
}

// JIT options of cuModuleLoadDataEx (cuda.h, CUjit_option).
const (
	jitErrorLogBuffer          = 5
	jitErrorLogBufferSizeBytes = 6
)

// newCUDADriver opens libcuda.so.1, initializes the driver and makes the
// primary context of device 0 current on this (locked) OS thread.
// Errors: no driver ("no CUDA driver: libcuda.so.1 not found"), or the
// driver's, named.
func newCUDADriver() (*cudaDriver, error) {
	lib, err := purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("no CUDA driver: libcuda.so.1 not found")
	}
	d := &cudaDriver{lib: lib, allocs: map[uint64]bool{}, jitLogBytes: 1 << 14}
	for name, fn := range map[string]any{
		"cuInit": &d.cuInit, "cuDeviceGet": &d.cuDeviceGet,
		"cuDevicePrimaryCtxRetain": &d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRelease_v2": &d.cuDevicePrimaryCtxRelease,
		"cuCtxSetCurrent": &d.cuCtxSetCurrent, "cuCtxSynchronize": &d.cuCtxSynchronize,
		"cuModuleLoadDataEx": &d.cuModuleLoadDataEx, "cuModuleGetFunction": &d.cuModuleGetFunction,
		"cuMemAlloc_v2": &d.cuMemAlloc, "cuMemFree_v2": &d.cuMemFree,
		"cuMemcpyHtoD_v2": &d.cuMemcpyHtoD, "cuMemcpyDtoH_v2": &d.cuMemcpyDtoH,
		"cuLaunchKernel": &d.cuLaunchKernel,
		"cuEventCreate":  &d.cuEventCreate, "cuEventRecord": &d.cuEventRecord, "cuEventSynchronize": &d.cuEventSynchronize,
		"cuEventElapsedTime": &d.cuEventElapsedTime, "cuEventDestroy_v2": &d.cuEventDestroy,
		"cuGetErrorString": &d.cuGetErrorString,
	} {
		if _, err := purego.Dlsym(lib, name); err != nil {
			purego.Dlclose(lib)
			return nil, fmt.Errorf("cuda: libcuda.so.1 lacks %s (driver too old?)", name)
		}
		purego.RegisterLibFunc(fn, lib, name)
	}
	runtime.LockOSThread()
	if err := d.check("cuInit", d.cuInit(0)); err != nil {
		return nil, d.fail(err)
	}
	if err := d.check("cuDeviceGet", d.cuDeviceGet(&d.dev, 0)); err != nil {
		return nil, d.fail(err)
	}
	if err := d.check("cuDevicePrimaryCtxRetain", d.cuDevicePrimaryCtxRetain(&d.ctx, d.dev)); err != nil {
		return nil, d.fail(err)
	}
	if err := d.check("cuCtxSetCurrent", d.cuCtxSetCurrent(d.ctx)); err != nil {
		return nil, d.fail(err)
	}
	return d, nil
}

func (d *cudaDriver) fail(err error) error {
	runtime.UnlockOSThread()
	purego.Dlclose(d.lib)
	return err
}

// check turns a CUresult into an error naming the call.
func (d *cudaDriver) check(call string, code int32) error {
	if code == 0 {
		return nil
	}
	var s *byte
	msg := "unknown error"
	if d.cuGetErrorString != nil && d.cuGetErrorString(code, &s) == 0 && s != nil {
		msg = cString(s)
	}
	return fmt.Errorf("%s: CUDA error %d: %s", call, code, msg)
}

// cString copies a NUL-terminated C string.
func cString(p *byte) string {
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}

// LoadModule JIT-compiles the PTX; a failure returns the JIT error log.
func (d *cudaDriver) LoadModule(ptx []byte) (uintptr, error) {
	image := append(append([]byte(nil), ptx...), 0)
	log := make([]byte, d.jitLogBytes)
	opts := []int32{jitErrorLogBuffer, jitErrorLogBufferSizeBytes}
	vals := []uintptr{uintptr(unsafe.Pointer(&log[0])), uintptr(len(log))} // option values are void*
	var mod uintptr
	code := d.cuModuleLoadDataEx(&mod, unsafe.Pointer(&image[0]), uint32(len(opts)), &opts[0], &vals[0])
	runtime.KeepAlive(image)
	runtime.KeepAlive(log)
	if err := d.check("cuModuleLoadDataEx", code); err != nil {
		return 0, fmt.Errorf("%v\n%s", err, cString(&log[0]))
	}
	return mod, nil
}

// Function looks a kernel up by name.
func (d *cudaDriver) Function(mod uintptr, name string) (uintptr, error) {
	cname := append([]byte(name), 0)
	var fn uintptr
	return fn, d.check("cuModuleGetFunction("+name+")", d.cuModuleGetFunction(&fn, mod, &cname[0]))
}

// Alloc allocates device memory (cuMemAlloc: 256-byte aligned).
func (d *cudaDriver) Alloc(bytes int64) (uint64, error) {
	var p uint64
	if err := d.check("cuMemAlloc", d.cuMemAlloc(&p, uint64(bytes))); err != nil {
		return 0, err
	}
	d.allocs[p] = true
	return p, nil
}

// Free releases device memory.
func (d *cudaDriver) Free(p uint64) error {
	delete(d.allocs, p)
	return d.check("cuMemFree", d.cuMemFree(p))
}

// CopyHtoD copies src to device memory at dst (synchronous).
func (d *cudaDriver) CopyHtoD(dst uint64, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return d.check("cuMemcpyHtoD", d.cuMemcpyHtoD(dst, unsafe.Pointer(&src[0]), uint64(len(src))))
}

// CopyDtoH copies device memory at src to dst (synchronous).
func (d *cudaDriver) CopyDtoH(dst []byte, src uint64) error {
	if len(dst) == 0 {
		return nil
	}
	return d.check("cuMemcpyDtoH", d.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), src, uint64(len(dst))))
}

// Launch launches fn on the default stream; kernel parameters are the
// addresses of the argument values (cuLaunchKernel's kernelParams).
func (d *cudaDriver) Launch(fn uintptr, l launch, args []uint64) error {
	vals := append([]uint64(nil), args...)
	params := make([]unsafe.Pointer, len(vals))
	for i := range vals {
		params[i] = unsafe.Pointer(&vals[i])
	}
	var pp *unsafe.Pointer
	if len(params) > 0 {
		pp = &params[0]
	}
	code := d.cuLaunchKernel(fn, uint32(l.Grid[0]), uint32(l.Grid[1]), uint32(l.Grid[2]),
		uint32(l.Block[0]), uint32(l.Block[1]), uint32(l.Block[2]), 0, 0, pp, nil)
	runtime.KeepAlive(vals)
	runtime.KeepAlive(params)
	return d.check("cuLaunchKernel", code)
}

// Elapsed records an event, runs work, records another and returns the
// seconds between them once the second has completed.
func (d *cudaDriver) Elapsed(work func() error) (float64, error) {
	var start, end uintptr
	if err := d.check("cuEventCreate", d.cuEventCreate(&start, 0)); err != nil {
		return 0, err
	}
	defer d.cuEventDestroy(start)
	if err := d.check("cuEventCreate", d.cuEventCreate(&end, 0)); err != nil {
		return 0, err
	}
	defer d.cuEventDestroy(end)
	if err := d.check("cuEventRecord", d.cuEventRecord(start, 0)); err != nil {
		return 0, err
	}
	if err := work(); err != nil {
		return 0, err
	}
	if err := d.check("cuEventRecord", d.cuEventRecord(end, 0)); err != nil {
		return 0, err
	}
	if err := d.check("cuEventSynchronize", d.cuEventSynchronize(end)); err != nil {
		return 0, err
	}
	var ms float32
	if err := d.check("cuEventElapsedTime", d.cuEventElapsedTime(&ms, start, end)); err != nil {
		return 0, err
	}
	return float64(ms) / 1e3, nil
}

// Close frees the remaining allocations and releases the context.
func (d *cudaDriver) Close() error {
	err := d.check("cuCtxSynchronize", d.cuCtxSynchronize())
	for p := range d.allocs {
		if e := d.Free(p); err == nil {
			err = e
		}
	}
	if e := d.check("cuDevicePrimaryCtxRelease", d.cuDevicePrimaryCtxRelease(d.dev)); err == nil {
		err = e
	}
	runtime.UnlockOSThread()
	purego.Dlclose(d.lib)
	return err
}
