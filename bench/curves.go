package main

import (
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tessera-ml/tessera/autotune"
	"github.com/tessera-ml/tessera/autotune/tuneplot"
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/pipeline"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
)

// runCurves is `go run ./bench tune-curves`: for each workload it tunes
// the workload's kernel with random search and with the cost-model-guided
// evolutionary search (each on its own tuning database in --out, resumed
// when rerun) and prints both best-so-far curves, and the trial at which
// the guided search first reaches the best latency random search found.
// --plot FILE (.png or .svg) also draws every run's curves against trials
// and wall time (tuneplot.CompareFigure, as `tessera db plot` draws).
func runCurves(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tune-curves", flag.ContinueOnError)
	fs.SetOutput(stderr)
	names := fs.String("workloads", "gemm1024,conv56", "workloads: gemmN (N³ f32 GEMM) or convH (ResNet-18's 3×3 conv at H²: conv56, conv28, conv14, conv7)")
	randomTrials := fs.Int("random-trials", 1000, "random-search trials")
	modelTrials := fs.Int("model-trials", 300, "cost-model-guided trials")
	threads := fs.Int("threads", 2, "threads of parallel loops when measuring")
	out := fs.String("out", "tune-curves", "directory of the tuning databases (one per workload and strategy)")
	seed := fs.Int64("seed", 1, "search seed")
	batch := fs.Int("batch", 16, "candidates per measurement round")
	plotFile := fs.String("plot", "", "also draw the curves into this picture (.png or .svg)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *plotFile != "" {
		if _, err := tuneplot.Format(*plotFile); err != nil {
			fmt.Fprintf(stderr, "--plot: %v\n", err)
			return 2
		}
	}
	var runs []tuneplot.Run
	if err := rt.SetNumThreads(*threads); err != nil {
		fmt.Fprintln(stderr, err)
		return 2
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, name := range strings.Split(*names, ",") {
		w, err := curveWorkload(strings.TrimSpace(name))
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 2
		}
		task, err := workloadTask(w, *threads)
		if err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", w.Name, err)
			return 1
		}
		curves := map[string][]float64{}
		for _, st := range []struct {
			strategy string
			trials   int
		}{{autotune.StrategyRandom, *randomTrials}, {autotune.StrategyEvolutionary, *modelTrials}} {
			path := filepath.Join(*out, fmt.Sprintf("%s-%s.jsonl", name, st.strategy))
			rs, err := tuneCurve(task, path, st.strategy, st.trials, *threads, *seed, *batch, stderr)
			if err != nil {
				fmt.Fprintf(stderr, "%s %s: %v\n", w.Name, st.strategy, err)
				return 1
			}
			curves[st.strategy] = bestSoFar(rs)
			runs = append(runs, tuneplot.Run{Name: name + " " + strategyName(st.strategy), Records: rs})
		}
		printCurves(stdout, w, task, curves)
	}
	if *plotFile != "" {
		if err := plotCurves(*plotFile, runs, *threads); err != nil {
			fmt.Fprintf(stderr, "--plot: %v\n", err)
			return 1
		}
		fmt.Fprintf(stdout, "wrote %s\n", *plotFile)
	}
	return 0
}

// plotCurves draws the runs' best-so-far curves into the picture path.
func plotCurves(path string, runs []tuneplot.Run, threads int) error {
	fig, err := tuneplot.CompareFigure(fmt.Sprintf("tune-curves: random against cost-model search (%d threads)", threads), runs)
	if err != nil {
		return err
	}
	return tuneplot.Write(path, fig)
}

// strategyName is a strategy as the tables and the legend name it.
func strategyName(strategy string) string {
	if strategy == autotune.StrategyEvolutionary {
		return "cost model"
	}
	return strategy
}

// bestSoFar is the best median latency in seconds after each record.
func bestSoFar(rs []*autotune.Record) []float64 {
	var curve []float64
	best := math.Inf(1)
	for _, r := range rs {
		best = math.Min(best, r.Median())
		curve = append(curve, best)
	}
	return curve
}

// curveWorkload parses gemmN / convH.
func curveWorkload(name string) (Workload, error) {
	var n int
	switch {
	case strings.HasPrefix(name, "gemm"):
		if _, err := fmt.Sscanf(name, "gemm%d", &n); err == nil && n > 0 {
			return GEMMWorkload("gemm", n, n, n), nil
		}
	case strings.HasPrefix(name, "conv"):
		if _, err := fmt.Sscanf(name, "conv%d", &n); err == nil {
			for _, s := range convShapes {
				if s[1] == n {
					return ConvWorkload(s[0], s[1], s[1]), nil
				}
			}
		}
	}
	return Workload{}, fmt.Errorf("tune-curves: unknown workload %q (gemmN, conv56, conv28, conv14, conv7)", name)
}

