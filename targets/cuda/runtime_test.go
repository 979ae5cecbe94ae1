package cuda

import (
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/internal/traceevent"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// interpDriver is a driver whose "device" is host memory and whose kernels
// run in the tensor IR interpreter (bound loops serially): it checks the
// runtime's loading, memory, plan and launch logic without a GPU.
type interpDriver struct {
	kernels  *tir.Module
	mem      map[uint64][]byte
	next     uint64
	launches []string
}

func newInterpDriver(kernelTIR string) (*interpDriver, error) {
	m, err := tir.ParseString("kernels.tir", kernelTIR)
	if err != nil {
		return nil, err
	}
	return &interpDriver{kernels: m, mem: map[uint64][]byte{}, next: 256}, nil
}

func (d *interpDriver) LoadModule(ptx []byte) (uintptr, error) {
	if len(ptx) == 0 {
		return 0, fmt.Errorf("empty PTX")
	}
	return 1, nil
}

func (d *interpDriver) Function(mod uintptr, name string) (uintptr, error) {
	for i, f := range d.kernels.Funcs {
		if f.Name == name {
			return uintptr(i + 1), nil
		}
	}
	return 0, fmt.Errorf("no kernel %s", name)
}

func (d *interpDriver) Alloc(n int64) (uint64, error) {
	p := d.next
	d.mem[p] = make([]byte, n)
	d.next += uint64(n+255) &^ 255
	return p, nil
}

func (d *interpDriver) Free(p uint64) error { delete(d.mem, p); return nil }

func (d *interpDriver) CopyHtoD(dst uint64, src []byte) error {
	if len(d.mem[dst]) < len(src) {
		return fmt.Errorf("copy of %d bytes into %d", len(src), len(d.mem[dst]))
	}
	copy(d.mem[dst], src)
	return nil
}

func (d *interpDriver) CopyDtoH(dst []byte, src uint64) error {
	copy(dst, d.mem[src])
	return nil
}

// Launch runs the kernel in the interpreter on the device buffers.
func (d *interpDriver) Launch(fn uintptr, l launch, args []uint64) error {
	f := d.kernels.Funcs[fn-1]
	d.launches = append(d.launches, f.Name)
	if len(args) != len(f.Params) {
		return fmt.Errorf("@%s takes %d arguments, got %d", f.Name, len(f.Params), len(args))
	}
	arrays := map[string]*tir.Array{}
	tensors := make([]*rt.Tensor, len(args))
	for i, p := range f.Params {
		spec, err := targets.SpecOf(p)
		if err != nil {
			return err
		}
		t, err := rt.FromBytes(spec.DType, spec.Shape, d.mem[args[i]][:spec.DType.Size()*int(product(spec.Shape))])
		if err != nil {
			return err
		}
		tensors[i] = t
		a := tir.NewArray(p.Buffer.DType, spec.Shape...)
		vals := t.Float64Values()
		if a.Floats != nil {
			copy(a.Floats, vals)
		} else {
			for k, v := range vals {
				a.Ints[k] = int64(v)
			}
		}
		arrays[p.Buffer.Name] = a
	}
	if err := tir.Run(f, arrays); err != nil {
		return err
	}
	for i, p := range f.Params {
		if p.Role == tir.RoleIn {
			continue
		}
		a := arrays[p.Buffer.Name]
		vals := a.Floats
		if vals == nil {
			vals = make([]float64, len(a.Ints))
			for k, v := range a.Ints {
				vals[k] = float64(v)
			}
		}
		if err := tensors[i].SetFloat64Values(vals); err != nil {
			return err
		}
		copy(d.mem[args[i]], tensors[i].Bytes())
	}
	return nil
}

// denseList is n values (i mod 5 − 2)·v as a flat dense list (the parser
// takes a flat list for any shape).
func denseList(n int, v float64) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = strconv.FormatFloat(float64(i%5-2)*v, 'g', -1, 64)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func product(s []int64) int64 {
	n := int64(1)
	for _, d := range s {
		n *= d
	}
	return n
}

func (d *interpDriver) Elapsed(work func() error) (float64, error) {
	start := time.Now()
	err := work()
	return time.Since(start).Seconds(), err
}

func (d *interpDriver) Close() error { return nil }

// mlpTIR is a two-layer MLP's host function and kernels as lower-to-tir
// makes them: a GEMM + bias + relu, then a GEMM + bias, over an arena.
const mlpTIR = `tir.func @gemm_relu(%x: buffer<5x12xf32>, %w: buffer<12x9xf32>, %b: buffer<9xf32>, out %y: buffer<5x9xf32>) attributes {tessera.kernel} {
  tir.allocate %acc: buffer<5x9xf32, "local"> {
    tir.for %i = 0 to 5 {
      tir.for %j = 0 to 9 {
        tir.for %k = 0 to 12 {
          tir.block "dot"(%vi = spatial(0:5, %i), %vj = spatial(0:9, %j), %vk = reduce(0:12, %k)) reads(%x[%vi, %vk], %w[%vk, %vj]) writes(%acc[%vi, %vj]) {
            tir.init {
              %acc[%vi, %vj] = 0.0
            }
            %acc[%vi, %vj] = %acc[%vi, %vj] + %x[%vi, %vk] * %w[%vk, %vj]
          }
        }
      }
    }
    tir.for %i = 0 to 5 {
      tir.for %j = 0 to 9 {
        tir.block "relu"(%vi = spatial(0:5, %i), %vj = spatial(0:9, %j)) reads(%acc[%vi, %vj], %b[%vj]) writes(%y[%vi, %vj]) {
          %y[%vi, %vj] = max(%acc[%vi, %vj] + %b[%vj], 0.0)
        }
      }
    }
  }
}
tir.func @gemm(%x: buffer<5x9xf32>, %w: buffer<9x3xf32>, out %y: buffer<5x3xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 5 {
    tir.for %j = 0 to 3 {
      tir.for %k = 0 to 9 {
        tir.block "dot"(%vi = spatial(0:5, %i), %vj = spatial(0:3, %j), %vk = reduce(0:9, %k)) reads(%x[%vi, %vk], %w[%vk, %vj]) writes(%y[%vi, %vj]) {
          tir.init {
            %y[%vi, %vj] = 0.0
          }
          %y[%vi, %vj] = %y[%vi, %vj] + %x[%vi, %vk] * %w[%vk, %vj]
        }
      }
    }
  }
}
tir.func @main(%in: buffer<5x12xf32>, out %out: buffer<5x3xf32>) attributes {tessera.host, global_symbol = "main"} {
  tir.constant %w0: buffer<12x9xf32> = dense<W0> {
    tir.constant %b0: buffer<9xf32> = dense<[-1.0, 0.5, 0.0, 1.0, -0.5, 2.0, -2.0, 0.25, 0.75]> {
      tir.constant %w1: buffer<9x3xf32> = dense<W1> {
        tir.arena 256 (%h: buffer<5x9xf32> at 0) {
          tir.call @gemm_relu(%in, %w0, %b0, %h)
          tir.call @gemm(%h, %w1, %out)
        }
      }
    }
  }
}
`

// TestRuntimeWithInterpreterDriver compiles a host function and its
// kernels for the CUDA target (GPU default rules, thread-sync, PTX), saves
// the artifact, loads it with a driver that runs the kernels in the tensor
// IR interpreter, and checks the result against the unscheduled module in
// the interpreter: the plan, constants, launch order, copies and Bench all
// work without a GPU.
func TestRuntimeWithInterpreterDriver(t *testing.T) {
	src := strings.NewReplacer("W0", denseList(108, 0.1), "W1", denseList(27, -0.07)).Replace(mlpTIR)
	ref, err := tir.ParseString("mlp.tir", src)
	require.NoError(t, err)
	m, err := tir.ParseString("mlp.tir", src)
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
	path := filepath.Join(t.TempDir(), "mlp.cuda")
	require.NoError(t, art.Save(path))

	a := art.(*Artifact)
	d, err := newInterpDriver(tir.Print(a.kernels))
	require.NoError(t, err)
	mod, err := loadWith(path, d)
	require.NoError(t, err)
	defer mod.Close()
	in := rt.TensorSpec{Name: "in", DType: rt.Float32, Shape: []int64{5, 12}}
	out := rt.TensorSpec{Name: "out", DType: rt.Float32, Shape: []int64{5, 3}}
	e, err := mod.Entry("main", []rt.TensorSpec{in}, []rt.TensorSpec{out})
	require.NoError(t, err)

	rng := rand.New(rand.NewPCG(3, 4))
	x := make([]float32, 60)
	for i := range x {
		x[i] = float32(rng.Float64()*4 - 2)
	}
	xt, err := rt.FromSlice(in.Shape, x)
	require.NoError(t, err)
	yt, err := rt.NewTensor(rt.Float32, out.Shape)
	require.NoError(t, err)
	require.NoError(t, e.Call([]*rt.Tensor{xt}, []*rt.Tensor{yt}))
	require.Equal(t, []string{"gemm_relu", "gemm"}, d.launches)

	xa := tir.ArrayFromFloat32(x, 5, 12)
	ya := tir.NewArray(tir.DF32, 5, 3)
	require.NoError(t, tir.RunModule(ref, "main", tir.Args{Arrays: map[string]*tir.Array{"in": xa, "out": ya}}))
	got, _ := yt.Float32s()
	for i, w := range ya.Floats {
		require.InDelta(t, w, float64(got[i]), 1e-4*math.Max(1, math.Abs(w)), "out[%d]", i)
	}

	tm, err := e.BenchEach([]*rt.Tensor{xt}, []*rt.Tensor{yt}, 1, 2, 0, nil)
	require.NoError(t, err)
	require.Len(t, tm.Seconds, 2)
	require.Len(t, d.launches, 2+3*2, "Call, one warm-up run and two timed runs")

	kt, err := e.(targets.KernelTimer).KernelTimes([]*rt.Tensor{xt}, []*rt.Tensor{yt}, 2)
	require.NoError(t, err)
	require.Len(t, kt, 2)
	require.Equal(t, "gemm_relu", kt[0].Kernel)
	require.Equal(t, "gemm", kt[1].Kernel)

	// --profile: a run slice per run around its kernels' slices
	tr, err := e.(targets.Profiler).Profile([]*rt.Tensor{xt}, []*rt.Tensor{yt}, 2)
	require.NoError(t, err)
	data, err := tr.Marshal()
	require.NoError(t, err)
	_, err = traceevent.Validate(data)
	require.NoError(t, err)
	var names []string
	for _, ev := range tr.TraceEvents {
		if ev.Ph == "X" {
			names = append(names, ev.Cat+":"+ev.Name)
		}
	}
	require.Equal(t, []string{"run:run", "kernel:gemm_relu", "kernel:gemm", "run:run", "kernel:gemm_relu", "kernel:gemm"}, names)

	_, err = mod.Entry("nope", nil, nil)
	require.ErrorContains(t, err, "cuda: no entry point nope (the artifact has main)")
	bad, err := rt.NewTensor(rt.Float32, []int64{5, 11})
	require.NoError(t, err)
	require.ErrorContains(t, e.Call([]*rt.Tensor{bad}, []*rt.Tensor{yt}), "does not match parameter %in")
}
