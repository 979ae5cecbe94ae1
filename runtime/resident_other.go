//go:build !linux

package runtime

// keepRuntimeLibsResident is a no-op outside Linux, where the glibc
// RTLD_NOLOAD|RTLD_NODELETE promotion it relies on is not used.
func keepRuntimeLibsResident() {}
