package main

import (
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/tessera-ml/tessera/autotune"
	"github.com/tessera-ml/tessera/autotune/tuneplot"
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/pipeline"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
)

type tuneOptions struct {
	target, db, mcpu, strategy, scheduler  string
	npuConfig, plot, broker, brokerCreds   string
	tasks, fixDims, bindDims               []string
	trials, batch, threads, builders       int
	lookahead, inModel, inModelRounds      int
	lookaheadSet                           bool
	timeout, buildTimeout                  time.Duration
	seed                                   int64
	minRepeat                              time.Duration
	repeats                                int
	cacheFlush, noDefaultSeed, keepLayouts bool
}

func newTuneCmd(stdout, stderr io.Writer) *cobra.Command {
	var o tuneOptions
	cmd := &cobra.Command{
		Use:   "tune MODEL.mlir --trials N --db TUNE.jsonl",
		Short: "autotune the kernels of a model, recording every trial in a tuning database",
		Long: `tune extracts the kernels of MODEL.mlir (deduplicated into tasks, weighted
by occurrence), searches schedules for them and appends every measured trial
to the tuning database (JSON lines, fsync'ed per record).

  tessera tune resnet18.mlir --trials 2000 --db r18.jsonl
  tessera run resnet18.mlir --tuning-db r18.jsonl --input x.npy

--trials is the job's total budget counted in the database: rerunning the
same command after an interruption (Ctrl-C, a kill, a crash) runs only the
remaining trials, and no recorded candidate is measured again. Candidates
are built by parallel worker processes and timed one at a time in a
separate runner process; a candidate that crashes, hangs (--timeout) or
computes a wrong result (checked against the interpreter) is recorded as
such and the job goes on. Ctrl-C finishes the trial in flight and exits 0.
--broker nats://host:4222 measures the trials on tessera worker processes
on other machines instead (NATS JetStream; see tessera worker): the jobs
go to a work queue keyed by the target string, the tuner records the
results (still the only writer of --db); --broker embedded runs the broker
inside the tuner on 127.0.0.1:4222 (embedded:PORT for another port), its
queue kept beside the database in TUNE.jsonl.jetstream. With --broker the
tuner queues the next round's trials before awaiting the current one
(--lookahead 1: chosen from results one round older), so workers
never idle while a round's slowest trial ends.
--in-model K then re-measures each task's K best schedules (the default
rules' first, then the fastest alone) inside the model: it compiles the
model K times, variant v scheduling every task by its v-th candidate,
times the variants' kernels in --in-model-rounds alternating rounds
(per-kernel probes, as bench --profile), and appends each candidate's
time in the model to --db; compile, run and bench with --tuning-db then
apply each task's fastest in the model. A kernel alone keeps its inputs
in its own caches; inside the model it reads what the previous kernel
just wrote, so the fastest alone can be slower there. Rerunning the
command after more trials re-ranks again (the latest rerank counts).
Kernels over symbolic dimensions are not re-ranked; the variants are
compiled at the --fix-dim and --bind-dim sizes.
--plot curves.png (or .svg) then draws the tuned tasks' search curves from
the database, as tessera db plot does (the model estimate weighted by each
task's number of kernels).`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkThreads(cmd, o.threads); err != nil {
				return fail(stderr, err)
			}
			if o.lookahead < 0 {
				return fail(stderr, fmt.Errorf("--lookahead must be at least 0, got %d", o.lookahead))
			}
			if o.inModel < 0 || o.inModelRounds < 1 {
				return fail(stderr, fmt.Errorf("--in-model must be at least 0 and --in-model-rounds at least 1, got %d and %d", o.inModel, o.inModelRounds))
			}
			o.lookaheadSet = cmd.Flags().Changed("lookahead")
			return runTune(args[0], o, stdout, stderr)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.target, "target", "cpu", "target to tune for ("+strings.Join(targets.Names(), ", ")+")")
	f.StringVar(&o.db, "db", "", "tuning database (JSON lines; created when absent, resumed when present)")
	f.IntVar(&o.trials, "trials", 0, "total trial budget of the job, trials already in --db included")
	f.StringSliceVar(&o.tasks, "tasks", nil, "tune only these tasks (kernel names such as fused_3, or task numbers from 0)")
	f.DurationVar(&o.timeout, "timeout", 10*time.Second, "run time limit of one trial (correctness run and timed repeats)")
	f.DurationVar(&o.buildTimeout, "build-timeout", 120*time.Second, "build time limit of one trial")
	f.Int64Var(&o.seed, "seed", 1, "random seed of the search")
	f.StringVar(&o.strategy, "strategy", autotune.StrategyEvolutionary, "search strategy: evolutionary (cost-model guided) or random")
	f.StringVar(&o.scheduler, "scheduler", autotune.SchedulerGradient, "task scheduler: gradient or round-robin")
	f.IntVar(&o.batch, "batch", 16, "candidates per measurement round")
	f.StringArrayVar(&o.fixDims, "fix-dim", nil, fixDimUsage)
	f.StringArrayVar(&o.bindDims, "bind-dim", nil, "NAME=N: tune the kernels over a symbolic dimension left free at the size N (default 8); their records apply at every size when the model is compiled once for every size; a target that compiles static shapes only (npu, cuda) specializes at N instead (repeatable)")
	f.IntVar(&o.threads, "threads", 0, "threads of parallel loops when measuring (default: TESSERA_NUM_THREADS, OMP_NUM_THREADS or all cores)")
	f.IntVar(&o.builders, "builders", 0, "parallel builder processes (default: the number of CPUs)")
	f.IntVar(&o.repeats, "repeats", 5, "minimum timed runs per trial")
	f.DurationVar(&o.minRepeat, "min-repeat-time", 100*time.Millisecond, "minimum total timed duration per trial")
	f.StringVar(&o.mcpu, "mcpu", "native", "CPU for llc-16 -mcpu")
	f.StringVar(&o.npuConfig, "npu-config", "", "NPU configuration JSON for --target npu (default: the built-in default NPU)")
	f.BoolVar(&o.noDefaultSeed, "no-default-seed", false, "do not measure each task's default-rules schedule first (by default a tuned kernel is never slower than the untuned one, as measured)")
	f.StringVar(&o.plot, "plot", "", "after the job (also when interrupted), draw the tuned tasks' search curves from --db into this picture (.png or .svg; see tessera db plot)")
	f.StringVar(&o.broker, "broker", "", "measure on tessera worker processes through this NATS JetStream server: nats://host:4222, tls://host:4222, or embedded[:PORT] (a broker inside the tuner)")
	f.IntVar(&o.lookahead, "lookahead", 0, "rounds proposed ahead of the round being measured, from results that many rounds older (default: 1 with --broker, else 0); a job repeats with the same --seed and --lookahead")
	f.StringVar(&o.brokerCreds, "broker-creds", "", "NATS credentials file (JWT and NKey seed) for --broker")
	f.IntVar(&o.inModel, "in-model", 0, "after the search, compile the model with each task's K best schedules (the default rules' among them) and keep, per task, the one fastest inside the model (0: off; see tessera tune --help)")
	f.IntVar(&o.inModelRounds, "in-model-rounds", 5, "alternating rounds of timing the --in-model variants")
	f.BoolVar(&o.keepLayouts, "keep-layouts", false, "measure each candidate with the model's constants (weights) row-major, for a model compiled with --keep-layouts (by default a candidate reads them in the layout the compiled model stores them in: the rewrite-layout step)")
	f.BoolVar(&o.cacheFlush, "cache-flush", false, "flush each kernel's constant arguments (the model's weights and biases) and its outputs from the CPU cache before each timed call, as inside a model whose weights exceed the last-level cache (TVM's enable_cpu_cache_flush; a kernel without constants flushes every argument but the first)")
	return cmd
}

