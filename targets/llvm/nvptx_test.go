package llvm

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// TestNVPTXKernels compiles GPU kernels (thread-bound loops, a vthread, a
// guarded short threadIdx loop, a shared-memory buffer, the f32 exp
// polynomial) to NVPTX IR, checks it with opt-16 -passes=verify, compiles
// it to PTX with llc-16 and checks the constructs there.
func TestNVPTXKernels(t *testing.T) {
	src, err := os.ReadFile("testdata/gpu_kernels.tir")
	require.NoError(t, err)
	m, err := tir.Parse("gpu_kernels.tir", src)
	require.NoError(t, err)
	res, err := CompileNVPTX(m, Options{MCPU: "sm_80"})
	require.NoError(t, err)
	require.Len(t, res.Kernels, 3)
	gemm, staged := res.Kernels[0], res.Kernels[1]
	require.Equal(t, [3]int64{2, 1, 1}, gemm.Grid)
	require.Equal(t, [3]int64{8, 1, 1}, gemm.Block)
	require.Equal(t, [3]int64{64, 1, 1}, staged.Block)
	require.Equal(t, int64(256), staged.SharedBytes)

	ll := res.LLVM()
	for _, want := range []string{
		`target triple = "nvptx64-nvidia-cuda"`,
		`define void @gemm(float addrspace(1)* noalias %A`,
		`call i32 @llvm.nvvm.read.ptx.sreg.ctaid.x()`,
		`call i32 @llvm.nvvm.read.ptx.sreg.tid.x()`,
		`@staged.S.shared.0 = internal addrspace(3) global [64 x float] undef, align 16`,
		`!{void (float addrspace(1)*, float addrspace(1)*)* @staged, !"kernel", i32 1}`,
		`!"maxntidx", i32 64}`,
	} {
		require.Contains(t, ll, want)
	}
	optTool, err := findTool("opt-16", "llvm-16")
	require.NoError(t, err)
	dir := t.TempDir()
	in := filepath.Join(dir, "k.ll")
	require.NoError(t, os.WriteFile(in, []byte(ll), 0o644))
	out, err := exec.Command(optTool, "-passes=verify", "-disable-output", in).CombinedOutput()
	require.NoError(t, err, "%s", out)

	ptx, err := res.PTX()
	require.NoError(t, err)
	// clang-16 alone (a machine without opt-16 and llc-16) gives the same
	// kernels.
	clang, err := findTool("clang-16", "clang-16")
	require.NoError(t, err)
	viaClang, err := res.ptxWithClang(clang, in)
	require.NoError(t, err)
	for _, p := range [][]byte{ptx, viaClang} {
		for _, want := range []string{
			".target sm_80", ".visible .entry gemm(", ".visible .entry staged(", ".maxntid 64, 1, 1",
			"%tid.x", "%ctaid.x", ".shared .align 16 .b8 staged_$_S_$_shared_$_0[256]", "st.shared.f32", "ld.shared.f32", "ld.global", "bar.sync \t0;",
		} {
			require.Contains(t, string(p), want)
		}
	}
	// A 4-lane vectorized loop at a 4-aligned offset is one 16-byte
	// access each way.
	require.Contains(t, string(ptx), "ld.global.nc.v4.f32")
	require.Contains(t, string(ptx), "st.global.v4.f32")
	// The threadIdx loop of extent 32 under a launch of 64 is guarded.
	require.Regexp(t, `setp\.[a-z]+\.(s|u)(32|64)\s+%p\d+, %r(d)?\d+, 3[12];`, string(ptx))
}

// TestNVPTXRefusals: constructs a GPU kernel cannot hold are located
// errors.
func TestNVPTXRefusals(t *testing.T) {
	kernel := func(body string) string {
		return `tir.func @k(%X: buffer<64xf32>, out %Y: buffer<64xf32>) attributes {tessera.kernel} {
  tir.for %b = 0 to 2 thread_binding("blockIdx.x") {
    tir.for %t = 0 to 32 thread_binding("threadIdx.x") {
` + body + `
    }
  }
}`
	}
	cases := []struct{ name, src, msg string }{
		{"libm", `tir.func @k(%X: buffer<64xf64>, out %Y: buffer<64xf64>) attributes {tessera.kernel} {
  tir.for %b = 0 to 2 thread_binding("blockIdx.x") {
    tir.for %t = 0 to 32 thread_binding("threadIdx.x") {
      tir.block "y"(%v = spatial(0:64, %b * 32 + %t)) reads(%X[%v]) writes(%Y[%v]) {
        %Y[%v] = log(%X[%v])
      }
    }
  }
}`, "log needs libm's log, which GPU kernels do not have"},
		{"global allocation", kernel(`      tir.allocate %G: buffer<64xf32> {
        tir.block "y"(%v = spatial(0:64, %b * 32 + %t)) reads(%X[%v]) writes(%G[%v]) {
          %G[%v] = %X[%v]
        }
      }`), "buffer %G: a global-scope allocation inside a GPU kernel"},
		{"nested axis", kernel(`      tir.for %u = 0 to 2 thread_binding("threadIdx.x") {
        tir.block "y"(%v = spatial(0:64, %t * 2 + %u)) reads(%X[%v]) writes(%Y[%v]) {
          %Y[%v] = %X[%v]
        }
      }`), "loop %u is bound to threadIdx.x inside another loop bound to threadIdx.x and depends on it"},
	}
	// The CPU target refuses GPU constructs.
	m, err := tir.Parse("gpu_kernels.tir", mustRead(t, "testdata/gpu_kernels.tir"))
	require.NoError(t, err)
	_, err = Compile(m, Options{})
	require.ErrorContains(t, err, "thread bindings are GPU constructs, not supported by the CPU target")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := tir.ParseString("k.tir", c.src)
			require.NoError(t, err)
			_, err = CompileNVPTX(m, Options{MCPU: "sm_80"})
			require.Error(t, err)
			require.Contains(t, err.Error(), c.msg)
			require.Contains(t, err.Error(), "k.tir:")
		})
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	return data
}

