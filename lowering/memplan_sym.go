package lowering

import (
	"sort"

	"github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Memory planning of a host function whose tensors have symbolic sizes
// (issue 19): the arena's size and the buffers' offsets are expressions of
// the symbols, evaluated by the host function when it runs.

// SymPlanBuffer is one tensor to place: its size in bytes as an
// expression of the symbols (a constant for a static tensor) and the
// kernel calls it is live across.
type SymPlanBuffer struct {
	Name  string
	Bytes *graphir.SymExpr
	Live  tir.Lifetime
}

// planArena places bufs: with constant sizes only, PlanMemory's plan
// (offsets and size constants); otherwise PlanSymbolic's, whose
// expressions are converted over syms' parameters. The statistics of a
// symbolic plan count its static part only.
func planArena(bufs []SymPlanBuffer, syms *symScope) (tir.Expr, []tir.Expr, tir.PlanStats) {
	static := make([]tir.PlanBuffer, len(bufs))
	for i, b := range bufs {
		c, ok := b.Bytes.Const()
		if !ok {
			size, offs := PlanSymbolic(bufs)
			out := make([]tir.Expr, len(offs))
			for j, o := range offs {
				out[j] = syms.expr(o)
			}
			return syms.expr(size), out, tir.PlanStats{Buffers: len(bufs)}
		}
		static[i] = tir.PlanBuffer{Name: b.Name, Size: c, Live: b.Live}
	}
	offsets, stats := tir.PlanMemory(static)
	out := make([]tir.Expr, len(offsets))
	for i, o := range offsets {
		out[i] = tir.Int(o)
	}
	return tir.Int(stats.ArenaBytes), out, stats
}

// PlanSymbolic places buffers of symbolic sizes in slots, TFLite's
// "shared objects" strategy over expressions: buffers are taken in order
// of their first use; a buffer reuses a slot no live buffer holds when
// the slot is at least as large for every value of the symbols (the
// difference of the sizes is graphir.SymExpr.NonNegative; sizes equal
// exactly first), or grows such a slot it is at least as large as; else
// it opens a new slot. Slots lie one after another, each rounded up to
// ArenaAlign bytes (SymExpr.RoundUp), so buffers in different slots never
// overlap and buffers sharing a slot are never live at once. It returns
// the arena's size and each buffer's offset, expressions of the symbols.
func PlanSymbolic(bufs []SymPlanBuffer) (*graphir.SymExpr, []*graphir.SymExpr) {
	type slot struct {
		size *graphir.SymExpr
		free int // the last call a buffer in it is live at
	}
	var slots []*slot
	slotOf := make([]int, len(bufs))
	order := make([]int, len(bufs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return bufs[order[a]].Live.First < bufs[order[b]].Live.First })
	for _, i := range order {
		b := bufs[i]
		need := b.Bytes.RoundUp(tir.ArenaAlign)
		pick, grow := -1, false
		for j, s := range slots {
			if s.free >= b.Live.First {
				continue
			}
			switch {
			case s.size.Equal(need):
				pick, grow = j, false
			case pick < 0 && s.size.Sub(need).NonNegative():
				pick, grow = j, false
			case pick < 0 && need.Sub(s.size).NonNegative():
				pick, grow = j, true
			default:
				continue
			}
			if s.size.Equal(need) {
				break
			}
		}
		if pick < 0 {
			slots = append(slots, &slot{size: need})
			pick = len(slots) - 1
		} else if grow {
			slots[pick].size = need
		}
		slots[pick].free = b.Live.Last
		slotOf[i] = pick
	}
	starts := make([]*graphir.SymExpr, len(slots))
	end := graphir.SymConst(0)
	for j, s := range slots {
		starts[j] = end
		end = end.Add(s.size)
	}
	offsets := make([]*graphir.SymExpr, len(bufs))
	for i := range bufs {
		offsets[i] = starts[slotOf[i]]
	}
	return end, offsets
}
