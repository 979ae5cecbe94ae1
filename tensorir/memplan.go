package tensorir

import (
	"fmt"
	"sort"
)

// Memory planning of the host function's intermediate tensors: every
// tensor passed between kernels lives in one arena, at a byte offset
// chosen so that tensors alive at the same time never share bytes while
// tensors with disjoint lifetimes reuse the same memory.
//
// The algorithm is greedy-by-size with best fit, the strategy of
// TensorFlow Lite Micro's GreedyMemoryPlanner
// (tensorflow/lite/micro/memory_planner/greedy_memory_planner.cc) and of
// TVM's USMP `greedy_by_size` (python/tvm/tir/usmp/algorithms/greedy.py):
// buffers are placed in decreasing size order (ties: earlier first use,
// then definition order); each goes into the smallest gap between the
// already placed buffers whose lifetimes overlap its own that is large
// enough, or after the last of them. Sizes are rounded up to
// ArenaAlign (64) bytes, so every offset is 64-byte aligned.

// Lifetime is the inclusive interval of kernel-call indices during which
// a buffer holds a live value: from the call that writes it to the last
// call that reads it.
type Lifetime struct {
	First, Last int
}

// Overlaps reports whether a and b share a call.
func (a Lifetime) Overlaps(b Lifetime) bool { return a.First <= b.Last && b.First <= a.Last }

// PlanBuffer is one buffer to place: its size in bytes and its lifetime.
type PlanBuffer struct {
	Name string
	Size int64
	Live Lifetime
}

// PlanStats summarizes a memory plan: ArenaBytes is the arena size the
// plan needs, NaiveBytes what one allocation per buffer would need (the
// sum of the aligned sizes), Buffers the number of buffers placed.
type PlanStats struct {
	ArenaBytes int64
	NaiveBytes int64
	Buffers    int
}

// Add sums another function's plan statistics into s.
func (s *PlanStats) Add(o PlanStats) {
	s.ArenaBytes += o.ArenaBytes
	s.NaiveBytes += o.NaiveBytes
	s.Buffers += o.Buffers
}

func (s PlanStats) String() string {
	saved := 0.0
	if s.NaiveBytes > 0 {
		saved = 100 * float64(s.NaiveBytes-s.ArenaBytes) / float64(s.NaiveBytes)
	}
	return fmt.Sprintf("arena %d bytes for %d buffers (naive %d bytes, %.1f%% saved)", s.ArenaBytes, s.Buffers, s.NaiveBytes, saved)
}

func alignUp(n int64) int64 {
	const a = ArenaAlign
	return (n + a - 1) / a * a
}

// PlanMemory places bufs and returns their byte offsets (in bufs' order)
// and the plan's statistics. Buffers whose lifetimes overlap never
// overlap in memory.
func PlanMemory(bufs []PlanBuffer) ([]int64, PlanStats) {
	offsets := make([]int64, len(bufs))
	stats := PlanStats{Buffers: len(bufs)}
	order := make([]int, len(bufs))
	for i := range order {
		order[i] = i
		stats.NaiveBytes += alignUp(bufs[i].Size)
	}
	sort.SliceStable(order, func(a, b int) bool {
		x, y := bufs[order[a]], bufs[order[b]]
		if alignUp(x.Size) != alignUp(y.Size) {
			return alignUp(x.Size) > alignUp(y.Size)
		}
		return x.Live.First < y.Live.First
	})
	var placed []int
	for _, i := range order {
		size := alignUp(bufs[i].Size)
		var live []int
		for _, j := range placed {
			if bufs[j].Live.Overlaps(bufs[i].Live) {
				live = append(live, j)
			}
		}
		sort.Slice(live, func(a, b int) bool { return offsets[live[a]] < offsets[live[b]] })
		best, bestGap := int64(-1), int64(-1)
		end := int64(0) // end of the occupied prefix so far
		for _, j := range live {
			if gap := offsets[j] - end; gap >= size && (bestGap < 0 || gap < bestGap) {
				best, bestGap = end, gap
			}
			end = max(end, offsets[j]+alignUp(bufs[j].Size))
		}
		if best < 0 {
			best = end
		}
		offsets[i] = best
		stats.ArenaBytes = max(stats.ArenaBytes, best+size)
		placed = append(placed, i)
	}
	return offsets, stats
}
