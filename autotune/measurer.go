package autotune

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strconv"
	"sync"
	"time"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// MeasureOptions configure the builder and runner (TVM's LocalBuilder
// and LocalRunner).
type MeasureOptions struct {
	// Builders is the number of parallel builder processes (default: the
	// number of CPUs). Builds run while nothing is being timed.
	Builders int
	// BuildTimeout bounds one candidate's replay and code generation
	// (default 120 s); RunTimeout one candidate's correctness run plus
	// its timed repeats (default 30 s).
	BuildTimeout, RunTimeout time.Duration
	// Warmup untimed calls, then at least Repeats timed calls lasting at
	// least MinRepeatSeconds in all (defaults 1, 5, 0.1 s).
	Warmup, Repeats  int
	MinRepeatSeconds float64
	// CacheFlush evicts the task's constant arguments (Task.Constants: the
	// model's weights and biases) and its outputs from the CPU cache
	// before each call (runtime.FlushCache), so a candidate is timed as it
	// runs inside a model whose weights do not fit in the last-level cache
	// and come from memory on every inference, and whose output buffers
	// were last touched several kernels earlier, while its input
	// activations, just written by the kernel before, stay warm. (With
	// the outputs left warm, ResNet-18's layer-1 convolution ranked
	// schedules 3-8% faster than the default rules' alone that were
	// 4-35% slower in the model; with them flushed the ranks agree.) A
	// task without constants (a kernel tuned on its own) gets TVM's rule
	// instead: every argument but the first (LocalRunner's
	// enable_cpu_cache_flush with cache_flush_cpu_non_first_arg). Default
	// off: warm caches.
	CacheFlush bool
	// KeepLayouts measures candidates with the task's constant arguments
	// row-major. By default each candidate reads them in the layout the
	// compiled model stores them in (the rewrite-layout step,
	// tensorir.RewriteParamLayouts: the builder rewrites the candidate,
	// the runner transposes its random inputs untimed), as TVM
	// MetaSchedule's RewriteLayout postprocessor does for the candidates
	// it measures; a schedule timed on row-major weights it then never
	// reads that way ranks wrongly (ResNet-18's 3×3 convolutions of
	// layer 4 took 3.1 ms so under the default rules and 1.7 ms in the
	// model). Set it for a model compiled with --keep-layouts.
	KeepLayouts bool
	// Target builds and loads the candidates (Tune sets it to the job's
	// target); its Threads are the runner's parallel loops
	// (TESSERA_NUM_THREADS).
	Target targets.Target
	// Tolerance is the largest accepted max|got − ref| / max(1, max|ref|)
	// against the interpreter (default: the target's Tolerance).
	Tolerance float64
	// WorkerCommand starts a worker (default: this executable, whose main
	// must call MaybeRunWorker).
	WorkerCommand []string
	// WorkDir holds shared objects and references (default: a temporary
	// directory removed by Close).
	WorkDir string
	// RefCache keeps the interpreter's reference outputs across jobs,
	// one .npy per output named by the SHA-256 of the kernel text and the
	// input seed, so a resumed job or another job on the same kernel does
	// not run the interpreter again (default: tessera/autotune-ref under
	// os.UserCacheDir; "off" disables it).
	RefCache string
	// InjectFault, when set, names a fault (fault.go) to inject into the
	// n-th candidate built by this measurer (from 0), for tests.
	InjectFault func(n int) string
}

func (o MeasureOptions) withDefaults() MeasureOptions {
	if o.Builders <= 0 {
		o.Builders = goruntime.NumCPU()
	}
	if o.BuildTimeout <= 0 {
		o.BuildTimeout = 120 * time.Second
	}
	if o.RunTimeout <= 0 {
		o.RunTimeout = 30 * time.Second
	}
	if o.Warmup <= 0 {
		o.Warmup = 1
	}
	if o.Repeats <= 0 {
		o.Repeats = 5
	}
	if o.MinRepeatSeconds <= 0 {
		o.MinRepeatSeconds = 0.1
	}
	if o.Tolerance <= 0 && o.Target != nil {
		o.Tolerance = o.Target.Tolerance()
	}
	if o.RefCache == "" {
		if dir, err := os.UserCacheDir(); err == nil {
			o.RefCache = filepath.Join(dir, "tessera", "autotune-ref")
		} else {
			o.RefCache = RefCacheOff
		}
	}
	return o
}

