package runtime

import (
	"fmt"
	goruntime "runtime"
	"slices"
	"sort"
	"time"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Entry is one exported entry point of a compiled model, following the
// object code ABI:
//
//	int32_t <prefix>_<func>(const T0 *in0, ..., T *out0, ...)
//
// one pointer per tensor, inputs first then outputs, each pointing at the
// tensor's row-major elements in native byte order; the function returns 0
// on success and any other value on failure.
type Entry struct {
	lib     *Library
	symbol  string
	fn      uintptr
	inputs  []TensorSpec
	outputs []TensorSpec
}

// CallError is returned when an entry point returns a non-zero status.
type CallError struct {
	Symbol string
	Code   int32 // the int32_t the function returned
}

func (e *CallError) Error() string {
	return fmt.Sprintf("runtime: %s returned %d", e.Symbol, e.Code)
}

// emptyArg is the address passed for a tensor with zero elements, so the
// compiled code never receives NULL.
var emptyArg [Alignment]byte

// Func looks up symbol (see EntrySymbol) and binds it to the given input
// and output specs, which Call checks every tensor against. It returns an
// error when a spec is invalid, when there are more than MaxTensors
// tensors in all, or when the symbol is missing. The signature itself
// cannot be checked against the shared object: a wrong spec list makes
// the compiled code read or write out of bounds.
func (l *Library) Func(symbol string, inputs, outputs []TensorSpec) (*Entry, error) {
	if n := len(inputs) + len(outputs); n > MaxTensors {
		return nil, fmt.Errorf("runtime: %s takes %d tensors; at most %d are supported (purego.SyscallN's argument limit on this platform)", symbol, n, MaxTensors)
	}
	for i, s := range inputs {
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("runtime: %s input %d: %w", symbol, i, err)
		}
	}
	for i, s := range outputs {
		if err := s.Validate(); err != nil {
			return nil, fmt.Errorf("runtime: %s output %d: %w", symbol, i, err)
		}
	}
	fn, err := l.Symbol(symbol)
	if err != nil {
		return nil, err
	}
	clone := func(specs []TensorSpec) []TensorSpec {
		out := make([]TensorSpec, len(specs))
		for i, s := range specs {
			out[i] = TensorSpec{Name: s.Name, DType: s.DType, Shape: slices.Clone(s.Shape)}
		}
		return out
	}
	return &Entry{lib: l, symbol: symbol, fn: fn, inputs: clone(inputs), outputs: clone(outputs)}, nil
}

// Symbol is the entry point's exported name.
func (e *Entry) Symbol() string { return e.symbol }

// Inputs returns a copy of the input specs, in argument order.
func (e *Entry) Inputs() []TensorSpec { return slices.Clone(e.inputs) }

// Outputs returns a copy of the output specs, in argument order.
func (e *Entry) Outputs() []TensorSpec { return slices.Clone(e.outputs) }

// call is a validated argument list ready to be passed to the entry point.
type call struct {
	args   []uintptr
	pinner goruntime.Pinner
	keep   []*Tensor
}

func (c *call) release() {
	c.pinner.Unpin()
	goruntime.KeepAlive(c.keep)
}

// checkArgs validates tensors against specs: count, non-nil, dtype, shape.
func (e *Entry) checkArgs(kind string, specs []TensorSpec, ts []*Tensor) error {
	if len(ts) != len(specs) {
		return fmt.Errorf("runtime: %s takes %d %ss, got %d", e.symbol, len(specs), kind, len(ts))
	}
	for i, t := range ts {
		s := specs[i]
		name := fmt.Sprintf("%s %d", kind, i)
		if s.Name != "" {
			name += " (" + s.Name + ")"
		}
		if t == nil {
			return fmt.Errorf("runtime: %s %s is nil", e.symbol, name)
		}
		if t.dtype != s.DType || !slices.Equal(t.shape, s.Shape) {
			return fmt.Errorf("runtime: %s %s is %s, want %s", e.symbol, name, t.typeString(), typeString(s.DType, s.Shape))
		}
	}
	return nil
}

// prepare checks the tensors, rejects outputs that overlap any other
// argument, pins every buffer and builds the argument list.
func (e *Entry) prepare(inputs, outputs []*Tensor) (*call, error) {
	if err := e.checkArgs("input", e.inputs, inputs); err != nil {
		return nil, err
	}
	if err := e.checkArgs("output", e.outputs, outputs); err != nil {
		return nil, err
	}
	all := make([]*Tensor, 0, len(inputs)+len(outputs))
	all = append(all, inputs...)
	all = append(all, outputs...)
	for i := len(inputs); i < len(all); i++ {
		for j := range all {
			if j != i && overlap(all[i].data, all[j].data) {
				return nil, fmt.Errorf("runtime: %s output %d shares memory with %s; outputs must not alias other arguments", e.symbol, i-len(inputs), argName(j, len(inputs)))
			}
		}
	}
	c := &call{args: make([]uintptr, len(all)), keep: all}
	for i, t := range all {
		if len(t.data) == 0 {
			c.args[i] = uintptr(unsafe.Pointer(&emptyArg[0]))
			continue
		}
		p := &t.data[0]
		c.pinner.Pin(p)
		c.args[i] = uintptr(unsafe.Pointer(p))
	}
	return c, nil
}

