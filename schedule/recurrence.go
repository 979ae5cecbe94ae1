package schedule

import (
	tir "github.com/tessera-ml/tessera/tensorir"
)

// RecurrenceVectorBits is the SIMD width ScheduleRecurrence schedules for
// when lower-to-tir calls it (no target is known there): 512 bits, 16 f32
// lanes; code generation splits the vectors on narrower SIMD.
const RecurrenceVectorBits = 512

// ScheduledRecurrence is the tensorir.AttrSchedule value ScheduleRecurrence
// marks kernels with.
const ScheduledRecurrence = "recurrence"

// ScheduleRecurrence schedules a recurrence kernel (one marked
// tensorir.AttrRecurrence: blocks in a serial loop over time, which the
// default rules' auto-inlining and parallel loops must not touch) with the
// schedule primitives for SIMD registers of vectorBits, and marks it
// scheduled (ScheduledRecurrence); f is not modified:
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
func ScheduleRecurrence(f *tir.PrimFunc, vectorBits int) (*tir.PrimFunc, error) {
	s := New(f)
	for _, r := range BlocksUnder(f.Body) {
		b := r.Block
		w := int64(max(vectorBits/max(b.Writes[0].Buffer.DType.Bits(), 8), 2))
		var err error
		if hasReduce(b) {
			err = scheduleGEMMBlock(s, b.Name, w)
		} else {
			err = vectorizeInnermost(s, BlockRV{Name: b.Name}, w)
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
	attrs[tir.AttrSchedule] = tir.StringAttr(ScheduledRecurrence)
	out.Attrs = attrs
	if err := tir.VerifyFunc(out); err != nil {
		return nil, err
	}
	return out, nil
}

// scheduleGEMMBlock: loops (…, b, g, k) → (…, b, g_o, [init g_i], k, g_i).
func scheduleGEMMBlock(s *Schedule, name string, w int64) error {
	b := BlockRV{Name: name}
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
func vectorizeInnermost(s *Schedule, b BlockRV, w int64) error {
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
