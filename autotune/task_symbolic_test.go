package autotune

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/schedule"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// symDenseSrc is a dense layer over a symbolic batch %batch.
const symDenseSrc = `tir.func @dense(%batch: index, %X: buffer<(%batch)x16xf32>, %W: buffer<16x8xf32>, out %Y: buffer<(%batch)x8xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to %batch {
    tir.for %j = 0 to 8 {
      tir.for %k = 0 to 16 {
        tir.block "dot"(%vi = spatial(0:%batch, %i), %vj = spatial(0:8, %j), %vk = reduce(0:16, %k)) reads(%X[%vi, %vk], %W[%vk, %vj]) writes(%Y[%vi, %vj]) {
          tir.init {
            %Y[%vi, %vj] = 0.0
          }
          %Y[%vi, %vj] = %Y[%vi, %vj] + %X[%vi, %vk] * %W[%vk, %vj]
        }
      }
    }
  }
}
`

// TestExtractTasksSymbolic: a kernel over a symbolic dimension is tuned
// specialized at the representative size (--bind-dim, else 8), keyed by
// its symbolic form whatever that size, its constant parameters
// renumbered past the dropped scalar, and its records carry the size.
func TestExtractTasksSymbolic(t *testing.T) {
	m, err := tir.Parse("k.tir", []byte(symDenseSrc))
	require.NoError(t, err)
	f := m.Funcs[0]
	key := testTarget().Key()
	for _, c := range []struct {
		sizes map[string]int64
		want  int64
	}{{nil, schedule.DefaultRepresentative}, {map[string]int64{"batch": 4}, 4}, {map[string]int64{"batch": 1, "other": 3}, 1}} {
		tasks := ExtractTasks([]*tir.PrimFunc{f}, key, c.sizes)
		require.Len(t, tasks, 1)
		task := tasks[0]
		assert.Equal(t, WorkloadKey(f, key), task.Key, "the key ignores the size")
		assert.Equal(t, map[string]int64{"batch": c.want}, task.Bindings)
		require.Len(t, task.Func.Params, 3, "the scalar is bound")
		shape, ok := task.Func.Params[0].Buffer.ConstShape()
		require.True(t, ok)
		assert.Equal(t, []int64{c.want, 16}, shape)
		assert.Equal(t, float64(2*c.want*8*16), task.FLOPs)
		assert.Equal(t, []int{1, 2}, specializedParams(f, []int{2, 3}, task.Bindings), "parameters after the scalar move down one")
	}
	static := parseTask(t, featGemmSrc(8, 8, 16))
	assert.Nil(t, static.Bindings, "a static kernel has no bindings")
	assert.Nil(t, static.Symbolic)
}

// symGemmSrc contracts over a symbolic k as well as a symbolic m: not a
// batch kernel, so its schedules carry over by generalized replay.
const symGemmSrc = `tir.func @gemm(%k: index, %m: index, %A: buffer<(%m)x(%k)xf32>, %B: buffer<(%k)x24xf32>, out %C: buffer<(%m)x24xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to %m {
    tir.for %j = 0 to 24 {
      tir.for %r = 0 to %k {
        tir.block "dot"(%vi = spatial(0:%m, %i), %vj = spatial(0:24, %j), %vk = reduce(0:%k, %r)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {
          tir.init {
            %C[%vi, %vj] = 0.0
          }
          %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj]
        }
      }
    }
  }
}
`

