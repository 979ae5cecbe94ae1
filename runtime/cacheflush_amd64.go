package runtime

import "unsafe"

// clflushRange evicts [p, p+n) from every cache level (cacheflush_amd64.s).
//
//go:noescape
func clflushRange(p unsafe.Pointer, n uintptr)

// FlushCache evicts b's bytes from every level of the CPU cache, so the
// next access reads them from memory: one CLFLUSH per 64-byte line, then
// MFENCE (TVM's CPUCacheFlush, which its LocalRunner applies before each
// timed repeat when enable_cpu_cache_flush is set).
func FlushCache(b []byte) {
	if len(b) > 0 {
		clflushRange(unsafe.Pointer(&b[0]), uintptr(len(b)))
	}
}
