package tensorir_test

import (
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"

	tir "github.com/tessera-ml/tessera/tensorir"
)

const matmulText = `tir.func @matmul(%A: buffer<128x64xf32>, %B: buffer<64x32xf32>, out %C: buffer<128x32xf32>) attributes {global_symbol = "matmul", tessera.kernel} {
  tir.for %i = 0 to 128 parallel {
    tir.for %j = 0 to 32 {
      tir.for %k = 0 to 64 {
        tir.block "C"(%vi = spatial(0:128, %i), %vj = spatial(0:32, %j), %vk = reduce(0:64, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {
          tir.init {
            %C[%vi, %vj] = 0.0
          }
          %C[%vi, %vj] = %C[%vi, %vj] + %A[%vi, %vk] * %B[%vk, %vj]
        }
      }
    }
  }
}
`

// roundTripCases hold every construct of the text form; each is printed
// exactly as written (the canonical form).
var roundTripCases = map[string]string{
	"matmul": matmulText,
	"unsigned and 16-bit dtypes, shifts": `tir.func @u(%A: buffer<8xui8>, %W: buffer<8xui64>, out %B: buffer<8xui8>, out %S: buffer<8xi16>, out %H: buffer<8xf16>, out %V: buffer<8xui64>) {
  tir.for %i = 0 to 8 {
    %B[%i] = shl(%A[%i], 3 : ui8) + shr(%A[%i], 255 : ui8)
    %S[%i] = shr(cast<i16>(%A[%i]), 2 : i16) - -32768 : i16
    %H[%i] = cast<f16>(floordiv(%W[%i], 18446744073709551615 : ui64))
    %V[%i] = max(%W[%i], 9223372036854775808 : ui64)
  }
}
`,
	"loop kinds and annotations": `tir.func @kinds(inout %X: buffer<64xf32>) {
  tir.for %a = 0 to 4 parallel annotations {pragma = "x", unroll_depth = 2} {
    tir.for %b = 0 to 4 unrolled {
      tir.for %c = 0 to 4 vectorized {
        %X[%a * 16 + %b * 4 + %c] = %X[%a * 16 + %b * 4 + %c] * 2.0
      }
    }
  }
  tir.for %bx = 0 to 2 thread_binding("blockIdx.x") {
    tir.for %tx = 0 to 32 thread_binding("threadIdx.x") {
      %X[%bx * 32 + %tx] = 1.0
    }
  }
  tir.for %v = 0 to 1 thread_binding("vthread") {
    %X[%v] = 0.0
  }
}
`,
	"ranges with non-zero and symbolic bounds": `tir.func @ranges(%n: index, %m: i32, out %Y: buffer<(%n)x8xf32, strides = [8, 1], offset = 0, align = 64>) {
  tir.for %i = 2 to 6 {
    tir.for %j = %i to %i + 2 {
      %Y[%j, 0] = 1.0
    }
  }
  tir.for %k = 0 to %n {
    tir.for %l = 1 : i32 to 1 : i32 + %m {
      %Y[%k, 1] = cast<f32>(%l)
    }
  }
  tir.for %p = 0 : i32 to 4 : i32 {
    %Y[0, cast<index>(%p)] = 2.0
  }
}
`,
	"block forms": `tir.func @blocks(%A: buffer<10x16xf32>, out %S: buffer<10xf32>) {
  tir.block "root"() alloc(%T: buffer<10x16xf32, "shared">) {
    tir.for %i = 0 to 3 {
      tir.for %j = 0 to 4 {
        tir.block "tail"(%vi = spatial(0:10, %i * 4 + %j)) where(%i * 4 + %j < 10) reads(%A[%vi, 0:16]) writes(%T[%vi, 0:16]) annotations {tessera.note = 1} {
          tir.for %k = 0 to 16 {
            %T[%vi, %k] = %A[%vi, %k]
          }
        }
      }
    }
    tir.for %r = 0 to 10 {
      tir.for %s = 0 to 16 {
        tir.block "sum"(%vr = spatial(0:10, %r), %vs = reduce(0:16, %s)) reads(%T[%vr, %vs]) writes(%S[%vr]) annotations {tessera.accumulate} {
          %S[%vr] = %S[%vr] + %T[%vr, %vs]
        }
      }
    }
  }
}
`,
	"statements": `tir.func @stmts(%A: buffer<16xi32>, out %B: buffer<16xi32>, %F: buffer<f64>) {
  tir.allocate %L: buffer<4xi32, "local"> {
    tir.for %i = 0 to 16 {
      tir.let %x = %A[%i] * 2 : i32 + 1 : i32 {
        tir.if %x > 10 : i32 && !(%x == 13 : i32) || %i < 2 {
          %L[floormod(%i, 4)] = %x
        } else {
          %L[floormod(%i, 4)] = floordiv(%x, 3 : i32)
        }
        tir.if %i >= 15 {
          %B[%i] = min(%L[0], max(%L[1], -3 : i32))
        }
        %B[%i] = select(%i != 4, %L[3], abs(%x - 100 : i32))
      }
      tir.evaluate %i + 1
    }
  }
  %F[] = 2.5 : f64
}
`,
	"expressions": `tir.func @exprs(%X: buffer<8xf32>, out %Y: buffer<8xf32>, out %H: buffer<8xf16>, out %G: buffer<8xbf16>, out %Q: buffer<8xi8>, out %K: buffer<8xi1>) {
  tir.for %i = 0 to 8 {
    %Y[%i] = exp(%X[%i]) + log(%X[%i]) - sqrt(%X[%i]) * rsqrt(%X[%i]) / tanh(%X[%i])
    %Y[%i] = sigmoid(%X[%i]) - erf(%X[%i]) + abs(%X[%i]) + pow(%X[%i], 2.0) + fma(%X[%i], 0.5, -1.25)
    %Y[%i] = (%X[%i] - 1.0) * (%X[%i] + 1.0) - (%X[%i] - (%X[%i] - 3.0))
    %Y[%i] = 0x7F800000 : f32 + 0xFF800000 : f32 + 0x7FC00000 : f32 - -0.0 + 1.0e+30 + 1.0e-07 + 3.4028235e+38
    %H[%i] = cast<f16>(%X[%i]) * 0.33325195 : f16 + 0x7C00 : f16
    %G[%i] = cast<bf16>(%X[%i]) + 1.5 : bf16
    %Q[%i] = cast<i8>(%X[%i]) + -128 : i8
    %K[%i] = (%X[%i] < 0.5) == (%X[%i] >= 2.0) || true && !false
    %K[%i] = (select(floordiv(%i, 2) * 2 == %i, 1.5e+300 : f64, -1.0 : f64) > 0.0 : f64) == (floormod(%i - 9223372036854775807, 3) <= -9223372036854775807 - 1)
  }
}
`,
	"names needing renames and nesting": `tir.func @"quoted name"(%in.x: buffer<4xf32>, out %o-1: buffer<4xf32>) {
  tir.for %i = 0 to 4 {
    %o-1[%i] = %in.x[%i]
  }
  tir.for %i = 0 to 4 {
    tir.if %i == 0 {
    } else {
      %o-1[%i] = 1.0
    }
  }
}

tir.func @second() {
}
`,
}

