// Package llvm is the CPU target's code generation: it compiles scheduled
// Tessera tensor IR (package tensorir) to x86-64 object code. Each PrimFunc
// becomes an LLVM function built with github.com/llir/llvm, the module is
// optimised with opt-16 and compiled with llc-16 to a relocatable object
// (.o) or assembly, and linked with GNU ld into a shared object (.so).
// It does not schedule or transform the tensor IR: the schedule rules are
// schedule.CPURules and the post-schedule passes run in the pipeline
// (targets/cpu wires them into a targets.Target).
//
// The files follow the construct families: module.go (functions, the
// exported C ABI), artifact.go (Result as a targets.Artifact),
// codegen_func.go (per-function state), codegen_expr.go, codegen_stmt.go,
// codegen_block.go, codegen_loop.go, codegen_vector.go,
// codegen_parallel.go, mathfns.go (intrinsics; polynomial
// exp/tanh/sigmoid/erf), toolchain.go (opt/llc, GNU as/ld/objcopy), header.go (the C
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
	// Dot8 is the instruction set code generation turns the int8 rule's
	// 8-bit dot-product nests into (codegen_vnni.go); Dot8None widens
	// them as plain vectors. Set it only to one the processor has
	// (targets/cpu.Dot8).
	Dot8 Dot8ISA
	// compactAt, when positive, replaces compactInstructions (compact.go;
	// for tests).
	compactAt int
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

// Dot8ISA is an instruction set for the int8 rule's step, vpdpbusd's
// semantics (16 i32 lanes, each += the sum of 4 u8·s8 products, exact):
// natively on 512-bit (AVX-512 VNNI) or 256-bit vectors (AVX-VNNI's
// VEX-encoded vpdpbusd, two per step), or emulated exactly with
// vpmaddubsw and vpmaddwd (AVX-512BW, or AVX2 on 256-bit halves).
type Dot8ISA int

const (
	Dot8None       Dot8ISA = iota // plain vectors (widened i32 multiply-adds)
	Dot8AVX2                      // vpmaddubsw + vpmaddwd, 256-bit halves (haswell, znver1-3)
	Dot8AVXVNNI                   // {vex} vpdpbusd, 256-bit halves (alderlake)
	Dot8AVX512BW                  // vpmaddubsw + vpmaddwd, 512-bit (skylake-avx512)
	Dot8AVX512VNNI                // vpdpbusd, 512-bit (cascadelake, icelake, sapphirerapids)
)

// String is the ISA's /proc/cpuinfo flag ("none" for Dot8None).
func (d Dot8ISA) String() string {
	if d == Dot8None {
		return "none"
	}
	return strings.TrimSpace(dot8Flags[d])
}

// Bits is the vector width in bits the ISA's instructions work on.
func (d Dot8ISA) Bits() int {
	if d >= Dot8AVX512BW {
		return 512
	}
	return 256
}

// dot8Flags are the /proc/cpuinfo flags of each Dot8ISA.
var dot8Flags = [...]string{Dot8AVX2: " avx2", Dot8AVXVNNI: " avx_vnni", Dot8AVX512BW: " avx512bw", Dot8AVX512VNNI: " avx512_vnni"}

// HostDot8 is the best Dot8ISA this machine's /proc/cpuinfo lists.
func HostDot8() Dot8ISA {
	for d := Dot8AVX512VNNI; d > Dot8None; d-- {
		if HostHas(d) {
			return d
		}
	}
	return Dot8None
}

// HostHas reports whether this machine runs code using isa (Dot8None:
// always).
func HostHas(isa Dot8ISA) bool { return isa == Dot8None || hostHas(dot8Flags[isa]) }

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
