package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/internal/registry"
	"github.com/tessera-ml/tessera/targets"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// configs are the table configurations of every registered target, with
// and without each optional step.
func configs(t *testing.T) []Config {
	t.Helper()
	var out []Config
	for _, name := range targets.Names() {
		tg, err := targets.New(name, targets.Options{Threads: 2})
		require.NoError(t, err)
		out = append(out,
			Config{Target: tg},
			Config{Target: tg, KeepLayouts: true},
			Config{Target: tg, Traces: []string{"a.json", "b.json"}, TuningDB: "t.jsonl", Prefix: "net"},
			Config{Target: tg, FoldQDQ: true})
	}
	return out
}

// TestTableOrder: in every table, each constraint of order holds wherever
// both of its steps appear (the Go compiler's passOrder check).
func TestTableOrder(t *testing.T) {
	for _, cfg := range configs(t) {
		rows := Table(cfg)
		for _, c := range order {
			for i, a := range rows {
				for j, b := range rows {
					if a.Name == c[0] && b.Name == c[1] {
						assert.Less(t, i, j, "%s must run before %s in %s", c[0], c[1], Text(rows))
					}
				}
			}
		}
	}
}

// TestTableLevels: every step of every table is registered and gets the
// level it runs on; a table ends with compiled code.
func TestTableLevels(t *testing.T) {
	for _, cfg := range configs(t) {
		level := Graph
		for _, row := range Table(cfg) {
			s := Lookup(row.Name)
			require.NotNil(t, s, "step %q of the table is not registered", row.Name)
			require.NoError(t, CheckLevel(s, level), Text(Table(cfg)))
			level = s.To
		}
		assert.Equal(t, Artifact, level)
	}
}

// TestTableTextRoundTrips: the table's text parses back to the same
// steps with the same options (what tessera-opt --pass-pipeline gets
// from tessera compile --print-pipeline).
func TestTableTextRoundTrips(t *testing.T) {
	zero := 0.0
	tg, err := targets.New("cpu", targets.Options{Threads: 3, MCPU: "x86-64-v4", StrictFP: true, Profile: true, MinParallelWork: &zero})
	require.NoError(t, err)
	rows := Table(Config{Target: tg, TuningDB: "x.jsonl", Prefix: "p"})
	items, err := registry.ParsePipeline(Text(rows))
	require.NoError(t, err)
	require.Len(t, items, len(rows))
	for i := range rows {
		assert.Equal(t, rows[i].Name, items[i].Name)
		assert.Equal(t, len(rows[i].Options), len(items[i].Options), rows[i].Name)
		for k, v := range rows[i].Options {
			assert.Equal(t, v, items[i].Options[k], "%s option %s", rows[i].Name, k)
		}
	}
	assert.Contains(t, Text(rows), "default-schedule{mcpu=x86-64-v4 min-parallel-work=0 profile=true strict-fp=true target=cpu threads=3}")
	back, err := targetFrom(items[len(items)-1].Options)
	require.NoError(t, err)
	assert.Equal(t, tg.Key(), back.Key())
	assert.True(t, back.Options().Profile)
	_, err = targetFrom(map[string]string{"min-parallel-work": "-1"})
	assert.ErrorContains(t, err, "min-parallel-work must be a number ≥ 0")
}

// TestStepNamesUnique: no name is registered at two levels, so every flag
// of tessera-opt names one step.
func TestStepNamesUnique(t *testing.T) {
	seen := map[string]string{}
	add := func(name, where string) {
		if prev, dup := seen[name]; dup {
			t.Errorf("step %q is registered by both %s and %s", name, prev, where)
		}
		seen[name] = where
	}
	for _, p := range graphir.RegisteredPasses() {
		add(p.Name, "graphir")
	}
	for _, p := range tir.RegisteredPasses() {
		add(p.Name, "tensorir")
	}
	for _, n := range steps.Names() {
		add(n, "pipeline")
	}
	assert.Len(t, Steps(), len(seen))
}

