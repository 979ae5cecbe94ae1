package npu

import (
	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// narrowOutputs makes an NPU kernel of the bf16 datapath STORE its f32
// output as bf16 when, in every plan that calls it, the buffer it writes
// is read only by NPU kernels of the bf16 datapath, and by them only as
// an X or W operand: those LOADs round each f32 value to bf16 (nearest
// even, ISA.md "LOAD"), so rounding once at the STORE yields the same
// operands bit for bit and halves the output's DRAM writes. A buffer that
// is an entry parameter, or that a host kernel or an epilogue reads (as
// f32), keeps the f32 STORE; so does a kernel no plan calls.
func (a *Artifact) narrowOutputs() error {
	narrow := map[string]bool{}
	for _, p := range a.plans {
		readers := map[int][]PlanCall{}
		params := map[int][]int{}
		for _, c := range p.Calls {
			roles := a.kernels[c.Kernel].Params
			for i, b := range c.Args {
				if roles[i] != tir.RoleOut {
					readers[b] = append(readers[b], c)
					params[b] = append(params[b], i)
				}
			}
		}
		for _, c := range p.Calls {
			gp := a.npu[c.Kernel]
			if gp == nil {
				continue
			}
			out := c.Args[gp.g.Out]
			ok, seen := narrow[c.Kernel]
			narrow[c.Kernel] = (ok || !seen) && gp.g.DP == isa.DPBF16 && gp.g.OutType == isa.DTF32 &&
				!p.Bufs[out].Param && len(readers[out]) > 0 && a.readsRounded(readers[out], params[out])
		}
	}
	for name, ok := range narrow {
		if !ok {
			continue
		}
		gp := a.npu[name]
		g := *gp.g
		g.OutType = isa.DTBF16
		ngp, err := compileGEMM(a.cfg, &g, gp.t)
		if err != nil {
			return err
		}
		a.npu[name] = ngp
	}
	return nil
}

// readsRounded reports whether every reader call reads the buffer (its
// parameter index in params) as the X or W operand of a bf16 NPU
// kernel, and not also as an epilogue operand.
func (a *Artifact) readsRounded(calls []PlanCall, params []int) bool {
	for i, c := range calls {
		gp := a.npu[c.Kernel]
		if gp == nil || gp.g.DP != isa.DPBF16 || (params[i] != gp.g.X && params[i] != gp.g.W) {
			return false
		}
		for _, s := range gp.g.Epilogue {
			if s.Kind != opConst && s.Param == params[i] {
				return false
			}
		}
	}
	return true
}
