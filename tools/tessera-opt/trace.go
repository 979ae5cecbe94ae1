package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tessera-ml/tessera/schedule"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// --apply-trace=FILE: a tensor-level step replaying a schedule trace
// (schedule.Trace JSON, schedule/README.md) on the kernel named by the
// trace's "func" field, or on the module's only kernel when the trace
// names none.

const applyTraceStep = "apply-trace"

// applyTraceFlag appends the step, with its file, at its command-line
// position.
type applyTraceFlag struct{ seq *[]string }

func (f applyTraceFlag) String() string { return "" }
func (f applyTraceFlag) Type() string   { return "FILE" }
func (f applyTraceFlag) Set(v string) error {
	if strings.TrimSpace(v) == "" {
		return fmt.Errorf("--%s needs a trace file", applyTraceStep)
	}
	*f.seq = append(*f.seq, tirStepPrefix+applyTraceStep+"="+v)
	return nil
}

// registerApplyTrace adds --apply-trace to the tool flags.
func registerApplyTrace(fs *pflag.FlagSet, o *options) {
	fs.Var(applyTraceFlag{&o.pipeline}, applyTraceStep, "tensor IR: replay the schedule trace (JSON) in `FILE` on the kernel its \"func\" names (or the only kernel)")
}

// applyTraceFunc is the step of a pipeline entry "apply-trace=FILE", or
// nil for another entry.
func applyTraceFunc(name string) func(m *tir.Module) error {
	path, ok := strings.CutPrefix(name, applyTraceStep+"=")
	if !ok {
		return nil
	}
	return func(m *tir.Module) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("--apply-trace: %v", err)
		}
		tr, err := schedule.ParseTrace(data)
		if err != nil {
			return fmt.Errorf("--apply-trace %s: %v", path, err)
		}
		if _, err := schedule.ApplyToModule(m, tr); err != nil {
			return fmt.Errorf("--apply-trace %s: %v", path, err)
		}
		return nil
	}
}
