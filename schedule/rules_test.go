package schedule

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/llvm"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// gemmOf is a GEMM C[m,n] = A[m,k]·B[k,n].
func gemmOf(m, n, k int) string {
	return fmt.Sprintf(`tir.func @gemm_%[1]d_%[2]d_%[3]d(%%A: buffer<%[1]dx%[3]dxf32>, %%B: buffer<%[3]dx%[2]dxf32>, out %%C: buffer<%[1]dx%[2]dxf32>) attributes {tessera.kernel} {
  tir.for %%i = 0 to %[1]d {
    tir.for %%j = 0 to %[2]d {
      tir.for %%k = 0 to %[3]d {
        tir.block "C"(%%vi = spatial(0:%[1]d, %%i), %%vj = spatial(0:%[2]d, %%j), %%vk = reduce(0:%[3]d, %%k)) reads(%%A[%%vi, %%vk], %%B[%%vk, %%vj]) writes(%%C[%%vi, %%vj]) {
          tir.init {
            %%C[%%vi, %%vj] = 0.0
          }
          %%C[%%vi, %%vj] = %%C[%%vi, %%vj] + %%A[%%vi, %%vk] * %%B[%%vk, %%vj]
        }
      }
    }
  }
}
`, m, n, k)
}

// convOf is a 3×3 convolution (no padding) of ci channels of
// (hw+2)² into co channels of hw², width-contiguous.
func convOf(ci, co, hw int) string {
	return fmt.Sprintf(`tir.func @conv_%[1]d_%[2]d_%[3]d(%%I: buffer<%[1]dx%[4]dx%[4]dxf32>, %%W: buffer<%[2]dx%[1]dx3x3xf32>, out %%O: buffer<%[2]dx%[3]dx%[3]dxf32>) attributes {tessera.kernel} {
  tir.for %%co = 0 to %[2]d {
    tir.for %%h = 0 to %[3]d {
      tir.for %%w = 0 to %[3]d {
        tir.for %%ci = 0 to %[1]d {
          tir.for %%kh = 0 to 3 {
            tir.for %%kw = 0 to 3 {
              tir.block "conv"(%%vco = spatial(0:%[2]d, %%co), %%vh = spatial(0:%[3]d, %%h), %%vw = spatial(0:%[3]d, %%w), %%vci = reduce(0:%[1]d, %%ci), %%vkh = reduce(0:3, %%kh), %%vkw = reduce(0:3, %%kw)) reads(%%I[%%vci, %%vh + %%vkh, %%vw + %%vkw], %%W[%%vco, %%vci, %%vkh, %%vkw]) writes(%%O[%%vco, %%vh, %%vw]) {
                tir.init {
                  %%O[%%vco, %%vh, %%vw] = 0.0
                }
                %%O[%%vco, %%vh, %%vw] = %%O[%%vco, %%vh, %%vw] + %%I[%%vci, %%vh + %%vkh, %%vw + %%vkw] * %%W[%%vco, %%vci, %%vkh, %%vkw]
              }
            }
          }
        }
      }
    }
  }
}
`, ci, co, hw, hw+2)
}

