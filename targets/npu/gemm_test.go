package npu

import (
	"math"
	"math/rand"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

func parseKernel(t *testing.T, path string) *tir.PrimFunc {
	t.Helper()
	src, err := os.ReadFile(path)
	require.NoError(t, err)
	m, err := tir.Parse(path, src)
	require.NoError(t, err)
	return m.Funcs[0]
}

// bf16Args makes random inputs for f's parameters, rounded to bf16 so
// that the NPU sees exactly the values the interpreter does.
func bf16Args(f *tir.PrimFunc, r *rand.Rand) (map[string]*tir.Array, [][]float32) {
	arrays := map[string]*tir.Array{}
	var args [][]float32
	for _, p := range f.Params {
		shape, _ := p.Buffer.ConstShape()
		n := 1
		for _, d := range shape {
			n *= int(d)
		}
		v := make([]float32, n)
		for i := range v {
			if p.Role == tir.RoleIn {
				v[i] = isa.RoundBF16(float32(r.NormFloat64()))
			}
		}
		arrays[p.Name()] = tir.ArrayFromFloat32(v, shape...)
		args = append(args, v)
	}
	return arrays, args
}

// f32Args wraps f32 slices as kernel arguments.
func f32Args(vs [][]float32) []arg {
	out := make([]arg, len(vs))
	for i, v := range vs {
		out[i].f32 = v
	}
	return out
}

// checkGEMM compiles f with tiling t (zero: the default), runs it on the
// simulator and compares with the interpreter.
func checkGEMM(t *testing.T, cfg isa.Config, f *tir.PrimFunc, tl Tiling) *gemmProgram {
	t.Helper()
	return checkTilings(t, cfg, f, []Tiling{tl})[0]
}

// checkTilings is checkGEMM for several tilings, interpreting f once;
// each given tiling is also checked in the other tile order.
func checkTilings(t *testing.T, cfg isa.Config, f *tir.PrimFunc, tls []Tiling) []*gemmProgram {
	t.Helper()
	g, err := analyzeGEMM(isa.DefaultConfig(), f)
	require.NoError(t, err)
	arrays, args := bf16Args(f, rand.New(rand.NewSource(7)))
	require.NoError(t, tir.Run(f, arrays))
	want := arrays[f.Params[g.Out].Name()].Floats
	var out []*gemmProgram
	for _, tl := range tls {
		if tl == (Tiling{}) {
			tl, err = defaultTiling(cfg, g)
			require.NoError(t, err)
		}
		other := tl
		other.NOuter = !tl.NOuter
		for order, tl := range []Tiling{tl, other} {
			if order == 1 && !fits(cfg, g, tl) { // a resident operand's region in the other scratchpad
				continue
			}
			gp, err := compileGEMM(cfg, g, tl)
			require.NoError(t, err)
			requireRoundTrip(t, gp.prog)
			clear(args[g.Out])
			_, _, err = gp.run(f32Args(args), false)
			require.NoError(t, err)
			for i, w := range want {
				require.InDelta(t, w, float64(args[g.Out][i]), 1e-5*math.Max(1, math.Abs(w)), "output %d with tiling %+v", i, tl)
			}
			if order == 0 {
				out = append(out, gp)
			}
		}
	}
	return out
}

func TestDenseOnNPU(t *testing.T) {
	f := parseKernel(t, "testdata/dense.tir")
	cfg := isa.DefaultConfig()
	checkGEMM(t, cfg, f, Tiling{})
	// every tail: tiles that do not divide M, N or K, each operand
	// streamed step by step or resident (checkTilings runs both orders)
	for _, tl := range []Tiling{{1, 1, 1, false, 2, false, false}, {2, 2, 1, false, 1, false, false}, {3, 1, 2, false, 3, false, false}, {5, 3, 2, false, 4, false, false}} {
		checkGEMM(t, cfg, f, tl)
		tl.Resident = true
		checkGEMM(t, cfg, f, tl)
	}
	big := cfg
	big.Batch, big.BlockIn, big.BlockOut = 2, 8, 8
	require.NoError(t, big.Validate())
	checkGEMM(t, big, f, Tiling{})
	checkGEMM(t, big, f, Tiling{2, 3, 2, false, 2, false, false})
}

// TestOuterProduct: a contraction over one reduction element (K = 1,
// its reduce variable simplified out of one operand's index) runs on the
// matrix unit, the reduction block padded.
func TestOuterProduct(t *testing.T) {
	f := parseKernel(t, "testdata/outer.tir")
	cfg := isa.DefaultConfig()
	g, err := analyzeGEMM(cfg, f)
	require.NoError(t, err)
	require.Equal(t, []int{7, 19, 1}, []int{g.M, g.N, g.K})
	checkGEMM(t, cfg, f, Tiling{})
	checkGEMM(t, cfg, f, Tiling{3, 1, 1, false, 1, false, false})
}

func TestEpilogueOperands(t *testing.T) {
	f := parseKernel(t, "testdata/epilogue.tir")
	g, err := analyzeGEMM(isa.DefaultConfig(), f)
	require.NoError(t, err)
	var kinds []operandKind
	var ops []string
	for _, s := range g.Epilogue {
		kinds, ops = append(kinds, s.Kind), append(ops, s.Op)
	}
	require.Equal(t, []string{"add", "mul", "max", "min", "sub"}, ops)
	require.Equal(t, []operandKind{opTile, opConst, opConst, opConst, opVector}, kinds)
	cfg := isa.DefaultConfig()
	for _, tl := range []Tiling{{}, {4, 1, 1, false, 1, false, true}, {7, 2, 3, false, 3, false, true}} {
		checkGEMM(t, cfg, f, tl)
	}
}

// TestScaledOperands: an epilogue operand times a constant (Scale) is
// scaled in its accumulator region by an ALU mul before its step — an
// immediate or a constant entry — under tilings with every thread count.
func TestScaledOperands(t *testing.T) {
	f := parseKernel(t, "testdata/scaled.tir")
	cfg := isa.DefaultConfig()
	g, err := analyzeGEMM(cfg, f)
	require.NoError(t, err)
	require.Len(t, g.Epilogue, 2)
	require.Equal(t, aluStep{Op: "add", Kind: opVector, Param: 3, Idx: g.Epilogue[0].Idx, Scale: 0.5, Elem: isa.DTF32}, g.Epilogue[0])
	require.Equal(t, opTile, g.Epilogue[1].Kind)
	require.Equal(t, "max", g.Epilogue[1].Op)
	require.InDelta(t, 0.3, g.Epilogue[1].Scale, 1e-7)
	for _, tl := range []Tiling{{}, {4, 1, 1, false, 1, false, true}, {7, 2, 3, false, 3, false, true}, {3, 2, 1, false, 4, false, true}} {
		gp := checkGEMM(t, cfg, f, tl)
		require.Contains(t, gp.prog.String(), "alu.mul ", "the scaling")
	}
}

func TestNotMappableReasons(t *testing.T) {
	cases := map[string]string{
		// a reduction without a product
		`tir.func @sum(%x: buffer<4x8xf32>, out %y: buffer<4xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 4 {
    tir.for %r = 0 to 8 {
      tir.block "s"(%v = spatial(0:4, %i), %k = reduce(0:8, %r)) reads(%y[0:4], %x[0:4, 0:8]) writes(%y[%v]) {
        tir.init {
          %y[%v] = 0.0
        }
        %y[%v] = %y[%v] + %x[%v, %k]
      }
    }
  }
}`: `block "s" is not C = C + X·W`,
		// a batched product: both operands read %b
		`tir.func @bmm(%x: buffer<2x4x8xf32>, %w: buffer<2x8x3xf32>, out %y: buffer<2x4x3xf32>) attributes {tessera.kernel} {
  tir.for %i0 = 0 to 2 {
    tir.for %i1 = 0 to 4 {
      tir.for %i2 = 0 to 3 {
        tir.for %r = 0 to 8 {
          tir.block "b"(%b = spatial(0:2, %i0), %m = spatial(0:4, %i1), %n = spatial(0:3, %i2), %k = reduce(0:8, %r)) reads(%y[0:2, 0:4, 0:3], %x[0:2, 0:4, 0:8], %w[0:2, 0:8, 0:3]) writes(%y[%b, %m, %n]) {
            tir.init {
              %y[%b, %m, %n] = 0.0
            }
            %y[%b, %m, %n] = %y[%b, %m, %n] + %x[%b, %m, %k] * %w[%b, %k, %n]
          }
        }
      }
    }
  }
}`: "both operands read spatial variable %b and others of their own (a batched product)",
		// an epilogue the ALU has no operation for
		`tir.func @e(%x: buffer<4x8xf32>, %w: buffer<8x3xf32>, out %y: buffer<4x3xf32>) attributes {tessera.kernel} {
  tir.allocate %c: buffer<4x3xf32, "local"> {
    tir.for %i0 = 0 to 4 {
      tir.for %i1 = 0 to 3 {
        tir.for %r = 0 to 8 {
          tir.block "mm"(%m = spatial(0:4, %i0), %n = spatial(0:3, %i1), %k = reduce(0:8, %r)) reads(%c[0:4, 0:3], %x[0:4, 0:8], %w[0:8, 0:3]) writes(%c[%m, %n]) {
            tir.init {
              %c[%m, %n] = 0.0
            }
            %c[%m, %n] = %c[%m, %n] + %x[%m, %k] * %w[%k, %n]
          }
        }
      }
    }
    tir.for %i0 = 0 to 4 {
      tir.for %i1 = 0 to 3 {
        tir.block "t"(%a = spatial(0:4, %i0), %e = spatial(0:3, %i1)) reads(%c[0:4, 0:3]) writes(%y[%a, %e]) {
          %y[%a, %e] = tanh(%c[%a, %e])
        }
      }
    }
  }
}`: "epilogue expression tanh(%c[%a, %e])",
	}
	for src, want := range cases {
		m, err := tir.ParseString("k.tir", src)
		require.NoError(t, err)
		_, err = analyzeGEMM(isa.DefaultConfig(), m.Funcs[0])
		var nm *notMappable
		require.ErrorAs(t, err, &nm)
		require.Equal(t, want, err.Error())
	}
}

func TestRulesAnnotateSampleAndCheck(t *testing.T) {
	f := parseKernel(t, "testdata/dense.tir")
	cfg := isa.DefaultConfig()
	r := Rules{Config: cfg, Host: nil}
	s, err := r.Default(f)
	require.NoError(t, err)
	g, _ := analyzeGEMM(cfg, s.Func())
	tl, ok, err := tilingOf(s.Func(), g)
	require.NoError(t, err)
	require.True(t, ok)
	want, _ := defaultTiling(cfg, g)
	require.Equal(t, want, tl)
	require.NoError(t, r.Check(s.Func()))
	seen := map[Tiling]bool{}
	for seed := int64(0); seed < 20; seed++ {
		s, err := r.Sample(f, seed)
		require.NoError(t, err)
		tl, ok, _ := tilingOf(s.Func(), g)
		require.True(t, ok)
		require.True(t, fits(cfg, g, tl))
		seen[tl] = true
		checkGEMM(t, cfg, s.Func(), tl)
	}
	require.Greater(t, len(seen), 3, "sampling explores several tilings")
	// a tiling that does not fit is refused by Check
	bad, _ := annotateTiling(schedule.New(f), g, Tiling{5, 3, 4096, false, 2, false, false})
	require.ErrorContains(t, r.Check(bad.Func()), "does not fit the scratchpads")
}

// TestTilingAnnotation: npu.tile round-trips every thread count and
// layout (2 threads in the short forms), and malformed values are
// refused with the forms named.
func TestTilingAnnotation(t *testing.T) {
	f := parseKernel(t, "testdata/dense.tir")
	cfg := isa.DefaultConfig()
	g, err := analyzeGEMM(cfg, f)
	require.NoError(t, err)
	for v := 1; v <= maxThreads; v++ {
		for _, nOuter := range []bool{false, true} {
			for _, resident := range []bool{false, true} {
				tl := Tiling{3, 1, 2, false, v, nOuter, resident}
				s, err := annotateTiling(schedule.New(f), g, tl)
				require.NoError(t, err)
				got, ok, err := tilingOf(s.Func(), g)
				require.NoError(t, err)
				require.True(t, ok)
				require.Equal(t, tl, got)
			}
		}
	}
	ints := func(v ...int) tir.ArrayAttr {
		var a tir.ArrayAttr
		for _, x := range v {
			a = append(a, tir.IntAttr(x))
		}
		return a
	}
	good := map[string]tir.ArrayAttr{"3,1,2 short": ints(3, 1, 2), "3,1,2, 1 threads": ints(3, 1, 2, 0, 1), "3,1,2, 4 threads": ints(3, 1, 2, 0, 4),
		"3,1,2, n outer": ints(3, 1, 2, 0, 2, 1), "3,1,2": ints(3, 1, 2, 0, 2, 0), "window 3,1,2, 1 threads, n outer": ints(3, 1, 2, 1, 1, 1),
		"3,1,2, inputs resident": ints(3, 1, 2, 0, 2, 0, 1), "3,1,2, n outer, weights resident": ints(3, 1, 2, 0, 2, 1, 1), "3,1,2, 3 threads, n outer": ints(3, 1, 2, 0, 3, 1, 0)}
	for want, a := range good {
		tl, ok := parseTiling(a)
		require.True(t, ok, "%v", a)
		require.Equal(t, strings.TrimSuffix(want, " short"), tl.String())
	}
	for _, a := range []tir.ArrayAttr{ints(3, 1), ints(3, 1, 2, 0), ints(3, 1, 2, 2), ints(3, 1, 2, 2, 2), ints(3, 1, 2, 0, 0), ints(3, 1, 2, 0, 5), ints(0, 1, 2), ints(3, 1, 2, 0, 2, 2), ints(3, 1, 2, 0, 2, 1, 2), ints(3, 1, 2, 0, 2, 1, 1, 0)} {
		_, ok := parseTiling(a)
		require.False(t, ok, "%v", a)
	}
	s := schedule.New(f)
	b, err := s.GetBlock(g.Block)
	require.NoError(t, err)
	require.NoError(t, s.Annotate(b, AttrTile, ints(3, 1, 2, 0, 9)))
	_, _, err = tilingOf(s.Func(), g)
	require.ErrorContains(t, err, "[Mt, Nt, Kt, layout, threads, order, dma]")
	require.ErrorContains(t, err, "1 to 4 threads")
}

// requireRoundTrip checks that a generated program survives the text and
// binary forms unchanged.
func requireRoundTrip(t *testing.T, p *isa.Program) {
	t.Helper()
	q, err := isa.Assemble("gen.s", []byte(p.String()))
	require.NoError(t, err)
	require.Equal(t, p.Insts, q.Insts)
	require.Equal(t, p.Uops, q.Uops)
	bin, err := p.MarshalBinary()
	require.NoError(t, err)
	var r isa.Program
	require.NoError(t, r.UnmarshalBinary(bin))
	require.Equal(t, p.String(), r.String())
}

// NewRules remember the last kernel's analysis; switching kernels (a
// sample's scheduled copy, another task) re-analyzes, so the memoized
// rules sample and check exactly as the plain ones.
func TestRulesMemo(t *testing.T) {
	dense := parseKernel(t, "testdata/dense.tir")
	epi := parseKernel(t, "testdata/epilogue.tir")
	cfg := isa.DefaultConfig()
	plain, memo := Rules{Config: cfg}, NewRules(cfg, nil)
	for seed := int64(0); seed < 12; seed++ {
		f := dense
		if seed%3 == 2 {
			f = epi
		}
		want, err := plain.Sample(f, seed)
		require.NoError(t, err)
		got, err := memo.Sample(f, seed)
		require.NoError(t, err)
		require.Equal(t, want.Trace().String(), got.Trace().String())
		require.NoError(t, memo.Check(got.Func()))
	}
	require.Same(t, mustAnalyze(t, memo, dense), mustAnalyze(t, memo, dense), "the same kernel is analyzed once")
}

func mustAnalyze(t *testing.T, r Rules, f *tir.PrimFunc) *gemmKernel {
	t.Helper()
	g, err := r.analyze(f)
	require.NoError(t, err)
	return g
}
