//go:build !amd64

package runtime

import "sync"

// evictBytes is larger than the last-level cache of the CPUs Tessera
// targets; writing all of it displaces everything cached before.
const evictBytes = 256 << 20

var (
	evictMu  sync.Mutex
	evictBuf []byte
)

// FlushCache evicts b's bytes from the CPU cache so the next access reads
// them from memory. Without a portable cache-line flush instruction it
// writes a 256 MiB scratch buffer, displacing every cache level (b among
// them) by capacity.
func FlushCache(b []byte) {
	if len(b) == 0 {
		return
	}
	evictMu.Lock()
	defer evictMu.Unlock()
	if evictBuf == nil {
		evictBuf = make([]byte, evictBytes)
	}
	for i := 0; i < len(evictBuf); i += 64 {
		evictBuf[i]++
	}
}
