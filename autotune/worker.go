package autotune

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"os"
	"slices"
	"strings"
	"time"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// WorkerEnv names the environment variable that turns a process into a
// builder ("build") or runner ("run") worker: the tuner starts its own
// executable (or Options.WorkerCommand) with it set, and the program's
// main calls MaybeRunWorker first.
const WorkerEnv = "TESSERA_AUTOTUNE_WORKER"

// candidateSymbol is the C symbol a built candidate exports.
const candidateSymbol = "tessera_candidate"

// MaybeRunWorker runs the worker loop and exits when WorkerEnv is set
// (serving JSON-line requests on stdin, one JSON-line response each on
// stdout); otherwise it returns at once.
func MaybeRunWorker() {
	role := os.Getenv(WorkerEnv)
	if role == "" {
		return
	}
	var err error
	switch role {
	case "build":
		err = serve(func(r *buildRequest) any { return build(r) })
	case "run":
		err = serve(func(r *runRequest) any { return run(r) })
	default:
		err = fmt.Errorf("unknown worker role %q", role)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "tessera autotune worker: %v\n", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// serve answers requests until stdin closes.
func serve[R any](handle func(*R) any) error {
	in := bufio.NewReader(os.Stdin)
	out := json.NewEncoder(os.Stdout)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) == 0 && err != nil {
			return nil // stdin closed
		}
		req := new(R)
		if err := json.Unmarshal(line, req); err != nil {
			return fmt.Errorf("bad request: %v", err)
		}
		if err := out.Encode(handle(req)); err != nil {
			return err
		}
	}
}

// buildRequest asks a builder to replay Trace on the kernel Func of the
// tensor IR module Kernel and write the candidate's shared object to SO.
type buildRequest struct {
	Kernel    string          `json:"kernel"`
	Func      string          `json:"func"`
	Trace     json.RawMessage `json:"trace"`
	Candidate string          `json:"candidate"` // expected CandidateKey
	SO        string          `json:"so"`
	Target    targetSpec      `json:"target"`
	// Constants are the parameters the model passes constants for
	// (Task.Constants): the builder stores each in the layout the
	// compiled model's rewrite-layout step gives it
	// (tensorir.RewriteParamLayouts) and answers the layouts, which the
	// runner transposes its inputs to. Empty with
	// MeasureOptions.KeepLayouts.
	Constants []int  `json:"constants,omitempty"`
	Fault     string `json:"fault,omitempty"` // test injection (fault.go)
}

// targetSpec names the target instance a worker builds or runs for.
type targetSpec struct {
	Name    string          `json:"name"`
	Options targets.Options `json:"options"`
}

func targetSpecOf(t targets.Target) targetSpec {
	return targetSpec{Name: t.Name(), Options: t.Options()}
}

func (s targetSpec) target() (targets.Target, error) { return targets.New(s.Name, s.Options) }

// workerResult is a worker's answer: Error is "" or an error kind.
type workerResult struct {
	Error   string    `json:"error,omitempty"`
	Msg     string    `json:"msg,omitempty"`
	Seconds []float64 `json:"seconds,omitempty"`
	MaxErr  float64   `json:"max_err,omitempty"` // max |got - reference| over the outputs
	MaxRef  float64   `json:"max_ref,omitempty"` // max |reference|
	// Restart: the runner's device is unusable after this candidate's
	// fault (targets.ErrDeviceLost: a GPU kernel's illegal address leaves
	// its context broken), so the measurer starts a new runner.
	Restart bool `json:"restart,omitempty"`
	// Layouts (a builder's answer) are the layouts of the candidate's
	// rewritten constant parameters (buildRequest.Constants).
	Layouts []tir.ParamLayout `json:"layouts,omitempty"`
}