// TestRunnerStatisticsAndDumps runs the table to tensor IR on a small
// model: statistics are kept per step, --print-ir-after dumps at the
// step's level, and every kernel ends scheduled by the default rules.
func TestRunnerStatisticsAndDumps(t *testing.T) {
	m, err := graphir.Parse("m.mlir", []byte(`func.func @main(%a: tensor<8x16xf32>, %b: tensor<16x4xf32>) -> tensor<8x4xf32> {
  %0 = graph.matmul %a, %b : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
  %1 = graph.relu %0 : tensor<8x4xf32>
  func.return %1 : tensor<8x4xf32>
}`))
	require.NoError(t, err)
	tg, err := targets.New("cpu", targets.Options{Threads: 2})
	require.NoError(t, err)
	r := NewRunner()
	var dump strings.Builder
	r.Dump = &dump
	r.PrintAfter = map[string]bool{"fuse": true, "inline-elementwise": true}
	r.Timing = true
	ir, err := Compile(m, Config{Target: tg}, r, TIR)
	require.NoError(t, err)
	assert.Equal(t, TIR, ir.Level)
	assert.Contains(t, dump.String(), "// -----// IR Dump After fuse //----- //\nmodule {")
	assert.Contains(t, dump.String(), "// -----// IR Dump After inline-elementwise //----- //\ntir.func @fused_0")
	assert.Equal(t, 2, strings.Count(dump.String(), "IR Dump After"), "only the named steps are dumped")
	assert.Equal(t, int64(1), r.Statistic("default-schedule", "kernels"))
	assert.Equal(t, int64(0), r.Statistic("default-schedule", "fallback"))
	var stepsWithStats []string
	for _, st := range r.Statistics() {
		stepsWithStats = append(stepsWithStats, st.Step)
	}
	assert.Equal(t, []string{LowerToTIRName, "default-schedule", "rewrite-layout"}, stepsWithStats)
	for _, f := range ir.TIR.Funcs {
		if _, host := f.Attrs[tir.AttrHost]; !host {
			assert.Equal(t, tir.StringAttr("default"), f.Attrs[tir.AttrSchedule], f.Name)
		}
	}
	var timing strings.Builder
	r.WriteTiming(&timing)
	assert.Contains(t, timing.String(), "compact-buffer-allocation")
	assert.Contains(t, timing.String(), "Total")

	// PrintAfterAll dumps after every step of the table.
	m, err = graphir.Parse("m.mlir", []byte(`func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = graph.relu %a : tensor<4xf32>
  func.return %0 : tensor<4xf32>
}`))
	require.NoError(t, err)
	all := NewRunner()
	dump.Reset()
	all.Dump, all.PrintAfterAll = &dump, true
	_, err = Compile(m, Config{Target: tg}, all, TIR)
	require.NoError(t, err)
	assert.Equal(t, len(upTo(Table(Config{Target: tg}), TIR)), strings.Count(dump.String(), "IR Dump After"))
}

// TestScheduledKernelsAreLeftAlone: a kernel a trace scheduled keeps its
// schedule through default-schedule (the mark round-trips through text).
func TestScheduledKernelsAreLeftAlone(t *testing.T) {
	trace := filepath.Join(t.TempDir(), "t.json")
	require.NoError(t, os.WriteFile(trace, []byte(`{"func":"k","insts":[
  {"kind":"get_block","attrs":{"name":"b"},"outputs":["b0"]},
  {"kind":"get_loops","inputs":["b0"],"outputs":["l0"]},
  {"kind":"unroll","inputs":["l0"]}]}`), 0o644))
	src := `tir.func @k(out %B: buffer<4xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 4 {
    tir.block "b"(%vi = spatial(0:4, %i)) writes(%B[%vi]) {
      %B[%vi] = 1.0
    }
  }
}
`
	m, err := tir.Parse("k.tir", []byte(src))
	require.NoError(t, err)
	steps, err := Parse("apply-trace{file=" + trace + "},default-schedule")
	require.NoError(t, err)
	ir := &IR{Level: TIR, TIR: m}
	require.NoError(t, NewRunner().Run(ir, steps))
	out := tir.Print(ir.TIR)
	assert.Contains(t, out, `attributes {tessera.kernel, tessera.schedule = "trace"}`)
	assert.Contains(t, out, "unrolled")
	assert.NotContains(t, out, "vectorized")
	back, err := tir.Parse("back.tir", []byte(out))
	require.NoError(t, err)
	assert.Equal(t, out, tir.Print(back))
}

// TestTargetSkipsGraphSteps: a target's skipped graph steps
// (targets.StepSkipper) are left out of its table and no other's: the
// CUDA target keeps convolution kernels OIHW.
func TestTargetSkipsGraphSteps(t *testing.T) {
	for _, cfg := range configs(t) {
		names := map[string]bool{}
		for _, row := range Table(cfg) {
			names[row.Name] = true
		}
		skip, ok := cfg.Target.(targets.StepSkipper)
		for _, step := range graphSteps {
			assert.Equal(t, !ok || !skip.SkipsStep(step), names[step], "%s: %s", cfg.Target.Name(), step)
		}
	}
	cuda, err := targets.New("cuda", targets.Options{})
	require.NoError(t, err)
	assert.NotContains(t, Text(Table(Config{Target: cuda})), "conv-kernel-layout")
	cpu, err := targets.New("cpu", targets.Options{})
	require.NoError(t, err)
	assert.Contains(t, Text(Table(Config{Target: cpu})), "conv-kernel-layout")
}
