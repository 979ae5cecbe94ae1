package pipeline

import (
	"fmt"
	"github.com/tessera-ml/tessera/graphir"
	"os"
	"strconv"

	"github.com/tessera-ml/tessera/autotune"
	"github.com/tessera-ml/tessera/internal/registry"
	"github.com/tessera-ml/tessera/lowering"
	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// The steps this package registers: the conversion to tensor IR, the
// scheduling steps (a trace, the tuning records, the target's default
// rules; each marks the kernels it schedules with tensorir.AttrSchedule
// and skips kernels already marked) and code generation. The
// target-dependent ones take the target options (targetOptionDocs).

// LowerToTIRName is the conversion from fused hlo to tensor IR.
const LowerToTIRName = "lower-to-tir"

// targetOptionDocs documents the options that select a target instance.
var targetOptionDocs = map[string]string{
	"target":            "code generation target (default cpu)",
	"mcpu":              "processor (default native: this machine)",
	"threads":           "worker threads of parallel code (default: TESSERA_NUM_THREADS, OMP_NUM_THREADS or all cores)",
	"strict-fp":         "true: no floating-point contraction (results bit-identical to the interpreter)",
	"config":            "target configuration file (npu: the NPU configuration JSON; default: the target's default)",
	"profile":           "true: instrument the kernel calls with timestamp probes (--profile)",
	"min-parallel-work": "cpu: the parallelism cost rule's threshold in scalar operations (default: the target's; 0 parallelizes every kernel)",
}

// withTargetOptions adds the target options to a step's option docs.
func withTargetOptions(own map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range targetOptionDocs {
		out[k] = v
	}
	for k, v := range own {
		out[k] = v
	}
	return out
}

// TargetOptions renders a target instance's options as step options
// (the inverse of targetFrom).
func TargetOptions(t targets.Target) map[string]string {
	o := t.Options()
	m := map[string]string{"target": t.Name(), "threads": strconv.Itoa(o.Threads)}
	if o.MCPU != "" {
		m["mcpu"] = o.MCPU
	}
	if o.StrictFP {
		m["strict-fp"] = "true"
	}
	if o.Profile {
		m["profile"] = "true"
	}
	if o.MinParallelWork != nil {
		m["min-parallel-work"] = strconv.FormatFloat(*o.MinParallelWork, 'g', -1, 64)
	}
	if o.Config != "" {
		m["config"] = o.Config
	}
	return m
}

// targetFrom makes the target instance a step's options select. Errors:
// an unknown target, a malformed option.
func targetFrom(opts map[string]string) (targets.Target, error) {
	name := opts["target"]
	if name == "" {
		name = "cpu"
	}
	var o targets.Options
	o.MCPU, o.Config = opts["mcpu"], opts["config"]
	if v := opts["threads"]; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			return nil, fmt.Errorf("threads must be an integer, got %q", v)
		}
		o.Threads = n
	}
	for key, dst := range map[string]*bool{"strict-fp": &o.StrictFP, "profile": &o.Profile} {
		if v := opts[key]; v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				return nil, fmt.Errorf("%s must be true or false, got %q", key, v)
			}
			*dst = b
		}
	}
	if v := opts["min-parallel-work"]; v != "" {
		w, err := strconv.ParseFloat(v, 64)
		if err != nil || w < 0 {
			return nil, fmt.Errorf("min-parallel-work must be a number ≥ 0, got %q", v)
		}
		o.MinParallelWork = &w
	}
	return targets.New(name, o)
}

