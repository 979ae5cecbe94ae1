package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/tessera-ml/tessera/autotune"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
)

// profileSeconds is about how long one profile of a variant runs (its
// calls' count follows the model's latency, between profileMinRuns and
// profileMaxRuns), and profileWarmup the untimed calls before it.
const (
	profileSeconds = 0.5
	profileMinRuns = 5
	profileMaxRuns = 200
	profileWarmup  = 2
)

// rerankInModel runs the in-model rerank of --in-model after the search
// (autotune.RerankInModel) and prints its outcome.
func rerankInModel(model string, o tuneOptions, tasks []*autotune.Task, db *autotune.Database, target targets.Target, stdout io.Writer) error {
	dir, err := os.MkdirTemp("", "tessera-inmodel-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opts := autotune.InModelOptions{Target: target, Candidates: o.inModel, Rounds: o.inModelRounds,
		Progress: func(s string) { fmt.Fprintln(stdout, s) }}
	res, err := autotune.RerankInModel(tasks, db, opts, variantBuilder(model, o, dir))
	if errors.Is(err, autotune.ErrNothingToRerank) {
		fmt.Fprintf(stdout, "%v; nothing recorded\n", err)
		return nil
	}
	if err != nil {
		return err
	}
	printInModel(stdout, res)
	return nil
}

// variantBuilder compiles model, instrumented, with each variant's records
// written to a database of its own in dir.
func variantBuilder(model string, o tuneOptions, dir string) autotune.ModelBuilder {
	n := 0
	return func(recs []*autotune.Record) (autotune.ModelVariant, error) {
		n++
		path := filepath.Join(dir, fmt.Sprintf("variant%d.jsonl", n))
		if err := writeRecords(path, recs); err != nil {
			return nil, err
		}
		// The variants run at the sizes the search tuned at: symbolic
		// dimensions fixed at --bind-dim (the tasks over them are not
		// re-ranked and keep the default rules in the variants).
		fix := append(append([]string(nil), o.fixDims...), o.bindDims...)
		co := compileOptions{target: o.target, mcpu: o.mcpu, npuConfig: o.npuConfig, fixDims: fix, tuningDB: path, profile: true, needSizes: true}
		l, err := loadCompiled(model, co, o.threads)
		if err != nil {
			return nil, err
		}
		v, err := newProfiledVariant(l)
		if err != nil {
			l.Close()
			return nil, err
		}
		return v, nil
	}
}

// writeRecords writes recs (as trials) to a new database at path.
func writeRecords(path string, recs []*autotune.Record) error {
	db, _, err := autotune.OpenDatabase(path)
	if err != nil {
		return err
	}
	for _, r := range recs {
		c := *r
		c.InModel = ""
		if err := db.Append(&c); err != nil {
			db.Close()
			return err
		}
	}
	return db.Close()
}

// profiledVariant is a compiled, instrumented model with random inputs.
type profiledVariant struct {
	l         *loaded
	ins, outs []*rt.Tensor
	runs      int
}

// newProfiledVariant prepares l's inputs and sizes its profiles by one
// timed call. Errors: a model whose entry records no profile, the call's.
func newProfiledVariant(l *loaded) (*profiledVariant, error) {
	if _, ok := l.entry.(targets.Profiler); !ok {
		return nil, fmt.Errorf("--in-model: this target records no per-kernel profile")
	}
	ins, err := benchInputs(l, nil)
	if err != nil {
		return nil, err
	}
	outs, err := l.newOutputs()
	if err != nil {
		return nil, err
	}
	t0 := time.Now()
	if err := l.entry.Call(ins, outs); err != nil {
		return nil, err
	}
	runs := int(profileSeconds / max(time.Since(t0).Seconds(), 1e-9))
	return &profiledVariant{l: l, ins: ins, outs: outs, runs: min(max(runs, profileMinRuns), profileMaxRuns)}, nil
}

// Profile warms the model up, then profiles it: per-call seconds by
// kernel name.
func (v *profiledVariant) Profile() (map[string][]float64, error) {
	for range profileWarmup {
		if err := v.l.entry.Call(v.ins, v.outs); err != nil {
			return nil, err
		}
	}
	tr, err := v.l.entry.(targets.Profiler).Profile(v.ins, v.outs, v.runs)
	if err != nil {
		return nil, err
	}
	out := map[string][]float64{}
	for _, ev := range tr.TraceEvents {
		if ev.Ph == "X" && ev.Cat == "kernel" && ev.Dur != nil {
			out[ev.Name] = append(out[ev.Name], *ev.Dur*1e-6)
		}
	}
	return out, nil
}

func (v *profiledVariant) Close() { v.l.Close() }

// printInModel prints the rerank's totals and the tasks whose choice
// differs from the fastest alone.
func printInModel(w io.Writer, res *autotune.InModelResult) {
	changed := 0
	for _, it := range res.Tasks {
		if it.Best != it.FastestAlone() {
			changed++
		}
	}
	fmt.Fprintf(w, "in-model rerank: %d tasks, %d variants × %d rounds; kernel time in the model: %s with the chosen schedules, %s with the default rules', %s with the fastest alone (%d tasks choose another)\n",
		len(res.Tasks), res.Variants, res.Rounds, fmtSeconds(res.Chosen), fmtSeconds(res.Defaults), fmtSeconds(res.FastestAlone), changed)
}