// TestSymbolicDesignSpace: the candidates the search draws for a kernel
// over symbolic dimensions (batch-separable or not) carry over to every
// size, and the kernel the compiler makes from each computes what the
// unscheduled kernel does at sizes other than the representative ones; a
// candidate of the non-separable kernel whose trace does not replay on it
// is refused (Task.Generalizes).
func TestSymbolicDesignSpace(t *testing.T) {
	rules := testTarget().Rules()
	for _, src := range []string{symDenseSrc, symGemmSrc} {
		m, err := tir.Parse("k.tir", []byte(src))
		require.NoError(t, err)
		tasks := ExtractTasks(m.Funcs, testTarget().Key(), map[string]int64{"k": 32, "m": 16})
		require.Len(t, tasks, 1)
		task := tasks[0]
		require.NotNil(t, task.Symbolic)
		n := 0
		for seed := int64(1); seed <= 12; seed++ {
			c, err := SampleCandidate(task, rules, seed)
			if err != nil {
				continue
			}
			n++
			g, err := schedule.FromRepresentative(rules, task.Symbolic, task.Bindings, c.Func, c.Trace)
			require.NoError(t, err, "@%s seed %d", task.Name, seed)
			for _, size := range []int64{1, 5, 37} {
				sizes := map[string]int64{"batch": size, "k": size + 2, "m": size}
				assert.Equal(t, runSymbolic(t, task.Symbolic, sizes), runSymbolic(t, g, sizes), "@%s seed %d at %v", task.Name, seed, sizes)
			}
		}
		assert.Positive(t, n, "@%s: some samples carry over", task.Name)
		if src == symGemmSrc {
			// Not batch-separable: the trace itself must replay on the
			// symbolic kernel.
			broken := &Candidate{Func: task.Func, Trace: &schedule.Trace{Insts: []schedule.Instruction{{Kind: "get_block", Attrs: map[string]any{"name": "no_such_block"}, Outputs: []string{"b0"}}}}}
			assert.Error(t, task.Generalizes(broken, rules))
		}
	}
}

// runSymbolic runs kernel f at the symbol values sizes on deterministic
// inputs and returns its outputs' elements, in parameter order.
func runSymbolic(t *testing.T, f *tir.PrimFunc, sizes map[string]int64) [][]float64 {
	t.Helper()
	args := tir.Args{Arrays: map[string]*tir.Array{}, Ints: map[string]int64{}}
	for _, p := range f.Params {
		if p.Var != nil {
			args.Ints[p.Name()] = sizes[p.Name()]
		}
	}
	var outs [][]float64
	for i, p := range tir.Specialize(f, sizes).Params {
		shape, ok := p.Buffer.ConstShape()
		require.True(t, ok)
		a := tir.NewArray(p.Buffer.DType, shape...)
		for j := range a.Floats {
			a.Floats[j] = float64((i*7+j*13)%11) / 8
		}
		args.Arrays[p.Name()] = a
		if p.Role != tir.RoleIn {
			outs = append(outs, a.Floats)
		}
	}
	require.NoError(t, tir.RunArgs(f, args))
	return outs
}

// TestDatabaseBestPerRow: records of a symbolic workload measured at
// different sizes compare per row (median / Rows), and their bindings
// survive a reopen.
func TestDatabaseBestPerRow(t *testing.T) {
	path := dbPath(t)
	d := dbOpen(t, path)
	at := func(c string, batch int64, s float64) *Record {
		r := dbRec("w", "cpu", c, s)
		r.Bindings = map[string]int64{"batch": batch}
		return r
	}
	for _, r := range []*Record{at("b2", 2, 3e-3), at("b8", 8, 8e-3), at("b4", 4, 5e-3)} {
		require.NoError(t, d.Append(r))
	}
	best, ok := d.Best("w", "cpu")
	require.True(t, ok)
	assert.Equal(t, "b8", best.Candidate, "1 ms a row beats 1.25 and 1.5")
	assert.Equal(t, 8.0, best.Rows())
	assert.True(t, best.SameBindings(map[string]int64{"batch": 8}))
	assert.False(t, best.SameBindings(map[string]int64{"batch": 4}))
	assert.False(t, best.SameBindings(nil))
	require.NoError(t, d.Close())

	d = dbOpen(t, path)
	best, _ = d.Best("w", "cpu")
	assert.Equal(t, map[string]int64{"batch": 8}, best.Bindings)
	assert.Equal(t, 1.0, dbRec("v", "cpu", "s", 1).Rows(), "a static record is one unit")
}
