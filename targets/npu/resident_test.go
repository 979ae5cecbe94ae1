package npu

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// groupedConv is a convolution of n images of c channels (h×w) into co
// channels with groups groups and a kh×kw kernel, stride 1, no padding.
func groupedConv(t *testing.T, n, c, h, w, co, groups, kh, kw int) *tir.PrimFunc {
	t.Helper()
	oh, ow, cpg, opg := h-kh+1, w-kw+1, c/groups, co/groups
	src := fmt.Sprintf(`tir.func @gconv(%%x: buffer<%[1]dx%[2]dx%[3]dx%[4]dxf32>, %%w: buffer<%[5]dx%[6]dx%[7]dx%[8]dxf32>, out %%y: buffer<%[1]dx%[5]dx%[9]dx%[10]dxf32>) attributes {tessera.kernel} {
  tir.for %%i0 = 0 to %[1]d {
    tir.for %%i1 = 0 to %[5]d {
      tir.for %%i2 = 0 to %[9]d {
        tir.for %%i3 = 0 to %[10]d {
          tir.for %%r0 = 0 to %[6]d {
            tir.for %%r1 = 0 to %[7]d {
              tir.for %%r2 = 0 to %[8]d {
                tir.block "convolution"(%%v0 = spatial(0:%[1]d, %%i0), %%v1 = spatial(0:%[5]d, %%i1), %%v2 = spatial(0:%[9]d, %%i2), %%v3 = spatial(0:%[10]d, %%i3), %%k0 = reduce(0:%[6]d, %%r0), %%k1 = reduce(0:%[7]d, %%r1), %%k2 = reduce(0:%[8]d, %%r2)) reads(%%x[0:%[1]d, 0:%[2]d, 0:%[3]d, 0:%[4]d], %%w[%%v1, %%k0, %%k1, %%k2]) writes(%%y[%%v0, %%v1, %%v2, %%v3]) {
                  tir.init {
                    %%y[%%v0, %%v1, %%v2, %%v3] = 0.0
                  }
                  %%y[%%v0, %%v1, %%v2, %%v3] = %%y[%%v0, %%v1, %%v2, %%v3] + %%x[%%v0, floordiv(%%v1, %[11]d) * %[6]d + %%k0, %%v2 + %%k1, %%v3 + %%k2] * %%w[%%v1, %%k0, %%k1, %%k2]
                }
              }
            }
          }
        }
      }
    }
  }
}
`, n, c, h, w, co, cpg, kh, kw, oh, ow, opg)
	mod, err := tir.ParseString("gconv.tir", src)
	require.NoError(t, err)
	return mod.Funcs[0]
}

// residentTilings are t's tilings that keep an operand resident.
func residentTilings(cfg isa.Config, g *gemmKernel) []Tiling {
	var out []Tiling
	for _, tl := range tilings(cfg, g) {
		if tl.Resident {
			out = append(out, tl)
		}
	}
	return out
}

// TestResidentOperand: with the shared operand resident (the inputs in
// the M-outer order, the weights in the N-outer order), every 15th
// resident tiling of the candidates, both orders and (for the
// convolution) both layouts among them, is exact against the
// interpreter, and checkTilings runs each in the other order where that
// fits: a dense layer with an epilogue and tails, a matmul with tails, a
// convolution with three channel blocks, and a grouped convolution whose
// N tiles visit other reduction blocks (the inputs' resident LOAD then
// repeats per group run). Per-row-weight (depthwise) kernels have no
// resident tilings.
func TestResidentOperand(t *testing.T) {
	cfg := isa.DefaultConfig()
	kernels := map[string]*tir.PrimFunc{
		"dense":   parseKernel(t, "testdata/dense.tir"),
		"matmul":  matmulKernel(t, 40, 72, 40),
		"conv":    conv{n: 2, c: 40, h: 6, w: 7, co: 40, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1}.kernel(),
		"grouped": groupedConv(t, 1, 64, 5, 5, 64, 2, 3, 3),
	}
	for name, f := range kernels {
		g, err := analyzeGEMM(cfg, f)
		require.NoError(t, err)
		tls := residentTilings(cfg, g)
		require.NotEmpty(t, tls, name)
		orders, windows := map[bool]bool{}, map[bool]bool{}
		var pick []Tiling
		for i, tl := range tls {
			if i%15 == 0 {
				pick = append(pick, tl)
				orders[tl.NOuter], windows[tl.Window] = true, true
			}
		}
		require.Len(t, orders, 2, "%s: both orders", name)
		if name == "conv" {
			require.Len(t, windows, 2, "%s: both layouts", name)
		}
		if name == "grouped" {
			require.NotZero(t, g.GroupN, "grouped")
		}
		checkTilings(t, cfg, f, pick)
	}
	dw, err := tir.ParseString("dw.tir", conv{n: 1, c: 24, h: 9, w: 11, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1}.depthwiseText())
	require.NoError(t, err)
	g, err := analyzeGEMM(cfg, dw.Funcs[0])
	require.NoError(t, err)
	require.True(t, g.RowW)
	require.Empty(t, residentTilings(cfg, g))
}

