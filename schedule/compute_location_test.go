package schedule

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// testdataFunc parses the workload testdata/<name>.tir.
func testdataFunc(t testing.TB, name string) *tir.PrimFunc {
	t.Helper()
	src, err := os.ReadFile(filepath.Join("testdata", name+".tir"))
	require.NoError(t, err)
	return parseFunc(t, string(src))
}

// locWorkload is a workload of the compute-location, inline, cache and
// reduction tests: the helpers' sources plus the testdata files.
func locWorkload(t testing.TB, name string) *tir.PrimFunc {
	t.Helper()
	if src, ok := workloads[name]; ok {
		return parseFunc(t, src)
	}
	return testdataFunc(t, name)
}

func block(t testing.TB, s *Schedule, name string) BlockRV {
	t.Helper()
	b, err := s.GetBlock(name)
	require.NoError(t, err)
	return b
}

// scenario is a schedule applied to a workload; every scenario is checked
// for verification, interpreter equality with the unscheduled function on
// random inputs and trace round-trip (checkSame).
type scenario struct {
	name     string
	workload string
	apply    func(t *testing.T, s *Schedule)
}

var locationScenarios = []scenario{
	{"compute_at outer", "chain", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.ComputeAt(block(t, s, "add"), mustLoops(t, s, "relu")[0]))
	}},
	{"compute_at inner", "chain", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.ComputeAt(block(t, s, "add"), mustLoops(t, s, "relu")[1]))
	}},
	{"compute_at guarded tail", "chain", func(t *testing.T, s *Schedule) {
		_, err := s.Split(mustLoops(t, s, "relu")[0], []int64{-1, 4})
		require.NoError(t, err)
		require.NoError(t, s.ComputeAt(block(t, s, "add"), mustLoops(t, s, "relu")[0]))
	}},
	{"reverse_compute_at", "chain", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.ReverseComputeAt(block(t, s, "relu"), mustLoops(t, s, "add")[0]))
	}},
	{"reverse_compute_at split", "chain", func(t *testing.T, s *Schedule) {
		_, err := s.Split(mustLoops(t, s, "add")[1], []int64{-1, 4})
		require.NoError(t, err)
		require.NoError(t, s.ReverseComputeAt(block(t, s, "relu"), mustLoops(t, s, "add")[1]))
	}},
	{"softmax fused rows", "softmax", func(t *testing.T, s *Schedule) {
		i := mustLoops(t, s, "div")[0]
		require.NoError(t, s.ComputeAt(block(t, s, "sum"), i))
		require.NoError(t, s.ComputeAt(block(t, s, "exp"), i))
		require.NoError(t, s.ComputeAt(block(t, s, "max"), i))
	}},
	{"softmax reverse", "softmax", func(t *testing.T, s *Schedule) {
		i := mustLoops(t, s, "max")[0]
		require.NoError(t, s.ReverseComputeAt(block(t, s, "exp"), i))
		require.NoError(t, s.ReverseComputeAt(block(t, s, "sum"), i))
		require.NoError(t, s.ReverseComputeAt(block(t, s, "div"), i))
	}},
	{"conv halo", "conv_bias_relu", func(t *testing.T, s *Schedule) {
		require.NoError(t, s.ComputeAt(block(t, s, "pad"), mustLoops(t, s, "conv")[1]))
	}},
	{"conv window", "conv_bias_relu", func(t *testing.T, s *Schedule) {
		ls := mustLoops(t, s, "conv")
		require.NoError(t, s.ComputeAt(block(t, s, "pad"), ls[2]))
		require.NoError(t, s.ReverseComputeAt(block(t, s, "bias"), ls[2]))
		require.NoError(t, s.ReverseComputeInline(block(t, s, "relu")))
	}},
	{"conv tiled", "conv_bias_relu", func(t *testing.T, s *Schedule) {
		ls := mustLoops(t, s, "conv")
		h, err := s.Split(ls[1], []int64{-1, 4})
		require.NoError(t, err)
		require.NoError(t, s.ComputeAt(block(t, s, "pad"), h[0]))
		require.NoError(t, s.ComputeInline(block(t, s, "bias")))
		require.NoError(t, s.ReverseComputeAt(block(t, s, "relu"), h[0]))
	}},
	{"reduction producer at consumer", "conv_bias_relu", func(t *testing.T, s *Schedule) {
		ls := mustLoops(t, s, "bias")
		require.NoError(t, s.ComputeAt(block(t, s, "conv"), ls[2]))
		require.NoError(t, s.ComputeAt(block(t, s, "pad"), ls[1]))
	}},
	{"pool strided window", "pool", func(t *testing.T, s *Schedule) {
		c, err := s.CacheRead(block(t, s, "pool"), 0, "local")
		require.NoError(t, err)
		require.NoError(t, s.ComputeAt(c, mustLoops(t, s, "pool")[2]))
	}},
	{"sampled location", "softmax", func(t *testing.T, s *Schedule) {
		b := block(t, s, "exp")
		l, err := s.SampleComputeLocation(b)
		require.NoError(t, err)
		require.NoError(t, s.ComputeAt(b, l))
	}},
}

func TestComputeLocationNumerics(t *testing.T) {
	for _, sc := range locationScenarios {
		t.Run(sc.name, func(t *testing.T) {
			s := New(locWorkload(t, sc.workload))
			sc.apply(t, s)
			checkSame(t, s)
		})
	}
}

// TestSampleComputeLocationReplay: the decision is the index of the
// location among the legal ones ("sum" in softmax: the loops %i and %j of
// "div"), -1 the root; a trace with an edited decision replays with the
// new location, and every seed's sample is one of them.
func TestSampleComputeLocationReplay(t *testing.T) {
	f := locWorkload(t, "softmax")
	s := New(f)
	b := block(t, s, "sum")
	cands := s.computeLocations(b)
	require.Len(t, cands, 2)
	require.Equal(t, "i", cands[0].Name())
	require.Equal(t, "j", cands[1].Name())
	seen := map[int64]bool{}
	for seed := int64(0); seed < 40; seed++ {
		s := NewWithSeed(f, seed)
		b := block(t, s, "sum")
		l, err := s.SampleComputeLocation(b)
		require.NoError(t, err)
		require.NoError(t, s.ComputeAt(b, l))
		checkSame(t, s)
		d := s.Trace().Insts[1].Decision.(int64)
		seen[d] = true
		// Edit the decision: the replay follows it (three different
		// functions).
		outs := map[string]bool{}
		for _, nd := range []int64{-1, 0, 1} {
			tr := &Trace{Insts: append([]Instruction(nil), s.Trace().Insts...)}
			tr.Insts[1].Decision = nd
			r, err := Replay(f, tr)
			require.NoError(t, err)
			want := NewWithSeed(f, seed)
			wb := block(t, want, "sum")
			wl, err := want.sampleComputeLocation(wb, &nd)
			require.NoError(t, err)
			require.NoError(t, want.ComputeAt(wb, wl))
			require.Equal(t, printed(want.Func()), printed(r.Func()))
			outs[printed(r.Func())] = true
		}
		require.Len(t, outs, 3)
	}
	require.Equal(t, map[int64]bool{-1: true, 0: true, 1: true}, seen)
}
