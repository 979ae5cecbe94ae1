package llvm

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/types"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// guardConvText is a padded, strided 1-D convolution in the lowering's
// form (select(in bounds, X[clamp(e)], 0)), tiled as the CPU rules tile:
// the output tiles %t (spatial, serial) hold a vectorized row of 8 and a
// reduction %k over the taps; block "rev" reads the row backwards
// (X[W - 1 - ...], a negative coefficient on %t) and "pool" with the
// one-sided clamps of max pooling. The facts of all three split %t.
const guardConvText = `tir.func @guard(%X: buffer<2x%Wxf32>, %F: buffer<%Kxf32>, out %Y: buffer<2x%Txf32>, out %R: buffer<2x%Txf32>, out %M: buffer<2x%Txf32>) {
  tir.for %r = 0 to 2 {
    tir.for %t = 0 to %NT {
      tir.for %i = 0 to 8 vectorized {
        tir.block "init"(%v = spatial(0:%T, %t * 8 + %i)) where(%t * 8 + %i < %T) {
          %Y[%r, %v] = 0.0
        }
      }
      tir.for %k = 0 to %K {
        tir.for %i = 0 to 8 vectorized {
          tir.block "conv"(%v = spatial(0:%T, %t * 8 + %i), %kk = reduce(0:%K, %k)) where(%t * 8 + %i < %T) annotations {tessera.accumulate} {
            %Y[%r, %v] = %Y[%r, %v] + select(%v * %S + %kk - %P >= 0 && %v * %S + %kk - %P < %W, %X[%r, min(max(%v * %S + %kk - %P, 0), %WM)], 0.0) * %F[%kk]
          }
        }
      }
      tir.for %i = 0 to 8 vectorized {
        tir.block "pool"(%v = spatial(0:%T, %t * 8 + %i)) where(%t * 8 + %i < %T) {
          %M[%r, %v] = %X[%r, max(%v * %S - %P, 0)] + %X[%r, min(%v * %S + 1, %WM)]
        }
      }
      tir.for %k = 0 to %K {
        tir.for %i = 0 to 8 vectorized {
          tir.block "rev"(%v = spatial(0:%T, %t * 8 + %i), %kk = reduce(0:%K, %k)) where(%t * 8 + %i < %T) annotations {tessera.accumulate} {
            %R[%r, %v] = select(%kk == 0, 0.0, %R[%r, %v]) + select(%WM - %v * %S - %kk + %P >= 0 && %WM - %v * %S - %kk + %P < %W, %X[%r, min(max(%WM - %v * %S - %kk + %P, 0), %WM)], 0.0)
          }
        }
      }
    }
  }
}
`

// guardConv instantiates guardConvText: a row of w inputs, k taps, stride
// s, padding p, t outputs.
func guardConv(w, k, s, p, t int) string {
	r := strings.NewReplacer("%WM", fmt.Sprint(w-1), "%W", fmt.Sprint(w), "%K", fmt.Sprint(k), "%S", fmt.Sprint(s),
		"%P", fmt.Sprint(p), "%NT", fmt.Sprint((t+7)/8), "%T", fmt.Sprint(t))
	return r.Replace(guardConvText)
}

// guardCases are guardConv's parameters: the fast range in the middle of
// the row, the whole row (no padding touched), empty (a row narrower than
// the taps), strided with a tail tile.
var guardCases = []struct {
	name            string
	w, k, s, p, out int
}{
	{"middle", 40, 3, 1, 1, 40},
	{"stride 2, 7 taps", 61, 7, 2, 3, 31},
	{"no padding", 40, 3, 1, 0, 38},
	{"narrow row", 3, 7, 1, 3, 3},
	{"odd", 23, 5, 2, 2, 12},
}

// TestGuardPartition: the partitioned code equals the interpreter exactly.
func TestGuardPartition(t *testing.T) {
	for _, c := range guardCases {
		t.Run(c.name, func(t *testing.T) {
			checkAgainstInterp(t, parseModule(t, guardConv(c.w, c.k, c.s, c.p, c.out)), "guard", Options{}, 7, 0)
		})
	}
}

// TestGuardPartitionBounds: [L, U) is exactly the set of tiles %t for
// which every fact holds at every iteration of the loops inside %t
// (enumerated), and is not empty where a tile lies inside the row.
func TestGuardPartitionBounds(t *testing.T) {
	for _, c := range guardCases {
		t.Run(c.name, func(t *testing.T) {
			f := parseModule(t, guardConv(c.w, c.k, c.s, c.p, c.out)).Func("guard")
			g := newFgen(newMgen(Options{}, TargetTriple, DataLayout, false), ir.NewFunc("guard", types.Void))
			tl := loopNamed(t, f, "t")
			g.vars[loopNamed(t, f, "r").Var] = constant.NewInt(types.I64, 0)
			p := g.guardFacts(tl)
			if c.name == "narrow row" {
				assert.Nil(t, p, "no tile can lie inside a 3-wide row: no copy")
				return
			}
			require.NotNil(t, p)
			L, U := p.bounds()
			none := func(*tir.Var) (int64, bool) { return 0, false }
			lo, ok1 := tir.EvalInt(L, none)
			hi, ok2 := tir.EvalInt(U, none)
			require.True(t, ok1 && ok2)
			loops := map[*tir.Var]*tir.For{}
			tir.VisitStmt(tl.Body, func(s tir.Stmt) bool {
				if x, ok := s.(*tir.For); ok {
					loops[x.Var] = x
				}
				return true
			})
			nt := tl.Extent.(*tir.IntImm).Value
			fast := 0
			for ti := int64(0); ti < nt; ti++ {
				want := true
				for _, fa := range p.facts {
					want = want && holdsEverywhere(t, fa.d, tl.Var, ti, loops)
				}
				assert.Equal(t, want, lo <= ti && ti < hi, "tile %d of [%d, %d)", ti, lo, hi)
				if want {
					fast++
				}
			}
			if c.name == "middle" || c.name == "no padding" {
				assert.Greater(t, fast, 0)
			}
		})
	}
}