func runTune(model string, o tuneOptions, stdout, stderr io.Writer) error {
	if o.db == "" {
		return fail(stderr, fmt.Errorf("--db is required (the tuning database to append to)"))
	}
	if o.trials <= 0 {
		return fail(stderr, fmt.Errorf("--trials must be positive, got %d", o.trials))
	}
	if o.plot != "" {
		if _, err := tuneplot.Format(o.plot); err != nil {
			return fail(stderr, fmt.Errorf("--plot: %v", err))
		}
	}
	target, err := measuringTarget(o.target, o.mcpu, o.npuConfig, o.threads)
	if err != nil {
		return fail(stderr, err)
	}
	bind, err := parseDimFlags("bind-dim", o.bindDims)
	if err != nil {
		return fail(stderr, err)
	}
	m, err := loadModel(model, staticBindDims(target, o.fixDims, o.bindDims, stderr))
	if err != nil {
		return fail(stderr, err)
	}
	tasks, err := pipeline.Tasks(m, target, bind)
	if err != nil {
		return fail(stderr, err)
	}
	noteBindings(stderr, tasks)
	if tasks, err = selectTasks(tasks, o.tasks); err != nil {
		return fail(stderr, err)
	}
	db, warns, err := autotune.OpenDatabase(o.db)
	if err != nil {
		return fail(stderr, err)
	}
	defer db.Close()
	for _, w := range warns {
		fmt.Fprintln(stderr, w)
	}
	warnUntunedTasks(stderr, tasks, db, target.Key(), o.trials, o.batch)
	var stop atomic.Bool
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		for range sigs {
			if stop.Swap(true) {
				fmt.Fprintln(stderr, "tessera tune: second interrupt, exiting now (finished trials are in the database)")
				os.Exit(130)
			}
			fmt.Fprintln(stderr, "tessera tune: interrupted; finishing the trial in flight (Ctrl-C again to quit at once)")
		}
	}()
	opts := autotune.Options{
		Target: target, Trials: o.trials, BatchSize: o.batch, Strategy: o.strategy, Scheduler: o.scheduler, Seed: o.seed, SeedDefault: !o.noDefaultSeed,
		Measure:  autotune.MeasureOptions{Builders: o.builders, BuildTimeout: o.buildTimeout, RunTimeout: o.timeout, Repeats: o.repeats, MinRepeatSeconds: o.minRepeat.Seconds(), CacheFlush: o.cacheFlush, KeepLayouts: o.keepLayouts},
		Progress: newTuneProgress(stdout),
		Stop:     stop.Load,
	}
	switch {
	case o.lookaheadSet:
		opts.Lookahead = o.lookahead
	case o.broker != "":
		opts.Lookahead = 1
	}
	if o.broker != "" {
		closeBroker, err := useBroker(&opts, o, tasks, db, stdout, stderr)
		if err != nil {
			return fail(stderr, err)
		}
		defer closeBroker()
	}
	st, err := autotune.Tune(tasks, db, opts)
	if err != nil {
		return fail(stderr, err)
	}
	printTuneSummary(stdout, st)
	if o.inModel > 0 && !st.Interrupted {
		if err := rerankInModel(model, o, tasks, db, target, stdout); err != nil {
			return fail(stderr, fmt.Errorf("--in-model: %v", err))
		}
	}
	switch {
	case st.Interrupted:
		fmt.Fprintf(stdout, "interrupted after %d of %d trials; rerun the same command to resume:\n  tessera %s\n", st.Done, st.Total, strings.Join(os.Args[1:], " "))
	case st.Exhausted:
		fmt.Fprintf(stdout, "every task's design space is measured (%d trials); the budget of %d is not spent\n", st.Done, st.Total)
	}
	if o.plot != "" {
		if err := plotTuned(o.db, o.plot, tasks, target.Key()); err != nil {
			return fail(stderr, fmt.Errorf("--plot: %v", err))
		}
		fmt.Fprintf(stdout, "wrote %s\n", o.plot)
	}
	return nil
}

