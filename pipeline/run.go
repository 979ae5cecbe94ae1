package pipeline

import (
	"fmt"
	"io"
	"time"

	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/internal/registry"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Runner runs configured steps in order on an IR, checking that each
// step gets the level it runs on; after each step it verifies the IR
// (VerifyEach), dumps it (PrintAfterAll, PrintAfter), records its time
// (Timing) and keeps its statistics and remarks. It is mlir-opt's pass
// manager over all of Tessera's levels.
type Runner struct {
	// VerifyEach verifies the IR after every step.
	VerifyEach bool
	// VerifyOptions are the options of graph-level verification.
	VerifyOptions graphir.VerifyOptions
	// PrintAfterAll dumps the IR after every step, PrintAfter after the
	// steps with these names, to Dump.
	PrintAfterAll bool
	PrintAfter    map[string]bool
	// Timing records the wall-clock time of every step (WriteTiming).
	Timing bool
	// Dump receives IR dumps; Log the steps' remarks (nil: dropped).
	Dump, Log io.Writer
	// GraphPrint and TIRPrint format the dumps.
	GraphPrint graphir.PrintOptions
	TIRPrint   tir.PrintOptions

	timings []registry.Timing
	stats   []Stats
}

// Stats are the statistics one step reported in a run.
type Stats struct {
	Step       string
	Statistics []registry.Statistic
}

// WithRemarks is implemented by steps that report remarks: one-line
// messages for the user, such as how many kernels a tuning database
// scheduled (MLIR's optimization remarks).
type WithRemarks interface {
	Remarks() []string
}

// NewRunner returns a runner that verifies after each step.
func NewRunner() *Runner { return &Runner{VerifyEach: true, PrintAfter: map[string]bool{}} }

// Run applies steps in order to ir. Errors: a step given the wrong level
// (saying where the step belongs), a step's error (its diagnostics), or
// a verifier failure after a step (with a note naming the step).
func (r *Runner) Run(ir *IR, steps []Instance) error {
	for _, in := range steps {
		if err := CheckLevel(in.Step, ir.Level); err != nil {
			return err
		}
		err := r.Time(in.Step.Name, func() error { return in.Action.Run(ir) })
		if err != nil {
			return err
		}
		ir.Level = in.Step.To
		r.collect(in)
		if err := r.verify(ir, in.Step.Name); err != nil {
			return err
		}
		if r.Dump != nil && (r.PrintAfterAll || r.PrintAfter[in.Step.Name]) {
			fmt.Fprintf(r.Dump, "// -----// IR Dump After %s //----- //\n%s\n", in.Step.Name, r.Print(ir))
		}
	}
	return nil
}

// Time runs fn as the phase name of the timing report (when Timing is
// set): every step, and the phases around the table that a compilation
// also spends time in (parsing the model, writing the artifact).
func (r *Runner) Time(name string, fn func() error) error {
	start := time.Now()
	err := fn()
	if r.Timing {
		r.timings = append(r.timings, registry.Timing{Name: name, D: time.Since(start)})
	}
	return err
}

// CheckLevel explains a step given IR of another level (nil when have is
// the level it runs on).
func CheckLevel(s *Step, have Level) error {
	switch {
	case s.From == have:
		return nil
	case s.From == TIR && have == Graph:
		return fmt.Errorf("'%s' runs on tensor IR: put lower-to-tir before it (or give tensor IR as input)", s.Name)
	case s.From == Graph && have == TIR:
		return fmt.Errorf("pass '%s' runs on graph or hlo IR, but the IR is tensor IR by then", s.Name)
	}
	return fmt.Errorf("'%s' runs on %s, but the IR is %s by then", s.Name, s.From, have)
}

// collect keeps the step's statistics and writes its remarks to Log.
func (r *Runner) collect(in Instance) {
	if s, ok := in.Action.(registry.WithStatistics); ok {
		if st := s.Statistics(); len(st) > 0 {
			r.stats = append(r.stats, Stats{Step: in.Step.Name, Statistics: st})
		}
	}
	if rm, ok := in.Action.(WithRemarks); ok && r.Log != nil {
		for _, m := range rm.Remarks() {
			fmt.Fprintln(r.Log, m)
		}
	}
}

// verify checks the IR after step, adding a note that names the step.
func (r *Runner) verify(ir *IR, step string) error {
	if !r.VerifyEach {
		return nil
	}
	if err := r.Verify(ir); err != nil {
		return graphir.InvalidAfter(err, step)
	}
	return nil
}

// Verify checks the IR at its level (compiled code has nothing to check).
func (r *Runner) Verify(ir *IR) error {
	switch ir.Level {
	case Graph:
		return graphir.VerifyWith(ir.Graph, r.VerifyOptions)
	case TIR:
		return tir.Verify(ir.TIR)
	}
	return nil
}

// Print renders the IR at its level with GraphPrint or TIRPrint (compiled
// code has no text here: the target's Artifact.Emit gives it).
func (r *Runner) Print(ir *IR) string {
	switch ir.Level {
	case Graph:
		return graphir.PrintWith(ir.Graph, r.GraphPrint)
	case TIR:
		return tir.PrintWith(ir.TIR, r.TIRPrint)
	}
	return "(compiled code)"
}

// WriteTiming prints the per-step wall-clock report of the runs so far,
// in the style of mlir-opt's -mlir-timing.
func (r *Runner) WriteTiming(w io.Writer) { registry.WriteTiming(w, r.timings) }

// Statistics returns the statistics of the steps run so far, in order.
func (r *Runner) Statistics() []Stats { return r.stats }

// Statistic returns statistic name of step summed over the step's runs
// (0 when it did not run or has none).
func (r *Runner) Statistic(step, name string) int64 {
	var v int64
	for _, st := range r.stats {
		if st.Step != step {
			continue
		}
		for _, s := range st.Statistics {
			if s.Name == name {
				v += s.Value
			}
		}
	}
	return v
}