// convHWIOOf is a 3×3 convolution of stride st with HWIO weights (what
// conv-kernel-layout makes of constant kernels): ci → co channels, an
// h×w output.
// convNHWCOf is a channels-last 3×3 convolution (conv-layout's): input
// [h', w', ci] (padded), HWIO weights, output [h, w, co], its reductions
// in the order [kh, ci, kw] (hlo's reduceOrder).
func convNHWCOf(ci, co, h, w int) string {
	return fmt.Sprintf(`tir.func @convnhwc_%[1]d_%[2]d_%[3]d_%[4]d(%%I: buffer<%[5]dx%[6]dx%[1]dxf32>, %%W: buffer<3x3x%[1]dx%[2]dxf32>, out %%O: buffer<%[3]dx%[4]dx%[2]dxf32>) attributes {tessera.kernel} {
  tir.for %%h = 0 to %[3]d {
    tir.for %%w = 0 to %[4]d {
      tir.for %%co = 0 to %[2]d {
        tir.for %%kh = 0 to 3 {
          tir.for %%ci = 0 to %[1]d {
            tir.for %%kw = 0 to 3 {
              tir.block "conv"(%%vh = spatial(0:%[3]d, %%h), %%vw = spatial(0:%[4]d, %%w), %%vco = spatial(0:%[2]d, %%co), %%vkh = reduce(0:3, %%kh), %%vci = reduce(0:%[1]d, %%ci), %%vkw = reduce(0:3, %%kw)) reads(%%I[%%vh + %%vkh, %%vw + %%vkw, %%vci], %%W[%%vkh, %%vkw, %%vci, %%vco]) writes(%%O[%%vh, %%vw, %%vco]) {
                tir.init {
                  %%O[%%vh, %%vw, %%vco] = 0.0
                }
                %%O[%%vh, %%vw, %%vco] = %%O[%%vh, %%vw, %%vco] + %%I[%%vh + %%vkh, %%vw + %%vkw, %%vci] * %%W[%%vkh, %%vkw, %%vci, %%vco]
              }
            }
          }
        }
      }
    }
  }
}
`, ci, co, h, w, h+2, w+2)
}

func convHWIOOf(ci, co, h, w, st int) string {
	return fmt.Sprintf(`tir.func @convhwio_%[1]d_%[2]d_%[3]d_%[4]d_%[5]d(%%I: buffer<%[1]dx%[6]dx%[7]dxf32>, %%W: buffer<3x3x%[1]dx%[2]dxf32>, out %%O: buffer<%[2]dx%[3]dx%[4]dxf32>) attributes {tessera.kernel} {
  tir.for %%co = 0 to %[2]d {
    tir.for %%h = 0 to %[3]d {
      tir.for %%w = 0 to %[4]d {
        tir.for %%ci = 0 to %[1]d {
          tir.for %%kh = 0 to 3 {
            tir.for %%kw = 0 to 3 {
              tir.block "conv"(%%vco = spatial(0:%[2]d, %%co), %%vh = spatial(0:%[3]d, %%h), %%vw = spatial(0:%[4]d, %%w), %%vci = reduce(0:%[1]d, %%ci), %%vkh = reduce(0:3, %%kh), %%vkw = reduce(0:3, %%kw)) reads(%%I[%%vci, %%vh * %[5]d + %%vkh, %%vw * %[5]d + %%vkw], %%W[%%vkh, %%vkw, %%vci, %%vco]) writes(%%O[%%vco, %%vh, %%vw]) {
                tir.init {
                  %%O[%%vco, %%vh, %%vw] = 0.0
                }
                %%O[%%vco, %%vh, %%vw] = %%O[%%vco, %%vh, %%vw] + %%I[%%vci, %%vh * %[5]d + %%vkh, %%vw * %[5]d + %%vkw] * %%W[%%vkh, %%vkw, %%vci, %%vco]
              }
            }
          }
        }
      }
    }
  }
}
`, ci, co, h, w, st, (h-1)*st+3, (w-1)*st+3)
}

// depthwiseOf is a 3×3 depthwise convolution of c channels: an h×w
// output of each channel from its own input channel and weights.
func depthwiseOf(c, h, w int) string {
	return fmt.Sprintf(`tir.func @dw_%[1]d_%[2]d_%[3]d(%%I: buffer<%[1]dx%[4]dx%[5]dxf32>, %%W: buffer<%[1]dx3x3xf32>, out %%O: buffer<%[1]dx%[2]dx%[3]dxf32>) attributes {tessera.kernel} {
  tir.for %%c = 0 to %[1]d {
    tir.for %%h = 0 to %[2]d {
      tir.for %%w = 0 to %[3]d {
        tir.for %%kh = 0 to 3 {
          tir.for %%kw = 0 to 3 {
            tir.block "dw"(%%vc = spatial(0:%[1]d, %%c), %%vh = spatial(0:%[2]d, %%h), %%vw = spatial(0:%[3]d, %%w), %%vkh = reduce(0:3, %%kh), %%vkw = reduce(0:3, %%kw)) reads(%%I[%%vc, %%vh + %%vkh, %%vw + %%vkw], %%W[%%vc, %%vkh, %%vkw]) writes(%%O[%%vc, %%vh, %%vw]) {
              tir.init {
                %%O[%%vc, %%vh, %%vw] = 0.0
              }
              %%O[%%vc, %%vh, %%vw] = %%O[%%vc, %%vh, %%vw] + %%I[%%vc, %%vh + %%vkh, %%vw + %%vkw] * %%W[%%vc, %%vkh, %%vkw]
            }
          }
        }
      }
    }
  }
}
`, c, h, w, h+2, w+2)
}

