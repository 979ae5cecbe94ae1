package npu

import (
	"math/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/internal/traceevent"
	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	"github.com/tessera-ml/tessera/targets/npu/sim"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// profiledTIR follows testdata/dense.tir (an NPU kernel) with a host
// kernel and a host function calling dense, then act on the host, then
// dense again.
const profiledTIR = `
tir.func @act(%in0: buffer<5x37xf32>, out %out0: buffer<5x37xf32>) attributes {tessera.kernel, tessera.schedule = "default"} {
  tir.for %i0 = 0 to 5 {
    tir.for %i1 = 0 to 37 {
      tir.block "tanh"(%v0 = spatial(0:5, %i0), %v1 = spatial(0:37, %i1)) reads(%in0[%v0, %v1]) writes(%out0[%v0, %v1]) {
        %out0[%v0, %v1] = tanh(%in0[%v0, %v1])
      }
    }
  }
}
tir.func @main(%x: buffer<5x1x4x5xf32>, %w: buffer<37x20xf32>, %b: buffer<37xf32>, out %y: buffer<5x37xf32>) attributes {tessera.host, global_symbol = "main"} {
  tir.arena 1024 (%h: buffer<5x37xf32> at 0) {
    tir.call @dense(%x, %w, %b, %h)
    tir.call @act(%h, %y)
    tir.call @dense(%x, %w, %b, %h)
  }
}
`

// profiledEntry compiles profiledTIR for the NPU, saves and loads it, and
// returns the entry with random inputs and an output.
func profiledEntry(t *testing.T) (*Entry, []*rt.Tensor, []*rt.Tensor) {
	t.Helper()
	return denseEntry(t, profiledTIR)
}

// denseEntry compiles testdata/dense.tir followed by host (whose @main
// takes dense's parameters) for the NPU, saves and loads it, and returns
// the entry with random inputs and an output.
func denseEntry(t *testing.T, host string) (*Entry, []*rt.Tensor, []*rt.Tensor) {
	t.Helper()
	dense, err := os.ReadFile("testdata/dense.tir")
	require.NoError(t, err)
	m, err := tir.ParseString("profiled.tir", string(dense)+host)
	require.NoError(t, err)
	tg, err := NewTarget(targets.Options{})
	require.NoError(t, err)
	art, err := tg.Codegen(m, "")
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "profiled.npu")
	require.NoError(t, art.Save(path))
	mod, err := tg.Load(path)
	require.NoError(t, err)
	t.Cleanup(func() { mod.Close() })
	spec := func(name string, shape ...int64) rt.TensorSpec {
		return rt.TensorSpec{Name: name, DType: rt.Float32, Shape: shape}
	}
	ins := []rt.TensorSpec{spec("x", 5, 1, 4, 5), spec("w", 37, 20), spec("b", 37)}
	out := spec("y", 5, 37)
	e, err := mod.Entry("main", ins, []rt.TensorSpec{out})
	require.NoError(t, err)
	r := rand.New(rand.NewSource(3))
	var inputs []*rt.Tensor
	for _, s := range ins {
		n := int64(1)
		for _, d := range s.Shape {
			n *= d
		}
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		x, err := rt.FromSlice(s.Shape, v)
		require.NoError(t, err)
		inputs = append(inputs, x)
	}
	y, err := rt.NewTensor(rt.Float32, out.Shape)
	require.NoError(t, err)
	return e.(*Entry), inputs, []*rt.Tensor{y}
}

// readTrace writes tr to a file and reads it back through Validate.
func readTrace(t *testing.T, tr *traceevent.Trace) *traceevent.Trace {
	t.Helper()
	path := filepath.Join(t.TempDir(), "profile.json")
	require.NoError(t, tr.WriteFile(path))
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	got, err := traceevent.Validate(data)
	require.NoError(t, err)
	return got
}

// profileEvents are a profile's events by kind.
type profileEvents struct {
	process  string
	threads  map[int]string
	runs     []traceevent.Event
	kernels  []traceevent.Event
	insts    map[int][]traceevent.Event // by thread
	flows    map[string][]string        // id → phases
	counters []traceevent.Event
}

func eventsOf(t *testing.T, tr *traceevent.Trace) profileEvents {
	t.Helper()
	pe := profileEvents{threads: map[int]string{}, insts: map[int][]traceevent.Event{}, flows: map[string][]string{}}
	for _, e := range tr.TraceEvents {
		require.Equal(t, profilePid, e.Pid)
		switch {
		case e.Name == "process_name":
			pe.process = e.Args["name"].(string)
		case e.Name == "thread_name":
			pe.threads[e.Tid] = e.Args["name"].(string)
		case e.Cat == "run":
			pe.runs = append(pe.runs, e)
		case e.Cat == "kernel":
			require.Equal(t, kernelsTid, e.Tid)
			pe.kernels = append(pe.kernels, e)
		case e.Cat == sim.InstCategory:
			pe.insts[e.Tid] = append(pe.insts[e.Tid], e)
		case e.Ph == "s" || e.Ph == "f":
			pe.flows[e.ID] = append(pe.flows[e.ID], e.Ph)
		case e.Ph == "C":
			require.Equal(t, sim.DRAMCounter, e.Name)
			pe.counters = append(pe.counters, e)
		default:
			t.Fatalf("unexpected event %+v", e)
		}
	}
	return pe
}