// Measurer builds and runs candidates in worker processes.
type Measurer struct {
	opts     MeasureOptions
	dir      string
	ownDir   bool
	builders []*worker
	runner   *worker
	refs     map[string]*taskRef // by workload key
	built    int
	seq      int
}

// taskRef is what the runner checks a task's candidates against.
type taskRef struct {
	kernel string // the unscheduled kernel's module text
	params []paramSpec
	seed   int64
	flush  []int // parameters flushed before each timed call (CacheFlush)
	err    error // the interpreter failed: candidates are not checked
}

// NewMeasurer starts nothing yet (workers start on first use).
// Errors: no executable to run as a worker, an unusable work directory.
func NewMeasurer(opts MeasureOptions) (*Measurer, error) {
	opts = opts.withDefaults()
	if len(opts.WorkerCommand) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("autotune: no worker command: %v", err)
		}
		opts.WorkerCommand = []string{exe}
	}
	m := &Measurer{opts: opts, dir: opts.WorkDir, refs: map[string]*taskRef{}}
	if m.dir == "" {
		dir, err := os.MkdirTemp("", "tessera-tune-")
		if err != nil {
			return nil, err
		}
		m.dir, m.ownDir = dir, true
	} else if err := os.MkdirAll(m.dir, 0o755); err != nil {
		return nil, err
	}
	if opts.Target == nil {
		return nil, fmt.Errorf("autotune: no target to build candidates for")
	}
	env := []string{rt.NumThreadsEnv + "=" + strconv.Itoa(opts.Target.Options().Threads)}
	for range opts.Builders {
		m.builders = append(m.builders, newWorker("build", opts.WorkerCommand, nil))
	}
	m.runner = newWorker("run", opts.WorkerCommand, env)
	return m, nil
}

// Close stops the workers and removes a temporary work directory.
func (m *Measurer) Close() {
	for _, b := range m.builders {
		b.close()
	}
	m.runner.close()
	if m.ownDir {
		os.RemoveAll(m.dir)
	}
}

// Result is the outcome of measuring one candidate.
type Result struct {
	Seconds []float64
	Error   string // "" or ErrBuild, ErrRun, ErrTimeout, ErrWrong
	Msg     string
	// Host is the fingerprint of the remote host that measured the
	// candidate ("": measured here; Record.Host).
	Host string
	// layouts are the candidate's rewritten constant parameters (from
	// its build, for its run).
	layouts []tir.ParamLayout
}

// Measure builds cands (of task t) in parallel, then runs them one at a
// time; stop, checked before each run, ends the batch early (the rest
// get no result: the returned slice is shorter). onResult is called after
// each candidate's run.
func (m *Measurer) Measure(t *Task, cands []*Candidate, stop func() bool, onResult func(i int, r Result)) {
	ref := m.reference(t)
	sos := make([]string, len(cands))
	builds := make([]Result, len(cands))
	faults := make([]string, len(cands))
	for i := range cands {
		m.seq++
		sos[i] = filepath.Join(m.dir, fmt.Sprintf("cand%d.so", m.seq))
		if m.opts.InjectFault != nil {
			faults[i] = m.opts.InjectFault(m.built)
		}
		m.built++
	}
	m.buildAll(t, ref, cands, sos, faults, builds)
	for i, c := range cands {
		if stop != nil && stop() {
			for _, so := range sos[i:] {
				os.Remove(so)
			}
			return
		}
		r := builds[i]
		if r.Error == "" {
			layouts := r.layouts
			r = m.run(ref, sos[i], layouts)
			r.layouts = layouts
		}
		_ = c
		os.Remove(sos[i])
		onResult(i, r)
	}
}

