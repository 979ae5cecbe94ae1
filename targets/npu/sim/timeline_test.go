package sim

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/internal/traceevent"
	"github.com/tessera-ml/tessera/targets/npu/isa"
)

// pipelineProgram is a small int8 program on all three modules: the load
// module loads 4 input entries (64 bytes) and 2 weight entries (512
// bytes, then a token to compute); compute loads 2 micro-ops (16 bytes),
// resets 4 accumulator entries, waits for the token, runs a GEMM and an
// ALU max (then a token to store); store writes the 4 entries as int32
// (256 bytes).
func pipelineProgram() *isa.Program {
	p := &isa.Program{Datapath: isa.DPInt8, Uops: []isa.Uop{{}, {}}}
	loop := func(in isa.Inst) isa.Inst {
		in.UopBegin, in.UopEnd, in.IterOut, in.IterIn, in.DstFactor = 0, 1, 4, 1, [2]uint32{1, 0}
		return in
	}
	p.Insts = []isa.Inst{
		{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, YSize: 1, XSize: 2, XStride: 2},
		{Op: isa.OpLoad, Mem: isa.MemInp, DType: isa.DTInt8, YSize: 1, XSize: 4, XStride: 4},
		{Op: isa.OpLoad, Mem: isa.MemWgt, DType: isa.DTInt8, YSize: 1, XSize: 2, XStride: 2, Deps: isa.Deps{PushNext: true}},
		loop(isa.Inst{Op: isa.OpGEMM, Reset: true}),
		loop(isa.Inst{Op: isa.OpGEMM, SrcFactor: [2]uint32{1, 0}, Deps: isa.Deps{PopPrev: true}}),
		loop(isa.Inst{Op: isa.OpALU, ALU: isa.ALUMax, UseImm: true, Deps: isa.Deps{PushNext: true}}),
		{Op: isa.OpStore, Mem: isa.MemAcc, DType: isa.DTInt32, DRAMBase: 1024, YSize: 1, XSize: 4, XStride: 4, Deps: isa.Deps{PopPrev: true}},
		{Op: isa.OpFinish},
	}
	return p
}

// TestTimelineCycles checks every record of pipelineProgram against the
// cycle model worked by hand (default config: 64 bytes and 64 cycles of
// latency per DMA, GEMM and ALU latency 4, ties to load, then compute):
//
//	load.inp   load     channel [0, 1),   ends 0+1+64 = 65
//	load.uop   compute  ready 0, channel [1, 2), ends 66
//	load.wgt   load     ready 65, channel [65, 73), ends 137, token
//	gemm reset compute  [66, 74)
//	gemm       compute  free 74, token 137: [137, 145)
//	alu.max    compute  [145, 153), token
//	finish     compute  153
//	store.acc  store    free 0, token 153, channel [153, 157), ends 221
func TestTimelineCycles(t *testing.T) {
	cfg := isa.DefaultConfig()
	p := pipelineProgram()
	st, tl, err := RunTimeline(cfg, p, make([]byte, 2048))
	require.NoError(t, err)
	noTok := []TokenWait(nil)
	want := []InstRecord{
		{Index: 1, Module: isa.ModLoad, Name: "load.inp", Free: 0, Ready: 0, Begin: 0, End: 65, Transfer: 1, DRAMBytes: 64, Tokens: noTok},
		{Index: 0, Module: isa.ModCompute, Name: "load.uop", Free: 0, Ready: 0, Begin: 1, End: 66, Transfer: 1, DRAMBytes: 16, Tokens: noTok},
		{Index: 2, Module: isa.ModLoad, Name: "load.wgt", Free: 65, Ready: 65, Begin: 65, End: 137, Transfer: 8, DRAMBytes: 512, Tokens: noTok},
		{Index: 3, Module: isa.ModCompute, Name: "gemm", Free: 66, Ready: 66, Begin: 66, End: 74, Tokens: noTok},
		{Index: 4, Module: isa.ModCompute, Name: "gemm", Free: 74, Ready: 137, Begin: 137, End: 145, Tokens: []TokenWait{{Producer: 2, Pushed: 137}}},
		{Index: 5, Module: isa.ModCompute, Name: "alu.max", Free: 145, Ready: 145, Begin: 145, End: 153, Tokens: noTok},
		{Index: 7, Module: isa.ModCompute, Name: "finish", Free: 153, Ready: 153, Begin: 153, End: 153, Tokens: noTok},
		{Index: 6, Module: isa.ModStore, Name: "store.acc", Free: 0, Ready: 153, Begin: 153, End: 221, Transfer: 4, DRAMBytes: 256, Tokens: []TokenWait{{Producer: 5, Pushed: 153}}},
	}
	require.Equal(t, want, tl.Insts)
	assert.Equal(t, int64(221), tl.Cycles)
	assert.Equal(t, p, tl.Program)
	assert.Equal(t, cfg.ClockMHz, tl.ClockMHz)
	requireTotals(t, st, tl)
	assert.Equal(t, ModuleStats{Busy: 65 + 8 + 8 + 8 + 0, StallToken: 63, StallDRAM: 1, Insts: 5}, st.Modules[isa.ModCompute])
	assert.Equal(t, ModuleStats{Busy: 68, StallToken: 153, Insts: 1}, st.Modules[isa.ModStore])

	// Run computes the same figures without a timeline.
	st2, err := Run(cfg, p, make([]byte, 2048))
	require.NoError(t, err)
	assert.Equal(t, st, st2)
}

