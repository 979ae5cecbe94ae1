// Command bench measures Tessera's compiled CPU code on GEMM, MLP and
// ResNet-18 conv workloads against OpenBLAS and PyTorch, in the same run.
//
//	go run ./bench [--threads 1,2] [--repeats N] [--min-time D] [--workloads gemm,mlp,conv] [--quick] [--json out.json]
//
// Each thread count runs in its own worker process (this program re-executed
// with --worker-threads), started with TESSERA_NUM_THREADS, OMP_NUM_THREADS
// and OPENBLAS_NUM_THREADS set to the count and OPENBLAS_CORETYPE unset, so
// that compiled code, libgomp and OpenBLAS read a fresh environment. See
// README.md for the methodology.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	goruntime "runtime"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tessera-ml/tessera/autotune"
	rt "github.com/tessera-ml/tessera/runtime"
)

// Config is what the command line asks for.
type Config struct {
	Threads   []int         `json:"threads"`
	Warmup    int           `json:"warmup"`
	Repeats   int           `json:"repeats"`
	MinTime   time.Duration `json:"-"`
	MinTimeS  float64       `json:"min_time_s"`
	Workloads []string      `json:"workloads"`
	Quick     bool          `json:"quick"`
	Python    string        `json:"python"`
	NoTorch   bool          `json:"no_torch"`
	NoBLAS    bool          `json:"no_openblas"`
	// TuningDB, when set, schedules the kernels with a tuning record with
	// their best record (tessera tune); the others get the default rules.
	TuningDB string `json:"tuning_db,omitempty"`
}

// Measurement is one implementation's timing of one workload.
type Measurement struct {
	MedianS float64   `json:"median_s"`
	GFLOPS  float64   `json:"gflops"`
	Seconds []float64 `json:"seconds"`
	RelErr  float64   `json:"rel_err,omitempty"` // against the naive reference (Tessera, OpenBLAS)
	Mode    string    `json:"mode,omitempty"`    // PyTorch's fastest mode
	Error   string    `json:"error,omitempty"`
}

// Row is one workload at one thread count.
type Row struct {
	Workload   Workload     `json:"workload"`
	FLOPs      float64      `json:"flops"`
	CompileS   float64      `json:"tessera_compile_s,omitempty"`
	Tessera    *Measurement `json:"tessera"`
	OpenBLAS   *Measurement `json:"openblas,omitempty"`
	PyTorch    *Measurement `json:"pytorch,omitempty"`
	BLASRatio  float64      `json:"openblas_ratio,omitempty"` // Tessera GFLOP/s ÷ OpenBLAS GFLOP/s
	TorchRatio float64      `json:"pytorch_ratio,omitempty"`  // Tessera GFLOP/s ÷ PyTorch GFLOP/s
}

// ThreadRun is every workload at one thread count (one worker process).
type ThreadRun struct {
	Threads      int     `json:"threads"`
	Rows         []Row   `json:"rows"`
	OpenBLASCore string  `json:"openblas_core,omitempty"`
	OpenBLASConf string  `json:"openblas_config,omitempty"`
	OpenBLASNote string  `json:"openblas_note,omitempty"`
	TorchVersion string  `json:"torch_version,omitempty"`
	TorchNote    string  `json:"torch_note,omitempty"`
	WallS        float64 `json:"wall_s"`
	// OtherCores is the average number of cores other processes kept busy
	// during this worker's run (−1: unknown); Disturbed says it exceeded
	// disturbedLimit, and the table warns that the timings are disturbed.
	OtherCores float64 `json:"other_cores"`
	Disturbed  bool    `json:"disturbed"`
}

// Report is the whole run.
type Report struct {
	Started string      `json:"started"`
	Host    string      `json:"host"`
	LoadAvg string      `json:"load_average"` // at the start
	Config  Config      `json:"config"`
	Runs    []ThreadRun `json:"runs"`
	WallS   float64     `json:"wall_s"`
}

