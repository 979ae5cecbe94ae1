package cpu

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tessera-ml/tessera/targets/llvm"
)

// TestDot8: the instruction set for 8-bit dot products by processor name
// (the AVX-512 names also begin with AVX2 ones: skylake-avx512, skylake).
func TestDot8(t *testing.T) {
	for mcpu, want := range map[string]llvm.Dot8ISA{
		"sapphirerapids": llvm.Dot8AVX512VNNI, "icelake-server": llvm.Dot8AVX512VNNI, "znver4": llvm.Dot8AVX512VNNI,
		"skylake-avx512": llvm.Dot8AVX512BW, "x86-64-v4": llvm.Dot8AVX512BW,
		"alderlake": llvm.Dot8AVXVNNI, "meteorlake": llvm.Dot8AVXVNNI,
		"haswell": llvm.Dot8AVX2, "skylake": llvm.Dot8AVX2, "znver3": llvm.Dot8AVX2, "x86-64-v3": llvm.Dot8AVX2, "knl": llvm.Dot8AVX2,
		"x86-64": llvm.Dot8None, "nehalem": llvm.Dot8None,
	} {
		assert.Equal(t, want, Dot8(mcpu), mcpu)
	}
	assert.Equal(t, llvm.HostDot8(), Dot8(""))
	assert.True(t, llvm.HostHas(Dot8("")))
}
