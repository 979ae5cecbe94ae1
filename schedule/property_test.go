package schedule

import (
	"errors"
	"fmt"
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// randomStep applies one random primitive (split with random, often
// non-dividing factors, sampled split, fuse, reorder, parallel,
// vectorize, unroll, annotate) to a random block's loops. A refusal must
// be an *Error that leaves the function and the trace unchanged; it
// returns whether the step was applied.
func randomStep(t testing.TB, s *Schedule, rng *rand.Rand) (string, bool) {
	t.Helper()
	op, ok, _ := randomLoopStep(t, s, rng)
	return op, ok
}

// randomLoopStep is randomStep, also reporting whether a loop the
// primitive was given has a non-constant extent.
func randomLoopStep(t testing.TB, s *Schedule, rng *rand.Rand) (op string, applied, symbolic bool) {
	t.Helper()
	var blocks []string
	for _, r := range BlocksUnder(s.Func().Body) {
		blocks = append(blocks, r.Block.Name)
	}
	b := BlockRV{Name: blocks[rng.Intn(len(blocks))]}
	ls, err := s.GetLoops(b)
	require.NoError(t, err)
	if len(ls) == 0 {
		return "none", false, false
	}
	symbolicIn := func(ls ...LoopRV) bool {
		for _, l := range ls {
			if f, err := s.FindLoop(l); err == nil {
				if _, ok := constInt(f.Extent); !ok {
					return true
				}
			}
		}
		return false
	}
	l := ls[rng.Intn(len(ls))]
	f, err := s.FindLoop(l)
	require.NoError(t, err)
	ext, isConst := constInt(f.Extent)
	before := printed(s.Func())
	n := len(s.Trace().Insts)
	symbolic = !isConst
	switch k := rng.Intn(10); k {
	case 0, 1, 2:
		op = "split"
		if !isConst {
			// A symbolic extent: small factors, usually one inferred
			// (ceil of the extent over the others, with a guarded
			// tail), sometimes all given (refused unless the bound
			// analysis proves they cover the extent).
			fs := make([]int64, 2+rng.Intn(2))
			for i := range fs {
				fs[i] = 1 + rng.Int63n(6)
			}
			if rng.Intn(5) != 0 {
				fs[rng.Intn(len(fs))] = -1
			}
			_, err = s.Split(l, fs)
			break
		}
		// Factors whose product is within about twice the extent: one
		// inferred (non-dividing as often as not), or all given.
		nf := 2 + rng.Intn(2)
		fs := make([]int64, nf)
		prod := int64(1)
		for i := range fs {
			fs[i] = 1 + rng.Int63n(max(ext, 1)+1)
			if prod*fs[i] > ext+1 {
				fs[i] = 1
			}
			prod *= fs[i]
		}
		if prod < ext || rng.Intn(2) == 0 {
			fs[rng.Intn(nf)] = -1
		}
		_, err = s.Split(l, fs)
	case 3:
		op = "sample+split"
		var fs []int64
		fs, err = s.SamplePerfectTile(l, 2+rng.Intn(2), int64(rng.Intn(9)))
		if err == nil {
			n = len(s.Trace().Insts)
			_, err = s.Split(l, fs)
		}
	case 4:
		op = "fuse"
		i := rng.Intn(len(ls))
		j := min(len(ls), i+2+rng.Intn(2))
		if j-i < 2 {
			return op, false, false
		}
		symbolic = symbolicIn(ls[i:j]...)
		_, err = s.Fuse(ls[i:j]...)
	case 5:
		op = "reorder"
		perm := rng.Perm(len(ls))[:1+rng.Intn(len(ls))]
		sel := make([]LoopRV, len(perm))
		for i, p := range perm {
			sel[i] = ls[p]
		}
		symbolic = symbolicIn(sel...)
		err = s.Reorder(sel...)
	case 6:
		op = "parallel"
		err = s.Parallel(l)
	case 7:
		op = "vectorize"
		symbolic = symbolicIn(ls[len(ls)-1])
		err = s.Vectorize(ls[len(ls)-1])
	case 8:
		op = "unroll"
		err = s.Unroll(l)
	case 9:
		op = "annotate"
		err = s.Annotate(l, "pragma_auto_unroll_max_step", tir.IntAttr(rng.Int63n(64)))
	}
	if err != nil {
		var se *Error
		require.True(t, errors.As(err, &se), "%s: %v", op, err)
		require.NotContains(t, err.Error(), "(not rendered)")
		require.Equal(t, before, printed(s.Func()), "%s refused but changed the IR: %v", op, err)
		require.Len(t, s.Trace().Insts, n, "%s refused but recorded: %v", op, err)
		return op, false, symbolic
	}
	return op, true, symbolic
}

func propertyWorkloads() []string {
	var names []string
	for n := range workloads {
		names = append(names, n)
	}
	for n := range propertyExtra {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// randomSchedule makes a random schedule of workload name.
func randomSchedule(t testing.TB, name string, seed int64, applied map[string]int) *Schedule {
	rng := rand.New(rand.NewSource(seed))
	s := NewWithSeed(parseFunc(t, workloadSrc(name)), seed)
	steps := 1 + rng.Intn(6)
	for i := 0; i < steps; i++ {
		if op, ok := randomStep(t, s, rng); ok {
			applied[op]++
		}
	}
	return s
}

// randomSchedulesPerWorkload schedules of each workload (1,020 in all) are
// checked by TestRandomSchedules with the interpreter and by
// TestAllRandomSchedulesCompiled compiled with targets/cpu.
const randomSchedulesPerWorkload = 170

// randomScheduleSeed is the seed of the i-th random schedule of workload name.
func randomScheduleSeed(name string, i int) int64 { return int64(i*7919 + len(name)) }

func TestRandomSchedules(t *testing.T) {
	applied := map[string]int{}
	for _, name := range propertyWorkloads() {
		want := interpret(t, parseFunc(t, workloadSrc(name)), 3)
		for i := 0; i < randomSchedulesPerWorkload; i++ {
			seed := randomScheduleSeed(name, i)
			s := randomSchedule(t, name, seed, applied)
			ok := t.Run(fmt.Sprintf("%s/%d", name, seed), func(t *testing.T) {
				f := s.Func()
				require.NoError(t, tir.VerifyFunc(f), printed(f))
				sameOutputs(t, want, interpret(t, f, 3), printed(f)+"\n"+s.Trace().String())
				checkReplay(t, s)
				checkCompacted(t, want, s)
			})
			if !ok {
				return
			}
		}
	}
	t.Logf("applied: %v", applied)
	// Every primitive was exercised many times.
	for _, op := range []string{"split", "sample+split", "fuse", "reorder", "parallel", "vectorize", "unroll", "annotate"} {
		require.Greater(t, applied[op], 15, "%s applied %d times", op, applied[op])
	}
}

// checkCompacted checks that buffer compaction (which code generation
// applies) keeps s's function valid and its results equal to want, and
// reports whether it changed the function.
func checkCompacted(t *testing.T, want map[string][]float64, s *Schedule) bool {
	t.Helper()
	f := s.Func()
	c := tir.CompactBufferAllocation(f)
	require.NoError(t, tir.VerifyFunc(c), printed(c))
	if printed(c) == printed(f) {
		return false
	}
	sameOutputs(t, want, interpret(t, c, 3), "compacted:\n"+printed(c)+"\n"+s.Trace().String())
	return true
}