// requireTotals: the timeline accounts for exactly the run's cycles,
// module figures and DRAM bytes.
func requireTotals(t *testing.T, st *Stats, tl *Timeline) {
	t.Helper()
	tot := tl.Totals()
	assert.Equal(t, st.Cycles, tot.Cycles)
	assert.Equal(t, st.Modules, tot.Modules)
	assert.Equal(t, st.DRAMReadBytes, tot.DRAMReadBytes)
	assert.Equal(t, st.DRAMWriteBytes, tot.DRAMWriteBytes)
}

// TestTimelineTotalsOnGEMM: on a double-buffered tiled GEMM the records'
// sums equal the run's Stats, and each module's records follow one
// another in program order.
func TestTimelineTotalsOnGEMM(t *testing.T) {
	cfg := isa.DefaultConfig()
	g := gemmShape{M: 64, N: 96, K: 64, Mt: 32, Nt: 48, Kt: 32}
	dram := make([]byte, g.layout().size)
	fillGEMM(cfg, g, dram, rand.New(rand.NewSource(1)))
	st, tl, err := RunTimeline(cfg, gemmProgram(cfg, g, -1), dram)
	require.NoError(t, err)
	requireTotals(t, st, tl)
	last := [isa.NumModules]*InstRecord{}
	for j := range tl.Insts {
		r := &tl.Insts[j]
		if l := last[r.Module]; l != nil {
			require.Less(t, l.Index, r.Index)
			require.Equal(t, l.End, r.Free)
		}
		require.LessOrEqual(t, r.Free, r.Ready)
		require.LessOrEqual(t, r.Ready, r.Begin)
		require.LessOrEqual(t, r.Begin, r.End)
		last[r.Module] = r
	}
}

// traceOf is tl's trace written as JSON and read back through Validate.
func traceOf(t *testing.T, tl *Timeline) *traceevent.Trace {
	t.Helper()
	data, err := tl.Trace().Marshal()
	require.NoError(t, err)
	tr, err := traceevent.Validate(data)
	require.NoError(t, err)
	return tr
}