func TestRoundTrip(t *testing.T) {
	names := make([]string, 0, len(roundTripCases))
	for n := range roundTripCases {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		src := roundTripCases[name]
		t.Run(name, func(t *testing.T) {
			assert.Equal(t, src, tensorLevel.RoundTrip(t, src))
		})
	}
}

// TestRegionEndStartingWithCall: a region whose start ends in a number
// literal and whose end starts with a call is printed with the end in
// parentheses (else the parser reads "-1:floormod" as a literal of dtype
// floormod), and the printed text parses back to the same text.
func TestRegionEndStartingWithCall(t *testing.T) {
	src := `tir.func @f(%A: buffer<8xf32>, out %B: buffer<8xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 4 {
    tir.block "b"(%v = spatial(0:4, %i)) reads(%A[floormod(%i, 2) * -1:(floormod(%i, 2) * -1 + 2)]) writes(%B[%v]) {
      %B[%v] = %A[%v]
    }
  }
}
`
	m, err := tir.ParseString("r.tir", src)
	if !assert.NoError(t, err) {
		return
	}
	text := tir.Print(m)
	assert.Contains(t, text, "%A[floormod(%i, 2) * -1:(floormod(%i, 2) * -1 + 2)]")
	again, err := tir.ParseString("r2.tir", text)
	if assert.NoError(t, err) {
		assert.Equal(t, text, tir.Print(again))
	}
}
