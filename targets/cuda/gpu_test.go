package cuda

import (
	"flag"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
	tir "github.com/tessera-ml/tessera/tensorir"
)

var updateGPUFixtures = flag.Bool("update-gpu-fixtures", false, "rewrite testdata/*.cuda (saved artifacts that TestRuntimeOnGPU runs on a GPU machine without LLVM)")

// gemmOddTIR is one GEMM of non-dividing sizes (35×66 · 66×70) and a
// bias + tanh epilogue: the default GPU rules tile it with shared-memory
// staging and guards.
const gemmOddTIR = `tir.func @gemm(%x: buffer<35x66xf32>, %w: buffer<66x70xf32>, %b: buffer<70xf32>, out %y: buffer<35x70xf32>) attributes {tessera.kernel} {
  tir.allocate %acc: buffer<35x70xf32, "local"> {
    tir.for %i = 0 to 35 {
      tir.for %j = 0 to 70 {
        tir.for %k = 0 to 66 {
          tir.block "dot"(%vi = spatial(0:35, %i), %vj = spatial(0:70, %j), %vk = reduce(0:66, %k)) reads(%x[%vi, %vk], %w[%vk, %vj]) writes(%acc[%vi, %vj]) {
            tir.init {
              %acc[%vi, %vj] = 0.0
            }
            %acc[%vi, %vj] = %acc[%vi, %vj] + %x[%vi, %vk] * %w[%vk, %vj]
          }
        }
      }
    }
    tir.for %i = 0 to 35 {
      tir.for %j = 0 to 70 {
        tir.block "epi"(%vi = spatial(0:35, %i), %vj = spatial(0:70, %j)) reads(%acc[%vi, %vj], %b[%vj]) writes(%y[%vi, %vj]) {
          %y[%vi, %vj] = tanh(%acc[%vi, %vj] + %b[%vj])
        }
      }
    }
  }
}
tir.func @main(%x: buffer<35x66xf32>, %w: buffer<66x70xf32>, %b: buffer<70xf32>, out %y: buffer<35x70xf32>) attributes {tessera.host, global_symbol = "main"} {
  tir.call @gemm(%x, %w, %b, %y)
}
`

// gpuFixtures are the saved artifacts of testdata, by file name.
var gpuFixtures = map[string]func() string{
	"mlp.cuda": func() string {
		return strings.NewReplacer("W0", denseList(108, 0.1), "W1", denseList(27, -0.07)).Replace(mlpTIR)
	},
	"gemm_odd.cuda": func() string { return gemmOddTIR },
}

// buildFixture schedules src's kernels with the default GPU rules and
// compiles it for the CUDA target (needs llc-16).
func buildFixture(t *testing.T, src string) *Artifact {
	m, err := tir.ParseString("fixture.tir", src)
	require.NoError(t, err)
	tg, err := NewTarget(targets.Options{})
	require.NoError(t, err)
	for i, f := range m.Funcs {
		if _, ok := f.Attrs[tir.AttrKernel]; !ok {
			continue
		}
		s, err := tg.Rules().Default(f)
		require.NoError(t, err)
		m.Funcs[i] = s.Func()
	}
	art, err := targets.Build(tg, m, "")
	require.NoError(t, err)
	return art.(*Artifact)
}

// TestUpdateGPUFixtures rewrites testdata/*.cuda under -update-gpu-fixtures.
func TestUpdateGPUFixtures(t *testing.T) {
	if !*updateGPUFixtures {
		t.Skip("testdata/*.cuda are rewritten only with -update-gpu-fixtures")
	}
	for name, src := range gpuFixtures {
		require.NoError(t, buildFixture(t, src()).Save(filepath.Join("testdata", name)))
	}
}

// randomInputs are uniform [-2, 2) f32 tensors for specs.
func randomInputs(t *testing.T, specs []rt.TensorSpec, seed uint64) []*rt.Tensor {
	rng := rand.New(rand.NewPCG(seed, 7))
	var out []*rt.Tensor
	for _, s := range specs {
		x, err := rt.NewTensor(s.DType, s.Shape)
		require.NoError(t, err)
		vals := make([]float64, x.NumElements())
		for i := range vals {
			vals[i] = rng.Float64()*4 - 2
		}
		require.NoError(t, x.SetFloat64Values(vals))
		out = append(out, x)
	}
	return out
}

