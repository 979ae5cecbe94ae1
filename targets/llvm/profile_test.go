package llvm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestProfileProbes: Options.Profile puts two clock reads and an event
// record around every tir.call, names the sites, exports the count and
// the event array, and leaves the results unchanged; without it the
// module has no probes.
func TestProfileProbes(t *testing.T) {
	m := parseModule(t, hostText)
	so, res := buildShared(t, m, Options{StrictFP: true, Profile: true, Prefix: "p"})
	ll := res.LLVM()
	assert.Equal(t, []string{"dense", "relu", "relu", "relu", "head"}, res.ProfileSites)
	assert.Equal(t, 10, strings.Count(ll, "call i32 @clock_gettime("))
	assert.Contains(t, ll, "@p_profile_count = global i64 0")
	assert.Contains(t, ll, "@p_profile_events = global [65536 x [3 x i64]] zeroinitializer")
	checkHostShared(t, m, so, "p_main", 13, "TESSERA_NUM_THREADS=2")

	_, plain := buildShared(t, m, Options{StrictFP: true})
	assert.NotContains(t, plain.LLVM(), "clock_gettime")
	assert.Empty(t, plain.ProfileSites)
	c, e := ProfileSymbols("")
	assert.Equal(t, []string{"tessera_profile_count", "tessera_profile_events"}, []string{c, e})
}
