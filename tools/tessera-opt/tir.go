package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/lowering"
	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets/cpu"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// The tensor IR level of tessera-opt. A `.tir` input (by extension, or
// text whose first token is `tir.`) is parsed as tensor IR; a graph/hlo
// input moves to tensor IR at --lower-to-tir. The tensor-level steps run
// in command-line order after that point; --emit-llvm prints LLVM IR
// (targets/cpu) instead of tensor IR.

// tirStepPrefix marks tensor-level steps in options.pipeline, which keeps
// every step (graph passes and these) in command-line order.
const tirStepPrefix = "tir:"

// tirSteps are the tensor-level steps with their flag help.
var tirSteps = []struct{ name, summary string }{
	{lowering.LowerToTIRPassName, "convert the fused hlo module (after the graph/hlo passes before it) to tensor IR: a kernel per hlo.fusion and a host function per function; later flags run on tensor IR"},
	{"simplify", "tensor IR: simplify every expression (tensorir.SimplifyFunc)"},
	{"inline-elementwise", "tensor IR: inline every spatial, injective intermediate block into its consumers (compute_inline)"},
	{"compact-buffer-allocation", "tensor IR: move every allocation to the innermost statement holding its accesses and shrink it to the region accessed there (tensorir.CompactBufferAllocation)"},
	{tir.RewriteLayoutPassName, "tensor IR: store every kernel parameter that only receives host constants in the order its loop nest reads it, transposing the constants (tensorir.RewriteLayoutModule)"},
	{"cpu-default-schedule", "tensor IR: the CPU default schedule (vectorize the innermost spatial loop at --cpu-vector-bits, parallelize the outermost)"},
}

// tirStepFunc applies one tensor-level step (not lower-to-tir) to m.
func tirStepFunc(name string, o *options) func(m *tir.Module) error {
	if fn := applyTraceFunc(name); fn != nil {
		return fn
	}
	switch name {
	case "cpu-default-schedule":
		return func(m *tir.Module) error {
			*m = *cpu.DefaultScheduleModule(m, o.cpuVectorBits)
			return nil
		}
	case "simplify":
		return func(m *tir.Module) error {
			for i, f := range m.Funcs {
				m.Funcs[i] = tir.SimplifyFunc(f)
			}
			return nil
		}
	case "inline-elementwise":
		return schedule.InlineElementwiseModule
	case tir.RewriteLayoutPassName:
		return func(m *tir.Module) error {
			tir.RewriteLayoutModule(m)
			return nil
		}
	case "compact-buffer-allocation":
		return func(m *tir.Module) error {
			tir.CompactBufferAllocationModule(m)
			return nil
		}
	}
	return nil
}

// tirStepFlag appends a tensor-level step at its command-line position.
type tirStepFlag struct {
	name string
	seq  *[]string
}

func (f tirStepFlag) String() string { return "" }
func (f tirStepFlag) Type() string   { return "" }
func (f tirStepFlag) Set(v string) error {
	switch strings.TrimSpace(v) {
	case "", "true":
		*f.seq = append(*f.seq, tirStepPrefix+f.name)
	case "false":
	default:
		return fmt.Errorf("--%s takes no value", f.name)
	}
	return nil
}

// isTIRStep reports whether a pipeline entry is a tensor-level step.
func isTIRStep(s string) bool { return strings.HasPrefix(s, tirStepPrefix) }

// graphPipeline is the text of the graph-level passes of the pipeline.
func (o *options) graphPipeline() string {
	var ps []string
	for _, s := range o.pipeline {
		if !isTIRStep(s) {
			ps = append(ps, s)
		}
	}
	return strings.Join(ps, ",")
}

// isTIRInput reports whether the input is tensor IR: a .tir file, or text
// whose first token (after blanks and // comments) starts with "tir.".
func isTIRInput(name string, src []byte) bool {
	if strings.HasSuffix(name, ".tir") {
		return true
	}
	s := string(src)
	for {
		s = strings.TrimLeft(s, " \t\r\n")
		if !strings.HasPrefix(s, "//") {
			break
		}
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		} else {
			s = ""
		}
	}
	return strings.HasPrefix(s, "tir.")
}