// noteBindings says at which sizes the kernels over symbolic dimensions
// are tuned, when some are.
func noteBindings(w io.Writer, tasks []*autotune.Task) {
	n := 0
	at := map[string]int64{}
	for _, t := range tasks {
		if t.Bindings != nil {
			n++
			maps.Copy(at, t.Bindings)
		}
	}
	if n == 0 {
		return
	}
	sizes := strings.ReplaceAll(graphir.FormatDims(at), ":", "=")
	fmt.Fprintf(w, "note: %d of %d tasks have symbolic dimensions: tuned at %s (--bind-dim); their records apply at every size\n", n, len(tasks), sizes)
}

// plotTuned draws the records of the tuned tasks on the target (key) from
// the database at db into the picture out (tessera db plot's figure, the
// model estimate weighted by each task's number of kernels). The
// database's warnings were printed when the job opened it. Errors are
// plotDatabase's.
func plotTuned(db, out string, tasks []*autotune.Task, key string) error {
	weights := map[string]int{}
	for _, t := range tasks {
		weights[t.Key] = t.Weight
	}
	keep := func(r *autotune.Record) bool {
		_, ok := weights[r.Workload]
		return ok && r.Target == key
	}
	return plotDatabase(db, out, keep, weights, io.Discard)
}

// warnUntunedTasks warns, for a job starting from an empty database,
// when the budget ends before the first round reaches every task: the
// first round gives the tasks, in order, up to batch trials each.
func warnUntunedTasks(w io.Writer, tasks []*autotune.Task, db *autotune.Database, key string, trials, batch int) {
	for _, t := range tasks {
		if db.Count(t.Key, key) > 0 {
			return
		}
	}
	if batch < 1 {
		batch = 1
	}
	reached := (trials + batch - 1) / batch
	if reached >= len(tasks) {
		return
	}
	var names []string
	for _, t := range tasks[reached:] {
		names = append(names, t.Name)
	}
	hint := ""
	if batch > 1 {
		hint = ", or a smaller --batch"
	}
	fmt.Fprintf(w, "warning: --trials %d with --batch %d reaches %d of the %d tasks; these get no trials: %s (give --trials %d or more%s)\n",
		trials, batch, reached, len(tasks), strings.Join(names, ", "), len(tasks)*batch, hint)
}

