package schedule

import (
	"errors"
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// randomLocationStep applies one random compute-location, inline, cache or
// reduction primitive (compute_at, reverse_compute_at, sampled compute_at,
// compute_inline, reverse_compute_inline, cache_read, cache_write,
// set_scope, decompose_reduction, rfactor) to random blocks and loops,
// most of them illegal. A refusal must be an *Error that leaves the
// function and the trace unchanged; it returns the primitive and whether
// it was applied.
func randomLocationStep(t testing.TB, s *Schedule, rng *rand.Rand) (string, bool) {
	t.Helper()
	blocks := BlocksUnder(s.Func().Body)
	pick := func() BlockRV { return BlockRV{Name: blocks[rng.Intn(len(blocks))].Block.Name} }
	var loops []LoopRV
	tir.VisitStmt(s.Func().Body, func(x tir.Stmt) bool {
		if f, ok := x.(*tir.For); ok {
			loops = append(loops, LoopRV{Var: f.Var})
		}
		return true
	})
	b := pick()
	r := findBlock(s.Func().Body, b.Name)
	// Loops around the blocks that read what b writes (consumers) and
	// that write what b reads (producers): where compute_at and
	// reverse_compute_at may be legal.
	reads, writes := blockBuffers(r.Block)
	var consumerLoops, producerLoops []LoopRV
	for _, o := range blocks {
		if o == r {
			continue
		}
		or, ow := blockBuffers(o.Block)
		path := PathTo(s.Func().Body, o)
		for _, st := range path {
			f, ok := st.(*tir.For)
			if !ok {
				continue
			}
			for x := range writes {
				if or[x] {
					consumerLoops = append(consumerLoops, LoopRV{Var: f.Var})
					break
				}
			}
			for x := range reads {
				if ow[x] {
					producerLoops = append(producerLoops, LoopRV{Var: f.Var})
					break
				}
			}
		}
	}
	near := func(cands []LoopRV) LoopRV {
		if len(cands) > 0 && rng.Intn(4) != 0 {
			return cands[rng.Intn(len(cands))]
		}
		return loops[rng.Intn(len(loops))]
	}
	before := printed(s.Func())
	n := len(s.Trace().Insts)
	scopes := []string{"global", "shared", "local"}
	var op string
	var err error
	switch rng.Intn(10) {
	case 0:
		op = "compute_at"
		err = s.ComputeAt(b, near(consumerLoops))
	case 1:
		op = "reverse_compute_at"
		err = s.ReverseComputeAt(b, near(producerLoops))
	case 2:
		op = "sample_compute_location"
		var l LoopRV
		if l, err = s.SampleComputeLocation(b); err == nil {
			n = len(s.Trace().Insts)
			err = s.ComputeAt(b, l)
		}
	case 3:
		op = "compute_inline"
		err = s.ComputeInline(b)
	case 4:
		op = "reverse_compute_inline"
		err = s.ReverseComputeInline(b)
	case 5:
		op = "cache_read"
		_, err = s.CacheRead(b, rng.Intn(len(r.Block.Reads)+1), scopes[rng.Intn(3)])
	case 6:
		op = "cache_write"
		_, err = s.CacheWrite(b, rng.Intn(len(r.Block.Writes)+1)-rng.Intn(2), scopes[rng.Intn(3)])
	case 7:
		op = "set_scope"
		err = s.SetScope(b, rng.Intn(len(r.Block.Writes)+1), scopes[rng.Intn(3)])
	case 8:
		op = "decompose_reduction"
		_, err = s.DecomposeReduction(b, loops[rng.Intn(len(loops))])
	case 9:
		op = "rfactor"
		_, err = s.RFactor(loops[rng.Intn(len(loops))], rng.Intn(5)-2)
	}
	if err != nil {
		var se *Error
		require.True(t, errors.As(err, &se), "%s: %v", op, err)
		require.NotEmpty(t, se.Reason)
		require.Equal(t, before, printed(s.Func()), "%s refused but changed the IR: %v", op, err)
		require.Len(t, s.Trace().Insts, n, "%s refused but recorded: %v", op, err)
		return op, false
	}
	return op, true
}

// locationWorkloads are the workloads of TestRandomLocationSchedules; each
// gets locationSchedulesPerWorkload random schedules (600 in all), also
// checked compiled by TestAllRandomSchedulesCompiled.
var locationWorkloads = []string{"gemm", "conv", "chain", "pool", "softmax", "conv_bias_relu"}

const locationSchedulesPerWorkload = 100

// locationScheduleSeed is the seed of the i-th random location schedule of
// workload name.
func locationScheduleSeed(name string, i int) int64 { return int64(i*104729 + len(name)) }

// TestRandomLocationSchedules applies random sequences of loop primitives
// (randomStep) and of this file's primitives to every workload, and
// checks each schedule: it verifies, the interpreter computes what the
// unscheduled function computes on random inputs, and the trace
// round-trips through JSON and replays to the same printed IR.
func TestRandomLocationSchedules(t *testing.T) {
	applied := map[string]int{}
	compacted := 0
	for _, name := range locationWorkloads {
		want := interpret(t, locWorkload(t, name), 3)
		for i := 0; i < locationSchedulesPerWorkload; i++ {
			seed := locationScheduleSeed(name, i)
			s := randomLocationSchedule(t, name, seed, applied)
			ok := t.Run(fmt.Sprintf("%s/%d", name, seed), func(t *testing.T) {
				f := s.Func()
				require.NoError(t, tir.VerifyFunc(f), printed(f))
				sameOutputs(t, want, interpret(t, f, 3), printed(f)+"\n"+s.Trace().String())
				checkSame(t, s)
				if checkCompacted(t, want, s) {
					compacted++
				}
			})
			if !ok {
				return
			}
		}
	}
	t.Logf("applied: %v; buffer compaction changed %d schedules", applied, compacted)
	require.Greater(t, compacted, 50, "buffer compaction changed too few schedules")
	for _, op := range []string{"compute_at", "reverse_compute_at", "sample_compute_location", "compute_inline", "reverse_compute_inline", "cache_read", "cache_write", "set_scope", "decompose_reduction", "rfactor"} {
		require.Greater(t, applied[op], 3, "%s applied %d times", op, applied[op])
	}
}
