package llvm

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// A padded 1-D "convolution" row read through clamped indices (the
// lowering's form of padding): clamp(w + k - 1, 0, 9) with w vectorized
// is a masked vector load plus the edge elements, not a gather; the
// clamp bounds 2..6 (not the whole row) and a predicated tail (extent
// 12 in 8 lanes) are covered too. Results are exact against the
// interpreter.
const clampText = `tir.func @clamp(%X: buffer<3x10xf32>, out %Y: buffer<3x3x12xf32>, out %Z: buffer<3x10xf32>) {
  tir.for %r = 0 to 3 {
    tir.for %k = 0 to 3 {
      tir.for %wo = 0 to 2 {
        tir.for %wi = 0 to 8 vectorized {
          tir.if %wo * 8 + %wi < 12 {
            %Y[%r, %k, %wo * 8 + %wi] = select(%wo * 8 + %wi + %k - 1 >= 0 && %wo * 8 + %wi + %k - 1 < 10, %X[%r, min(max(%wo * 8 + %wi + %k - 1, 0), 9)], 0.0) + %X[%r, max(min(%wo * 8 + %wi - 3, 6), 2)]
          }
        }
      }
    }
    tir.for %w = 0 to 10 vectorized {
      %Z[%r, %w] = %X[%r, min(max(%w - 1, 0), 9)] * 2.0
    }
  }
}
`

func TestClampedVectorLoad(t *testing.T) {
	res, _ := checkAgainstInterp(t, parseModule(t, clampText), "clamp", Options{}, 3, 0)
	ll := res.LLVM()
	assert.Contains(t, ll, "@llvm.masked.load.v8f32.p0v8f32")
	assert.Contains(t, ll, "@llvm.masked.load.v10f32.p0v10f32")
	assert.NotContains(t, ll, "extractelement <8 x i64>", "no gather")
}

// The flat index of C[i, j] (4×16, row-major) splits into the row and
// column terms that lane0Ptr addresses with one getelementptr each.
// A stride-2 padded row (a strided convolution's or pooling's input,
// clamp(2·w + k - 3, 0, 20)), a stride-3 one with a predicated tail, and
// the one-sided clamps simplification leaves (max-pooling's
// max(2·w - 1, 0), and min(w + 12, 20)):
// a masked load of lanes·stride elements and a shuffle, not a gather;
// exact against the interpreter.
const clampStridedText = `tir.func @clamp_strided(%X: buffer<2x21xf32>, out %Y: buffer<2x7x11xf32>, out %Z: buffer<2x3x8xf32>, out %W: buffer<2x11xf32>) {
  tir.for %r = 0 to 2 {
    tir.for %w = 0 to 11 vectorized {
      %W[%r, %w] = %X[%r, max(%w * 2 - 1, 0)] + %X[%r, min(%w + 12, 20)]
    }
    tir.for %k = 0 to 7 {
      tir.for %w = 0 to 11 vectorized {
        %Y[%r, %k, %w] = select(%w * 2 + %k - 3 >= 0 && %w * 2 + %k - 3 < 21, %X[%r, min(max(%w * 2 + %k - 3, 0), 20)], 0.0)
      }
    }
    tir.for %k = 0 to 3 {
      tir.for %wo = 0 to 2 {
        tir.for %wi = 0 to 4 vectorized {
          tir.if %wo * 4 + %wi < 8 {
            %Z[%r, %k, %wo * 4 + %wi] = %X[%r, max(min(%wo * 12 + %wi * 3 + %k - 2, 19), 1)]
          }
        }
      }
    }
  }
}
`

func TestClampedStridedVectorLoad(t *testing.T) {
	res, _ := checkAgainstInterp(t, parseModule(t, clampStridedText), "clamp_strided", Options{}, 5, 0)
	ll := res.LLVM()
	assert.Contains(t, ll, "@llvm.masked.load.v22f32.p0v22f32", "11 lanes × stride 2")
	assert.Contains(t, ll, "@llvm.masked.load.v12f32.p0v12f32", "4 lanes × stride 3")
	assert.NotContains(t, ll, "extractelement <11 x i64>", "no gather")
	assert.NotContains(t, ll, "extractelement <4 x i64>", "no gather")
}

func TestFlatIndexAddends(t *testing.T) {
	m := parseModule(t, `tir.func @f(out %C: buffer<4x16xf32>) {
  tir.for %i = 0 to 4 {
    tir.for %j = 0 to 16 vectorized {
      %C[%i, %j] = 1.0
    }
  }
}
`)
	f := m.Func("f")
	var st *tir.BufferStore
	walkStmt(f.Body, func(s tir.Stmt) {
		if x, ok := s.(*tir.BufferStore); ok {
			st = x
		}
	}, nil)
	terms := addends(flatIndex(st.Buffer, st.Indices))
	require.Len(t, terms, 2)
	row, ok := terms[0].(*tir.Binary)
	require.True(t, ok)
	assert.Equal(t, tir.OpMul, row.Op)
	col, ok := terms[1].(*tir.Var)
	require.True(t, ok)
	assert.Equal(t, "j", col.Name)
	res, _ := checkAgainstInterp(t, m, "f", Options{}, 1, 0)
	assert.Contains(t, res.LLVM(), "store <16 x float>")
}