func main() {
	autotune.MaybeRunWorker() // tune-curves' builder and runner processes
	if len(os.Args) > 1 && os.Args[1] == "tune-curves" {
		os.Exit(runCurves(os.Args[2:], os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	threads := fs.String("threads", "1,2", "comma-separated thread counts")
	warmup := fs.Int("warmup", 2, "untimed runs before timing (after the correctness-check run)")
	repeats := fs.Int("repeats", 5, "minimum timed runs per measurement")
	minTime := fs.Duration("min-time", time.Second, "minimum total timed duration per measurement")
	workloads := fs.String("workloads", "gemm,mlp,conv", "workload groups: gemm, mlp, conv")
	quick := fs.Bool("quick", false, "smaller shapes only (GEMM 256, 512; MLP; conv 256ch@14², 512ch@7²), 3 repeats, min-time 0.1s unless given")
	jsonOut := fs.String("json", "", "also write the report as JSON to this file")
	python := fs.String("python", "/usr/bin/python3", "Python with torch, for the PyTorch anchor")
	noTorch := fs.Bool("no-torch", false, "skip the PyTorch anchor")
	noBLAS := fs.Bool("no-openblas", false, "skip the OpenBLAS anchor")
	tuningDB := fs.String("tuning-db", "", "tuning database (tessera tune) whose best records schedule the kernels they match")
	worker := fs.Int("worker-threads", 0, "internal: run as the worker for this thread count, printing JSON")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "bench: unexpected arguments %q\n", fs.Args())
		return 2
	}
	cfg := Config{Warmup: *warmup, Repeats: *repeats, MinTime: *minTime, Quick: *quick, Python: *python, NoTorch: *noTorch, NoBLAS: *noBLAS, TuningDB: *tuningDB}
	if *quick {
		set := map[string]bool{}
		fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
		if !set["repeats"] {
			cfg.Repeats = 3
		}
		if !set["min-time"] {
			cfg.MinTime = 100 * time.Millisecond
		}
	}
	cfg.MinTimeS = cfg.MinTime.Seconds()
	cfg.Workloads = strings.Split(*workloads, ",")
	for _, t := range strings.Split(*threads, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(t))
		if err != nil || n < 1 {
			fmt.Fprintf(stderr, "bench: bad thread count %q in --threads\n", t)
			return 2
		}
		cfg.Threads = append(cfg.Threads, n)
	}
	if cfg.Warmup < 0 || cfg.Repeats < 1 || cfg.MinTime < 0 {
		fmt.Fprintln(stderr, "bench: --warmup must be ≥ 0, --repeats ≥ 1, --min-time ≥ 0")
		return 2
	}
	ws, err := SelectWorkloads(cfg.Workloads, cfg.Quick)
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 2
	}
	if *worker > 0 {
		tr := RunThreads(cfg, ws, *worker, stderr)
		if err := json.NewEncoder(stdout).Encode(tr); err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
		return 0
	}

	start := time.Now()
	rep := Report{Started: start.UTC().Format(time.RFC3339), Host: hostInfo(), LoadAvg: loadAvg(), Config: cfg}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(stderr, "bench: %v\n", err)
		return 1
	}
	failed := false
	for _, n := range cfg.Threads {
		fmt.Fprintf(stderr, "== %d thread(s): worker process\n", n)
		cmd := exec.Command(self, append(append([]string(nil), args...), "--worker-threads", strconv.Itoa(n))...)
		cmd.Env = anchorEnv(os.Environ(), n)
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(stderr, "bench: worker for %d thread(s): %v\n", n, err)
			return 1
		}
		var tr ThreadRun
		if err := json.Unmarshal(out.Bytes(), &tr); err != nil {
			fmt.Fprintf(stderr, "bench: worker for %d thread(s) printed %q: %v\n", n, out.String(), err)
			return 1
		}
		rep.Runs = append(rep.Runs, tr)
		for _, r := range tr.Rows {
			failed = failed || r.Tessera.Error != "" || (r.OpenBLAS != nil && r.OpenBLAS.Error != "")
		}
	}
	rep.WallS = time.Since(start).Seconds()
	fmt.Fprintf(stdout, "host: %s\nload average: %s at the start, %s at the end\n", rep.Host, rep.LoadAvg, loadAvg())
	for _, tr := range rep.Runs {
		fmt.Fprintln(stdout)
		PrintTable(stdout, tr)
	}
	if lines := Acceptance(rep.Runs); len(lines) > 0 {
		fmt.Fprintln(stdout)
		for _, l := range lines {
			fmt.Fprintln(stdout, l)
		}
	}
	fmt.Fprintf(stdout, "\ntotal wall time %.1fs\n", rep.WallS)
	if *jsonOut != "" {
		data, err := json.MarshalIndent(rep, "", "  ")
		if err == nil {
			err = os.WriteFile(*jsonOut, append(data, '\n'), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "bench: %v\n", err)
			return 1
		}
	}
	if failed {
		fmt.Fprintln(stderr, "bench: some workloads failed (see the error column)")
		return 1
	}
	return 0
}

