package llvm

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// tailTileText is a register tile in the shape the default rules give a
// 20-wide row of outputs in 8-lane vectors: a local accumulator of 3 rows
// of 20, its last vector of each row a guarded tail, accumulated over %k
// and copied out. PRED is the accumulation's and the copy's predicate and
// INIT fills the tile first (outside the lane mask), so that lanes a
// wrong unmasked store would clobber are read by the copy.
const tailTileText = `tir.func @tail(%X: buffer<3x7x24xf32>, out %Y: buffer<3x20xf32>) {
  tir.allocate %T: buffer<3x20xf32, "local"> {
    tir.for %r0 = 0 to 3 {
      tir.for %c0 = 0 to 20 {
        tir.block "fill"(%fr = spatial(0:3, %r0), %fc = spatial(0:20, %c0)) reads() writes(%T[%fr, %fc]) {
          %T[%fr, %fc] = INIT
        }
      }
    }
    tir.for %t = 0 to 3 {
      tir.for %k = 0 to 7 {
        tir.for %r = 0 to 3 unrolled {
          tir.for %i = 0 to 8 vectorized {
            tir.block "acc"(%vr = spatial(0:3, %r), %vc = spatial(0:20, %t * 8 + %i), %vk = reduce(0:7, %k)) where(PRED) reads(%X[%vr, %vk, %vc]) writes(%T[%vr, %vc]) annotations {tessera.accumulate} {
              %T[%vr, %vc] = %T[%vr, %vc] + %X[%vr, %vk, %vc]
            }
          }
        }
      }
    }
    tir.for %r2 = 0 to 3 {
      tir.for %c2 = 0 to 20 {
        tir.block "out"(%or = spatial(0:3, %r2), %oc = spatial(0:20, %c2)) reads(%T[%or, %oc]) writes(%Y[%or, %oc]) {
          %Y[%or, %oc] = %T[%or, %oc]
        }
      }
    }
  }
}
`

// tailTile is tailTextText with its predicate and fill value.
func tailTile(pred, init string) string {
	return strings.NewReplacer("PRED", pred, "INIT", init).Replace(tailTileText)
}

// maskedStores counts the masked stores of 8 floats (the only stores
// are to the tile: %Y is written element by element).
func maskedStores(ll string) int {
	return len(regexp.MustCompile(`call void @llvm\.masked\.store\.v8f32`).FindAllString(ll, -1))
}

// TestPaddedTileRows: a local tile's rows are padded to whole vectors
// (3 rows of 24), and the tail tile's accumulation, whose inactive lanes
// fall in that padding, loads and stores whole vectors, results equal to
// the interpreter's. Predicates under which an inactive lane would touch
// an element (a lower bound, a tail shorter than the row, a bound on
// another variable) keep their masks, and the tile the fill wrote there
// survives.
func TestPaddedTileRows(t *testing.T) {
	res, _ := checkAgainstInterp(t, parseModule(t, tailTile("%t * 8 + %i < 20", "0.0")), "tail", Options{}, 3, 0)
	ll := res.LLVM()
	assert.Contains(t, ll, "alloca [72 x float]", "rows padded from 20 to 24")
	assert.Zero(t, maskedStores(ll), "the tail accumulates whole vectors (%X's loads stay masked)")
	for _, pred := range []string{
		"%t * 8 + %i >= 3 && %t * 8 + %i < 20", // the first 3 lanes inactive
		"%t * 8 + %i < 17",                     // lanes 17..19 inactive
		"%t * 8 + %i < 20 && %i + %r < 9",      // a bound on the lanes and rows
	} {
		t.Run(pred, func(t *testing.T) {
			res, _ := checkAgainstInterp(t, parseModule(t, tailTile(pred, "1.5")), "tail", Options{}, 3, 0)
			assert.NotZero(t, maskedStores(res.LLVM()), "masked where inactive lanes hold elements")
		})
	}
}

// TestPaddedRowsLayout: padRows leaves buffers whose rows fill their
// vectors, or that no vectorized loop accesses, row-major.
func TestPaddedRowsLayout(t *testing.T) {
	for _, c := range []struct {
		width, lanes int
		alloca       string
	}{{16, 8, "[48 x float]"}, {20, 4, "[60 x float]"}, {20, 8, "[72 x float]"}, {5, 4, "[24 x float]"}} {
		t.Run(fmt.Sprintf("%dx%d", c.width, c.lanes), func(t *testing.T) {
			text := fmt.Sprintf(`tir.func @rows(%%X: buffer<3x%[1]dxf32>, out %%Y: buffer<3x%[1]dxf32>) {
  tir.allocate %%T: buffer<3x%[1]dxf32, "local"> {
    tir.for %%r = 0 to 3 {
      tir.for %%t = 0 to %[3]d {
        tir.for %%i = 0 to %[2]d vectorized {
          tir.block "in"(%%vr = spatial(0:3, %%r), %%vc = spatial(0:%[1]d, %%t * %[2]d + %%i)) where(%%t * %[2]d + %%i < %[1]d) reads(%%X[%%vr, %%vc]) writes(%%T[%%vr, %%vc]) {
            %%T[%%vr, %%vc] = %%X[%%vr, %%vc] * 2.0
          }
        }
      }
    }
    tir.for %%r2 = 0 to 3 {
      tir.for %%c = 0 to %[1]d {
        tir.block "out"(%%or = spatial(0:3, %%r2), %%oc = spatial(0:%[1]d, %%c)) reads(%%T[%%or, %%oc]) writes(%%Y[%%or, %%oc]) {
          %%Y[%%or, %%oc] = %%T[%%or, %%oc]
        }
      }
    }
  }
}
`, c.width, c.lanes, (c.width+c.lanes-1)/c.lanes)
			res, _ := checkAgainstInterp(t, parseModule(t, text), "rows", Options{}, 4, 0)
			assert.Contains(t, res.LLVM(), "alloca "+c.alloca)
		})
	}
}

