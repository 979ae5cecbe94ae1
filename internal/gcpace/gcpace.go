// Package gcpace paces Go's garbage collector for a process that holds a
// large, long-lived set of bytes: a model's weights while Tessera
// compiles it, from the import to the emitted object.
//
// With GOGC=100 the collector lets the heap grow to twice what was live
// after the last collection, weights included, so a compile whose live
// heap is 47 MB of ResNet-18 weights and 15 MB of IR peaks near 125 MB of
// heap. Held bytes stay live whatever the collector does, and the weights
// hold no pointers, so a collection marks them without scanning them:
// headroom for them buys nothing. gcpace gives headroom only for the rest.
// After every collection it sets GOGC to 100·other/live, where other is
// the live heap less the held bytes (at least MinOther), so the heap
// grows to about held + 2·other: a collection runs after as many bytes of
// allocation as GOGC=100 would allow a program holding only the rest,
// which costs about as much collector work as that program does. (The
// collector's own remedy, a memory limit, thrashes when the live heap
// reaches it, and a compile's IR can outgrow any limit set from the
// weights: MobileNetV2's 14 MB of weights come with 70 MB of IR.)
//
// GOGC or GOMEMLIMIT set in the environment turn the pacing off: the
// user's settings win.
package gcpace

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// MinOther is the least headroom, in bytes, gcpace leaves besides the
// held bytes: a heap of little more than the held bytes would otherwise
// be collected after every few allocations.
const MinOther = 16 << 20

var (
	mu    sync.Mutex
	held  int64 // bytes held by the Holds not yet released
	armed bool  // a sentinel awaits the next collection
	base  int   // GOGC before the first Hold, restored when nothing is held
)

// Hold declares that n bytes of the live heap stay live until release is
// called (idempotent), and paces the collector as the package comment
// says while any bytes are held. Holds add up.
func Hold(n int64) (release func()) {
	if n <= 0 || os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	mu.Lock()
	defer mu.Unlock()
	if held == 0 {
		base = debug.SetGCPercent(100)
		debug.SetGCPercent(base)
	}
	held += n
	if !armed {
		armed = true
		arm()
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			defer mu.Unlock()
			if held -= n; held == 0 {
				debug.SetGCPercent(base)
			}
		})
	}
}

// HoldLive collects garbage and holds the whole live heap (see Hold):
// called right after a model is loaded, it holds the weights and the
// graph.
func HoldLive() (release func()) {
	runtime.GC()
	return Hold(liveHeap())
}

// sentinel is an object whose finalizer runs after each collection
// (large enough not to be a tiny allocation, whose finalizers may be
// batched).
type sentinel struct{ _ [32]byte }

// arm allocates a sentinel whose finalizer paces the collector and arms
// the next one while bytes are held.
func arm() {
	runtime.SetFinalizer(new(sentinel), func(*sentinel) {
		mu.Lock()
		defer mu.Unlock()
		if held == 0 {
			armed = false
			return
		}
		debug.SetGCPercent(Percent(liveHeap(), held))
		arm()
	})
}

// Percent is the GOGC value for a live heap of live bytes of which held
// are held: 100·other/live with other = max(live − held, MinOther),
// between 10 and 100.
func Percent(live, held int64) int {
	other := max(live-held, MinOther)
	if live <= 0 || other >= live {
		return 100
	}
	return max(10, int(100*other/live))
}

// liveHeap is the heap's live bytes as of the last collection.
func liveHeap() int64 {
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return int64(ms.HeapAlloc)
	}
	return int64(s[0].Value.Uint64())
}