// loadAvg is the 1-, 5- and 15-minute load average: on a shared machine a
// load near the core count means the timings are disturbed.
func loadAvg() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// goal is a performance target of issue 5: Tessera ≥ Min × the anchor on
// a workload at a thread count.
type goal struct {
	Workload string
	Threads  int
	Anchor   string // "OpenBLAS" or "PyTorch"
	Min      float64
}

var goals = []goal{
	{"gemm 1024³", 2, "OpenBLAS", 0.5},
	{"conv 64ch@56²", 2, "PyTorch", 0.5},
}

// Acceptance reports each goal whose workload, thread count and anchor
// were measured: the ratio reached and whether it meets the goal.
func Acceptance(runs []ThreadRun) []string {
	var out []string
	for _, g := range goals {
		for _, tr := range runs {
			if tr.Threads != g.Threads {
				continue
			}
			for _, r := range tr.Rows {
				if r.Workload.Name != g.Workload {
					continue
				}
				ratio := r.BLASRatio
				if g.Anchor == "PyTorch" {
					ratio = r.TorchRatio
				}
				if ratio == 0 {
					continue
				}
				verdict := "met"
				if ratio < g.Min {
					verdict = "NOT met"
				}
				if tr.Disturbed {
					verdict += " (disturbed run: not conclusive)"
				}
				out = append(out, fmt.Sprintf("goal: %s on %d threads ≥ %.0f%% of %s: %.0f%% — %s",
					g.Workload, g.Threads, g.Min*100, g.Anchor, ratio*100, verdict))
			}
		}
	}
	return out
}

func hostInfo() string {
	model := "unknown CPU"
	if data, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(data), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	return fmt.Sprintf("%s, %d logical CPUs, %s/%s, %s", model, goruntime.NumCPU(), goruntime.GOOS, goruntime.GOARCH, goruntime.Version())
}

func gflops(flops, secs float64) float64 {
	if secs <= 0 {
		return 0
	}
	return flops / secs / 1e9
}

