package main

import (
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/tessera-ml/tessera/internal/traceevent"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
)

// checkProfile refuses --profile, before anything runs, for an entry that
// records no timeline: a target without one, or a compiled model built
// without probes.
func checkProfile(e targets.Entry, model, path string) error {
	if path == "" {
		return nil
	}
	if _, ok := e.(targets.Profiler); ok {
		return nil
	}
	if isCompiledModel(model) {
		return fmt.Errorf("--profile: %s was compiled without probes; profile the .mlir or .onnx model (run and bench compile it instrumented)", model)
	}
	return fmt.Errorf("--profile: this target records no profile (cpu, npu and cuda do)")
}

// profileModel runs the entry runs times under its profiler, prints the
// per-kernel table to w and writes the trace to path (nothing is written
// when a run fails).
func profileModel(e targets.Entry, ins, outs []*rt.Tensor, runs int, path string, w io.Writer) error {
	tr, err := e.(targets.Profiler).Profile(ins, outs, runs)
	if err != nil {
		return err
	}
	printProfile(w, tr)
	if err := tr.WriteFile(path); err != nil {
		return fmt.Errorf("--profile: %v", err)
	}
	fmt.Fprintf(w, "wrote %s (%d events; open it in https://ui.perfetto.dev or chrome://tracing)\n", path, len(tr.TraceEvents))
	return nil
}

// kernelRow is one kernel's line of the profile table.
type kernelRow struct {
	name, schedule string
	times          []float64 // µs per call
	total          float64   // µs, the sum of times
	flops          float64
}

// printProfile prints the profile's kernels (cat "kernel" slices) by
// total time: calls, total and median time, share of the end-to-end
// time (cat "run" slices), GFLOP/s and schedule; then the sum of the
// kernels against the end-to-end time, and the probe overhead.
func printProfile(w io.Writer, tr *traceevent.Trace) {
	rows := map[string]*kernelRow{}
	var runs []float64
	kernelSum := 0.0
	for _, ev := range tr.TraceEvents {
		if ev.Ph != "X" || ev.Dur == nil {
			continue
		}
		switch ev.Cat {
		case "run":
			runs = append(runs, *ev.Dur)
		case "kernel":
			r := rows[ev.Name]
			if r == nil {
				r = &kernelRow{name: ev.Name}
				rows[ev.Name] = r
			}
			r.times = append(r.times, *ev.Dur)
			r.total += *ev.Dur
			if f, ok := ev.Args["flops"].(float64); ok {
				r.flops = f
			}
			if s, ok := ev.Args["schedule"].(string); ok {
				r.schedule = s
			}
			kernelSum += *ev.Dur
		}
	}
	total := 0.0
	for _, r := range runs {
		total += r
	}
	list := make([]*kernelRow, 0, len(rows))
	for _, r := range rows {
		list = append(list, r)
	}
	sort.Slice(list, func(i, j int) bool {
		if a, b := list[i].total, list[j].total; a != b {
			return a > b
		}
		return list[i].name < list[j].name
	})
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kernel\tcalls\ttotal ms\tmedian µs\t% of model\tGFLOP/s\tschedule\t")
	for _, r := range list {
		t := r.total
		gflops := "-"
		if r.flops > 0 && t > 0 {
			gflops = fmt.Sprintf("%.1f", r.flops*float64(len(r.times))/(t*1e3))
		}
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.1f\t%.1f\t%s\t%s\t\n", r.name, len(r.times), t/1e3, rt.Median(slices.Clone(r.times)), pct(t, total), gflops, orDash(r.schedule))
	}
	tw.Flush()
	if len(runs) > 0 {
		fmt.Fprintf(w, "kernels: %.3f ms of %.3f ms end to end over %d runs (%.1f%%); between and around kernels: %.3f ms per run; end-to-end median %.3f ms\n",
			kernelSum/1e3, total/1e3, len(runs), pct(kernelSum, total), (total-kernelSum)/1e3/float64(len(runs)), rt.Median(slices.Clone(runs))/1e3)
	}
	if o, ok := tr.OtherData["probe_overhead_us"].(float64); ok {
		fmt.Fprintf(w, "probe overhead: %.3f µs per kernel call (median gap between back-to-back kernel calls)\n", o)
	}
	if n, ok := tr.OtherData["lost_events"]; ok {
		fmt.Fprintf(w, "warning: %v kernel calls were not recorded (more calls per run than the probes hold)\n", n)
	}
}

func pct(a, b float64) float64 {
	if b <= 0 {
		return 0
	}
	return 100 * a / b
}

func orDash(s string) string {
	if strings.TrimSpace(s) == "" {
		return "-"
	}
	return s
}
