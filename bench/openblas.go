package main

import (
	"fmt"
	"os"
	"sort"
	"sync"
	"time"

	"github.com/ebitengine/purego"
)

// openBLASNames are the sonames tried, in order: Debian's libopenblas0
// (pthread or openmp flavour through the alternatives link), then the
// development symlink.
var openBLASNames = []string{"libopenblas.so.0", "libopenblas.so"}

const (
	cblasRowMajor = 101
	cblasNoTrans  = 111
)

// OpenBLAS is Debian's libopenblas loaded with purego.
type OpenBLAS struct {
	Path     string
	CoreName string // the kernel set OpenBLAS picked (openblas_get_corename)
	Config   string // openblas_get_config
	handle   uintptr
	sgemm    func(order, transA, transB, m, n, k int32, alpha float32, a *float32, lda int32, b *float32, ldb int32, beta float32, c *float32, ldc int32)
	setThr   func(n int32)
	getThr   func() int32
	threads  int
}

var (
	openBLASOnce sync.Once
	openBLASLib  *OpenBLAS
	openBLASErr  error
)

// LoadOpenBLAS loads libopenblas once per process. It unsets
// OPENBLAS_CORETYPE first: this machine's environment sets it to Haswell,
// which forces the AVX2 kernels (DESIGN.md, "Anchors at their best"), and
// OpenBLAS reads it when the library is loaded. The parent process also
// starts every worker without it.
func LoadOpenBLAS() (*OpenBLAS, error) {
	openBLASOnce.Do(func() { openBLASLib, openBLASErr = loadOpenBLAS() })
	return openBLASLib, openBLASErr
}

func loadOpenBLAS() (*OpenBLAS, error) {
	if err := os.Unsetenv("OPENBLAS_CORETYPE"); err != nil {
		return nil, err
	}
	var errs []error
	for _, name := range openBLASNames {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		b := &OpenBLAS{Path: name, handle: h}
		purego.RegisterLibFunc(&b.sgemm, h, "cblas_sgemm")
		purego.RegisterLibFunc(&b.setThr, h, "openblas_set_num_threads")
		purego.RegisterLibFunc(&b.getThr, h, "openblas_get_num_threads")
		var corename, config func() string
		purego.RegisterLibFunc(&corename, h, "openblas_get_corename")
		purego.RegisterLibFunc(&config, h, "openblas_get_config")
		b.CoreName, b.Config = corename(), config()
		b.threads = int(b.getThr())
		return b, nil
	}
	return nil, fmt.Errorf("OpenBLAS not found (install libopenblas0-pthread): %v", errs)
}

// SetThreads sets OpenBLAS's thread count (openblas_set_num_threads); the
// im2col of the conv anchor uses as many goroutines.
func (b *OpenBLAS) SetThreads(n int) {
	b.setThr(int32(n))
	b.threads = n
}

// Threads is the thread count OpenBLAS reports.
func (b *OpenBLAS) Threads() int { return int(b.getThr()) }

// Sgemm computes c[m,n] = a[m,k] · w[k,n], row-major, with cblas_sgemm.
func (b *OpenBLAS) Sgemm(m, n, k int, a, w, c []float32) {
	b.sgemm(cblasRowMajor, cblasNoTrans, cblasNoTrans, int32(m), int32(n), int32(k),
		1, &a[0], int32(k), &w[0], int32(n), 0, &c[0], int32(n))
}

// blasRun is one workload prepared for OpenBLAS.
type blasRun struct {
	b    *OpenBLAS
	w    Workload
	in   [][]float32
	col  []float32 // conv: im2col buffer [C·9, H·W]
	out  []float32
	call func()
}

// newBLASRun prepares w: a GEMM is one cblas_sgemm; a conv is im2col of
// the zero-padded input into col[Cin·9, H·W] followed by cblas_sgemm of
// the weights viewed as [Cout, Cin·9] with col, which yields the NCHW
// output [Cout, H·W] directly. The conv time includes the im2col.
func newBLASRun(b *OpenBLAS, w Workload) *blasRun {
	r := &blasRun{b: b, w: w, in: w.RandomInputs()}
	n := 1
	for _, d := range w.OutputShape() {
		n *= int(d)
	}
	r.out = make([]float32, n)
	if w.Kind == KindGEMM {
		r.call = func() { b.Sgemm(w.M, w.N, w.K, r.in[0], r.in[1], r.out) }
		return r
	}
	hw := w.H * w.W
	r.col = make([]float32, w.C*9*hw)
	r.call = func() {
		im2col3x3(r.in[0], r.col, w.C, w.H, w.W, b.threads)
		b.Sgemm(w.C, hw, w.C*9, r.in[1], r.col, r.out)
	}
	return r
}

// im2col3x3 writes col[(ci·9 + ky·3 + kx), oy·W + ox] = x[ci, oy+ky−1,
// ox+kx−1] (zero outside the image), splitting the channels over threads
// goroutines.
func im2col3x3(x, col []float32, c, h, w, threads int) {
	do := func(c0, c1 int) {
		for ci := c0; ci < c1; ci++ {
			img := x[ci*h*w : (ci+1)*h*w]
			for ky := range 3 {
				for kx := range 3 {
					dst := col[((ci*9)+ky*3+kx)*h*w:][:h*w]
					for oy := range h {
						row := dst[oy*w : (oy+1)*w]
						iy := oy + ky - 1
						if iy < 0 || iy >= h {
							clear(row)
							continue
						}
						src := img[iy*w : (iy+1)*w]
						switch kx {
						case 0: // ix = ox − 1
							row[0] = 0
							copy(row[1:], src[:w-1])
						case 1:
							copy(row, src)
						case 2: // ix = ox + 1
							copy(row[:w-1], src[1:])
							row[w-1] = 0
						}
					}
				}
			}
		}
	}
	if threads <= 1 || c < 2 {
		do(0, c)
		return
	}
	var wg sync.WaitGroup
	per := (c + threads - 1) / threads
	for c0 := 0; c0 < c; c0 += per {
		wg.Add(1)
		go func(c0, c1 int) {
			defer wg.Done()
			do(c0, c1)
		}(c0, min(c0+per, c))
	}
	wg.Wait()
}

// Check runs once and compares with the naive reference.
func (r *blasRun) Check() (float64, error) {
	r.call()
	return r.w.Check(r.in, r.out)
}

// Bench times r like runtime.Entry.Bench: warmup untimed calls, then
// timed calls until at least repeats have run and they add up to at least
// minTime. It returns each duration in seconds and their median.
func (r *blasRun) Bench(warmup, repeats int, minTime time.Duration) ([]float64, float64) {
	return timeLoop(r.call, warmup, repeats, minTime)
}

func timeLoop(f func(), warmup, repeats int, minTime time.Duration) ([]float64, float64) {
	for range warmup {
		f()
	}
	var secs []float64
	var total time.Duration
	for len(secs) == 0 || len(secs) < repeats || total < minTime {
		start := time.Now()
		f()
		d := time.Since(start)
		total += d
		secs = append(secs, d.Seconds())
	}
	return secs, median(secs)
}

// median of a non-empty slice, without reordering it.
func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