// widePoolSrc is 2×2 max pooling of 4 channels of 6×112 (poolSrc's, on a
// row of 56 outputs).
const widePoolSrc = `tir.func @pool(%X: buffer<4x6x112xf32>, out %P: buffer<4x3x56xf32>) attributes {tessera.kernel} {
  tir.for %c = 0 to 4 {
    tir.for %y = 0 to 3 {
      tir.for %x = 0 to 56 {
        tir.for %ry = 0 to 2 {
          tir.for %rx = 0 to 2 {
            tir.block "pool"(%vc = spatial(0:4, %c), %vy = spatial(0:3, %y), %vx = spatial(0:56, %x), %vry = reduce(0:2, %ry), %vrx = reduce(0:2, %rx)) reads(%X[%vc, %vy * 2 + %vry, %vx * 2 + %vrx]) writes(%P[%vc, %vy, %vx]) {
              tir.init {
                %P[%vc, %vy, %vx] = -1000.0
              }
              %P[%vc, %vy, %vx] = max(%P[%vc, %vy, %vx], %X[%vc, %vy * 2 + %vry, %vx * 2 + %vrx])
            }
          }
        }
      }
    }
  }
}
`

func ruleWorkloads(t testing.TB) map[string]string {
	cbr, err := os.ReadFile("testdata/conv_bias_relu.tir")
	require.NoError(t, err)
	sm, err := os.ReadFile("testdata/softmax.tir")
	require.NoError(t, err)
	return map[string]string{
		"gemm":         gemmSrc,
		"gemm_odd":     gemmOf(37, 53, 29),
		"gemm_big":     gemmOf(19, 100, 300),
		"gemm_vec":     gemmOf(64, 48, 16),
		"conv":         convSrc,
		"conv_tail":    convOf(3, 4, 40),
		"conv_tail2":   convOf(2, 3, 20),
		"conv_hwio":    convHWIOOf(8, 32, 5, 7, 1),
		"conv_hwio_s2": convHWIOOf(5, 48, 3, 9, 2),
		"conv_s2_wide": convHWIOOf(3, 32, 4, 32, 2),
		"conv_hwio_56": convHWIOOf(32, 32, 2, 56, 1),
		"conv_7x7_512": convHWIOOf(4, 512, 3, 7, 1),
		"dw_56":        depthwiseOf(3, 4, 56),
		"pool_wide":    widePoolSrc,
		"chain":        chainSrc,
		"pool":         poolSrc,
		"softmax":      softmaxSrc,
		"softmax_file": string(sm),
		"cbr":          convBiasReluSrc,
		"cbr_file":     string(cbr),
		"full_reduce":  fullReduceSrc,
	}
}

// fullReduceSrc sums a 7×9 buffer into a scalar: no spatial loop.
const fullReduceSrc = `tir.func @total(%A: buffer<7x9xf32>, out %S: buffer<f32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 7 {
    tir.for %j = 0 to 9 {
      tir.block "sum"(%vi = reduce(0:7, %i), %vj = reduce(0:9, %j)) reads(%A[%vi, %vj]) writes(%S[]) {
        tir.init {
          %S[] = 0.0
        }
        %S[] = %S[] + %A[%vi, %vj]
      }
    }
  }
}
`

