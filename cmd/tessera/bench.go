package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"time"

	"github.com/spf13/cobra"

	rt "github.com/tessera-ml/tessera/runtime"
)

func newBenchCmd(stdout, stderr io.Writer) *cobra.Command {
	var o compileOptions
	var inputs []string
	var threads, warmup, repeats int
	var minTime time.Duration
	var report, profile string
	cmd := &cobra.Command{
		Use:   "bench MODEL.mlir|MODEL.onnx|MODEL.so|MODEL.cuda [--input X.npy ...]",
		Short: "compile a model (or load a compiled .so or .cuda) and report its median latency (--target npu: simulated)",
		Long: `bench compiles MODEL.mlir (a MODEL.so or MODEL.cuda written by
'tessera compile -o' is loaded as it is, and refuses the flags that choose how to
compile, as run does), runs @main warmup times untimed, then at least
--repeats times and for at least --min-time, and prints the median latency
(milliseconds) with the spread. Inputs are the given .npy files, or
uniform random values in [-1, 1) when none are given. With --target npu the
time is the simulated time of the NPU kernels at the configured clock plus
the measured time of the host kernels, and the simulator's figures follow,
per kernel.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkThreads(cmd, threads); err != nil {
				return fail(stderr, err)
			}
			o.profile = profile != ""
			o.inputFiles = inputs
			l, err := openModel(cmd, args[0], o, threads)
			if err != nil {
				return fail(stderr, err)
			}
			defer l.Close()
			if err := checkProfile(l.entry, args[0], profile); err != nil {
				return fail(stderr, err)
			}
			ins, err := benchInputs(l, inputs)
			if err != nil {
				return fail(stderr, err)
			}
			outs, err := l.newOutputs()
			if err != nil {
				return fail(stderr, err)
			}
			if err := checkReport(l.entry, report); err != nil {
				return fail(stderr, err)
			}
			tm, err := l.entry.BenchEach(ins, outs, warmup, repeats, minTime, nil)
			if err != nil {
				return fail(stderr, err)
			}
			lo, hi := tm.Seconds[0], tm.Seconds[0]
			for _, s := range tm.Seconds {
				lo, hi = min(lo, s), max(hi, s)
			}
			fmt.Fprintf(stdout, "%s: median %.4f ms over %d runs (min %.4f, max %.4f) on %d threads\n",
				args[0], tm.Median*1e3, len(tm.Seconds), lo*1e3, hi*1e3, rt.NumThreads())
			if err := printNPUReport(l.entry, report, stdout); err != nil {
				return fail(stderr, err)
			}
			if profile != "" {
				if err := profileModel(l.entry, ins, outs, max(repeats, 1), profile, stderr); err != nil {
					return fail(stderr, err)
				}
			}
			return nil
		},
	}
	addCompileFlags(cmd, &o, stderr)
	cmd.Flags().StringArrayVar(&inputs, "input", nil, "input .npy file (default: random inputs)")
	cmd.Flags().IntVar(&threads, "threads", 0, "threads for parallel loops (default: TESSERA_NUM_THREADS, OMP_NUM_THREADS or all cores)")
	cmd.Flags().IntVar(&warmup, "warmup", 3, "untimed warm-up runs")
	cmd.Flags().IntVar(&repeats, "repeats", 10, "minimum timed runs")
	cmd.Flags().DurationVar(&minTime, "min-time", time.Second, "minimum total timed duration")
	cmd.Flags().StringVar(&profile, "profile", "", "after timing, profile --repeats more runs: write their timeline (Trace Event Format JSON for Perfetto or chrome://tracing) here and print a per-kernel table to stderr")
	cmd.Flags().StringVar(&report, "report", "", "--target npu: write the simulator's figures as JSON here")
	return cmd
}

// benchInputs reads the given inputs or makes random ones.
func benchInputs(l *loaded, paths []string) ([]*rt.Tensor, error) {
	if len(paths) > 0 {
		return l.readInputs(paths)
	}
	r := rand.New(rand.NewPCG(1, 2))
	ins := make([]*rt.Tensor, len(l.inputs))
	for i, s := range l.inputs {
		t, err := rt.NewTensor(s.DType, s.Shape)
		if err != nil {
			return nil, err
		}
		if v, err := t.Float32s(); err == nil {
			for j := range v {
				v[j] = float32(r.Float64()*2 - 1)
			}
		}
		ins[i] = t
	}
	return ins, nil
}
