package main

import (
	"flag"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/pipeline"
	"github.com/tessera-ml/tessera/targets"
	tir "github.com/tessera-ml/tessera/tensorir"
)

var gpuAllModels = flag.Bool("gpu-all-models", false, "TestGPUScheduledModels: also the large models (LeNet-5 and the MLP at batch 360, ResNet-18, MobileNetV2, ...: the interpreter runs a GPU schedule's cooperative fetches once per thread, so these take hours)")

// gpuSmallModels run in make test: the small seed model and the coverage
// models but the LSTM tagger (about 45 s in all); the others with
// -gpu-all-models.
var gpuSmallModels = func() []string {
	out := []string{"../../examples/mlp_small.mlir"}
	cov, _ := filepath.Glob("../../examples/onnx/coverage/*_opset17.onnx")
	for _, c := range cov {
		if !strings.Contains(c, "lstm_tagger") {
			out = append(out, c)
		}
	}
	return out
}()

// TestGPUScheduledModels: every kernel (one per tuning task) of each model
// scheduled by the CUDA target's default rules passes GPU verification,
// and the tensor IR interpreter running the GPU-scheduled kernel (bound
// loops serially, shared and local buffers as allocated) matches the
// unscheduled kernel on random inputs within 1e-4 relative; so does the
// kernel after the target's post-schedule passes, whose barriers make the
// interpreter run each block's threads in lockstep (GPU semantics).
func TestGPUScheduledModels(t *testing.T) {
	models := gpuSmallModels
	if *gpuAllModels {
		onnx, err := filepath.Glob("../../examples/onnx/*.onnx")
		require.NoError(t, err)
		models = append(append(models, "../../examples/lenet5.mlir", "../../examples/mlp.mlir", "../../examples/onnx/coverage/lstm_tagger_opset17.onnx"), onnx...)
	}
	target, err := targets.New("cuda", targets.Options{})
	require.NoError(t, err)
	for _, path := range models {
		t.Run(filepath.Base(path), func(t *testing.T) {
			if _, err := os.Stat(path); err != nil {
				t.Skipf("%s is absent (examples/onnx/export_models.py makes it)", path)
			}
			m, err := loadModel(path, nil)
			require.NoError(t, err)
			tasks, err := pipeline.Tasks(m, target, nil)
			require.NoError(t, err)
			start := time.Now()
			for i, task := range tasks {
				s, err := target.Rules().Default(task.Func)
				require.NoError(t, err, "%s: default GPU rules", task.Name)
				g := s.Func()
				require.NoError(t, target.Rules().Check(g), "%s\n%s", task.Name, tir.PrintFunc(g, tir.PrintOptions{}))
				want := runRandom(t, task.Func, int64(i))
				got := runRandom(t, g, int64(i))
				for name, w := range want {
					requireRelClose(t, w, got[name], 1e-4, task.Name+" "+name)
				}
				// After the target's post-schedule passes (compaction,
				// barriers), threads run in lockstep in the interpreter, as
				// on the GPU: a missing barrier shows.
				post := &tir.Module{Funcs: []*tir.PrimFunc{g}}
				require.NoError(t, targets.RunPostSchedule(target, post), task.Name)
				got = runRandom(t, post.Funcs[0], int64(i))
				for name, w := range want {
					requireRelClose(t, w, got[name], 1e-4, task.Name+" "+name+" after "+strings.Join(target.PostSchedule(), ", "))
				}
			}
			t.Logf("%s: %d kernels scheduled for the GPU match the interpreter (%.1fs)", filepath.Base(path), len(tasks), time.Since(start).Seconds())
		})
	}
}

// runRandom runs f in the interpreter on seeded random inputs (floats in
// [-2, 2), integers in [0, 3), booleans 0 or 1) and returns its outputs.
func runRandom(t *testing.T, f *tir.PrimFunc, seed int64) map[string][]float64 {
	t.Helper()
	rng := rand.New(rand.NewPCG(uint64(seed), 77))
	arrays := map[string]*tir.Array{}
	for _, p := range f.Params {
		require.NotNil(t, p.Buffer, "%s has a scalar parameter", f.Name)
		shape, ok := p.Buffer.ConstShape()
		require.True(t, ok, f.Name)
		a := tir.NewArray(p.Buffer.DType, shape...)
		for i := range a.Floats {
			a.Floats[i] = tir.RoundFloat(p.Buffer.DType, rng.Float64()*4-2)
		}
		n := 3
		if p.Buffer.DType.IsBool() {
			n = 2
		}
		for i := range a.Ints {
			a.Ints[i] = int64(rng.IntN(n))
		}
		arrays[p.Buffer.Name] = a
	}
	require.NoError(t, tir.Run(f, arrays), f.Name)
	out := map[string][]float64{}
	for _, p := range f.Params {
		if p.Role == tir.RoleIn {
			continue
		}
		a := arrays[p.Buffer.Name]
		vals := a.Floats
		if vals == nil {
			vals = make([]float64, len(a.Ints))
			for i, v := range a.Ints {
				vals[i] = float64(v)
			}
		}
		out[p.Buffer.Name] = vals
	}
	return out
}

// requireRelClose compares element-wise within rel·max(1, max|want|).
func requireRelClose(t *testing.T, want, got []float64, rel float64, what string) {
	t.Helper()
	require.Len(t, got, len(want), what)
	scale := 1.0
	for _, w := range want {
		scale = max(scale, math.Abs(w))
	}
	for i, w := range want {
		if math.IsNaN(w) {
			require.True(t, math.IsNaN(got[i]), "%s[%d]: want NaN, got %v", what, i, got[i])
			continue
		}
		require.InDelta(t, w, got[i], rel*scale, "%s[%d]", what, i)
	}
}