// selectTasks keeps the tasks named (kernel name) or numbered in sel.
func selectTasks(tasks []*autotune.Task, sel []string) ([]*autotune.Task, error) {
	if len(sel) == 0 {
		return tasks, nil
	}
	var out []*autotune.Task
	for _, s := range sel {
		found := false
		if n, err := strconv.Atoi(s); err == nil && n >= 0 && n < len(tasks) {
			out, found = append(out, tasks[n]), true
		}
		for _, t := range tasks {
			for _, k := range t.Kernels {
				if k == s && !found {
					out, found = append(out, t), true
				}
			}
		}
		if !found {
			names := make([]string, len(tasks))
			for i, t := range tasks {
				names[i] = fmt.Sprintf("%d=%s", i, t.Name)
			}
			return nil, fmt.Errorf("--tasks: no task %q (tasks: %s)", s, strings.Join(names, ", "))
		}
	}
	return out, nil
}

// tuneProgress shows a job: a progress bar on a terminal, one line per
// trial otherwise.
type tuneProgress struct {
	w   io.Writer
	bar *progressbar.ProgressBar
}

func newTuneProgress(w io.Writer) *tuneProgress {
	p := &tuneProgress{w: w}
	if f, ok := w.(*os.File); !ok || !term.IsTerminal(int(f.Fd())) {
		return p
	}
	p.bar = progressbar.NewOptions(1,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetWidth(24),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionFullWidth(),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
	)
	return p
}

func (p *tuneProgress) Begin(s *autotune.Status) {
	fmt.Fprintf(p.w, "tuning %d tasks; %d of %d trials recorded\n", len(s.Tasks), s.Done, s.Total)
	for i, t := range s.Tasks {
		fmt.Fprintf(p.w, "  task %d %s (×%d, %.3g GFLOP)\n", i, t.Task.Name, t.Task.Weight, t.Task.FLOPs/1e9)
	}
	if p.bar != nil {
		p.bar.ChangeMax(s.Total)
		_ = p.bar.Set(s.Done)
	}
}