var avx512 = CPURules{VectorBits: 512, Cores: 2, MaxLanes: llvm.MaxVectorLanes, CanVectorize: llvm.CheckVectorizable}

// TestDefaultRulesInterpreter: the default rules' result (for 512- and
// 256-bit vectors) computes exactly what the unscheduled function
// computes (the tiling keeps the summation
// order), and its trace replays to the same IR.
func TestDefaultRulesInterpreter(t *testing.T) {
	avx2 := avx512
	avx2.VectorBits = 256
	for _, target := range []CPURules{avx512, avx2} {
		for name, src := range ruleWorkloads(t) {
			t.Run(fmt.Sprintf("%s/%d", name, target.VectorBits), func(t *testing.T) {
				f := parseFunc(t, src)
				s, err := ApplyDefaultRules(f, target)
				require.NoError(t, err)
				g := s.Func()
				require.NoError(t, tir.VerifyFunc(g), printed(g))
				require.Equal(t, interpret(t, f, 5), interpret(t, g, 5), printed(g))
				checkReplay(t, s)
			})
		}
	}
}

func TestDefaultRulesPrint(t *testing.T) {
	for _, name := range strings.Split(os.Getenv("RULES_PRINT"), ",") {
		if name == "" {
			continue
		}
		s, err := ApplyDefaultRules(parseFunc(t, ruleWorkloads(t)[name]), avx512)
		require.NoError(t, err)
		t.Log(printed(s.Func()))
		t.Log(s.Trace().String())
	}
}

// TestDefaultRulesCompiled compiles every workload's default-rule
// schedule, and four workloads' fallback schedule, with targets/llvm
// (AVX-512 widths: 16 f32 lanes, 2×16 register tile columns) and checks
// the results against the interpreter on the unscheduled function.
func TestDefaultRulesCompiled(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles with llc/lld")
	}
	dir, drv := buildDriver(t, driverSrc)
	m := &tir.Module{}
	orig := map[string]*tir.PrimFunc{}
	add := func(name string, f *tir.PrimFunc, s *Schedule) {
		g := *s.Func()
		g.Name = name
		g.Attrs = copyAttrs(g.Attrs)
		g.Attrs[tir.AttrGlobalSymbol] = tir.StringAttr(g.Name)
		require.NoError(t, m.Add(&g))
		orig[g.Name] = f
	}
	for name, src := range ruleWorkloads(t) {
		f := parseFunc(t, src)
		s, err := ApplyDefaultRules(f, avx512)
		require.NoError(t, err)
		add("rules_"+name, f, s)
	}
	// The fallback rule's guarded tails and vector loops compile too.
	for _, name := range []string{"gemm_odd", "conv_tail", "chain", "softmax"} {
		f := parseFunc(t, ruleWorkloads(t)[name])
		add("fallback_"+name, f, avx512.Fallback(f))
	}
	// StrictFP: no FMA contraction, so results are bit-identical to the
	// interpreter's.
	res, err := compileCPU(m, llvm.Options{StrictFP: true})
	require.NoError(t, err)
	so := filepath.Join(dir, "k.so")
	require.NoError(t, res.WriteShared(so))
	for _, g := range m.Funcs {
		want := interpret(t, orig[g.Name], 9)
		inputs := randomInputs(t, g, 9)
		var files []string
		for _, p := range g.Params {
			path := filepath.Join(dir, g.Name+"_"+p.Buffer.Name+".bin")
			require.NoError(t, os.WriteFile(path, f32bytes(inputs[p.Buffer.Name]), 0o644))
			files = append(files, path)
		}
		out, err := exec.Command(drv, append([]string{so, g.Name}, files...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "rc=0")
		got := map[string][]float64{}
		for i, p := range g.Params {
			if p.Role == tir.RoleIn {
				continue
			}
			b, err := os.ReadFile(files[i])
			require.NoError(t, err)
			got[p.Buffer.Name] = fromF32bytes(b)
		}
		// exp is a polynomial in targets/cpu (≤ 1.5 ulp), math.Exp in the
		// interpreter: softmax agrees within rounding, the rest exactly.
		if strings.Contains(g.Name, "_softmax") {
			sameOutputs(t, want, got, g.Name+":\n"+printed(g))
		} else {
			require.Equal(t, want, got, "%s:\n%s", g.Name, printed(g))
		}
	}
}

