package npu

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// matmulKernel is C[M, N] = A[M, K] · B[K, N] in f32 as one
// contraction block.
func matmulKernel(t *testing.T, m, n, k int) *tir.PrimFunc {
	return matmulOf(t, m, n, k, "f32", "f32", "f32")
}

// matmulOf is matmulKernel with A, B and C of element types a, b and c;
// integer operands are widened to an integer C.
func matmulOf(t *testing.T, m, n, k int, a, b, c string) *tir.PrimFunc {
	t.Helper()
	zero, x, y := "0.0", "%a[%v0, %k0]", "%b[%k0, %v1]"
	if c != "f32" {
		zero, x, y = "0 : "+c, "cast<"+c+">("+x+")", "cast<"+c+">("+y+")"
	}
	src := fmt.Sprintf(`tir.func @mm(%%a: buffer<%[1]dx%[3]dx%[4]s>, %%b: buffer<%[3]dx%[2]dx%[5]s>, out %%c: buffer<%[1]dx%[2]dx%[6]s>) attributes {tessera.kernel} {
  tir.for %%i0 = 0 to %[1]d {
    tir.for %%i1 = 0 to %[2]d {
      tir.for %%r0 = 0 to %[3]d {
        tir.block "dot"(%%v0 = spatial(0:%[1]d, %%i0), %%v1 = spatial(0:%[2]d, %%i1), %%k0 = reduce(0:%[3]d, %%r0)) reads(%%a[%%v0, %%k0], %%b[%%k0, %%v1]) writes(%%c[%%v0, %%v1]) {
          tir.init {
            %%c[%%v0, %%v1] = %[7]s
          }
          %%c[%%v0, %%v1] = %%c[%%v0, %%v1] + %[8]s * %[9]s
        }
      }
    }
  }
}
`, m, n, k, a, b, c, zero, x, y)
	mod, err := tir.ParseString("mm.tir", src)
	require.NoError(t, err)
	return mod.Funcs[0]
}

// elidedLoads is how many LOADs isa.ElideLoads dropped from gp's
// program: the generator's instructions less the compiled program's. It
// replaces gp.prog by the generator's.
func elidedLoads(gp *gemmProgram) int {
	n := len(gp.prog.Insts)
	gp.emit()
	return len(gp.prog.Insts) - n
}

// TestTileOrderReuse: in either tile order, a step whose operand blocks
// the step a thread cycle earlier loaded into the same part gets no LOAD
// for them (isa.ElideLoads), the results stay exact, and the LOADs left
// and the simulated DRAM reads of inputs and weights are what elisions
// and estimate predict: one and several reduction steps per tile, 1 to 4
// threads.
func TestTileOrderReuse(t *testing.T) {
	cfg := isa.DefaultConfig()
	f := matmulKernel(t, 96, 128, 64) // 96 M entries, 8 N blocks, 4 K blocks
	g, err := analyzeGEMM(cfg, f)
	require.NoError(t, err)
	var tls []Tiling
	for _, kt := range []int{4, 2, 1} { // 1, 2 and 4 steps per tile
		for v := 1; v <= maxThreads; v++ {
			tls = append(tls, Tiling{Mt: 16, Nt: 2, Kt: kt, Threads: v}, Tiling{Mt: 16, Nt: 2, Kt: kt, Threads: v, NOuter: true})
		}
	}
	progs := checkTilings(t, cfg, f, tls)
	_, args := bf16Args(f, rand.New(rand.NewSource(1)))
	elidedSome := map[bool]bool{}
	for i, gp := range progs {
		tl := tls[i]
		st, _, err := gp.run(f32Args(args), false)
		require.NoError(t, err)
		uopBytes := int64(len(gp.prog.Uops)) * isa.UopBytes
		_, moved := estimate(cfg, g, tl, true)
		tiles := int64(len(gp.tiles()))
		stored := tiles * int64(tl.Mt*tl.Nt*cfg.EntryBytes(isa.MemAcc, g.DP)) // estimate's epilogue bytes
		require.Equal(t, int64(moved)-stored, st.DRAMReadBytes-uopBytes, "tiling %v", tl)
		loads := 0
		for _, in := range gp.prog.Insts {
			if in.Op == isa.OpLoad && in.Mem != isa.MemUop {
				loads++
			}
		}
		ex, ew := g.elisions(cfg, tl)
		require.Equal(t, 2*int(tiles)*(4/tl.Kt)-int(ex+ew), loads, "tiling %v: an input and a weight LOAD per step but those elided", tl)
		if ex+ew > 0 {
			elidedSome[tl.NOuter] = true
		}
	}
	require.Equal(t, map[bool]bool{false: true, true: true}, elidedSome)
}

// TestTileOrders: the tile order is a candidate only where there is more
// than one M and one N tile.
func TestTileOrders(t *testing.T) {
	cfg := isa.DefaultConfig()
	g, err := analyzeGEMM(cfg, matmulKernel(t, 96, 128, 64))
	require.NoError(t, err)
	for _, tl := range tilings(cfg, g) {
		if tl.NOuter {
			require.Greater(t, g.mTiles(cfg, tl), 1, "%v", tl)
			require.Less(t, tl.Nt, 8, "%v", tl)
		}
	}
	one, err := analyzeGEMM(cfg, matmulKernel(t, 16, 16, 16)) // one tile
	require.NoError(t, err)
	for _, tl := range tilings(cfg, one) {
		require.False(t, tl.NOuter, "%v", tl)
	}
}