// TestNVPTXOwnMath: Tessera's own f32 log, pow, atan, asin, acos, sinh,
// cosh, asinh, acosh and atanh (mathfns_log.go) compile into a GPU kernel
// without any external function, and llc-16 -march=nvptx64 compiles them
// to PTX.
func TestNVPTXOwnMath(t *testing.T) {
	body := ""
	for i, f := range []string{"log", "atan", "asin", "acos", "sinh", "cosh", "asinh", "acosh", "atanh"} {
		body += fmt.Sprintf("        %%Y[%d, %%v] = %s(%%X[%%v])\n", i, f)
	}
	body += "        %Y[9, %v] = pow(%X[%v], %P[%v])\n"
	src := `tir.func @k(%X: buffer<64xf32>, %P: buffer<64xf32>, out %Y: buffer<10x64xf32>) attributes {tessera.kernel} {
  tir.for %b = 0 to 2 thread_binding("blockIdx.x") {
    tir.for %t = 0 to 32 thread_binding("threadIdx.x") {
      tir.block "y"(%v = spatial(0:64, %b * 32 + %t)) reads(%X[%v], %P[%v]) writes(%Y[0:10, %v]) {
` + body + `      }
    }
  }
}`
	m, err := tir.ParseString("k.tir", src)
	require.NoError(t, err)
	res, err := CompileNVPTX(m, Options{MCPU: "sm_80"})
	require.NoError(t, err)
	ll := res.LLVM()
	require.NotRegexp(t, `declare [^\n]*@(log|atan|asin|acos|sinh|cosh|asinh|acosh|atanh|pow)f?\(`, ll)
	ptx, err := res.PTX()
	require.NoError(t, err)
	require.Contains(t, string(ptx), ".visible .entry k(")
	require.NotContains(t, string(ptx), ".extern")
	require.NotContains(t, string(ptx), "call")
	require.Contains(t, string(ptx), "cvt.f64.f32")
}

// TestMultipleOf: the alignment proof of GPU vector accesses.
func TestMultipleOf(t *testing.T) {
	x, y := tir.NewVar("x", tir.DIndex), tir.NewVar("y", tir.DIndex)
	for _, c := range []struct {
		e    tir.Expr
		want bool
	}{
		{tir.Add(tir.Mul(x, tir.Int(64)), tir.Mul(y, tir.Int(4))), true},
		{tir.Sub(tir.Mul(tir.Int(8), x), tir.Int(4)), true},
		{tir.Add(tir.Mul(x, tir.Int(64)), tir.Int(1)), false},
		{tir.Add(tir.Mul(x, tir.Int(4)), y), false},
		{tir.FloorDiv(tir.Mul(x, tir.Int(8)), tir.Int(2)), false},
		{tir.FloorMod(tir.Mul(x, tir.Int(4)), tir.Int(16)), true},
		{tir.FloorMod(tir.Mul(x, tir.Int(4)), tir.Int(6)), false},
	} {
		require.Equal(t, c.want, multipleOf(c.e, 4), tir.ExprString(c.e))
	}
}

// TestFixSignedBFE: LLVM 16 selects an unsigned bit-field extract for an
// arithmetic shift's field past the msb (llvm/llvm-project#130862); in
// the PTX of a kernel indexing with floordiv(t, 4)*6 +
// floormod(floordiv(t, 2), 2)*3 it becomes the shift and mask it stands
// for, and extracts inside the register stay.
func TestFixSignedBFE(t *testing.T) {
	assert.Equal(t, "shr.s64 \t%rd1, %rd2, 63;\n\tand.b64 \t%rd1, %rd1, 3;\nbfe.u64 %rd3, %rd4, 1, 1;\nshr.s32 %r1, %r2, 31;\n\tand.b32 %r1, %r1, 7;",
		string(fixSignedBFE([]byte("bfe.u64 \t%rd1, %rd2, 63, 2;\nbfe.u64 %rd3, %rd4, 1, 1;\nbfe.u32 %r1, %r2, 31, 3;"))))
	m, err := tir.ParseString("k.tir", `tir.func @k(%X: buffer<32xf32>, out %Y: buffer<16xf32>) attributes {tessera.kernel} {
  tir.for %b = 0 to 1 thread_binding("blockIdx.x") {
    tir.for %t = 0 to 16 thread_binding("threadIdx.x") {
      tir.block "b"(%v = spatial(0:16, %t)) reads(%X[0:32]) writes(%Y[%v]) {
        %Y[%v] = %X[floordiv(%v, 4) * 6 + floormod(floordiv(%v, 2), 2) * 3]
      }
    }
  }
}
`)
	require.NoError(t, err)
	res, err := CompileNVPTX(m, Options{MCPU: "sm_80"})
	require.NoError(t, err)
	ptx, err := res.PTX()
	require.NoError(t, err)
	for _, line := range strings.Split(string(ptx), "\n") {
		if g := unsignedBFE.FindStringSubmatch(line); g != nil {
			w, _ := strconv.Atoi(g[1])
			p, _ := strconv.Atoi(g[3])
			n, _ := strconv.Atoi(g[5])
			assert.LessOrEqual(t, p+n, w, "an unsigned extract past the msb: %s", line)
		}
	}
}
