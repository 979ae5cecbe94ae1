package tensorir_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/tensorir"
)

// bigFunc returns a function of n loop nests, each with a block.
func bigFunc(n int) string {
	var b strings.Builder
	b.WriteString("tir.func @big(%A: buffer<64x64xf32>, out %B: buffer<64x64xf32>) {\n")
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `  tir.for %%i%d = 0 to 64 parallel {
    tir.for %%j%d = 0 to 64 {
      tir.block "b%d"(%%vi%d = spatial(0:64, %%i%d), %%vj%d = spatial(0:64, %%j%d)) reads(%%A[%%vi%d, %%vj%d]) writes(%%B[%%vi%d, %%vj%d]) {
        %%B[%%vi%d, %%vj%d] = %%A[%%vi%d, %%vj%d] * 2.0 + exp(%%A[%%vj%d, %%vi%d])
      }
    }
  }
`, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i, i)
	}
	b.WriteString("}\n")
	return b.String()
}

func TestBigRoundTrip(t *testing.T) {
	src := bigFunc(200)
	m := tensorLevel.MustParse(t, src)
	require.Equal(t, src, tensorir.Print(m))
}

func BenchmarkParseVerify(b *testing.B) {
	tensorLevel.BenchmarkParseVerify(b, bigFunc(1000))
}

// BenchmarkInterpMatmul runs the interpreter on a 128×32×64 matmul
// (262,144 multiply-adds per op).
func BenchmarkInterpMatmul(b *testing.B) {
	m, err := tensorir.Parse("matmul.tir", []byte(matmulText))
	require.NoError(b, err)
	f := m.Funcs[0]
	arrays := map[string]*tensorir.Array{
		"A": tensorir.NewArray(tensorir.DF32, 128, 64), "B": tensorir.NewArray(tensorir.DF32, 64, 32), "C": tensorir.NewArray(tensorir.DF32, 128, 32)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		require.NoError(b, tensorir.Run(f, arrays))
	}
}
