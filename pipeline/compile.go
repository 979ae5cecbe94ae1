package pipeline

import (
	"strings"

	"github.com/tessera-ml/tessera/autotune"
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/internal/registry"
	"github.com/tessera-ml/tessera/targets"
)

// Compile runs the table of cfg (Table) on the graph module m, which it
// modifies, with r: every step whose result is at a level up to stop
// (Graph: through fusion; TIR: the scheduled tensor IR after the
// post-schedule passes, what codegen compiles; Artifact: the compiled
// code). Errors: the steps' located diagnostics.
func Compile(m *graphir.Module, cfg Config, r *Runner, stop Level) (*IR, error) {
	if err := checkSymbolic(m, cfg.Target, stop); err != nil {
		return nil, err
	}
	ir := &IR{Level: Graph, Graph: m}
	return ir, run(ir, upTo(Table(cfg), stop), r)
}

// checkSymbolic refuses a module with symbolic dimensions in its
// functions' signatures for a target that does not compile them
// (targets.TakesSymbolicShapes) when the compilation goes below the graph
// level, naming the symbols with the --fix-dim hint.
func checkSymbolic(m *graphir.Module, t targets.Target, stop Level) error {
	if stop == Graph || t == nil || targets.TakesSymbolicShapes(t) {
		return nil
	}
	for _, f := range m.Funcs {
		if syms := graphir.FuncSymbols(f); len(syms) > 0 {
			hint := graphir.FixDimHint(syms)
			return graphir.Errorf(f.Loc, "@%s has symbolic dimensions (%s), and target %s compiles static shapes only (the cpu target compiles them once for every size): specialize them with %s or %s", f.Name, strings.Join(syms, ", "), t.Name(), strings.ReplaceAll(hint, "--fix-dim", "--bind-dim"), hint)
		}
	}
	return nil
}

// run configures rows and runs them on ir.
func run(ir *IR, rows []registry.Item, r *Runner) error {
	steps, err := Instantiate(rows)
	if err != nil {
		return err
	}
	return r.Run(ir, steps)
}

// upTo keeps the leading rows whose steps end at a level up to stop.
func upTo(rows []registry.Item, stop Level) []registry.Item {
	for i, row := range rows {
		if s := Lookup(row.Name); s == nil || s.To > stop {
			return rows[:i]
		}
	}
	return rows
}

// through keeps the rows up to and including the first named name.
func through(rows []registry.Item, name string) []registry.Item {
	for i, row := range rows {
		if row.Name == name {
			return rows[:i+1]
		}
	}
	return rows
}

// Tasks runs the compilation of m (modified) for t up to
// inline-elementwise, the state tuning traces replay on, and returns the
// tuning tasks of its kernels; kernels over symbolic dimensions are tuned
// at the sizes bindDims gives (by symbol name; the others at
// schedule.DefaultRepresentative, autotune.ExtractTasks). Errors: the
// steps' diagnostics; symbolic dimensions for a target that compiles
// static shapes only (checkSymbolic).
func Tasks(m *graphir.Module, t targets.Target, bindDims map[string]int64) ([]*autotune.Task, error) {
	if err := checkSymbolic(m, t, TIR); err != nil {
		return nil, err
	}
	ir := &IR{Level: Graph, Graph: m}
	if err := run(ir, through(Table(Config{Target: t}), "inline-elementwise"), NewRunner()); err != nil {
		return nil, err
	}
	return autotune.ExtractTasks(ir.TIR.Funcs, t.Key(), bindDims), nil
}
