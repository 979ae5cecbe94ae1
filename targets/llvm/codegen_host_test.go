package llvm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// A host function: weights as constants, intermediates in an arena (with
// %t2 reusing %t0's bytes once %t0 is dead), kernels called with tir.call
// (one of them in place: its input and output share arena bytes, so it
// loses noalias).
const hostText = `tir.func @dense(%X: buffer<4x8xf32>, %W: buffer<8x6xf32>, %Bias: buffer<6xf32>, out %Y: buffer<4x6xf32>) {
  tir.for %i = 0 to 4 parallel {
    tir.for %j = 0 to 6 {
      tir.for %k = 0 to 8 {
        tir.block "Y"(%vi = spatial(0:4, %i), %vj = spatial(0:6, %j), %vk = reduce(0:8, %k)) reads(%X[%vi, %vk], %W[%vk, %vj], %Bias[%vj]) writes(%Y[%vi, %vj]) {
          tir.init {
            %Y[%vi, %vj] = %Bias[%vj]
          }
          %Y[%vi, %vj] = %Y[%vi, %vj] + %X[%vi, %vk] * %W[%vk, %vj]
        }
      }
    }
  }
}
tir.func @relu(%A: buffer<4x6xf32>, out %B: buffer<4x6xf32>) {
  tir.for %i = 0 to 4 {
    tir.for %j = 0 to 6 {
      %B[%i, %j] = max(%A[%i, %j], 0.0)
    }
  }
}
tir.func @head(%A: buffer<4x6xf32>, %V: buffer<6xi32>, out %B: buffer<4xf32>) {
  tir.for %i = 0 to 4 {
    %B[%i] = 0.0
    tir.for %j = 0 to 6 {
      %B[%i] = %B[%i] + %A[%i, %j] * cast<f32>(%V[%j])
    }
  }
}
tir.func @main(%x: buffer<4x8xf32>, out %y: buffer<4xf32>) attributes {global_symbol = "main", tessera.host} {
  tir.constant %w: buffer<8x6xf32> = dense<[0.5, -1.0, 0.25, 2.0, -0.5, 1.5, 0.125, 0.75, -0.25, 1.0, 0.5, -2.0, 1.0, 0.5, -1.5, 0.25, 2.0, -0.75, -1.0, 0.25, 0.5, 1.25, -0.5, 0.5, 0.75, -0.125, 1.0, -1.0, 0.5, 0.25, 0.5, 1.0, -0.25, 0.5, 1.5, -1.0, -0.5, 0.5, 0.75, -1.25, 0.25, 1.0, 1.0, -1.0, 0.5, 0.5, -0.5, 0.25]> {
    tir.constant %b: buffer<6xf32> = dense<[0.1, -0.2, 0.3, -0.4, 0.5, -0.6]> {
      tir.constant %v: buffer<6xi32> = dense<[1, -2, 3, -4, 5, -6]> {
        tir.arena 256 (%t0: buffer<4x6xf32> at 0, %t1: buffer<4x6xf32> at 128, %t2: buffer<4x6xf32> at 0) {
          tir.call @dense(%x, %w, %b, %t0)
          tir.call @relu(%t0, %t1)
          tir.call @relu(%t1, %t1)
          tir.call @relu(%t1, %t2)
          tir.call @head(%t2, %v, %y)
        }
      }
    }
  }
}
`

func TestHostCallsConstantsArena(t *testing.T) {
	m := parseModule(t, hostText)
	so, res := buildShared(t, m, Options{StrictFP: true})
	ll := res.LLVM()
	assert.Contains(t, ll, "private unnamed_addr constant [192 x i8]")
	assert.Contains(t, ll, "alloca [256 x i8], align 64")
	assert.Contains(t, ll, "define internal void @dense.kernel(float* noalias %X")
	assert.Contains(t, ll, "define internal void @relu.kernel(float* %A, float* %B)", "relu is called in place")
	require.Len(t, res.Entries, 1)
	report := checkHostShared(t, m, so, "main", 13, "TESSERA_NUM_THREADS=2")
	assert.Equal(t, "rc=0 gomp=1 wait=unset spin="+GOMPSpinCount, report)
}

// A large arena is a heap block kept for the calling thread (keptBlock);
// elided constants are refused.
func TestHostLargeArenaAndElided(t *testing.T) {
	m := parseModule(t, `tir.func @copy(%A: buffer<20000xf32>, out %B: buffer<20000xf32>) {
  tir.for %i = 0 to 20000 {
    %B[%i] = %A[%i] + 1.0
  }
}
tir.func @main(%x: buffer<20000xf32>, out %y: buffer<20000xf32>) attributes {global_symbol = "main", tessera.host} {
  tir.arena 160000 (%t0: buffer<20000xf32> at 0, %t1: buffer<20000xf32> at 80000) {
    tir.call @copy(%x, %t0)
    tir.call @copy(%t0, %t1)
    tir.call @copy(%t1, %y)
  }
}
`)
	so, res := buildShared(t, m, Options{})
	assert.Contains(t, res.LLVM(), "@aligned_alloc")
	assert.Contains(t, res.LLVM(), "thread_local global i64 0")
	checkHostShared(t, m, so, "main", 14)

	w := tir.NewBuffer("w", tir.DF32, 2)
	y := tir.NewBuffer("y", tir.DF32, 2)
	elided := &tir.PrimFunc{Name: "e", Params: []*tir.Param{{Buffer: y, Role: tir.RoleOut}},
		Body: &tir.AllocateConst{Buffer: w, Elided: true, Body: &tir.BufferStore{Buffer: y, Value: tir.Load(w, tir.Int(0)), Indices: []tir.Expr{tir.Int(0)}}}}
	_, err := Compile(&tir.Module{Funcs: []*tir.PrimFunc{elided}}, Options{})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "constant buffer %w cannot be compiled: its data was elided when printed (tessera-opt elides constants of more than 256 elements); print the module again with --print-large-constants")
}
