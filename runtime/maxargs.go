//go:build !ppc64le

package runtime

// MaxTensors is the largest number of tensor arguments (inputs plus
// outputs) an entry point may take: purego.SyscallN passes at most 32
// arguments on this platform (15 on ppc64le). Func rejects larger
// signatures with an error.
const MaxTensors = 32
