package tensorir

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func checkPlan(t *testing.T, bufs []PlanBuffer, offs []int64, st PlanStats) {
	t.Helper()
	require.Len(t, offs, len(bufs))
	assert.Equal(t, len(bufs), st.Buffers)
	var naive, peak int64
	for i, b := range bufs {
		assert.Zero(t, offs[i]%ArenaAlign, "buffer %d offset %d", i, offs[i])
		assert.GreaterOrEqual(t, offs[i], int64(0))
		assert.LessOrEqual(t, offs[i]+b.Size, st.ArenaBytes, "buffer %d ends past the arena", i)
		naive += alignUp(b.Size)
		for j := 0; j < i; j++ {
			c := bufs[j]
			if !b.Live.Overlaps(c.Live) || b.Size == 0 || c.Size == 0 {
				continue
			}
			disjoint := offs[i]+b.Size <= offs[j] || offs[j]+c.Size <= offs[i]
			assert.True(t, disjoint, "live buffers %d %v [%d,+%d) and %d %v [%d,+%d) overlap", i, b.Live, offs[i], b.Size, j, c.Live, offs[j], c.Size)
		}
	}
	assert.Equal(t, naive, st.NaiveBytes)
	// The arena is at least the largest simultaneous live set.
	for step := 0; step < 64; step++ {
		var live int64
		for _, b := range bufs {
			if b.Live.First <= step && step <= b.Live.Last {
				live += b.Size
			}
		}
		peak = max(peak, live)
	}
	assert.GreaterOrEqual(t, st.ArenaBytes, peak)
}

func TestPlanMemoryRandom(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := 0; trial < 300; trial++ {
		n := rng.Intn(12)
		bufs := make([]PlanBuffer, n)
		for i := range bufs {
			first := rng.Intn(20)
			bufs[i] = PlanBuffer{Size: int64(rng.Intn(5000)), Live: Lifetime{first, first + rng.Intn(6)}}
		}
		offs, st := PlanMemory(bufs)
		checkPlan(t, bufs, offs, st)
	}
}

// A LeNet-shaped chain (each tensor read only by the next kernel) needs
// two buffers' worth of memory, not all of them.
func TestPlanMemoryChain(t *testing.T) {
	sizes := []int64{37632, 9408, 12800, 3200, 960, 672}
	bufs := make([]PlanBuffer, len(sizes))
	var naive int64
	for i, s := range sizes {
		bufs[i] = PlanBuffer{Size: s, Live: Lifetime{i, i + 1}}
		naive += alignUp(s)
	}
	offs, st := PlanMemory(bufs)
	checkPlan(t, bufs, offs, st)
	assert.Less(t, st.ArenaBytes, naive)
	assert.Equal(t, alignUp(37632)+alignUp(9408), st.ArenaBytes) // optimal: the peak is t0 and t1 live together
	assert.Contains(t, st.String(), "arena 47040 bytes for 6 buffers")
}

func TestPlanMemoryEmpty(t *testing.T) {
	offs, st := PlanMemory(nil)
	assert.Empty(t, offs)
	assert.Equal(t, PlanStats{}, st)
}