// gemvTileText is a matrix-vector product's output tiles as the GEMV rule
// gives them: 20 outputs in tiles of 16 (two 8-lane vectors), a local
// accumulator per tile, whose last tile holds 4 outputs: every access to
// the tile is under o·16 + idx < 20, so its live bound is 20 − o·16.
// INITPRED is the initialization's predicate; SUM, when set, adds a block
// that reads the whole tile into %S (unpredicated), which makes the
// elements past the live bound live. Each step adds 1, so a lane
// accumulated where it should not be shows in %S.
const gemvTileText = `tir.func @gemv(%A: buffer<7x20xf32>, %x: buffer<7xf32>, out %Y: buffer<20xf32>, out %S: buffer<2xf32>) {
  tir.for %o = 0 to 2 {
    tir.allocate %T: buffer<16xf32, "local"> {
      tir.for %j0 = 0 to 2 unrolled {
        tir.for %i0 = 0 to 8 vectorized {
          tir.block "init"(%v = spatial(0:16, %j0 * 8 + %i0)) INITPRED reads() writes(%T[%v]) {
            %T[%v] = 0.0
          }
        }
      }
      tir.for %k = 0 to 7 {
        tir.for %j = 0 to 2 unrolled {
          tir.for %i = 0 to 8 vectorized {
            tir.block "acc"(%vo = spatial(0:20, %o * 16 + %j * 8 + %i), %vk = reduce(0:7, %k)) where(%o * 16 + %j * 8 + %i < 20) reads(%A[%vk, %vo], %x[%vk]) writes(%T[%vo - %o * 16]) annotations {tessera.accumulate} {
              %T[%j * 8 + %i] = %T[%j * 8 + %i] + %A[%vk, %vo] * %x[%vk] + 1.0
            }
          }
        }
      }
      tir.for %c = 0 to 16 {
        tir.block "out"(%w = spatial(0:20, %o * 16 + %c)) where(%o * 16 + %c < 20) reads(%T[%c]) writes(%Y[%w]) {
          %Y[%w] = %T[%c]
        }
      }
      SUM
    }
  }
}
`

const gemvSum = `tir.for %s = 0 to 16 {
        tir.block "sum"(%so = spatial(0:2, %o), %sk = reduce(0:16, %s)) reads(%T[%sk]) writes(%S[%so]) {
          tir.init {
            %S[%so] = 0.0
          }
          %S[%so] = %S[%so] + %T[%sk]
        }
      }`

// gemvTile is gemvTileText with the init's predicate and the sum.
func gemvTile(initPred, sum string) string {
	return strings.NewReplacer("INITPRED", initPred, "SUM", sum).Replace(gemvTileText)
}

// TestLiveBoundTile: the last tile's accumulation stores whole vectors
// into the tile (its inactive lanes are past the live bound); with an
// unpredicated initialization and a block reading the whole tile, the
// masks stay and %S sums only the accumulated lanes.
func TestLiveBoundTile(t *testing.T) {
	res, _ := checkAgainstInterp(t, parseModule(t, gemvTile("where(%o * 16 + %j0 * 8 + %i0 < 20)", "")), "gemv", Options{}, 6, 0)
	assert.Zero(t, maskedStores(res.LLVM()), "the last tile accumulates whole vectors")
	res, _ = checkAgainstInterp(t, parseModule(t, gemvTile("", gemvSum)), "gemv", Options{}, 6, 0)
	assert.NotZero(t, maskedStores(res.LLVM()), "elements past 20 − o·16 are read: masked")
}

// TestLiveBound: liveBound finds the bound every access of the tile
// shares, and none when an access lacks it, when two differ, or when
// the bound would depend on a loop inside the allocation.
func TestLiveBound(t *testing.T) {
	bound := func(text string) string {
		m := parseModule(t, text)
		var l tir.Expr
		tir.VisitStmt(m.Func("gemv").Body, func(s tir.Stmt) bool {
			if a, ok := s.(*tir.Allocate); ok {
				l = liveBound(a.Buffer, a.Body)
			}
			return true
		})
		if l == nil {
			return "none"
		}
		return tir.ExprString(tir.Simplify(l, nil))
	}
	assert.Equal(t, "20 - %o * 16", bound(gemvTile("where(%o * 16 + %j0 * 8 + %i0 < 20)", "")))
	assert.Equal(t, "none", bound(gemvTile("", "")), "the init is unpredicated")
	assert.Equal(t, "none", bound(gemvTile("where(%o * 16 + %j0 * 8 + %i0 < 19)", "")), "two bounds")
	assert.Equal(t, "none", bound(gemvTile("where(%o * 16 + %j0 * 8 + %i0 < 20)", gemvSum)), "the sum reads the whole tile")
	assert.Equal(t, "none", bound(gemvTile("where(%o * 16 + %j0 * 8 + %i0 < 20 + %j0)", "")), "a bound using a loop inside")
}