func (p *tuneProgress) Trial(s *autotune.Status, task int, r *autotune.Record) {
	t := s.Tasks[task]
	model := "model ≈ ?"
	if sec, known := s.ModelLatency(); known {
		model = fmt.Sprintf("model ≈ %.3f ms", sec*1e3)
	}
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("%s best %s %s | %s%s", t.Task.Name, fmtSeconds(t.Best), fmtGFLOPS(t), model, fmtFleet(s.Fleet)))
		_ = p.bar.Set(s.Done)
		return
	}
	res := fmtSeconds(r.Median())
	if !r.OK() {
		res = r.Error + ": " + shortMsg(r.ErrorMsg)
	}
	fmt.Fprintf(p.w, "[%d/%d] %s: %s | best %s %s | %s%s | ETA %s\n", s.Done, s.Total, t.Task.Name, res, fmtSeconds(t.Best), fmtGFLOPS(t), model, fmtFleet(s.Fleet), s.ETA().Round(time.Second))
}

func (p *tuneProgress) End(s *autotune.Status) {
	if p.bar != nil {
		_ = p.bar.Finish()
	}
}

// fmtFleet describes a distributed job's workers ("" for a local job).
func fmtFleet(f *autotune.Fleet) string {
	if f == nil {
		return ""
	}
	return fmt.Sprintf(" | workers %d, in flight %d, redelivered %d", f.Workers, f.InFlight, f.Redelivered)
}

func shortMsg(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return s
}

func fmtSeconds(s float64) string {
	if math.IsInf(s, 1) {
		return "-"
	}
	return fmt.Sprintf("%.4f ms", s*1e3)
}

func fmtGFLOPS(t *autotune.TaskStatus) string {
	if g := t.GFLOPS(); g > 0 {
		return fmt.Sprintf("(%.1f GFLOP/s)", g)
	}
	return ""
}

// printTuneSummary prints the per-task table and the model estimate.
func printTuneSummary(w io.Writer, s *autotune.Status) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "task\tkernels\ttrials\tnew\terrors\tbest ms\tGFLOP/s\tweight×best ms\t")
	for i, t := range s.Tasks {
		best, gf, wb := "-", "-", "-"
		if !math.IsInf(t.Best, 1) {
			best = fmt.Sprintf("%.4f", t.Best*1e3)
			gf = fmt.Sprintf("%.1f", t.GFLOPS())
			wb = fmt.Sprintf("%.4f", float64(t.Task.Weight)*t.Best*1e3)
		}
		fmt.Fprintf(tw, "%d %s\t%d\t%d\t%d\t%d\t%s\t%s\t%s\t\n", i, t.Task.Name, t.Task.Weight, t.Trials, t.Fresh, t.Errors, best, gf, wb)
	}
	tw.Flush()
	if sec, known := s.ModelLatency(); known {
		fmt.Fprintf(w, "model kernel time estimate: %.4f ms (Σ weight × best)\n", sec*1e3)
	}
	fmt.Fprintf(w, "%d of %d trials recorded (%d this run) in %s\n", s.Done, s.Total, s.Done-s.StartDone, time.Since(s.Start).Round(time.Second))
}

// measuringTarget sets the threads of parallel loops (when threads > 0)
// and makes the target that tune and worker measure on. Errors: bad
// threads, an unknown target (prefixed --target), a target whose tools or
// driver are missing.
func measuringTarget(name, mcpu, npuConfig string, threads int) (targets.Target, error) {
	if threads > 0 {
		if err := rt.SetNumThreads(threads); err != nil {
			return nil, err
		}
	}
	target, err := targets.New(name, targets.Options{MCPU: mcpu, Threads: threads, Config: npuConfig})
	if err != nil {
		return nil, fmt.Errorf("--target: %v", err)
	}
	return target, targets.CheckAvailable(target)
}
