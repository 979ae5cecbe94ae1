package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live, held int64
		want       int
	}{
		{100 * mb, 0, 100},       // nothing held: the default
		{64 * mb, 48 * mb, 25},   // 16 MB of other in 64
		{62 * mb, 47 * mb, 25},   // other below MinOther counts as MinOther
		{150 * mb, 50 * mb, 66},  // 100 MB of other in 150
		{400 * mb, 398 * mb, 10}, // the floor
		{10 * mb, 9 * mb, 100},   // a heap smaller than MinOther
	} {
		assert.Equal(t, c.want, Percent(c.live, c.held), "live %d MB, held %d MB", c.live/mb, c.held/mb)
	}
}

// gcPercent reads GOGC's current value.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

// TestHoldPacesAndRestores: while 64 MB are held, the collections set
// GOGC from the live heap; releasing every Hold restores the value before
// the first, and a second release does nothing.
func TestHoldPacesAndRestores(t *testing.T) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		t.Skip("GOGC or GOMEMLIMIT is set: pacing is off")
	}
	before := gcPercent()
	weights := make([]byte, 64<<20)
	release := HoldLive()
	inner := Hold(1 << 20)
	deadline := time.Now().Add(5 * time.Second)
	for gcPercent() == before && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	p := gcPercent()
	require.Less(t, p, 50, "64 MB held of a heap of little more: GOGC follows the rest")
	require.GreaterOrEqual(t, p, 10)
	inner()
	inner()
	release()
	assert.Equal(t, before, gcPercent())
	runtime.KeepAlive(weights)
}