func init() {
	register(&Step{Name: LowerToTIRName, From: Graph, To: TIR,
		Summary: "convert the fused hlo module to tensor IR: a kernel per hlo.fusion, a host function per function calling them over one planned memory arena",
		New:     func(map[string]string) (Action, error) { return &lowerToTIR{}, nil }})
	register(&Step{Name: "apply-trace", From: TIR, To: TIR,
		Summary: "schedule the kernel a schedule trace names (its \"func\", or the only kernel) by replaying the trace (JSON, schedule/README.md)",
		Options: map[string]string{"file": "the trace file"}, Arg: "file",
		New: newApplyTrace})
	register(&Step{Name: "apply-tuning-records", From: TIR, To: TIR,
		Summary: "schedule each unscheduled kernel whose workload has a successful record in a tuning database, for the target, by replaying its best record",
		Options: withTargetOptions(map[string]string{"db": "the tuning database (JSON lines, written by tessera tune)"}),
		New:     newApplyRecords})
	register(&Step{Name: "default-schedule", From: TIR, To: TIR,
		Summary: "schedule each unscheduled kernel with the target's default rules (or, when they refuse it, their fallback rule)",
		Options: withTargetOptions(map[string]string{"bind-dims": "representative sizes NAME:N,... the rules tile symbolic dimensions for (default 8); the code is correct for every size"}),
		New:     newDefaultSchedule})
	register(&Step{Name: "codegen", From: TIR, To: Artifact,
		Summary: "compile the scheduled module with the target's code generation, exporting function export (as <prefix>_<export>) and any function with a global_symbol",
		Options: withTargetOptions(map[string]string{"prefix": "symbol prefix of the exported entry points", "export": "a function to export (tessera compile: main)"}),
		New:     newCodegen})
}

// lowerToTIR runs lowering.LowerToTIRWithStats.
type lowerToTIR struct{ plan tir.PlanStats }

func (l *lowerToTIR) Run(ir *IR) error {
	m, plan, err := lowering.LowerToTIRWithStats(ir.Graph)
	if err != nil {
		return err
	}
	// Recurrence kernels (hlo.rnn_scan's) are scheduled here, before the
	// steps that would inline or parallelize their loop-carried blocks.
	for i, f := range m.Funcs {
		if _, rec := f.Attrs[tir.AttrRecurrence]; rec {
			sf, err := schedule.ScheduleRecurrence(f, schedule.RecurrenceVectorBits)
			if err != nil {
				return fmt.Errorf("lower-to-tir: scheduling the recurrence kernel @%s: %v", f.Name, err)
			}
			m.Funcs[i] = sf
		}
	}
	// The graph module is consumed: dropped, so that the constants it
	// holds (a model's weights before rewrite-layout repacks them) are not
	// kept in memory beside the tensor IR's.
	ir.TIR, ir.Graph, l.plan = m, nil, plan
	return nil
}

// Statistics are the memory plan's.
func (l *lowerToTIR) Statistics() []registry.Statistic {
	return []registry.Statistic{
		{Name: "arena-bytes", Help: "peak bytes of the host functions' memory arenas", Value: l.plan.ArenaBytes},
		{Name: "naive-bytes", Help: "bytes the intermediate tensors would take without reuse", Value: l.plan.NaiveBytes},
		{Name: "buffers", Help: "intermediate tensors planned", Value: int64(l.plan.Buffers)},
	}
}

// unscheduledKernels lists the kernels of m no step has scheduled yet
// (recurrence kernels are lower-to-tir's: schedule.ScheduleRecurrence).
func unscheduledKernels(m *tir.Module) []int {
	var out []int
	for i, f := range m.Funcs {
		if _, host := f.Attrs[tir.AttrHost]; host {
			continue
		}
		_, done := f.Attrs[tir.AttrSchedule]
		if _, rec := f.Attrs[tir.AttrRecurrence]; !done && !rec {
			out = append(out, i)
		}
	}
	return out
}

// mark returns f with its schedule's provenance recorded.
func mark(f *tir.PrimFunc, by string) *tir.PrimFunc {
	cp := *f
	cp.Attrs = tir.Attrs{}
	for k, v := range f.Attrs {
		cp.Attrs[k] = v
	}
	cp.Attrs[tir.AttrSchedule] = tir.StringAttr(by)
	return &cp
}

// applyTrace replays one trace file.
type applyTrace struct {
	path  string
	trace *schedule.Trace
}