// buildAll builds every candidate with the builder pool.
func (m *Measurer) buildAll(t *Task, ref *taskRef, cands []*Candidate, sos, faults []string, out []Result) {
	jobs := make(chan int)
	var wg sync.WaitGroup
	for _, b := range m.builders {
		wg.Add(1)
		go func(b *worker) {
			defer wg.Done()
			for i := range jobs {
				out[i] = m.build(b, t, ref, cands[i], sos[i], faults[i])
			}
		}(b)
	}
	for i := range cands {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
}

func (m *Measurer) build(b *worker, t *Task, ref *taskRef, c *Candidate, so, fault string) Result {
	tr, err := c.Trace.JSON()
	if err != nil {
		return Result{Error: ErrBuild, Msg: err.Error()}
	}
	req := buildRequest{Kernel: ref.kernel, Func: t.Func.Name, Trace: tr, Candidate: c.Key, SO: so, Target: targetSpecOf(m.opts.Target), Fault: fault}
	if !m.opts.KeepLayouts {
		req.Constants = t.Constants
	}
	var resp workerResult
	if err := b.call(req, &resp, m.opts.BuildTimeout); err != nil {
		if errors.Is(err, errWorkerTimeout) {
			return Result{Error: ErrTimeout, Msg: fmt.Sprintf("build took longer than %v", m.opts.BuildTimeout)}
		}
		return Result{Error: ErrBuild, Msg: err.Error()}
	}
	return Result{Error: resp.Error, Msg: resp.Msg, layouts: resp.Layouts}
}

func (m *Measurer) run(ref *taskRef, so string, layouts []tir.ParamLayout) Result {
	req := runRequest{SO: so, Target: targetSpecOf(m.opts.Target), Params: ref.params, Seed: ref.seed, Warmup: m.opts.Warmup, Repeats: m.opts.Repeats, MinSeconds: m.opts.MinRepeatSeconds, Layouts: layouts}
	if m.opts.CacheFlush {
		req.Flush = ref.flush
	}
	var resp workerResult
	if err := m.runner.call(req, &resp, m.opts.RunTimeout); err != nil {
		if errors.Is(err, errWorkerTimeout) {
			return Result{Error: ErrTimeout, Msg: fmt.Sprintf("run took longer than %v", m.opts.RunTimeout)}
		}
		return Result{Error: ErrRun, Msg: err.Error()}
	}
	if resp.Restart {
		m.runner.kill() // the next candidate gets a fresh runner (and device context)
	}
	if resp.Error != "" {
		return Result{Error: resp.Error, Msg: resp.Msg}
	}
	if ref.err == nil {
		if lim := m.opts.Tolerance * math.Max(1, resp.MaxRef); !(resp.MaxErr <= lim) {
			return Result{Error: ErrWrong, Msg: fmt.Sprintf("max |got - interpreter| = %.3g > %.3g", resp.MaxErr, lim)}
		}
	}
	return Result{Seconds: resp.Seconds}
}

// flushParams are the parameters MeasureOptions.CacheFlush evicts: the
// task's constants and its outputs, else (no constant known) every
// parameter but the first.
func flushParams(t *Task) []int {
	if len(t.Constants) == 0 {
		var out []int
		for i := 1; i < len(t.Func.Params); i++ {
			out = append(out, i)
		}
		return out
	}
	out := slices.Clone(t.Constants)
	for i, p := range t.Func.Params {
		if p.Buffer != nil && p.Role != tir.RoleIn && !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	slices.Sort(out)
	return out
}

// PrepareReference computes t's reference outputs now, into the
// reference cache (MeasureOptions.RefCache), so that a measurer on
// another machine given a copy of that folder skips the interpreter:
// bench/gpu_check.sh computes GEMM 1024³'s here and carries it to the GPU
// machine. Errors: the interpreter's, or a reference cache that is off.
func (m *Measurer) PrepareReference(t *Task) error {
	if m.opts.RefCache == RefCacheOff {
		return fmt.Errorf("autotune: the reference cache is off")
	}
	return m.reference(t).err
}

// reference prepares (once per task) the kernel text and the
// interpreter's outputs on the runner's random inputs.
func (m *Measurer) reference(t *Task) *taskRef {
	if r := m.refs[t.Key]; r != nil {
		return r
	}
	r := &taskRef{kernel: tir.PrintFunc(t.Func, tir.PrintOptions{}), seed: 1, flush: flushParams(t)}
	m.refs[t.Key] = r
	args := tir.Args{Arrays: map[string]*tir.Array{}}
	for i, p := range t.Func.Params {
		if p.Buffer == nil {
			r.err = fmt.Errorf("scalar parameter %%%s", p.Name())
			continue
		}
		shape, ok := p.Buffer.ConstShape()
		if !ok {
			r.err = fmt.Errorf("parameter %%%s has a symbolic shape", p.Name())
			continue
		}
		spec := paramSpec{Name: p.Name(), DType: p.Buffer.DType.String(), Shape: shape, Out: p.Role != tir.RoleIn}
		a := tir.NewArray(p.Buffer.DType, shape...)
		if p.Role != tir.RoleOut {
			vals := randomValues(r.seed, i, a.Len(), spec.DType)
			if a.DType.IsFloat() {
				copy(a.Floats, vals)
			}
		}
		args.Arrays[p.Name()] = a
		r.params = append(r.params, spec)
	}
	if r.err != nil || m.cachedRefs(r) {
		return r
	}
	if r.err = tir.RunArgs(t.Func, args); r.err != nil {
		return r
	}
	dir, prefix := m.dir, fmt.Sprintf("ref-%s-", t.Key[:16])
	if m.opts.RefCache != RefCacheOff && os.MkdirAll(m.opts.RefCache, 0o755) == nil {
		dir, prefix = m.opts.RefCache, refCacheKey(r)+"-"
	}
	for i, p := range r.params {
		if !p.Out {
			continue
		}
		path := filepath.Join(dir, prefix+p.Name+".npy")
		if err := writeFileAtomic(path, func(tmp string) error { return writeArrayNPY(tmp, args.Arrays[p.Name]) }); err != nil {
			r.err = err
			return r
		}
		r.params[i].Ref = path
	}
	return r
}

// RefCacheOff as MeasureOptions.RefCache disables the reference cache.
const RefCacheOff = "off"

// refCacheKey names a reference in the cache: the SHA-256 of the kernel
// text and the input seed.
func refCacheKey(r *taskRef) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%s\nseed %d\n", r.kernel, r.seed)))
	return hex.EncodeToString(h[:])
}

// cachedRefs points r's outputs at cached references when every one is
// there and has the output's dtype and shape.
func (m *Measurer) cachedRefs(r *taskRef) bool {
	if m.opts.RefCache == RefCacheOff {
		return false
	}
	key := refCacheKey(r)
	paths := make([]string, len(r.params))
	for i, p := range r.params {
		if !p.Out {
			continue
		}
		paths[i] = filepath.Join(m.opts.RefCache, key+"-"+p.Name+".npy")
		t, err := rt.ReadNPY(paths[i])
		if dt, derr := rt.ParseDType(p.DType); err != nil || derr != nil || t.DType() != dt || !slices.Equal(t.Shape(), p.Shape) {
			return false
		}
	}
	for i := range r.params {
		r.params[i].Ref = paths[i]
	}
	return true
}

// writeFileAtomic writes path through write(tmp) and a rename, so a
// reader never sees a partial file.
func writeFileAtomic(path string, write func(tmp string) error) error {
	tmp := fmt.Sprintf("%s.tmp%d", path, os.Getpid())
	if err := write(tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}

// writeArrayNPY writes an interpreter array as .npy in its dtype.
func writeArrayNPY(path string, a *tir.Array) error {
	dt, err := rt.ParseDType(a.DType.String())
	if err != nil {
		return err
	}
	t, err := rt.NewTensor(dt, a.Shape)
	if err != nil {
		return err
	}
	if a.DType.IsFloat() {
		err = t.SetFloat64Values(a.Floats)
	} else {
		err = t.SetInt64Bits(a.Ints) // the bit patterns of every integer dtype
	}
	if err != nil {
		return err
	}
	return rt.WriteNPY(path, t)
}