// TestResidentLoads: a resident operand is LOADed once per run of tiles
// that read the same blocks of it (residentRuns), the other operand once
// per step but those isa.ElideLoads drops (elisions), and the simulated
// DRAM reads of operands are what estimate predicts: both orders, 1 to 4
// threads, 1, 2 and 4 steps per tile, and a grouped convolution whose
// input runs end at each group.
func TestResidentLoads(t *testing.T) {
	cfg := isa.DefaultConfig()
	check := func(f *tir.PrimFunc, tls []Tiling) {
		g, err := analyzeGEMM(cfg, f)
		require.NoError(t, err)
		progs := checkTilings(t, cfg, f, tls)
		_, args := bf16Args(f, rand.New(rand.NewSource(1)))
		for i, gp := range progs {
			tl := tls[i]
			st, _, err := gp.run(f32Args(args), false)
			require.NoError(t, err)
			_, moved := estimate(cfg, g, tl, true)
			tiles := int64(len(gp.tiles()))
			stored := tiles * int64(g.mEntries(tl)*tl.Nt*cfg.EntryBytes(isa.MemAcc, g.DP))
			uopBytes := int64(len(gp.prog.Uops)) * isa.UopBytes
			require.Equal(t, int64(moved)-stored, st.DRAMReadBytes-uopBytes, "tiling %v", tl)
			resident, streamed := 0, 0
			for _, in := range gp.prog.Insts {
				switch {
				case in.Op != isa.OpLoad:
				case in.Mem == tl.residentMem():
					resident++
				case in.Mem == isa.MemInp || in.Mem == isa.MemWgt:
					streamed++
				}
			}
			runs, mult := g.residentRuns(cfg, tl)
			require.Equal(t, len(runs)*mult, resident, "tiling %v: a resident LOAD per run", tl)
			steps := 0
			for _, s := range g.columnSteps(cfg, tl) {
				steps += g.mTiles(cfg, tl) * s
			}
			ex, ew := g.elisions(cfg, tl)
			require.Equal(t, steps-int(ex+ew), streamed, "tiling %v: a streamed LOAD per step but those elided", tl)
		}
	}
	var tls []Tiling
	for _, kt := range []int{4, 2, 1} {
		for v := 1; v <= maxThreads; v++ {
			tls = append(tls, Tiling{Mt: 16, Nt: 2, Kt: kt, Threads: v, Resident: true}, Tiling{Mt: 16, Nt: 2, Kt: kt, Threads: v, NOuter: true, Resident: true})
		}
	}
	check(matmulKernel(t, 96, 128, 64), tls) // 96 M entries, 8 N blocks, 4 K blocks
	// two groups of 32 channels: N tiles of one block visit 18 of the 36
	// reduction blocks; the inputs' runs are the two N tiles of a group
	gc := groupedConv(t, 1, 64, 6, 6, 64, 2, 3, 3)
	check(gc, []Tiling{{Mt: 4, Nt: 1, Kt: 6, Threads: 2, Resident: true}, {Mt: 4, Nt: 1, Kt: 6, Threads: 2, NOuter: true, Resident: true},
		{Mt: 16, Nt: 2, Kt: 18, Threads: 1, Resident: true}})
	g, err := analyzeGEMM(cfg, gc)
	require.NoError(t, err)
	runs, mult := g.residentRuns(cfg, Tiling{Mt: 4, Nt: 1, Kt: 6, Threads: 2, Resident: true})
	require.Equal(t, []resRun{{18, 6}, {18, 6}}, runs)
	require.Equal(t, 4, mult)
}

// TestResidentInSpace: the candidate tilings of GEMM 512³ hold resident
// variants, each fitting, and by the estimate none moves more DRAM bytes
// than the same tiling step by step.
func TestResidentInSpace(t *testing.T) {
	cfg := isa.DefaultConfig()
	g, err := analyzeGEMM(cfg, matmulKernel(t, 512, 512, 512))
	require.NoError(t, err)
	all, res := tilings(cfg, g), residentTilings(cfg, g)
	require.NotEmpty(t, res)
	for _, tl := range res {
		require.True(t, fits(cfg, g, tl))
		plain := tl
		plain.Resident = false
		_, stepped := estimate(cfg, g, plain, false)
		_, resident := estimate(cfg, g, tl, false)
		require.LessOrEqual(t, resident, stepped, "tiling %v", tl)
	}
	t.Logf("GEMM 512³: %d tilings, %d resident", len(all), len(res))
}
