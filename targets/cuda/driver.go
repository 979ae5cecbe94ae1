package cuda

import (
	"fmt"
	"runtime"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"

	"github.com/tessera-ml/tessera/targets"
)

// cudaAPI is the CUDA driver API (libcuda.so.1) through purego: no cgo
// and no toolkit, the _v2 entry points of the 64-bit API. One per process
// (openAPI): the driver is initialized once and the primary context of
// device 0 retained once and kept, so loading many models (the tuner's
// candidates, a test suite) does not create a context per model.
//
// Written from NVIDIA's driver API reference (cuda.h).
type cudaAPI struct {
	lib uintptr
	ctx uintptr
	dev int32

	cuInit                   func(flags uint32) int32
	cuDeviceGet              func(dev *int32, ordinal int32) int32
	cuDevicePrimaryCtxRetain func(ctx *uintptr, dev int32) int32
	cuCtxSetCurrent          func(ctx uintptr) int32
	cuCtxSynchronize         func() int32
	cuModuleLoadDataEx       func(mod *uintptr, image unsafe.Pointer, n uint32, opts *int32, vals *uintptr) int32
	cuModuleUnload           func(mod uintptr) int32
	cuModuleGetFunction      func(fn *uintptr, mod uintptr, name *byte) int32
	cuMemAlloc               func(p *uint64, bytes uint64) int32
	cuMemFree                func(p uint64) int32
	cuMemcpyHtoD             func(dst uint64, src unsafe.Pointer, bytes uint64) int32
	cuMemcpyDtoH             func(dst unsafe.Pointer, src uint64, bytes uint64) int32
	cuLaunchKernel           func(fn uintptr, gx, gy, gz, bx, by, bz, shared uint32, stream uintptr, params *unsafe.Pointer, extra *unsafe.Pointer) int32
	cuEventCreate            func(ev *uintptr, flags uint32) int32
	cuEventRecord            func(ev uintptr, stream uintptr) int32
	cuEventSynchronize       func(ev uintptr) int32
	cuEventElapsedTime       func(ms *float32, start, end uintptr) int32
	cuEventDestroy           func(ev uintptr) int32
	cuGetErrorString         func(code int32, str **byte) int32
}

// JIT options of cuModuleLoadDataEx (cuda.h, CUjit_option).
const (
	jitErrorLogBuffer          = 5
	jitErrorLogBufferSizeBytes = 6
)

var (
	apiOnce sync.Once
	apiVal  *cudaAPI
	apiErr  error
)

// openAPI opens libcuda.so.1, initializes the driver and retains the
// primary context of device 0, once per process. Errors: no driver ("no
// CUDA driver: libcuda.so.1 not found"), a driver without an entry point
// used here, or the driver's, named.
func openAPI() (*cudaAPI, error) {
	apiOnce.Do(func() { apiVal, apiErr = newAPI() })
	return apiVal, apiErr
}