func newApplyTrace(opts map[string]string) (Action, error) {
	path := opts["file"]
	if path == "" {
		return nil, fmt.Errorf("needs file=TRACE.json")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	tr, err := schedule.ParseTrace(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return &applyTrace{path: path, trace: tr}, nil
}

func (a *applyTrace) Run(ir *IR) error {
	name, err := schedule.ApplyToModule(ir.TIR, a.trace)
	if err != nil {
		return fmt.Errorf("apply-trace %s: %v", a.path, err)
	}
	for i, f := range ir.TIR.Funcs {
		if f.Name == name {
			ir.TIR.Funcs[i] = mark(f, "trace")
		}
	}
	return nil
}

// Statistics: one traced kernel.
func (a *applyTrace) Statistics() []registry.Statistic {
	return []registry.Statistic{{Name: "kernels", Help: "kernels scheduled by a trace", Value: 1}}
}

// applyRecords replays the best tuning record of each kernel's workload.
type applyRecords struct {
	path                    string
	target                  targets.Target
	tuned, misses, unusable int
	remarks                 []string
}

func newApplyRecords(opts map[string]string) (Action, error) {
	if opts["db"] == "" {
		return nil, fmt.Errorf("needs db=TUNE.jsonl")
	}
	t, err := targetFrom(opts)
	if err != nil {
		return nil, err
	}
	return &applyRecords{path: opts["db"], target: t}, nil
}

func (a *applyRecords) Run(ir *IR) error {
	if _, err := os.Stat(a.path); err != nil {
		return fmt.Errorf("--tuning-db: %v", err)
	}
	db, warns, err := autotune.OpenDatabase(a.path)
	if err != nil {
		return err
	}
	defer db.Close()
	a.remarks = append(a.remarks, warns...)
	key, rules := a.target.Key(), a.target.Rules()
	static := true
	for _, i := range unscheduledKernels(ir.TIR) {
		f := ir.TIR.Funcs[i]
		g, found := bestRecord(db, f, key, rules)
		switch {
		case g != nil:
			ir.TIR.Funcs[i] = mark(g, "tuned")
			a.tuned++
		case found:
			a.unusable++
		default:
			a.misses++
		}
		static = static && !hasScalarParams(f)
	}
	a.remarks = append(a.remarks, a.summary(key, static && a.misses > 0 && symbolicRecords(db, key)))
	return nil
}

// summary is the one line a user reads about the database; symbolic says
// the database holds records of kernels over symbolic dimensions, which
// apply only to kernels compiled with those dimensions free.
func (a *applyRecords) summary(key string, symbolic bool) string {
	s := fmt.Sprintf("tessera: tuning db %s: %d of %d kernels use tuned schedules", a.path, a.tuned, a.tuned+a.misses+a.unusable)
	if a.misses > 0 {
		s += fmt.Sprintf("; %d without a record for %q use the default rules", a.misses, key)
	}
	if a.unusable > 0 {
		s += fmt.Sprintf("; %d whose records do not replay (at every size) use the default rules", a.unusable)
	}
	if symbolic {
		s += " (the database's records of kernels over symbolic dimensions apply where the model is compiled with them free: tessera compile without --fix-dim; tessera run and bench specialize at the inputs' sizes)"
	}
	return s
}

// symbolicRecords reports whether db holds a record for the target key
// measured at Bindings (a kernel over symbolic dimensions).
func symbolicRecords(db *autotune.Database, key string) bool {
	for _, w := range db.Workloads() {
		for _, r := range db.Records(w, key) {
			if r.Bindings != nil {
				return true
			}
		}
	}
	return false
}

// maxRecordTries bounds the records bestRecord replays for one kernel.
const maxRecordTries = 16

// bestRecord schedules f by the best of its workload's records that
// replays (Database.Ranked order, at most maxRecordTries tried); found
// reports whether the workload has a successful record at all. A kernel
// over symbolic dimensions replays a record specialized at the sizes it
// was measured at (Record.Bindings) and is scheduled from that for every
// size (schedule.FromRepresentative with rules), which a record of a
// tiling the generalized replay cannot carry over fails.
func bestRecord(db *autotune.Database, f *tir.PrimFunc, key string, rules schedule.Rules) (g *tir.PrimFunc, found bool) {
	rs := db.Ranked(autotune.WorkloadKey(f, key), key)
	for i, r := range rs {
		if i == maxRecordTries {
			break
		}
		if g := replayRecord(f, r, rules); g != nil {
			return g, true
		}
	}
	return nil, len(rs) > 0
}

// replayRecord is f scheduled by r (nil when it does not replay).
func replayRecord(f *tir.PrimFunc, r *autotune.Record, rules schedule.Rules) *tir.PrimFunc {
	if r.Trace == nil {
		return nil
	}
	vals := schedule.RepresentativeSizes(f, r.Bindings)
	s, err := schedule.Replay(tir.Specialize(f, vals), r.Trace)
	if err != nil {
		return nil
	}
	if vals == nil {
		return s.Func()
	}
	g, err := schedule.FromRepresentative(rules, f, vals, s.Func(), s.Trace())
	if err != nil {
		return nil
	}
	return g
}

// Remarks are the database's load warnings and the summary line.
func (a *applyRecords) Remarks() []string { return a.remarks }

// Statistics count the kernels with and without a record.
func (a *applyRecords) Statistics() []registry.Statistic {
	return []registry.Statistic{
		{Name: "kernels", Help: "kernels scheduled by their best tuning record", Value: int64(a.tuned)},
		{Name: "untuned", Help: "kernels without a usable record", Value: int64(a.misses + a.unusable)},
	}
}

// defaultSchedule applies the target's default rules.
type defaultSchedule struct {
	rules              schedule.Rules
	sizes              map[string]int64 // representative sizes of symbols
	applied, fallbacks int
}

func newDefaultSchedule(opts map[string]string) (Action, error) {
	t, err := targetFrom(opts)
	if err != nil {
		return nil, err
	}
	var sizes map[string]int64
	if v := opts["bind-dims"]; v != "" {
		if sizes, err = graphir.ParseDimsOption(v); err != nil {
			return nil, err
		}
	}
	return &defaultSchedule{rules: t.Rules(), sizes: sizes}, nil
}

// hasScalarParams reports whether kernel f takes scalar parameters (the
// symbolic dimensions of its buffers).
func hasScalarParams(f *tir.PrimFunc) bool {
	for _, p := range f.Params {
		if p.Var != nil {
			return true
		}
	}
	return false
}

func (d *defaultSchedule) Run(ir *IR) error {
	if rr, ok := d.rules.(schedule.RecurrenceRules); ok {
		for i, f := range ir.TIR.Funcs {
			if _, rec := f.Attrs[tir.AttrRecurrence]; !rec {
				continue
			}
			g, err := rr.Recurrence(f)
			if err != nil {
				return fmt.Errorf("default-schedule: the recurrence kernel @%s: %v", f.Name, err)
			}
			ir.TIR.Funcs[i] = g
		}
	}
	for _, i := range unscheduledKernels(ir.TIR) {
		f := ir.TIR.Funcs[i]
		if hasScalarParams(f) {
			if g, err := schedule.RepresentativeDefault(d.rules, f, d.sizes); err == nil {
				ir.TIR.Funcs[i] = mark(g, "default")
				d.applied++
				continue
			}
		}
		if s, err := d.rules.Default(f); err == nil {
			ir.TIR.Funcs[i] = mark(s.Func(), "default")
			d.applied++
			continue
		}
		ir.TIR.Funcs[i] = mark(d.rules.Fallback(f).Func(), "fallback")
		d.fallbacks++
	}
	return nil
}

// Statistics count the kernels the rules scheduled and those they refused.
func (d *defaultSchedule) Statistics() []registry.Statistic {
	return []registry.Statistic{
		{Name: "kernels", Help: "kernels scheduled by the default rules", Value: int64(d.applied)},
		{Name: "fallback", Help: "kernels the default rules refused (scheduled by the fallback rule)", Value: int64(d.fallbacks)},
	}
}

// codegen compiles the module with the target.
type codegen struct {
	target         targets.Target
	prefix, export string
}

func newCodegen(opts map[string]string) (Action, error) {
	t, err := targetFrom(opts)
	if err != nil {
		return nil, err
	}
	return &codegen{target: t, prefix: opts["prefix"], export: opts["export"]}, nil
}

func (c *codegen) Run(ir *IR) error {
	if err := export(ir.TIR, c.export); err != nil {
		return err
	}
	a, err := c.target.Codegen(ir.TIR, c.prefix)
	if err != nil {
		return err
	}
	ir.Artifact, ir.Target = a, c.target
	return nil
}

// export gives function name (when not "") its global symbol. Errors: no
// such function.
func export(m *tir.Module, name string) error {
	if name == "" {
		return nil
	}
	entry := m.Func(name)
	if entry == nil {
		return fmt.Errorf("the module has no function @%s to export", name)
	}
	if entry.Attrs == nil {
		entry.Attrs = tir.Attrs{}
	}
	entry.Attrs[tir.AttrGlobalSymbol] = tir.StringAttr(name)
	return nil
}
