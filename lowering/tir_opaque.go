package lowering

import (
	"fmt"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/schedule"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// ScheduledByLowering is the tensorir.AttrSchedule value of kernels that
// lower-to-tir schedules itself (those built by an op's Kernel lowering,
// hlo.rnn_scan's): later scheduling steps, the tuner and elementwise
// inlining leave them alone.
const ScheduledByLowering = "lowering"

// lowerKernelOp lets an Opaque op's Kernel lowering build the kernel body;
// the op must be the fusion's only computation and its results the
// fusion's results, in order.
func (k *kernel) lowerKernelOp(op *graphir.Op, low hlo.Lowering, outFor map[*graphir.Value]*tir.Buffer) error {
	if len(k.blocks) > 0 || k.opaque {
		return errorAt(op, "'%s' must be alone in its fusion", op.Name)
	}
	ins := make([]*tir.Operand, op.NumOperands())
	for i := range ins {
		o, err := k.in(op, i)
		if err != nil {
			return err
		}
		ins[i] = o
	}
	outs := make([]*tir.Buffer, len(op.Results))
	for i, r := range op.Results {
		b := outFor[r]
		if b == nil || b.Name != fmt.Sprintf("out%d", i) {
			return errorAt(op, "'%s' must be alone in its fusion, returning its results in order", op.Name)
		}
		outs[i] = b
		t, dt, err := tensorOf(op, r)
		if err != nil {
			return err
		}
		k.vals[r] = &tir.Operand{Buffer: b, Shape: t.Shape, DType: dt}
	}
	body, err := low.Kernel(op, ins, outs)
	if err != nil {
		return err
	}
	k.blocks = append(k.blocks, body)
	k.opaque = true
	return nil
}

// opaqueVectorBits is the SIMD width the kernels of Kernel lowerings are
// scheduled for: 512 bits (16 f32 lanes); code generation splits the
// vectors on narrower SIMD.
const opaqueVectorBits = 512

// scheduleOpaque schedules a kernel built by a Kernel lowering with the
// schedule primitives, and marks it scheduled (ScheduledByLowering):
//   - a reduce block (the GEMM of a recurrence step, out[b, g] = Σ_k …)
//     has its innermost spatial loop split by the vector width W, the
//     reduction moved between the two parts (…, g_o, k, g_i), its init
//     split off before the reduction (decompose_reduction), and both
//     inner loops vectorized: every step of k is one vector FMA per W
//     gates with the lhs element broadcast;
//   - every other block has its innermost loop split by W and vectorized.
//
// No loop is parallel: the blocks sit in a serial loop over time, and a
// parallel region per step costs more than the step's work at the sizes
// recurrences have (a batch-1 step of hidden 256 is 0.26 M MACs).
func scheduleOpaque(f *tir.PrimFunc) (*tir.PrimFunc, error) {
	s := schedule.New(f)
	for _, r := range schedule.BlocksUnder(f.Body) {
		b := r.Block
		w := int64(opaqueVectorBits / max(b.Writes[0].Buffer.DType.Bits(), 8))
		var err error
		if isReduceBlock(b) {
			err = scheduleGEMMBlock(s, b.Name, w)
		} else {
			err = vectorizeInnermost(s, schedule.BlockRV{Name: b.Name}, w)
		}
		if err != nil {
			return nil, err
		}
	}
	out := s.Func()
	attrs := tir.Attrs{}
	for k, v := range out.Attrs {
		attrs[k] = v
	}
	attrs[tir.AttrSchedule] = tir.StringAttr(ScheduledByLowering)
	out.Attrs = attrs
	if err := tir.VerifyFunc(out); err != nil {
		return nil, err
	}
	return out, nil
}

func isReduceBlock(b *tir.Block) bool {
	for _, iv := range b.IterVars {
		if iv.Kind == tir.Reduce {
			return true
		}
	}
	return false
}

// scheduleGEMMBlock: loops (…, b, g, k) → (…, b, g_o, [init g_i], k, g_i).
func scheduleGEMMBlock(s *schedule.Schedule, name string, w int64) error {
	b := schedule.BlockRV{Name: name}
	loops, err := s.GetLoops(b)
	if err != nil {
		return err
	}
	if len(loops) < 2 {
		return nil
	}
	lg, lk := loops[len(loops)-2], loops[len(loops)-1]
	inner := lg
	fg, err := s.FindLoop(lg)
	if err != nil {
		return err
	}
	if ext, ok := fg.Extent.(*tir.IntImm); ok && ext.Value > w {
		parts, err := s.Split(lg, []int64{-1, w})
		if err != nil {
			return err
		}
		if err := s.Reorder(parts[0], lk, parts[1]); err != nil {
			return err
		}
		inner = parts[1]
	} else if err := s.Reorder(lk, lg); err != nil {
		return err
	}
	initBlock, err := s.DecomposeReduction(b, lk)
	if err != nil {
		return err
	}
	if err := s.Vectorize(inner); err != nil {
		return err
	}
	il, err := s.GetLoops(initBlock)
	if err != nil {
		return err
	}
	return s.Vectorize(il[len(il)-1])
}

// vectorizeInnermost splits the block's innermost loop by w (when longer)
// and vectorizes its inner part.
func vectorizeInnermost(s *schedule.Schedule, b schedule.BlockRV, w int64) error {
	loops, err := s.GetLoops(b)
	if err != nil || len(loops) == 0 {
		return err
	}
	l := loops[len(loops)-1]
	f, err := s.FindLoop(l)
	if err != nil {
		return err
	}
	if ext, ok := f.Extent.(*tir.IntImm); ok && ext.Value > w {
		parts, err := s.Split(l, []int64{-1, w})
		if err != nil {
			return err
		}
		l = parts[1]
	}
	return s.Vectorize(l)
}