// forKinds lists "var:kind" for every loop of f in pre-order.
func forKinds(f *tir.PrimFunc) []string {
	var ks []string
	tir.VisitStmt(f.Body, func(st tir.Stmt) bool {
		if l, ok := st.(*tir.For); ok {
			ks = append(ks, l.Var.Name+":"+l.Kind.String())
		}
		return true
	})
	return ks
}

// TestFallbackRule: the fallback (the simple rule alone, what
// default-schedule gives a kernel the default rules refuse) computes
// exactly what the unscheduled function computes, passes Check, replays,
// and vectorizes the innermost spatial loop (split by 16 lanes with a
// guarded tail when longer) and parallelizes the outermost.
func TestFallbackRule(t *testing.T) {
	want := map[string][]string{
		"gemm_odd":  {"i:parallel", "j_0:serial", "j_1:vectorized", "k:serial"},
		"chain":     {"i:parallel", "j:vectorized", "i:parallel", "j:vectorized"},
		"softmax":   {"i:vectorized", "k:serial", "i:vectorized", "k:serial", "i:parallel", "j:vectorized"},
		"conv_tail": {"co:parallel", "h:serial", "w_0:serial", "w_1:vectorized", "ci:serial", "kh:serial", "kw:serial"},
	}
	for name, src := range ruleWorkloads(t) {
		t.Run(name, func(t *testing.T) {
			f := parseFunc(t, src)
			s := avx512.Fallback(f)
			g := s.Func()
			require.NoError(t, tir.VerifyFunc(g), printed(g))
			require.NoError(t, avx512.Check(g), printed(g))
			require.Equal(t, interpret(t, f, 5), interpret(t, g, 5), printed(g))
			checkReplay(t, s)
			if w, ok := want[name]; ok {
				require.Equal(t, w, forKinds(g), printed(g))
			}
		})
	}
}