func newAPI() (*cudaAPI, error) {
	lib, err := purego.Dlopen("libcuda.so.1", purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, fmt.Errorf("no CUDA driver: libcuda.so.1 not found")
	}
	a := &cudaAPI{lib: lib}
	for name, fn := range map[string]any{
		"cuInit": &a.cuInit, "cuDeviceGet": &a.cuDeviceGet,
		"cuDevicePrimaryCtxRetain": &a.cuDevicePrimaryCtxRetain,
		"cuCtxSetCurrent":          &a.cuCtxSetCurrent, "cuCtxSynchronize": &a.cuCtxSynchronize,
		"cuModuleLoadDataEx": &a.cuModuleLoadDataEx, "cuModuleUnload": &a.cuModuleUnload,
		"cuModuleGetFunction": &a.cuModuleGetFunction,
		"cuMemAlloc_v2":       &a.cuMemAlloc, "cuMemFree_v2": &a.cuMemFree,
		"cuMemcpyHtoD_v2": &a.cuMemcpyHtoD, "cuMemcpyDtoH_v2": &a.cuMemcpyDtoH,
		"cuLaunchKernel": &a.cuLaunchKernel,
		"cuEventCreate":  &a.cuEventCreate, "cuEventRecord": &a.cuEventRecord, "cuEventSynchronize": &a.cuEventSynchronize,
		"cuEventElapsedTime": &a.cuEventElapsedTime, "cuEventDestroy_v2": &a.cuEventDestroy,
		"cuGetErrorString": &a.cuGetErrorString,
	} {
		if _, err := purego.Dlsym(lib, name); err != nil {
			purego.Dlclose(lib)
			return nil, fmt.Errorf("cuda: libcuda.so.1 lacks %s (driver too old?)", name)
		}
		purego.RegisterLibFunc(fn, lib, name)
	}
	if err := a.check("cuInit", a.cuInit(0)); err != nil {
		return nil, err
	}
	if err := a.check("cuDeviceGet", a.cuDeviceGet(&a.dev, 0)); err != nil {
		return nil, err
	}
	if err := a.check("cuDevicePrimaryCtxRetain", a.cuDevicePrimaryCtxRetain(&a.ctx, a.dev)); err != nil {
		return nil, err
	}
	return a, nil
}

// cudaDriver is one loaded model's use of the driver API: its modules and
// device memory, released by Close. Every call makes the primary context
// current on the calling OS thread (goroutines move between threads), with
// the thread locked for the call.
type cudaDriver struct {
	a           *cudaAPI
	allocs      map[uint64]bool
	modules     []uintptr
	jitLogBytes int
}

// newCUDADriver opens the driver API (openAPI) for one model.
func newCUDADriver() (*cudaDriver, error) {
	a, err := openAPI()
	if err != nil {
		return nil, err
	}
	return &cudaDriver{a: a, allocs: map[uint64]bool{}, jitLogBytes: 1 << 14}, nil
}

// do runs call with the context current on a locked OS thread and names
// its error.
func (d *cudaDriver) do(name string, call func() int32) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := d.a.check("cuCtxSetCurrent", d.a.cuCtxSetCurrent(d.a.ctx)); err != nil {
		return err
	}
	return d.a.check(name, call())
}

// check turns a CUresult into an error naming the call.
func (a *cudaAPI) check(call string, code int32) error {
	if code == 0 {
		return nil
	}
	var s *byte
	msg := "unknown error"
	if a.cuGetErrorString != nil && a.cuGetErrorString(code, &s) == 0 && s != nil {
		msg = cString(s)
	}
	if stickyErrors[code] {
		return fmt.Errorf("%s: CUDA error %d: %s: %w", call, code, msg, targets.ErrDeviceLost)
	}
	return fmt.Errorf("%s: CUDA error %d: %s", call, code, msg)
}

// stickyErrors are the CUresults after which the context is unusable
// (cuda.h: a kernel's fault; every later call returns the same error).
var stickyErrors = map[int32]bool{
	700: true, // CUDA_ERROR_ILLEGAL_ADDRESS
	702: true, // CUDA_ERROR_LAUNCH_TIMEOUT
	714: true, // CUDA_ERROR_HARDWARE_STACK_ERROR
	715: true, // CUDA_ERROR_ILLEGAL_INSTRUCTION
	716: true, // CUDA_ERROR_MISALIGNED_ADDRESS
	717: true, // CUDA_ERROR_INVALID_ADDRESS_SPACE
	718: true, // CUDA_ERROR_INVALID_PC
	719: true, // CUDA_ERROR_LAUNCH_FAILED
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
	err := d.do("cuModuleLoadDataEx", func() int32 {
		return d.a.cuModuleLoadDataEx(&mod, unsafe.Pointer(&image[0]), uint32(len(opts)), &opts[0], &vals[0])
	})
	runtime.KeepAlive(image)
	runtime.KeepAlive(log)
	if err != nil {
		return 0, fmt.Errorf("%v\n%s", err, cString(&log[0]))
	}
	d.modules = append(d.modules, mod)
	return mod, nil
}