func build(r *buildRequest) workerResult {
	fail := func(format string, args ...any) workerResult {
		return workerResult{Error: ErrBuild, Msg: fmt.Sprintf(format, args...)}
	}
	m, err := tir.Parse("kernel.tir", []byte(r.Kernel))
	if err != nil {
		return fail("parsing the kernel: %v", err)
	}
	f := m.Func(r.Func)
	if f == nil {
		return fail("the kernel module has no @%s", r.Func)
	}
	tr, err := schedule.ParseTrace(r.Trace)
	if err != nil {
		return fail("%v", err)
	}
	s, err := schedule.Replay(f, tr)
	if err != nil {
		return fail("%v", err)
	}
	sf := s.Func()
	if got := CandidateKey(sf); r.Candidate != "" && got != r.Candidate {
		return fail("the replayed candidate %s differs from the tuner's %s (kernel text does not round-trip)", got, r.Candidate)
	}
	sf, layouts := tir.RewriteParamLayouts(sf, r.Constants)
	if sf, err = injectFault(sf, r.Fault); err != nil {
		return fail("%v", err)
	}
	cp := *sf
	cp.Attrs = tir.Attrs{}
	for k, v := range sf.Attrs {
		cp.Attrs[k] = v
	}
	cp.Attrs[tir.AttrGlobalSymbol] = tir.StringAttr(candidateSymbol)
	t, err := r.Target.target()
	if err != nil {
		return fail("%v", err)
	}
	art, err := targets.Build(t, &tir.Module{Funcs: []*tir.PrimFunc{&cp}}, "")
	if err != nil {
		return fail("%v", err)
	}
	if err := art.Save(r.SO); err != nil {
		return fail("%v", err)
	}
	return workerResult{Layouts: layouts}
}

// paramSpec describes one buffer parameter of a candidate, in parameter
// order.
type paramSpec struct {
	Name  string  `json:"name"`
	DType string  `json:"dtype"` // tensor IR dtype: f32, i32, ...
	Shape []int64 `json:"shape"`
	Out   bool    `json:"out"`           // written (out or inout): checked against Ref
	Ref   string  `json:"ref,omitempty"` // .npy of the interpreter's result
}

// runRequest asks the runner to load SO, fill the inputs from Seed (see
// randomValues), run once and compare the outputs with the references,
// then time Warmup + at least Repeats calls lasting MinSeconds in all,
// with the parameters Flush lists flushed from the cache before each call
// (MeasureOptions.CacheFlush).
type runRequest struct {
	SO         string      `json:"so"`
	Target     targetSpec  `json:"target"`
	Params     []paramSpec `json:"params"`
	Seed       int64       `json:"seed"`
	Warmup     int         `json:"warmup"`
	Repeats    int         `json:"repeats"`
	MinSeconds float64     `json:"min_seconds"`
	Flush      []int       `json:"flush,omitempty"`
	// Layouts are the candidate's rewritten parameters (the builder's
	// answer): their inputs, drawn in Params' row-major shapes, are
	// transposed to these layouts before the first call.
	Layouts []tir.ParamLayout `json:"layouts,omitempty"`
}

func run(r *runRequest) workerResult {
	res := runCandidate(r)
	res.Restart = res.Error != "" && strings.Contains(res.Msg, targets.ErrDeviceLost.Error())
	return res
}

func runCandidate(r *runRequest) workerResult {
	fail := func(format string, args ...any) workerResult {
		return workerResult{Error: ErrRun, Msg: fmt.Sprintf(format, args...)}
	}
	t, err := r.Target.target()
	if err != nil {
		return fail("%v", err)
	}
	lib, err := t.Load(r.SO)
	if err != nil {
		return fail("%v", err)
	}
	defer lib.Close()
	tensors := make([]*rt.Tensor, len(r.Params))
	specs := make([]rt.TensorSpec, len(r.Params))
	for i, p := range r.Params {
		dt, err := rt.ParseDType(p.DType)
		if err != nil {
			return fail("parameter %s: %v", p.Name, err)
		}
		t, err := rt.NewTensor(dt, p.Shape)
		if err != nil {
			return fail("parameter %s: %v", p.Name, err)
		}
		if !p.Out {
			if err := fillTensor(t, randomValues(r.Seed, i, t.NumElements(), p.DType)); err != nil {
				return fail("parameter %s: %v", p.Name, err)
			}
		}
		tensors[i], specs[i] = t, t.Spec()
	}
	for _, l := range r.Layouts {
		if err := relayout(tensors, l); err != nil {
			return fail("%v", err)
		}
		specs[l.Param] = tensors[l.Param].Spec()
	}
	entry, err := lib.Entry(candidateSymbol, specs, nil)
	if err != nil {
		return fail("%v", err)
	}
	if err := entry.Call(tensors, nil); err != nil {
		return fail("%v", err)
	}
	res := workerResult{}
	for i, p := range r.Params {
		if !p.Out || p.Ref == "" {
			continue
		}
		ref, err := rt.ReadNPY(p.Ref)
		if err != nil {
			return fail("reference of %s: %v", p.Name, err)
		}
		e, m, err := compareTensors(tensors[i], ref)
		if err != nil {
			return fail("output %s: %v", p.Name, err)
		}
		res.MaxErr, res.MaxRef = math.Max(res.MaxErr, e), math.Max(res.MaxRef, m)
	}
	var before func()
	if len(r.Flush) > 0 {
		before = func() {
			for _, i := range r.Flush {
				if i >= 0 && i < len(tensors) {
					rt.FlushCache(tensors[i].Bytes())
				}
			}
		}
	}
	tm, err := entry.BenchEach(tensors, nil, r.Warmup, r.Repeats, time.Duration(r.MinSeconds*float64(time.Second)), before)
	if err != nil {
		return fail("%v", err)
	}
	res.Seconds = tm.Seconds
	return res
}