// TestDefaultRulesTiling: GEMM and conv get the SSRSRS structure with
// the documented tile sizes; elementwise blocks the simple rule.
func TestDefaultRulesTiling(t *testing.T) {
	kinds := func(s *Schedule) string {
		var ks []string
		for _, in := range s.Trace().Insts {
			ks = append(ks, in.Kind)
		}
		return strings.Join(ks, ",")
	}
	s, err := ApplyDefaultRules(parseFunc(t, gemmOf(1024, 1024, 1024)), avx512)
	require.NoError(t, err)
	require.Equal(t, "get_block,get_loops,split,split,split,reorder,fuse,vectorize,unroll,cache_write,reverse_compute_at,get_consumers,decompose_reduction,parallel,get_loops,split,vectorize", kinds(s))
	tr := s.Trace().String()
	require.Contains(t, tr, "factors=[-1,1,8,8]")  // i: 16 tasks × 8 row tiles × 8 rows
	require.Contains(t, tr, "factors=[-1,1,4,32]") // j: 8 tasks × 4 column tiles × 32 lanes
	require.Contains(t, tr, "factors=[-1,256]")    // k
	p := printed(s.Func())
	require.Contains(t, p, "tir.for %i_0_j_0_fused = 0 to 128 parallel")
	require.Contains(t, p, "tir.for %i_3 = 0 to 8 unrolled")
	require.Contains(t, p, "tir.for %j_3 = 0 to 32 vectorized")
	// With AVX2's 16 ymm registers, 8 accumulators: 4 rows × 16 lanes.
	avx2 := avx512
	avx2.VectorBits = 256
	s, err = ApplyDefaultRules(parseFunc(t, gemmOf(1024, 1024, 1024)), avx2)
	require.NoError(t, err)
	p = printed(s.Func())
	require.Contains(t, p, "tir.for %i_3 = 0 to 4 unrolled")
	require.Contains(t, p, "tir.for %j_3 = 0 to 16 vectorized")

	// The 3×3 conv: rows from the output channel (4 of them: the
	// 6-wide row is whole, 1 vector per row, so up to 8 rows; 4 divides).
	s, err = ApplyDefaultRules(parseFunc(t, convSrc), avx512)
	require.NoError(t, err)
	p = printed(s.Func())
	require.Contains(t, p, "tir.for %co_3 = 0 to 4 unrolled")
	require.Contains(t, p, "tir.for %w_3 = 0 to 6 vectorized")
	require.Contains(t, p, "tessera.accumulate")

	// A 40-wide row: whole 16-lane register tiles and a guarded tail
	// (targets/cpu peels the tail tile and versions the others, so the
	// main tiles run unmasked), not 8-lane tiles.
	s, err = ApplyDefaultRules(parseFunc(t, convOf(3, 4, 40)), avx512)
	require.NoError(t, err)
	p = printed(s.Func())
	require.Contains(t, p, "tir.for %w_3 = 0 to 16 vectorized")
	require.Contains(t, p, "< 40)")

	// HWIO weights and a 7-wide row (wasting 9 of 16 lanes): the
	// channel-vectorized tiling. The register tile vectorizes the output
	// channel (2 vectors: the weights' innermost dimension) and unrolls the
	// row; the accumulator cache is channel-innermost (transform_layout);
	// the weights need no copy.
	s, err = ApplyDefaultRules(parseFunc(t, convHWIOOf(8, 32, 5, 7, 1)), avx512)
	require.NoError(t, err)
	p = printed(s.Func())
	require.Contains(t, p, "tir.for %co_3 = 0 to 32 vectorized")
	require.Contains(t, p, "tir.for %w_3 = 0 to 7 unrolled")
	require.Contains(t, kinds(s), "transform_layout")
	require.NotContains(t, kinds(s), "cache_read")
	require.Contains(t, p, `%O_local: buffer<5x7x32xf32, "local">`)
	// AVX2's register tiles. With 8 accumulators, two 8-lane vectors per
	// row would give 4 rows with a guarded tail on a 7-wide row and 2 rows
	// on a 14-wide one: one vector per row and 7 rows instead; a 28-wide
	// row keeps 4 rows of two vectors. A 56-wide row fills the 8-lane
	// vectors, but its 8×8 tile loads 9 times per 8 multiply-adds against
	// the channel tile's 6: with 576 multiply-adds per output the channel
	// tiling (4 rows of 16 channels) pays for its write-back; with 72 it
	// does not. With 8 output channels the row tiling's 4×16 loads less
	// than the channel tiling's 8×8 and stays. Pooling reads one operand:
	// its row's 7 vectors of 8 lanes stay in one serial loop (S2), which
	// code generation's loop partitioning can split at the padding,
	// instead of 7 parallel iterations; so does a depthwise convolution,
	// whose weights are the same for every tile of a channel. The 7×7
	// image of 512 channels is one S2 block of 49 outputs per 32
	// channels (16 parallel tiles), so each weight panel is read once;
	// a 14×14 image (196 outputs) keeps one image row per block.
	for _, c := range []struct {
		src  string
		want []string
	}{
		{convHWIOOf(8, 64, 4, 7, 1), []string{"%co_3 = 0 to 8 vectorized", "%w_3 = 0 to 7 unrolled"}},
		{convHWIOOf(8, 64, 4, 14, 1), []string{"%co_3 = 0 to 8 vectorized", "%w_3 = 0 to 7 unrolled"}},
		{convHWIOOf(8, 64, 4, 28, 1), []string{"%co_3 = 0 to 16 vectorized", "%w_3 = 0 to 4 unrolled"}},
		{convHWIOOf(64, 64, 2, 56, 1), []string{"%co_3 = 0 to 16 vectorized", "%w_3 = 0 to 4 unrolled"}},
		{convHWIOOf(8, 64, 2, 56, 1), []string{"%w_3 = 0 to 8 vectorized", "%co_3 = 0 to 8 unrolled"}},
		{convHWIOOf(8, 8, 3, 64, 1), []string{"%w_3 = 0 to 16 vectorized", "%co_3 = 0 to 4 unrolled"}},
		{widePoolSrc, []string{"%x_2 = 0 to 7 {", "%x_3 = 0 to 8 vectorized"}},
		{depthwiseOf(3, 16, 56), []string{"%w_2 = 0 to 7 {", "%w_3 = 0 to 8 vectorized", "%h_3 = 0 to 8 unrolled"}},
		{convHWIOOf(4, 512, 7, 7, 1), []string{"%h_2 = 0 to 7 {", "%co_3 = 0 to 8 vectorized", "%w_3 = 0 to 7 unrolled", "%h_0_w_0_co_0_fused = 0 to 16 parallel"}},
		{convHWIOOf(4, 512, 14, 14, 1), []string{"%h_2 = 0 to 1 {", "%w_3 = 0 to 7 unrolled"}},
		// Channels-last: the row tiling vectorizes the output channels,
		// the store's innermost dimension, and the 7×7 image is one S2
		// block too (its image rows read the same weight panel).
		{convNHWCOf(4, 512, 7, 7), []string{"%h_2 = 0 to 7 {", "%co_3 = 0 to 8 vectorized", "%w_3 = 0 to 7 unrolled", "%h_0_w_0_co_0_fused = 0 to 16 parallel"}},
		{convNHWCOf(4, 512, 14, 14), []string{"%h_2 = 0 to 1 {", "%co_3 = 0 to 8 vectorized", "%w_3 = 0 to 7 unrolled"}},
	} {
		s, err = ApplyDefaultRules(parseFunc(t, c.src), avx2)
		require.NoError(t, err)
		p = printed(s.Func())
		for _, w := range c.want {
			require.Contains(t, p, "tir.for "+w, "%s", strings.SplitN(c.src, "(", 2)[0])
		}
	}
	// A stride-2 row of 32 outputs fills the lanes but reads its input
	// with a lane stride of 2: the channel-vectorized tiling too (the
	// input broadcast), while stride 1 keeps the row vectorized.
	s, err = ApplyDefaultRules(parseFunc(t, convHWIOOf(3, 32, 4, 32, 2)), avx512)
	require.NoError(t, err)
	require.Contains(t, printed(s.Func()), "tir.for %co_3 = 0 to 32 vectorized")
	s, err = ApplyDefaultRules(parseFunc(t, convHWIOOf(3, 32, 4, 32, 1)), avx512)
	require.NoError(t, err)
	require.NotContains(t, printed(s.Func()), "%co_3 = 0 to 32 vectorized")
	// OIHW weights (the channel is not their innermost dimension) keep
	// the row-vectorized tiling rather than copying the weights per call.
	s, err = ApplyDefaultRules(parseFunc(t, convOf(8, 32, 7)), avx512)
	require.NoError(t, err)
	require.NotContains(t, kinds(s), "transform_layout")
	require.Contains(t, printed(s.Func()), "tir.for %w_3 = 0 to 7 vectorized")

	// conv + bias + relu: the epilogue is folded into the accumulator's
	// write-back (reverse_compute_inline), no intermediate buffer left.
	for _, src := range []string{convBiasReluSrc, ruleWorkloads(t)["cbr_file"]} {
		s, err = ApplyDefaultRules(parseFunc(t, src), avx512)
		require.NoError(t, err)
		require.Contains(t, kinds(s), "reverse_compute_inline", printed(s.Func()))
	}

	// The elementwise chain (inlined into one block) gets the simple rule.
	s, err = ApplyDefaultRules(parseFunc(t, chainSrc), avx512)
	require.NoError(t, err)
	require.NotContains(t, kinds(s), "cache_write")
	p = printed(s.Func())
	require.Contains(t, p, "parallel")
	require.Contains(t, p, "vectorized")
}