func argName(i, nIn int) string {
	if i < nIn {
		return fmt.Sprintf("input %d", i)
	}
	return fmt.Sprintf("output %d", i-nIn)
}

// overlap reports whether two byte slices share any memory.
func overlap(a, b []byte) bool {
	if len(a) == 0 || len(b) == 0 {
		return false
	}
	a0, b0 := uintptr(unsafe.Pointer(&a[0])), uintptr(unsafe.Pointer(&b[0]))
	return a0 < b0+uintptr(len(b)) && b0 < a0+uintptr(len(a))
}

// invoke calls the entry point once; the caller holds e.lib.mu for reading.
func (e *Entry) invoke(c *call) error {
	r1, _, _ := purego.SyscallN(e.fn, c.args...)
	if code := int32(uint32(r1)); code != 0 {
		return &CallError{Symbol: e.symbol, Code: code}
	}
	return nil
}

// Call runs the entry point once on inputs, writing outputs in place. Each
// tensor must match its spec exactly (dtype and shape), and an output must
// not share memory with any other argument; violations are reported before
// anything is called. A non-zero return is reported as a *CallError
// carrying the code. Buffers are pinned and kept alive for the duration of
// the call. Calls on a closed library fail with ErrClosed.
func (e *Entry) Call(inputs, outputs []*Tensor) error {
	c, err := e.prepare(inputs, outputs)
	if err != nil {
		return err
	}
	defer c.release()
	e.lib.mu.RLock()
	defer e.lib.mu.RUnlock()
	if e.lib.handle == 0 {
		return fmt.Errorf("runtime: call %s: %w", e.symbol, ErrClosed)
	}
	return e.invoke(c)
}

// Timings are the measured wall-clock durations of an entry point, in
// seconds.
type Timings struct {
	// Seconds holds each timed repeat's duration in seconds, in run order.
	Seconds []float64
	// Median is the median of Seconds in seconds (the mean of the two
	// middle values for an even count).
	Median float64
}

// Bench measures the entry point for the autotuner's runner. It validates
// the tensors once as Call does, runs warmup untimed calls, then timed
// calls, one at a time, until at least minRepeats calls have run and their
// durations add up to at least minTime; at least one timed call always
// runs. Durations come from the monotonic clock and are returned in
// seconds. The outputs hold the last call's results. It returns an error
// for negative arguments, invalid tensors, a closed library, or the first
// non-zero return (a *CallError), with no timings.
func (e *Entry) Bench(inputs, outputs []*Tensor, warmup, minRepeats int, minTime time.Duration) (Timings, error) {
	return e.BenchEach(inputs, outputs, warmup, minRepeats, minTime, nil)
}

// BenchEach is Bench with before, when non-nil, called ahead of every
// call (warm-up and timed) outside the timed interval: the autotuner's
// runner flushes the arguments from the cache there (FlushCache).
func (e *Entry) BenchEach(inputs, outputs []*Tensor, warmup, minRepeats int, minTime time.Duration, before func()) (Timings, error) {
	if before == nil {
		before = func() {}
	}
	if warmup < 0 || minRepeats < 0 || minTime < 0 {
		return Timings{}, fmt.Errorf("runtime: bench %s: warmup (%d), minRepeats (%d) and minTime (%v) must not be negative", e.symbol, warmup, minRepeats, minTime)
	}
	c, err := e.prepare(inputs, outputs)
	if err != nil {
		return Timings{}, err
	}
	defer c.release()
	e.lib.mu.RLock()
	defer e.lib.mu.RUnlock()
	if e.lib.handle == 0 {
		return Timings{}, fmt.Errorf("runtime: bench %s: %w", e.symbol, ErrClosed)
	}
	for range warmup {
		before()
		if err := e.invoke(c); err != nil {
			return Timings{}, err
		}
	}
	var secs []float64
	var total time.Duration
	for len(secs) == 0 || len(secs) < minRepeats || total < minTime {
		before()
		start := time.Now()
		err := e.invoke(c)
		d := time.Since(start)
		if err != nil {
			return Timings{}, err
		}
		total += d
		secs = append(secs, d.Seconds())
	}
	return Timings{Seconds: secs, Median: Median(secs)}, nil
}

// Median is the median of a non-empty slice (the mean of the two middle
// values for an even length), without reordering it.
func Median(xs []float64) float64 {
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