// Function looks a kernel up by name.
func (d *cudaDriver) Function(mod uintptr, name string) (uintptr, error) {
	cname := append([]byte(name), 0)
	var fn uintptr
	return fn, d.do("cuModuleGetFunction("+name+")", func() int32 { return d.a.cuModuleGetFunction(&fn, mod, &cname[0]) })
}

// Alloc allocates device memory (cuMemAlloc: 256-byte aligned).
func (d *cudaDriver) Alloc(bytes int64) (uint64, error) {
	var p uint64
	if err := d.do("cuMemAlloc", func() int32 { return d.a.cuMemAlloc(&p, uint64(bytes)) }); err != nil {
		return 0, err
	}
	d.allocs[p] = true
	return p, nil
}

// Free releases device memory.
func (d *cudaDriver) Free(p uint64) error {
	delete(d.allocs, p)
	return d.do("cuMemFree", func() int32 { return d.a.cuMemFree(p) })
}

// CopyHtoD copies src to device memory at dst (synchronous).
func (d *cudaDriver) CopyHtoD(dst uint64, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	return d.do("cuMemcpyHtoD", func() int32 { return d.a.cuMemcpyHtoD(dst, unsafe.Pointer(&src[0]), uint64(len(src))) })
}

// CopyDtoH copies device memory at src to dst (synchronous).
func (d *cudaDriver) CopyDtoH(dst []byte, src uint64) error {
	if len(dst) == 0 {
		return nil
	}
	return d.do("cuMemcpyDtoH", func() int32 { return d.a.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), src, uint64(len(dst))) })
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
	err := d.do("cuLaunchKernel", func() int32 {
		return d.a.cuLaunchKernel(fn, uint32(l.Grid[0]), uint32(l.Grid[1]), uint32(l.Grid[2]),
			uint32(l.Block[0]), uint32(l.Block[1]), uint32(l.Block[2]), 0, 0, pp, nil)
	})
	runtime.KeepAlive(vals)
	runtime.KeepAlive(params)
	return err
}

// Elapsed records an event, runs work, records another and returns the
// seconds between them once the second has completed.
func (d *cudaDriver) Elapsed(work func() error) (float64, error) {
	var start, end uintptr
	if err := d.do("cuEventCreate", func() int32 { return d.a.cuEventCreate(&start, 0) }); err != nil {
		return 0, err
	}
	defer d.do("cuEventDestroy", func() int32 { return d.a.cuEventDestroy(start) })
	if err := d.do("cuEventCreate", func() int32 { return d.a.cuEventCreate(&end, 0) }); err != nil {
		return 0, err
	}
	defer d.do("cuEventDestroy", func() int32 { return d.a.cuEventDestroy(end) })
	if err := d.do("cuEventRecord", func() int32 { return d.a.cuEventRecord(start, 0) }); err != nil {
		return 0, err
	}
	if err := work(); err != nil {
		return 0, err
	}
	if err := d.do("cuEventRecord", func() int32 { return d.a.cuEventRecord(end, 0) }); err != nil {
		return 0, err
	}
	if err := d.do("cuEventSynchronize", func() int32 { return d.a.cuEventSynchronize(end) }); err != nil {
		return 0, err
	}
	var ms float32
	if err := d.do("cuEventElapsedTime", func() int32 { return d.a.cuEventElapsedTime(&ms, start, end) }); err != nil {
		return 0, err
	}
	return float64(ms) / 1e3, nil
}

// Close waits for the device, frees the model's memory and unloads its
// modules; the context stays for the process's next model.
func (d *cudaDriver) Close() error {
	err := d.do("cuCtxSynchronize", d.a.cuCtxSynchronize)
	for p := range d.allocs {
		if e := d.Free(p); err == nil {
			err = e
		}
	}
	for _, m := range d.modules {
		if e := d.do("cuModuleUnload", func() int32 { return d.a.cuModuleUnload(m) }); err == nil {
			err = e
		}
	}
	d.modules = nil
	return err
}