// holdsEverywhere reports whether d ≥ 0 at x = v for every iteration of
// the loops (inner) whose variables d uses.
func holdsEverywhere(t *testing.T, d tir.Expr, x *tir.Var, v int64, inner map[*tir.Var]*tir.For) bool {
	var vars []*tir.Var
	for iv := range inner {
		if tir.UsesVar(d, iv) {
			vars = append(vars, iv)
		}
	}
	env := map[*tir.Var]int64{x: v}
	var rec func(i int) bool
	rec = func(i int) bool {
		if i == len(vars) {
			got, ok := tir.EvalInt(d, func(w *tir.Var) (int64, bool) { n, ok := env[w]; return n, ok })
			require.True(t, ok, "%v", d)
			return got >= 0
		}
		l := inner[vars[i]]
		lo, _ := tir.EvalInt(l.Min, func(*tir.Var) (int64, bool) { return 0, false })
		for k := lo; k < lo+l.Extent.(*tir.IntImm).Value; k++ {
			env[vars[i]] = k
			if !rec(i + 1) {
				return false
			}
		}
		return true
	}
	return rec(0)
}

// loopNamed finds the loop of variable name in f.
func loopNamed(t *testing.T, f *tir.PrimFunc, name string) *tir.For {
	var out *tir.For
	tir.VisitStmt(f.Body, func(s tir.Stmt) bool {
		if x, ok := s.(*tir.For); ok && x.Var.Name == name && out == nil {
			out = x
		}
		return out == nil
	})
	require.NotNil(t, out, name)
	return out
}

// TestGuardFactOwners: the facts of the tiled convolution belong to the
// spatial tile loop %t, which is split on them (not to the reduction
// loop %k, whose splitting would cut the accumulation, nor to %r, which
// they do not use); without a spatial serial loop (rows of a parallel
// loop) they belong to the outermost serial loop, the reduction, which is
// versioned as a whole.
func TestGuardFactOwners(t *testing.T) {
	f := parseModule(t, guardConv(64, 3, 1, 1, 64)).Func("guard")
	m := newMgen(Options{}, TargetTriple, DataLayout, false)
	g := newFgen(m, ir.NewFunc("guard", types.Void))
	r, tl := loopNamed(t, f, "r"), loopNamed(t, f, "t")
	assert.Nil(t, g.guardFacts(r))
	g.vars[r.Var] = constant.NewInt(types.I64, 0)
	p := g.guardFacts(tl)
	require.NotNil(t, p)
	facts := p.facts
	// conv: 2 conjuncts, 2 clamp sides; pool: 2 one-sided clamps; rev: 2
	// and 2; and the tail predicate of each of the 4 blocks.
	require.Len(t, facts, 14)
	for _, fa := range facts {
		assert.True(t, fa.split, "%v", fa.d)
	}
	const untiled = `tir.func @u(%X: buffer<20x20xf32>, out %Y: buffer<20x16xf32>) {
  tir.for %p = 0 to 20 parallel {
    tir.for %k = 0 to 5 {
      tir.for %i = 0 to 16 vectorized {
        tir.block "c"(%vp = spatial(0:20, %p), %v = spatial(0:16, %i), %kk = reduce(0:5, %k)) annotations {tessera.accumulate} {
          %Y[%vp, %v] = %Y[%vp, %v] + select(%vp + %kk - 2 >= 0 && %vp + %kk - 2 < 20, %X[min(max(%vp + %kk - 2, 0), 19), %v], 0.0)
        }
      }
    }
  }
}
`
	u := parseModule(t, untiled).Func("u")
	pl := loopNamed(t, u, "p")
	g.vars[pl.Var] = constant.NewInt(types.I64, 0)
	g.ranges = tir.BoundEnv{pl.Var: {Lo: 0, Hi: 19}}
	p = g.guardFacts(loopNamed(t, u, "k"))
	require.NotNil(t, p)
	facts = p.facts
	require.Len(t, facts, 4)
	for _, fa := range facts {
		assert.False(t, fa.split, "%v", fa.d)
	}
	checkAgainstInterp(t, parseModule(t, untiled), "u", Options{}, 3, 0)

	// Clamps alone (an edge-replicating read, no padding select) do not
	// pay for a copy.
	const clampsOnly = `tir.func @c(%X: buffer<20xf32>, out %Y: buffer<4x16xf32>) {
  tir.for %r = 0 to 4 {
    tir.for %t = 0 to 2 {
      tir.for %i = 0 to 8 vectorized {
        %Y[%r, %t * 8 + %i] = %X[min(max(%t * 8 + %i + %r - 2, 0), 19)]
      }
    }
  }
}
`
	assert.Nil(t, g.guardFacts(loopNamed(t, parseModule(t, clampsOnly).Func("c"), "r")))
}