// TestElisionsCount: on every tiling that fits (every third with a
// resident operand) a dense layer with tails and an epilogue, a matmul,
// a convolution (gather and window layouts) and a depthwise convolution
// (per-row weights), the LOADs ElideLoads drops are those elisions counts
// (a window step LOADs its input in Kt DMAs).
func TestElisionsCount(t *testing.T) {
	cfg := isa.DefaultConfig()
	dw, err := tir.ParseString("dw.tir", conv{n: 1, c: 24, h: 9, w: 11, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1}.depthwiseText())
	require.NoError(t, err)
	kernels := map[string]*tir.PrimFunc{
		"dense":     parseKernel(t, "testdata/dense.tir"),
		"matmul":    matmulKernel(t, 40, 72, 40),
		"conv":      conv{n: 2, c: 20, h: 7, w: 9, co: 40, kh: 3, kw: 3, sh: 1, sw: 1, dh: 1, dw: 1, pt: 1, pb: 1, pl: 1, pr: 1}.kernel(),
		"depthwise": dw.Funcs[0],
	}
	for name, f := range kernels {
		g, err := analyzeGEMM(cfg, f)
		require.NoError(t, err)
		some, resident := 0, 0
		for _, tl := range tilings(cfg, g) {
			if tl.Resident { // every third: their streamed operand's count
				if resident++; resident%3 != 1 {
					continue
				}
			}
			gp, err := compileGEMM(cfg, g, tl)
			require.NoError(t, err)
			ex, ew := g.elisions(cfg, tl)
			perStep := 1
			if tl.Window {
				perStep = tl.Kt
			}
			elided := elidedLoads(gp)
			require.Equal(t, int(ex)*perStep+int(ew), elided, "%s: tiling %v", name, tl)
			if elided > 0 {
				some++
			}
		}
		require.Positive(t, some, name)
	}
}

// TestInt8TileOrders: an int8 GEMM (ui8 × i8 → i32, tails in every
// dimension) is bit-exact with the interpreter under tilings of both
// orders, 1 to 4 threads, one or several steps per tile and the shared
// operand per step or resident, LOADs elided.
func TestInt8TileOrders(t *testing.T) {
	const m, n, k = 40, 56, 72
	f := matmulOf(t, m, n, k, "ui8", "i8", "i32")
	cfg := isa.DefaultConfig()
	g, err := analyzeGEMM(cfg, f)
	require.NoError(t, err)
	require.Equal(t, isa.DPInt8, g.DP)
	a, b := u8i8Operands(5, m, n, k)
	arrays := map[string]*tir.Array{"a": tir.ArrayFromInt64(tir.DUI8, a, m, k), "b": tir.ArrayFromInt64(tir.DI8, b, k, n), "c": tir.NewArray(tir.DI32, m, n)}
	require.NoError(t, tir.Run(f, arrays))
	var elided [2]int // by order
	resident := 0
	for _, tl := range tilings(cfg, g) {
		if tl.Mt > 4 || tl.Nt != 1 { // the small tiles: several tiles per row and column
			continue
		}
		gp, err := compileGEMM(cfg, g, tl)
		require.NoError(t, err)
		got := simulateInt8(t, gp, m, n, k, a, b)
		for i, w := range arrays["c"].Ints {
			require.Equal(t, w, int64(got[i]), "tiling %v: output %d", tl, i)
		}
		elided[b2i(tl.NOuter)] += elidedLoads(gp)
		resident += int(b2i(tl.Resident))
	}
	require.Positive(t, resident, "resident operands")
	require.Positive(t, elided[0], "M outer")
	require.Positive(t, elided[1], "N outer")
}

// u8i8Operands are random u8 inputs (m×k) and i8 weights (k×n) of a
// quantized matmul, drawn with seed.
func u8i8Operands(seed int64, m, n, k int) (a, b []int64) {
	r := rand.New(rand.NewSource(seed))
	a, b = make([]int64, m*k), make([]int64, k*n)
	for i := range a {
		a[i] = int64(r.Intn(256))
	}
	for i := range b {
		b[i] = int64(r.Intn(256) - 128)
	}
	return a, b
}

// simulateInt8 runs gp, a u8 × i8 → i32 matmul of m×k inputs a and k×n
// weights b, on the simulator and returns its output.
func simulateInt8(t *testing.T, gp *gemmProgram, m, n, k int, a, b []int64) []int32 {
	t.Helper()
	tensor := func(dt rt.DType, shape []int64, v []int64) *rt.Tensor {
		x, err := rt.NewTensor(dt, shape)
		require.NoError(t, err)
		for i, e := range v {
			x.Bytes()[i] = byte(e)
		}
		return x
	}
	c, err := rt.NewTensor(rt.Int32, []int64{int64(m), int64(n)})
	require.NoError(t, err)
	_, _, err = gp.run(argsOf([]*rt.Tensor{tensor(rt.Uint8, []int64{int64(m), int64(k)}, a), tensor(rt.Int8, []int64{int64(k), int64(n)}, b), c}), false)
	require.NoError(t, err)
	got, err := c.Int32s()
	require.NoError(t, err)
	return got
}
