package schedule

import (
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/llvm"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// compiledScenarios are schedules using compute_at, cache_read/write,
// inlining, decompose_reduction and rfactor together with the loop
// primitives (parallel, vectorize, unroll) that targets/cpu compiles; each
// is run compiled and compared with the interpreter on the unscheduled
// function.
var compiledScenarios = []scenario{
	{"gemm cached tiles", "gemm", func(t *testing.T, s *Schedule) {
		c := block(t, s, "C")
		ls := mustLoops(t, s, "C")
		i, err := s.Split(ls[0], []int64{4, 4})
		require.NoError(t, err)
		j, err := s.Split(ls[1], []int64{-1, 4})
		require.NoError(t, err)
		require.NoError(t, s.Reorder(i[0], j[0], ls[2], i[1], j[1]))
		a, err := s.CacheRead(c, 0, "local")
		require.NoError(t, err)
		require.NoError(t, s.ComputeAt(a, ls[2]))
		w, err := s.CacheWrite(c, 0, "local")
		require.NoError(t, err)
		require.NoError(t, s.ReverseComputeAt(w, j[0]))
		_, err = s.DecomposeReduction(c, ls[2])
		require.NoError(t, err)
		require.NoError(t, s.Parallel(i[0]))
		require.NoError(t, s.Vectorize(mustLoops(t, s, w.Name)[2]))
	}},
	{"gemm rfactor", "gemm", func(t *testing.T, s *Schedule) {
		k, err := s.Split(mustLoops(t, s, "C")[2], []int64{3, 4})
		require.NoError(t, err)
		rf, err := s.RFactor(k[1], 2)
		require.NoError(t, err)
		require.NoError(t, s.Parallel(mustLoops(t, s, rf.Name)[0]))
		require.NoError(t, s.Unroll(mustLoops(t, s, "C")[2]))
	}},
	{"softmax fused rows", "softmax", func(t *testing.T, s *Schedule) {
		i := mustLoops(t, s, "div")[0]
		require.NoError(t, s.ComputeAt(block(t, s, "sum"), i))
		require.NoError(t, s.ComputeAt(block(t, s, "exp"), i))
		require.NoError(t, s.ComputeAt(block(t, s, "max"), i))
		require.NoError(t, s.Parallel(i))
		require.NoError(t, s.Vectorize(mustLoops(t, s, "div")[1]))
	}},
	{"conv bias relu window", "conv_bias_relu", func(t *testing.T, s *Schedule) {
		ls := mustLoops(t, s, "conv")
		require.NoError(t, s.ComputeAt(block(t, s, "pad"), ls[1]))
		require.NoError(t, s.ReverseComputeInline(block(t, s, "relu")))
		require.NoError(t, s.ReverseComputeAt(block(t, s, "bias"), ls[2]))
		// Parallel(co) is refused: every co recomputes the same padded rows.
		require.Error(t, s.Parallel(ls[0]))
	}},
	{"chain guarded tail", "chain", func(t *testing.T, s *Schedule) {
		i, err := s.Split(mustLoops(t, s, "relu")[0], []int64{-1, 4})
		require.NoError(t, err)
		require.NoError(t, s.ComputeAt(block(t, s, "add"), i[0]))
		require.NoError(t, s.Parallel(i[0]))
		require.NoError(t, s.Vectorize(mustLoops(t, s, "relu")[2]))
	}},
	{"pool window", "pool", func(t *testing.T, s *Schedule) {
		c, err := s.CacheRead(block(t, s, "pool"), 0, "local")
		require.NoError(t, err)
		ls := mustLoops(t, s, "pool")
		require.NoError(t, s.ComputeAt(c, ls[2]))
		require.NoError(t, s.Parallel(ls[0]))
	}},
}

// randomLocationSchedule is a random schedule of workload name mixing the
// loop primitives and this package's location, cache and reduction
// primitives (as in TestRandomLocationSchedules).
func randomLocationSchedule(t testing.TB, name string, seed int64, applied map[string]int) *Schedule {
	rng := rand.New(rand.NewSource(seed))
	s := NewWithSeed(locWorkload(t, name), seed)
	locationSteps(t, s, rng, applied)
	return s
}

// locationSteps applies 2 to 8 random steps to s, a third of them loop
// primitives (randomStep), the others location, cache and reduction
// primitives (randomLocationStep), counting those applied by name.
func locationSteps(t testing.TB, s *Schedule, rng *rand.Rand, applied map[string]int) {
	for k := 0; k < 2+rng.Intn(7); k++ {
		var op string
		var ok bool
		if rng.Intn(3) == 0 {
			op, ok = randomStep(t, s, rng)
		} else {
			op, ok = randomLocationStep(t, s, rng)
		}
		if ok {
			applied[op]++
		}
	}
}

// TestLocationSchedulesCompiled compiles the scenarios with targets/cpu
// into one shared object and checks each against the interpreter on the
// unscheduled function (exactly where the summation order is unchanged,
// else within float32 rounding).
func TestLocationSchedulesCompiled(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles with llc/lld")
	}
	dir, drv := buildDriver(t, driverSrc)
	m := &tir.Module{}
	var fs []*tir.PrimFunc
	var names []string
	var scheds []*Schedule
	for _, sc := range compiledScenarios {
		s := New(locWorkload(t, sc.workload))
		sc.apply(t, s)
		names = append(names, sc.name)
		scheds = append(scheds, s)
	}
	// And 60 random schedules, 10 per workload.
	applied := map[string]int{}
	for _, w := range []string{"gemm", "conv", "chain", "pool", "softmax", "conv_bias_relu"} {
		for i := 0; i < 10; i++ {
			seed := int64(7000 + i*37 + len(w))
			s := randomLocationSchedule(t, w, seed, applied)
			names = append(names, fmt.Sprintf("%s/%d:\n%s", w, seed, s.Trace()))
			scheds = append(scheds, s)
		}
	}
	for i, s := range scheds {
		checkSame(t, s)
		f := *s.Func()
		f.Name = fmt.Sprintf("sched_%d", i)
		f.Attrs = copyAttrs(f.Attrs)
		f.Attrs[tir.AttrGlobalSymbol] = tir.StringAttr(f.Name)
		require.NoError(t, m.Add(&f))
		fs = append(fs, &f)
	}
	res, err := compileCPU(m, llvm.Options{})
	require.NoError(t, err)
	so := filepath.Join(dir, "k.so")
	require.NoError(t, res.WriteShared(so))
	for i, f := range fs {
		want := interpret(t, scheds[i].Original(), 9)
		inputs := randomInputs(t, f, 9)
		var files []string
		for _, p := range f.Params {
			path := filepath.Join(dir, f.Name+"_"+p.Buffer.Name+".bin")
			require.NoError(t, os.WriteFile(path, f32bytes(inputs[p.Buffer.Name]), 0o644))
			files = append(files, path)
		}
		out, err := exec.Command(drv, append([]string{so, f.Name}, files...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "rc=0")
		got := map[string][]float64{}
		for j, p := range f.Params {
			if p.Role == tir.RoleIn {
				continue
			}
			b, err := os.ReadFile(files[j])
			require.NoError(t, err)
			got[p.Buffer.Name] = fromF32bytes(b)
		}
		sameOutputs(t, want, got, names[i]+"\n"+printed(f))
	}
}
