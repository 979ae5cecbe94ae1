package npu

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// chainedTIR follows testdata/dense.tir with a second dense layer that
// reads dense's output as its X operand, and a host function chaining
// them; chainedHostReads also hands dense's output to a host kernel.
const chainedTIR = `
tir.func @dense2(%in0: buffer<5x37xf32>, %in1: buffer<11x37xf32>, out %out0: buffer<5x11xf32>) attributes {tessera.kernel} {
  tir.for %i0 = 0 to 5 {
    tir.for %i1 = 0 to 11 {
      tir.for %r0 = 0 to 37 {
        tir.block "dot_general"(%v0 = spatial(0:5, %i0), %v1 = spatial(0:11, %i1), %k0 = reduce(0:37, %r0)) reads(%out0[0:5, 0:11], %in1[0:11, 0:37], %in0[0:5, 0:37]) writes(%out0[%v0, %v1]) {
          tir.init {
            %out0[%v0, %v1] = 0.0
          }
          %out0[%v0, %v1] = %out0[%v0, %v1] + %in0[%v0, %k0] * %in1[%v1, %k0]
        }
      }
    }
  }
}
tir.func @act(%in0: buffer<5x37xf32>, out %out0: buffer<5x37xf32>) attributes {tessera.kernel} {
  tir.for %i0 = 0 to 5 {
    tir.for %i1 = 0 to 37 {
      tir.block "tanh"(%v0 = spatial(0:5, %i0), %v1 = spatial(0:37, %i1)) reads(%in0[%v0, %v1]) writes(%out0[%v0, %v1]) {
        %out0[%v0, %v1] = tanh(%in0[%v0, %v1])
      }
    }
  }
}
`

const chainedHost = `
tir.func @main(%x: buffer<5x1x4x5xf32>, %w: buffer<37x20xf32>, %b: buffer<37xf32>, %w2: buffer<11x37xf32>, out %y: buffer<5x11xf32>) attributes {tessera.host, global_symbol = "main"} {
  tir.arena 1024 (%h: buffer<5x37xf32> at 0) {
    tir.call @dense(%x, %w, %b, %h)
    tir.call @dense2(%h, %w2, %y)
  }
}
`

const chainedHostReads = `
tir.func @main(%x: buffer<5x1x4x5xf32>, %w: buffer<37x20xf32>, %b: buffer<37xf32>, %w2: buffer<11x37xf32>, out %y: buffer<5x11xf32>) attributes {tessera.host, global_symbol = "main"} {
  tir.arena 2048 (%h: buffer<5x37xf32> at 0, %a: buffer<5x37xf32> at 1024) {
    tir.call @dense(%x, %w, %b, %h)
    tir.call @act(%h, %a)
    tir.call @dense2(%h, %w2, %y)
  }
}
`

// runChained compiles the chained model with host function host, with
// dense's output STORE as narrowOutputs chose it or (f32) forced back to
// f32, runs it on fixed random inputs and returns the output and dense's
// STORE type.
func runChained(t *testing.T, host string, f32 bool) ([]float32, isa.DType) {
	t.Helper()
	dense, err := os.ReadFile("testdata/dense.tir")
	require.NoError(t, err)
	m, err := tir.ParseString("chained.tir", string(dense)+chainedTIR+host)
	require.NoError(t, err)
	tg, err := NewTarget(targets.Options{})
	require.NoError(t, err)
	art, err := tg.Codegen(m, "")
	require.NoError(t, err)
	a := art.(*Artifact)
	store := a.npu["dense"].g.OutType
	assert.Equal(t, isa.DTF32, a.npu["dense2"].g.OutType, "the entry's output stays f32")
	if f32 {
		g := *a.npu["dense"].g
		g.OutType = isa.DTF32
		a.npu["dense"], err = compileGEMM(a.cfg, &g, a.npu["dense"].t)
		require.NoError(t, err)
	}
	path := filepath.Join(t.TempDir(), "chained.npu")
	require.NoError(t, a.Save(path))
	mod, err := tg.Load(path)
	require.NoError(t, err)
	defer mod.Close()
	shapes := [][]int64{{5, 1, 4, 5}, {37, 20}, {37}, {11, 37}}
	var specs []rt.TensorSpec
	var ins []*rt.Tensor
	r := rand.New(rand.NewSource(8))
	for _, s := range shapes {
		specs = append(specs, rt.TensorSpec{DType: rt.Float32, Shape: s})
		x, err := rt.NewTensor(rt.Float32, s)
		require.NoError(t, err)
		v, _ := x.Float32s()
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		ins = append(ins, x)
	}
	y, err := rt.NewTensor(rt.Float32, []int64{5, 11})
	require.NoError(t, err)
	e, err := mod.Entry("main", specs, []rt.TensorSpec{{DType: rt.Float32, Shape: []int64{5, 11}}})
	require.NoError(t, err)
	require.NoError(t, e.Call(ins, []*rt.Tensor{y}))
	out, _ := y.Float32s()
	return out, store
}

// TestNarrowOutputs: an NPU kernel whose output only another NPU kernel
// reads, as its X operand, stores it as bf16, and the model's result is
// bit-identical to the f32 STORE's (the reader rounds to bf16 anyway);
// when a host kernel reads it too, it stays f32.
func TestNarrowOutputs(t *testing.T) {
	narrowed, store := runChained(t, chainedHost, false)
	assert.Equal(t, isa.DTBF16, store)
	wide, _ := runChained(t, chainedHost, true)
	assert.Equal(t, wide, narrowed)
	_, store = runChained(t, chainedHostReads, false)
	assert.Equal(t, isa.DTF32, store, "a host kernel reads the output")
}
