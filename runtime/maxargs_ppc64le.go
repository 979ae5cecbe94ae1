//go:build ppc64le

package runtime

// MaxTensors is the largest number of tensor arguments (inputs plus
// outputs) an entry point may take: purego.SyscallN passes at most 15
// arguments on ppc64le (32 elsewhere). Func rejects larger signatures with
// an error.
const MaxTensors = 15