func TestTimelineTrace(t *testing.T) {
	cfg := isa.DefaultConfig()
	cfg.ClockMHz = 500 // 2 ns per cycle
	_, tl, err := RunTimeline(cfg, pipelineProgram(), make([]byte, 2048))
	require.NoError(t, err)
	tr := traceOf(t, tl)
	threads := map[int]string{}
	var slices, starts, finishes []traceevent.Event
	type sample struct{ ts, v float64 }
	var dram []sample
	for _, e := range tr.TraceEvents {
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				threads[e.Tid] = e.Args["name"].(string)
			}
		case "X":
			slices = append(slices, e)
		case "s":
			starts = append(starts, e)
		case "f":
			finishes = append(finishes, e)
		case "C":
			require.Equal(t, DRAMCounter, e.Name)
			dram = append(dram, sample{e.Ts, e.Args["value"].(float64)})
		}
	}
	assert.Equal(t, map[int]string{1: "load", 2: "compute", 3: "store"}, threads)
	require.Len(t, slices, 8)
	gemm := slices[4] // the GEMM that waited for load.wgt's token
	assert.Equal(t, "gemm", gemm.Name)
	assert.Equal(t, InstCategory, gemm.Cat)
	assert.Equal(t, 2, gemm.Tid)
	assert.InDelta(t, 137*2e-3, gemm.Ts, 1e-12)
	assert.InDelta(t, 8*2e-3, *gemm.Dur, 1e-12)
	assert.Equal(t, map[string]any{"index": 4.0, "inst": "gemm uops=0:1 iter=4,1 dst=1,0 src=1,0 wgt=0,0 pop_prev",
		"cycles": 8.0, "stall_token_cycles": 63.0, "stall_dram_cycles": 0.0}, gemm.Args)
	store := slices[7]
	assert.Equal(t, "store.acc", store.Name)
	assert.Equal(t, 256.0, store.Args["dram_bytes"])

	// two flows: load.wgt → gemm and alu.max → store.acc
	require.Len(t, starts, 2)
	require.Len(t, finishes, 2)
	assert.Equal(t, []int{1, 2}, []int{starts[0].Tid, finishes[0].Tid})
	assert.InDelta(t, 136.5*2e-3, starts[0].Ts, 1e-12)
	assert.InDelta(t, 137.5*2e-3, finishes[0].Ts, 1e-12)
	assert.Equal(t, []int{2, 3}, []int{starts[1].Tid, finishes[1].Tid})
	for i := range starts {
		assert.Equal(t, starts[i].ID, finishes[i].ID)
		assert.Equal(t, TokenFlow, starts[i].Name)
		assert.Equal(t, "e", finishes[i].BP)
	}

	us := func(c float64) float64 { return c * 2e-3 }
	assert.Equal(t, []sample{{us(0), 64}, {us(1), 16}, {us(2), 0}, {us(65), 64}, {us(73), 0}, {us(153), 64}, {us(157), 0}}, dram)
}

// TestNoWaitNoFlow: a program whose only token arrives before the
// compute module is free has no flows.
func TestNoWaitNoFlow(t *testing.T) {
	p := &isa.Program{Datapath: isa.DPInt8, Uops: []isa.Uop{{}}}
	p.Insts = []isa.Inst{
		{Op: isa.OpLoad, Mem: isa.MemInp, DType: isa.DTInt8, YSize: 1, XSize: 1, XStride: 1},
		{Op: isa.OpLoad, Mem: isa.MemWgt, DType: isa.DTInt8, YSize: 1, XSize: 1, XStride: 1, Deps: isa.Deps{PushNext: true}},
		{Op: isa.OpLoad, Mem: isa.MemUop, DType: isa.DTInt8, YSize: 1, XSize: 1, XStride: 1},
		// 1000 iterations: the compute module is busy until long after the token
		{Op: isa.OpGEMM, Reset: true, UopBegin: 0, UopEnd: 1, IterOut: 1000, IterIn: 1},
		{Op: isa.OpGEMM, UopBegin: 0, UopEnd: 1, IterOut: 1, IterIn: 1, Deps: isa.Deps{PopPrev: true}},
		{Op: isa.OpFinish},
	}
	_, tl, err := RunTimeline(isa.DefaultConfig(), p, make([]byte, 4096))
	require.NoError(t, err)
	gemm := tl.Insts[len(tl.Insts)-2]
	require.Equal(t, 4, gemm.Index)
	require.Len(t, gemm.Tokens, 1, "the GEMM pops a token")
	require.Less(t, gemm.Tokens[0].Pushed, gemm.Free)
	for _, e := range traceOf(t, tl).TraceEvents {
		assert.NotContains(t, []string{"s", "f"}, e.Ph, "flow event %+v", e)
	}
}

// BenchmarkSimulateGEMMTimeline is BenchmarkSimulateGEMM recording the
// timeline and converting it to trace events: the cost of a profile's
// NPU calls.
func BenchmarkSimulateGEMMTimeline(b *testing.B) {
	cfg := isa.DefaultConfig()
	g := gemmShape{M: 256, N: 256, K: 256, Mt: 64, Nt: 256, Kt: 128}
	dram := make([]byte, g.layout().size)
	fillGEMM(cfg, g, dram, rand.New(rand.NewSource(1)))
	p := gemmProgram(cfg, g, -1)
	b.ResetTimer()
	events := 0
	for i := 0; i < b.N; i++ {
		_, tl, err := RunTimeline(cfg, p, dram)
		if err != nil {
			b.Fatal(err)
		}
		events = len(tl.Trace().TraceEvents)
	}
	b.ReportMetric(float64(g.M*g.N*g.K)*float64(b.N)/b.Elapsed().Seconds(), "MACs/s")
	b.ReportMetric(float64(events), "events")
}