// TestProfile profiles two runs of dense (NPU), act (host), dense (NPU).
func TestProfile(t *testing.T) {
	e, inputs, outputs := profiledEntry(t)
	const runs = 2
	tr, err := e.Profile(inputs, outputs, runs)
	require.NoError(t, err)
	pe := eventsOf(t, readTrace(t, tr))
	cfg := e.m.s.Config

	assert.Equal(t, "npu", pe.process)
	assert.Equal(t, map[int]string{1: "kernels", 2: "load", 3: "compute", 4: "store"}, pe.threads)
	assert.Equal(t, map[string]any{"npu_config": "default", "clock_mhz": 1000.0}, tr.OtherData)

	// one kernel slice per call, runs slices around them, end to end
	require.Len(t, pe.runs, runs)
	require.Len(t, pe.kernels, 3*runs)
	macs := float64(5 * 37 * 20)
	for r, run := range pe.runs {
		assert.Equal(t, "main", run.Name)
		assert.Equal(t, float64(r), run.Args["run"])
		ks := pe.kernels[3*r : 3*r+3]
		assert.Equal(t, []string{"dense", "act", "dense"}, []string{ks[0].Name, ks[1].Name, ks[2].Name})
		assert.Equal(t, run.Ts, ks[0].Ts)
		for i, k := range ks {
			if i > 0 {
				assert.InDelta(t, ks[i-1].Ts+*ks[i-1].Dur, k.Ts, 1e-9)
			}
		}
		assert.InDelta(t, ks[2].Ts+*ks[2].Dur, run.Ts+*run.Dur, 1e-9)
		for _, k := range []traceevent.Event{ks[0], ks[2]} {
			assert.Equal(t, map[string]any{"flops": 2 * macs, "schedule": "npu", "device": "npu", "cycles": k.Args["cycles"]}, k.Args)
			assert.InDelta(t, k.Args["cycles"].(float64)/cfg.ClockMHz, *k.Dur, 1e-9)
		}
		assert.Positive(t, ks[1].Args["flops"].(float64), "tanh's operations")
		assert.Equal(t, map[string]any{"flops": ks[1].Args["flops"], "schedule": "default", "device": "host"}, ks[1].Args)
		assert.Greater(t, *ks[1].Dur, 0.0)
	}

	// instruction tracks: in order, not overlapping, inside the NPU
	// calls, their busy cycles the runs' module figures
	rep := e.Report()
	require.NotNil(t, rep)
	for m := isa.Module(0); m < isa.NumModules; m++ {
		insts := pe.insts[moduleTracks.Tids[m]]
		require.NotEmpty(t, insts, m.String())
		var cycles, dur float64
		for i, in := range insts {
			if i > 0 {
				prev := insts[i-1]
				require.LessOrEqual(t, prev.Ts+*prev.Dur, in.Ts, "%s slice %d overlaps the one before", m, i)
			}
			require.True(t, insideNPUCall(pe.kernels, in), "%s slice %d at %v µs is outside the NPU calls", m, i, in.Ts)
			cycles += in.Args["cycles"].(float64)
			dur += *in.Dur
		}
		busy := float64(runs * rep.Modules[m.String()].Busy)
		assert.Equal(t, busy, cycles, m.String())
		assert.InDelta(t, busy/cfg.ClockMHz, dur, 1e-6, m.String())
	}

	// flows pair up (a start and a finish per id)
	require.NotEmpty(t, pe.flows)
	for id, phases := range pe.flows {
		assert.ElementsMatch(t, []string{"s", "f"}, phases, id)
	}

	// the DRAM counter: 0 at each call's start, never above the channel
	require.NotEmpty(t, pe.counters)
	for _, c := range pe.counters {
		v := c.Args["value"].(float64)
		assert.True(t, v >= 0 && v <= float64(cfg.DRAMBytesPerCycle), "rate %v", v)
	}

	// the outputs hold a run's results
	y, _ := outputs[0].Float32s()
	want := append([]float32(nil), y...)
	require.NoError(t, e.Call(inputs, outputs))
	assert.Equal(t, want, y)
}

// insideNPUCall reports whether slice s lies within one of the NPU
// kernel slices.
func insideNPUCall(kernels []traceevent.Event, s traceevent.Event) bool {
	for _, k := range kernels {
		if k.Args["device"] == "npu" && s.Ts >= k.Ts && s.Ts+*s.Dur <= k.Ts+*k.Dur+1e-9 {
			return true
		}
	}
	return false
}

// TestProfileBound: past the event bound the kernel slices stay and the
// instruction events stop, at a call boundary, as OtherData says.
func TestProfileBound(t *testing.T) {
	e, inputs, outputs := profiledEntry(t)
	full, err := e.Profile(inputs, outputs, 1)
	require.NoError(t, err)
	// the events up to the end of the first call's instructions
	first := len(full.TraceEvents)
	for i, ev := range full.TraceEvents {
		if ev.Cat == "kernel" && i > 7 {
			first = i
			break
		}
	}
	for _, limit := range []int{10, first} {
		e.maxEvents = limit
		tr, err := e.Profile(inputs, outputs, 2)
		require.NoError(t, err)
		assert.LessOrEqual(t, len(tr.TraceEvents), limit+2*3+2, "limit %d: only the run and kernel slices pass it", limit)
		pe := eventsOf(t, readTrace(t, tr))
		require.Len(t, pe.kernels, 6)
		require.Len(t, pe.runs, 2)
		assert.Equal(t, true, tr.OtherData["instructions_truncated"])
		if limit == 10 {
			assert.Empty(t, pe.insts)
			assert.Contains(t, tr.OtherData["instructions_note"], "kernel calls from number 0 on")
			continue
		}
		assert.Contains(t, tr.OtherData["instructions_note"], "kernel calls from number 2 on")
		for _, insts := range pe.insts {
			for _, in := range insts {
				require.True(t, insideNPUCall(pe.kernels[:1], in))
			}
		}
	}
}