// runFixture loads the fixture with d and runs @main on inputs.
func runFixture(t *testing.T, path string, d driver, inputs []*rt.Tensor) []*rt.Tensor {
	mod, err := loadWith(path, d)
	require.NoError(t, err)
	defer mod.Close()
	s := mod.(*module).s
	plan := s.Plans["main"]
	var ins, outs []rt.TensorSpec
	for _, id := range plan.Params {
		b := plan.Bufs[id]
		dt, err := rt.ParseDType(b.DType)
		require.NoError(t, err)
		spec := rt.TensorSpec{Name: b.Name, DType: dt, Shape: b.Shape}
		if b.Role == tir.RoleOut {
			outs = append(outs, spec)
		} else {
			ins = append(ins, spec)
		}
	}
	if inputs == nil {
		inputs = randomInputs(t, ins, 11)
	}
	e, err := mod.Entry("main", ins, outs)
	require.NoError(t, err)
	var results []*rt.Tensor
	for _, o := range outs {
		y, err := rt.NewTensor(o.DType, o.Shape)
		require.NoError(t, err)
		results = append(results, y)
	}
	require.NoError(t, e.Call(inputs, results))
	if _, gpu := d.(*cudaDriver); gpu {
		tm, err := e.(*entry).BenchEach(inputs, results, 3, 10, 0, nil)
		require.NoError(t, err)
		t.Logf("%s on the GPU: median %.2f µs over %d runs", filepath.Base(path), tm.Median*1e6, len(tm.Seconds))
	}
	return append(inputs, results...)
}

// interpret runs the fixture at path with the interpreting driver.
func interpret(t *testing.T, path string, inputs []*rt.Tensor) []*rt.Tensor {
	_, data, err := rt.ReadSignedFile(path)
	require.NoError(t, err)
	s, err := decodeSaved(path, data)
	require.NoError(t, err)
	d, err := newInterpDriver(s.KernelTIR)
	require.NoError(t, err)
	return runFixture(t, path, d, inputs)
}

// TestGPUFixturesInterpreted runs every committed fixture with the
// interpreting driver: the files decode with this runtime's format and
// their plans run (no GPU needed).
func TestGPUFixturesInterpreted(t *testing.T) {
	for name := range gpuFixtures {
		all := interpret(t, filepath.Join("testdata", name), nil)
		require.NotEmpty(t, all)
	}
}

// TestRuntimeOnGPU runs the committed fixtures through the CUDA driver
// (purego, libcuda.so.1) and compares them with the interpreting driver
// on the same inputs. It skips with one line where no driver is present.
func TestRuntimeOnGPU(t *testing.T) {
	if !DriverPresent() {
		t.Skip("no CUDA driver: libcuda.so.1 not found")
	}
	for name := range gpuFixtures {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("testdata", name)
			d, err := newCUDADriver()
			require.NoError(t, err)
			gpu := runFixture(t, path, d, nil)
			nIn := len(gpu) - 1
			ref := interpret(t, path, gpu[:nIn])
			want, got := ref[nIn].Float64Values(), gpu[nIn].Float64Values()
			for i := range want {
				require.InDelta(t, want[i], got[i], 1e-4*math.Max(1, math.Abs(want[i])), "%s: element %d", name, i)
			}
		})
	}
}

// TestStickyErrors: a kernel fault's CUresult marks the error
// targets.ErrDeviceLost (the tuner's runner restarts then); others do not.
func TestStickyErrors(t *testing.T) {
	a := &cudaAPI{}
	err := a.check("cuLaunchKernel", 700)
	require.ErrorIs(t, err, targets.ErrDeviceLost)
	require.ErrorContains(t, err, "cuLaunchKernel: CUDA error 700: unknown error")
	err = a.check("cuMemAlloc", 2)
	require.Error(t, err)
	require.NotErrorIs(t, err, targets.ErrDeviceLost)
	require.NoError(t, a.check("cuInit", 0))
}