// relayout replaces tensors[l.Param] by its data transposed to the
// layout l. Errors: a parameter out of range, or whose shape is not the
// layout's old shape.
func relayout(tensors []*rt.Tensor, l tir.ParamLayout) error {
	if l.Param < 0 || l.Param >= len(tensors) {
		return fmt.Errorf("layout of parameter %d: the candidate has %d", l.Param, len(tensors))
	}
	t := tensors[l.Param]
	if !slices.Equal(t.Shape(), l.Shape) {
		return fmt.Errorf("layout of parameter %d: for shape %v, the parameter is %v", l.Param, l.Shape, t.Shape())
	}
	size := 0
	if n := t.NumElements(); n > 0 {
		size = len(t.Bytes()) / n
	}
	nt, err := rt.FromBytes(t.DType(), l.NewShape(), l.Permute(t.Bytes(), size))
	if err != nil {
		return fmt.Errorf("layout of parameter %d: %v", l.Param, err)
	}
	tensors[l.Param] = nt
	return nil
}

// randomValues are the deterministic inputs of parameter i for seed:
// floats uniform in [-1, 1), integers and booleans 0 (always valid as
// indices).
func randomValues(seed int64, i, n int, dtype string) []float64 {
	out := make([]float64, n)
	switch dtype {
	case "f32", "f64", "f16", "bf16":
		rng := rand.New(rand.NewSource(seed*7919 + int64(i)))
		for k := range out {
			out[k] = float64(float32(2*rng.Float64() - 1))
		}
	}
	return out
}

// fillTensor stores vals into t, converted to its dtype (floats round to
// nearest even; integers and booleans get randomValues' zeros).
func fillTensor(t *rt.Tensor, vals []float64) error { return t.SetFloat64Values(vals) }

// tensorValues reads a tensor's elements as float64 (every dtype).
func tensorValues(t *rt.Tensor) ([]float64, error) { return t.Float64Values(), nil }

// compareTensors returns max |got - ref| (+Inf where one is NaN and the
// other is not) and max |ref|.
func compareTensors(got, ref *rt.Tensor) (maxErr, maxRef float64, err error) {
	if got.NumElements() != ref.NumElements() {
		return 0, 0, fmt.Errorf("%d elements, the reference has %d", got.NumElements(), ref.NumElements())
	}
	g, err := tensorValues(got)
	if err != nil {
		return 0, 0, err
	}
	r, err := tensorValues(ref)
	if err != nil {
		return 0, 0, err
	}
	for i := range g {
		switch {
		case math.IsNaN(r[i]) && math.IsNaN(g[i]):
		case math.IsNaN(r[i]) || math.IsNaN(g[i]):
			maxErr = math.Inf(1)
		case math.IsInf(r[i], 0) && g[i] == r[i]:
		default:
			maxErr = math.Max(maxErr, math.Abs(g[i]-r[i]))
			if !math.IsInf(r[i], 0) {
				maxRef = math.Max(maxRef, math.Abs(r[i]))
			}
		}
	}
	return maxErr, maxRef, nil
}
