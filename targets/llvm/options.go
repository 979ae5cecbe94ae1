// Package llvm is the CPU target's code generation: it compiles scheduled
// Tessera tensor IR (package tensorir) to x86-64 object code. Each PrimFunc
// becomes an LLVM function built with github.com/llir/llvm, the module is
// optimised with opt-16 and compiled with llc-16 to a relocatable object
// (.o) or assembly, and linked with ld.lld-16 into a shared object (.so).
// It does not schedule or transform the tensor IR: the schedule rules are
// schedule.CPURules and the post-schedule passes run in the pipeline
// (targets/cpu wires them into a targets.Target).
//
// The files follow the construct families: module.go (functions, the
// exported C ABI), artifact.go (Result as a targets.Artifact),
// codegen_func.go (per-function state), codegen_expr.go, codegen_stmt.go,
// codegen_block.go, codegen_loop.go, codegen_vector.go,
// codegen_parallel.go, mathfns.go (intrinsics; polynomial
// exp/tanh/sigmoid/erf), toolchain.go (opt/llc/ld.lld), header.go (the C
// header). README.md describes the design.
package llvm

import (
	"os"
	"strings"
)

// Options control code generation and the toolchain.
type Options struct {
	// MCPU is passed to llc-16 as -mcpu (and opt-16 as -mcpu); "" means
	// "native". LLVM 16 does not know Zen 5 by name: use x86-64-v4 or znver4.
	MCPU string
	// Prefix, when non-empty, renames every exported entry point to
	// <Prefix>_<PrimFunc name> (the DESIGN.md ABI: lenet5_main); when empty
	// an entry is exported under its global_symbol attribute.
	Prefix string
	// OptLevel is the opt-16 pipeline run before llc-16: 0 means -O3, 1..3
	// mean -O1..-O3 and a negative value skips opt (llc-16 -O3 alone does no
	// inlining, mem2reg or loop-invariant code motion).
	OptLevel int
	// StrictFP turns floating-point contraction off. By default llc-16 runs
	// with -fp-contract=fast: a multiply feeding an add becomes one fused
	// multiply-add (one rounding instead of two), as TVM's and XLA's CPU
	// backends do, so results may differ from the interpreter's in the last
	// bits (relative error of order 1e-7 per product for f32). With StrictFP
	// the compiled code performs the interpreter's f32 operations in its
	// order and the results are bit-identical.
	StrictFP bool
	// Profile instruments every tir.call of a host function with
	// timestamp probes (profile.go; --profile). It changes no kernel.
	Profile bool
	// VNNI lets code generation use AVX-512 VNNI's vpdpbusd for the 8-bit
	// dot products the int8 schedule rule lays out (codegen_vnni.go). Set
	// it only for a processor that has the instruction (targets/cpu.HasVNNI).
	VNNI bool
	// AVX512BW, without VNNI, emulates vpdpbusd exactly with AVX-512BW's
	// vpmaddubsw and vpmaddwd (codegen_vnni.go's dotBW; targets/cpu.HasAVX512BW).
	AVX512BW bool
}

// fpContract is llc-16's -fp-contract flag for these options.
func (o Options) fpContract() string {
	if o.StrictFP {
		return "-fp-contract=off"
	}
	return "-fp-contract=fast"
}

func (o Options) mcpu() string {
	if o.MCPU == "" {
		return "native"
	}
	return o.MCPU
}

// HostHasVNNI reports whether this machine's /proc/cpuinfo lists
// avx512_vnni (vpdpbusd on 512-bit vectors).
func HostHasVNNI() bool { return hostHas(" avx512_vnni") }

// HostHasAVX512BW reports whether this machine's /proc/cpuinfo lists
// avx512bw (byte and word instructions on 512-bit vectors).
func HostHasAVX512BW() bool { return hostHas(" avx512bw") }

// hostHas reports whether /proc/cpuinfo contains flag.
func hostHas(flag string) bool {
	data, err := os.ReadFile("/proc/cpuinfo")
	return err == nil && strings.Contains(string(data), flag)
}

// HostVectorBits is the SIMD register width in bits of this machine: 512
// when /proc/cpuinfo lists avx512f, 256 when it lists avx2, else 128.
// The default schedule uses it to pick vector lanes (512/32 = 16 f32 lanes
// on AVX-512).
func HostVectorBits() int {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return 128
	}
	s := string(data)
	switch {
	case strings.Contains(s, " avx512f"):
		return 512
	case strings.Contains(s, " avx2"):
		return 256
	}
	return 128
}