// checkLevels validates the order of graph passes and tensor-level steps
// for the input's level.
func (o *options) checkLevels(tirInput bool) error {
	lowered := tirInput
	for _, s := range o.pipeline {
		switch {
		case s == tirStepPrefix+lowering.LowerToTIRPassName:
			if lowered {
				if tirInput {
					return errors.New("--lower-to-tir needs graph or hlo input, but the input is tensor IR")
				}
				return errors.New("--lower-to-tir given twice")
			}
			lowered = true
		case isTIRStep(s):
			if !lowered {
				return fmt.Errorf("--%s runs on tensor IR: put --lower-to-tir before it (or give a .tir input)", strings.TrimPrefix(s, tirStepPrefix))
			}
		default:
			if lowered {
				if tirInput {
					return fmt.Errorf("pass '%s' runs on graph or hlo IR, but the input is tensor IR", s)
				}
				return fmt.Errorf("pass '%s' runs on graph or hlo IR and cannot follow --lower-to-tir", s)
			}
		}
	}
	if o.emitLLVM && !lowered {
		return errors.New("--emit-llvm needs tensor IR: add --lower-to-tir (or give a .tir input)")
	}
	return nil
}

// processTIR runs the tensor-level steps after the lowering point (all of
// them for a tensor IR input) on m and prints the result.
func processTIR(o *options, m *tir.Module, stderr io.Writer) (res result) {
	if o.verifyEach {
		if err := tir.Verify(m); err != nil {
			res.diags = graphir.AsDiagnostics(err)
			return res
		}
	}
	po := tir.PrintOptions{DebugInfo: o.debugInfo}
	if !o.printLargeConsts && o.elideLargerThan > 0 {
		po.ElideConstantsLargerThan = o.elideLargerThan
	}
	started := false
	var timings []string
	for _, s := range o.pipeline {
		if s == tirStepPrefix+lowering.LowerToTIRPassName {
			started = true
			if o.printIRAfterAll || contains(o.printIRAfter, lowering.LowerToTIRPassName) {
				fmt.Fprintf(stderr, "// -----// IR Dump After %s //----- //\n%s\n", lowering.LowerToTIRPassName, tir.PrintWith(m, po))
			}
			continue
		}
		if !isTIRStep(s) || (!started && !o.tirInput) {
			continue
		}
		name := strings.TrimPrefix(s, tirStepPrefix)
		start := time.Now()
		if err := tirStepFunc(name, o)(m); err != nil {
			res.diags = graphir.AsDiagnostics(err)
			return res
		}
		if o.timing {
			timings = append(timings, fmt.Sprintf("  %10.4f ms  %s", float64(time.Since(start).Microseconds())/1000, name))
		}
		if o.verifyEach {
			if err := tir.Verify(m); err != nil {
				res.diags = graphir.AsDiagnostics(err)
				res.diags[0].AddNote(graphir.Location{}, "the IR is invalid after '%s'", name)
				return res
			}
		}
		if o.printIRAfterAll || contains(o.printIRAfter, name) {
			fmt.Fprintf(stderr, "// -----// IR Dump After %s //----- //\n%s\n", name, tir.PrintWith(m, po))
		}
	}
	if o.timing && len(timings) > 0 {
		fmt.Fprintf(stderr, "tensor IR steps:\n%s\n", strings.Join(timings, "\n"))
	}
	if o.emitLLVM {
		r, err := cpu.Compile(m, cpu.Options{})
		if err != nil {
			res.diags = graphir.AsDiagnostics(err)
			return res
		}
		res.ok, res.out = true, r.LLVM()
		return res
	}
	res.ok, res.out = true, tir.PrintWith(m, po)
	return res
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

// lowersToTIR reports whether the pipeline contains --lower-to-tir.
func (o *options) lowersToTIR() bool {
	return contains(o.pipeline, tirStepPrefix+lowering.LowerToTIRPassName)
}

// isTIRStepName reports whether name is a tensor-level step (for
// --print-ir-after).
func isTIRStepName(name string) bool {
	for _, s := range tirSteps {
		if s.name == name {
			return true
		}
	}
	return false
}