// RunThreads measures every workload on n threads in this process: Tessera
// for each workload (compile, check, time), then OpenBLAS for each (check,
// time), then PyTorch for all of them in one subprocess. Progress goes to
// log.
// Call it once per process: the thread count reaches compiled code through
// the environment, read on a library's first call.
func RunThreads(cfg Config, ws []Workload, n int, log io.Writer) ThreadRun {
	start := time.Now()
	cpu0 := sampleCPU()
	tr := ThreadRun{Threads: n}
	if err := rt.SetNumThreads(n); err != nil {
		panic(err) // n ≥ 1 is checked by the flag parsing
	}
	var blas *OpenBLAS
	if cfg.NoBLAS {
		tr.OpenBLASNote = "skipped (--no-openblas)"
	} else if b, err := LoadOpenBLAS(); err != nil {
		tr.OpenBLASNote = err.Error()
		fmt.Fprintf(log, "  OpenBLAS anchor skipped: %v\n", err)
	} else {
		blas = b
		blas.SetThreads(n)
		tr.OpenBLASCore, tr.OpenBLASConf = blas.CoreName, blas.Config
		if got := blas.Threads(); got != n {
			tr.OpenBLASNote = fmt.Sprintf("OpenBLAS runs %d threads, not %d", got, n)
		}
	}
	// One implementation at a time, with a pause between them, so that
	// idle worker threads of one runtime (libgomp, OpenBLAS) have stopped
	// spinning before the next is timed.
	for _, w := range ws {
		row := Row{Workload: w, FLOPs: w.FLOPs()}
		row.Tessera = measureTessera(cfg, w, &row, log)
		tr.Rows = append(tr.Rows, row)
	}
	if blas != nil {
		time.Sleep(settle)
		for i, w := range ws {
			row := &tr.Rows[i]
			r := newBLASRun(blas, w)
			m := &Measurement{}
			var err error
			if m.RelErr, err = r.Check(); err != nil {
				m.Error = err.Error()
			} else {
				m.Seconds, m.MedianS = r.Bench(cfg.Warmup, cfg.Repeats, cfg.MinTime)
				m.GFLOPS = gflops(row.FLOPs, m.MedianS)
			}
			fmt.Fprintf(log, "  %-18s OpenBLAS %9.3f ms %8.1f GFLOP/s %s\n", w.Name, m.MedianS*1e3, m.GFLOPS, m.Error)
			row.OpenBLAS = m
		}
		time.Sleep(settle)
	}
	if cfg.NoTorch {
		tr.TorchNote = "skipped (--no-torch)"
	} else if err := TorchAvailable(cfg.Python); err != nil {
		tr.TorchNote = "skipped: " + err.Error()
		fmt.Fprintf(log, "  PyTorch anchor %s\n", tr.TorchNote)
	} else if rep, err := RunTorch(cfg.Python, ws, n, cfg.Warmup, cfg.Repeats, cfg.MinTime); err != nil {
		tr.TorchNote = err.Error()
		fmt.Fprintf(log, "  PyTorch anchor failed: %v\n", err)
	} else {
		tr.TorchVersion = rep.Version
		if rep.Threads != n {
			tr.TorchNote = fmt.Sprintf("PyTorch runs %d threads, not %d", rep.Threads, n)
		}
		for i := range tr.Rows {
			res := rep.Results[i]
			m := &Measurement{MedianS: res.Median, Seconds: res.Seconds, Mode: res.Mode, GFLOPS: gflops(tr.Rows[i].FLOPs, res.Median)}
			tr.Rows[i].PyTorch = m
			fmt.Fprintf(log, "  %-18s PyTorch  %9.3f ms %8.1f GFLOP/s (%s)\n", res.Name, m.MedianS*1e3, m.GFLOPS, m.Mode)
		}
	}
	for i := range tr.Rows {
		r := &tr.Rows[i]
		if r.Tessera.Error != "" {
			continue
		}
		if r.OpenBLAS != nil && r.OpenBLAS.GFLOPS > 0 {
			r.BLASRatio = r.Tessera.GFLOPS / r.OpenBLAS.GFLOPS
		}
		if r.PyTorch != nil && r.PyTorch.GFLOPS > 0 {
			r.TorchRatio = r.Tessera.GFLOPS / r.PyTorch.GFLOPS
		}
	}
	tr.WallS = time.Since(start).Seconds()
	tr.OtherCores = otherCores(cpu0, sampleCPU())
	tr.Disturbed = tr.OtherCores > disturbedLimit(n, goruntime.NumCPU())
	return tr
}

// settle is the pause between implementations: longer than OpenBLAS's
// and libgomp's spin-wait before their idle threads sleep.
const settle = 300 * time.Millisecond