// workloadTask is the tuning task of w's kernel with the most FLOPs.
func workloadTask(w Workload, threads int) (*autotune.Task, error) {
	m, err := graphir.Parse(w.Name+".mlir", []byte(w.GraphText()))
	if err != nil {
		return nil, err
	}
	target, err := targets.New("cpu", targets.Options{Threads: threads})
	if err != nil {
		return nil, err
	}
	tasks, err := pipeline.Tasks(m, target, nil)
	if err != nil {
		return nil, err
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("no kernel")
	}
	best := tasks[0]
	for _, t := range tasks {
		if t.FLOPs > best.FLOPs {
			best = t
		}
	}
	return best, nil
}

// curveRecorder records the best latency after each trial.
type curveRecorder struct {
	best []float64
	log  io.Writer
	name string
}

func (c *curveRecorder) Begin(s *autotune.Status) {
	fmt.Fprintf(c.log, "%s: %d of %d trials recorded\n", c.name, s.Done, s.Total)
}

func (c *curveRecorder) Trial(s *autotune.Status, _ int, r *autotune.Record) {
	t := s.Tasks[0]
	if s.Done%50 == 0 {
		fmt.Fprintf(c.log, "%s: %d/%d best %.4f ms (%.1f GFLOP/s)\n", c.name, s.Done, s.Total, t.Best*1e3, t.GFLOPS())
	}
}

func (c *curveRecorder) End(*autotune.Status) {}

// tuneCurve runs (or resumes) one strategy's job and returns the task's
// records, read back from the database in trial order.
func tuneCurve(task *autotune.Task, path, strategy string, trials, threads int, seed int64, batch int, log io.Writer) ([]*autotune.Record, error) {
	db, warns, err := autotune.OpenDatabase(path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	for _, w := range warns {
		fmt.Fprintln(log, w)
	}
	target, err := targets.New("cpu", targets.Options{Threads: threads})
	if err != nil {
		return nil, err
	}
	start := time.Now()
	_, err = autotune.Tune([]*autotune.Task{task}, db, autotune.Options{
		Target: target, Trials: trials, Strategy: strategy, Seed: seed, BatchSize: batch,
		Progress: &curveRecorder{log: log, name: filepath.Base(path)},
	})
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(log, "%s: %v\n", filepath.Base(path), time.Since(start).Round(time.Second))
	return db.Records(task.Key, target.Key()), nil
}

// printCurves prints both curves at fixed trial counts and when the
// guided search reached random search's final best.
func printCurves(w io.Writer, wl Workload, task *autotune.Task, curves map[string][]float64) {
	rnd, evo := curves[autotune.StrategyRandom], curves[autotune.StrategyEvolutionary]
	fmt.Fprintf(w, "\n%s (%s, %.3g GFLOP): best latency after N trials, ms (GFLOP/s)\n", wl.Name, task.Name, task.FLOPs/1e9)
	fmt.Fprintf(w, "%8s  %-22s  %-22s\n", "trials", "random", "cost model")
	at := func(c []float64, n int) string {
		if n > len(c) || math.IsInf(c[n-1], 1) {
			return "-"
		}
		return fmt.Sprintf("%.4f (%.1f)", c[n-1]*1e3, task.FLOPs/c[n-1]/1e9)
	}
	for _, n := range []int{1, 10, 20, 50, 100, 150, 200, 300, 400, 500, 700, 1000} {
		if n > len(rnd) && n > len(evo) {
			break
		}
		fmt.Fprintf(w, "%8d  %-22s  %-22s\n", n, at(rnd, n), at(evo, n))
	}
	if len(rnd) == 0 {
		return
	}
	target := rnd[len(rnd)-1]
	for i, b := range evo {
		if b <= target {
			fmt.Fprintf(w, "cost model reached random search's best after %d trials (%.4f ms) at trial %d\n", len(rnd), target*1e3, i+1)
			return
		}
	}
	fmt.Fprintf(w, "cost model did not reach random search's best after %d trials (%.4f ms) within %d trials\n", len(rnd), target*1e3, len(evo))
}
