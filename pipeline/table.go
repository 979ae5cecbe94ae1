package pipeline

import (
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/internal/registry"
	"github.com/tessera-ml/tessera/targets"

	// The dialects whose ops and passes the table runs (they register
	// themselves), and the targets (targets.Register).
	_ "github.com/tessera-ml/tessera/dialects/graph"
	_ "github.com/tessera-ml/tessera/dialects/hlo"
	_ "github.com/tessera-ml/tessera/targets/cpu"
	_ "github.com/tessera-ml/tessera/targets/cuda"
	_ "github.com/tessera-ml/tessera/targets/npu"
)

// Config is what one compilation is asked for: the flags of tessera
// compile, run and bench.
type Config struct {
	// Target is the code generation target.
	Target targets.Target
	// Traces are schedule trace files replayed on the kernels they name.
	Traces []string
	// TuningDB is a tuning database whose best records schedule the
	// kernels with a record for Target ("" = none).
	TuningDB string
	// KeepLayouts skips rewrite-layout (weights stay row-major).
	KeepLayouts bool
	// Prefix is the exported symbol's prefix (<Prefix>_main).
	Prefix string
	// FoldQDQ runs fold-qdq first: quantized contractions in QDQ form
	// become i32 contractions and graph.requantize (integer-only).
	FoldQDQ bool
	// BindDims are the sizes the default rules tile symbolic dimensions
	// for (the default-schedule step's bind-dims; others: 8).
	BindDims map[string]int64
}

// graphSteps are the graph- and hlo-level steps: graph clean-ups,
// batch-norm folding, legalization to hlo, constant convolution kernels
// to HWIO (conv-kernel-layout), channels-last convolution activations
// (conv-layout), the padding of convolutions on small images in kernels
// of their own (explicit-conv-padding) and fusion.
var graphSteps = []string{"canonicalize", "fold-batch-norm", "constant-fold", "cse", "dce",
	"legalize-to-hlo", "canonicalize", "cse", "conv-kernel-layout", "conv-layout", "explicit-conv-padding", "fuse"}

// Table is the whole compilation for cfg, in order: fold-qdq (with
// FoldQDQ), the graph steps (less those the target skips,
// targets.StepSkipper; with the options it gives, targets.StepOptioner),
// lower-to-tir, inline-elementwise, the scheduling steps (apply-trace per
// trace, apply-tuning-records with a database, default-schedule for the
// kernels left), rewrite-layout (unless KeepLayouts), the target's
// post-schedule passes and codegen. The target-dependent steps carry the
// target's options, so the text of the table (Text) replays the exact
// compilation in tessera-opt.
func Table(cfg Config) []registry.Item {
	var rows []registry.Item
	add := func(name string, opts map[string]string) {
		rows = append(rows, registry.Item{Name: name, Options: opts})
	}
	skip, _ := cfg.Target.(targets.StepSkipper)
	optioner, _ := cfg.Target.(targets.StepOptioner)
	if cfg.FoldQDQ {
		add("fold-qdq", nil)
	}
	for _, n := range graphSteps {
		var opts map[string]string
		if optioner != nil {
			opts = optioner.StepOptions(n)
		}
		if skip == nil || !skip.SkipsStep(n) {
			add(n, opts)
		}
	}
	add(LowerToTIRName, nil)
	add("inline-elementwise", nil)
	to := TargetOptions(cfg.Target)
	for _, t := range cfg.Traces {
		add("apply-trace", map[string]string{"file": t})
	}
	if cfg.TuningDB != "" {
		add("apply-tuning-records", with(to, "db", cfg.TuningDB))
	}
	if len(cfg.BindDims) > 0 {
		add("default-schedule", with(to, "bind-dims", graphir.FormatDims(cfg.BindDims)))
	} else {
		add("default-schedule", to)
	}
	if !cfg.KeepLayouts {
		add("rewrite-layout", nil)
	}
	for _, p := range cfg.Target.PostSchedule() {
		add(p, nil)
	}
	codegen := with(to, "export", "main")
	if cfg.Prefix != "" {
		codegen = with(codegen, "prefix", cfg.Prefix)
	}
	add("codegen", codegen)
	return rows
}

// with returns a copy of m with k set to v.
func with(m map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for a, b := range m {
		if a != k {
			out[a] = b
		}
	}
	return out
}

// order lists steps that must run before others wherever both appear in a
// table (checked by TestTableOrder for every target and configuration),
// like the Go compiler's passOrder.
var order = [][2]string{
	{"fold-qdq", "constant-fold"},
	{"fold-qdq", "legalize-to-hlo"},
	{"fold-batch-norm", "legalize-to-hlo"},
	{"legalize-to-hlo", "conv-kernel-layout"},
	{"conv-kernel-layout", "fuse"},
	{"legalize-to-hlo", "explicit-conv-padding"},
	{"explicit-conv-padding", "fuse"},
	{"legalize-to-hlo", "conv-layout"},
	{"conv-layout", "explicit-conv-padding"},
	{"conv-layout", "fuse"},
	{"fuse", LowerToTIRName},
	{LowerToTIRName, "inline-elementwise"},
	{"inline-elementwise", "apply-trace"},
	{"inline-elementwise", "apply-tuning-records"},
	{"apply-trace", "apply-tuning-records"},
	{"apply-tuning-records", "default-schedule"},
	{"apply-trace", "default-schedule"},
	{"default-schedule", "rewrite-layout"},
	{"rewrite-layout", "compact-buffer-allocation"},
	{"default-schedule", "codegen"},
	{"compact-buffer-allocation", "codegen"},
}