// measureTessera compiles, checks and times w.
func measureTessera(cfg Config, w Workload, row *Row, log io.Writer) *Measurement {
	m := &Measurement{}
	k, err := CompileTessera(w, cfg.TuningDB)
	if err != nil {
		m.Error = "compile: " + err.Error()
		fmt.Fprintf(log, "  %-18s Tessera  %s\n", w.Name, m.Error)
		return m
	}
	defer k.Close()
	row.CompileS = k.Compile.Seconds()
	if m.RelErr, err = k.Check(); err != nil {
		m.Error = err.Error()
		fmt.Fprintf(log, "  %-18s Tessera  %s\n", w.Name, m.Error)
		return m
	}
	tm, err := k.Bench(cfg.Warmup, cfg.Repeats, cfg.MinTime)
	if err != nil {
		m.Error = err.Error()
		fmt.Fprintf(log, "  %-18s Tessera  %s\n", w.Name, m.Error)
		return m
	}
	m.Seconds, m.MedianS = tm.Seconds, tm.Median
	m.GFLOPS = gflops(row.FLOPs, m.MedianS)
	fmt.Fprintf(log, "  %-18s Tessera  %9.3f ms %8.1f GFLOP/s (compile %.1fs, rel err %.1e, %d runs)\n",
		w.Name, m.MedianS*1e3, m.GFLOPS, row.CompileS, m.RelErr, len(m.Seconds))
	return m
}

// PrintTable writes one thread count's results.
func PrintTable(out io.Writer, tr ThreadRun) {
	fmt.Fprintf(out, "threads = %d", tr.Threads)
	if tr.OpenBLASCore != "" {
		fmt.Fprintf(out, "   OpenBLAS core %s", tr.OpenBLASCore)
	}
	if tr.TorchVersion != "" {
		fmt.Fprintf(out, "   PyTorch %s", tr.TorchVersion)
	}
	fmt.Fprintln(out)
	if tr.Disturbed {
		fmt.Fprintf(out, "WARNING: other processes kept %.2f cores busy during this run: the timings are disturbed; rerun on a quiet machine\n", tr.OtherCores)
	}
	for _, note := range []string{tr.OpenBLASNote, tr.TorchNote} {
		if note != "" {
			fmt.Fprintf(out, "note: %s\n", note)
		}
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "workload\tGFLOP\tTessera ms\tGFLOP/s\tOpenBLAS GFLOP/s\tratio\tPyTorch GFLOP/s\tratio\tPyTorch mode\t")
	for _, r := range tr.Rows {
		cells := []string{r.Workload.Name, fmt.Sprintf("%.4g", r.FLOPs/1e9)}
		if r.Tessera.Error != "" {
			cells = append(cells, "FAILED", "-")
		} else {
			cells = append(cells, fmt.Sprintf("%.3f", r.Tessera.MedianS*1e3), fmt.Sprintf("%.1f", r.Tessera.GFLOPS))
		}
		cells = append(cells, anchorCells(r.OpenBLAS, r.BLASRatio)...)
		cells = append(cells, anchorCells(r.PyTorch, r.TorchRatio)...)
		mode := "-"
		if r.PyTorch != nil && r.PyTorch.Mode != "" {
			mode = r.PyTorch.Mode
		}
		cells = append(cells, mode)
		fmt.Fprintln(tw, strings.Join(cells, "\t")+"\t")
	}
	tw.Flush()
	for _, r := range tr.Rows {
		if r.Tessera.Error != "" {
			fmt.Fprintf(out, "error: %s: Tessera: %s\n", r.Workload.Name, r.Tessera.Error)
		}
		if r.OpenBLAS != nil && r.OpenBLAS.Error != "" {
			fmt.Fprintf(out, "error: %s: OpenBLAS: %s\n", r.Workload.Name, r.OpenBLAS.Error)
		}
	}
	other := "unknown"
	if tr.OtherCores >= 0 {
		other = fmt.Sprintf("%.2f", tr.OtherCores)
	}
	fmt.Fprintf(out, "(ratio = Tessera GFLOP/s ÷ anchor GFLOP/s; OpenBLAS conv = im2col + sgemm; %.1fs; other processes' load %s cores)\n", tr.WallS, other)
}

func anchorCells(m *Measurement, ratio float64) []string {
	switch {
	case m == nil:
		return []string{"-", "-"}
	case m.Error != "":
		return []string{"FAILED", "-"}
	case ratio == 0:
		return []string{fmt.Sprintf("%.1f", m.GFLOPS), "-"}
	}
	return []string{fmt.Sprintf("%.1f", m.GFLOPS), fmt.Sprintf("%.2f", ratio)}
}
