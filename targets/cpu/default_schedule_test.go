package cpu

import (
	"math/rand"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// loopKinds lists "var:kind:extent" for every loop of s in pre-order.
func loopKinds(s tir.Stmt) []string {
	var out []string
	walkStmt(s, func(t tir.Stmt) {
		if f, ok := t.(*tir.For); ok {
			ext := "?"
			if c, ok := f.Extent.(*tir.IntImm); ok {
				ext = strconv.FormatInt(c.Value, 10)
			}
			out = append(out, f.Var.Name+":"+f.Kind.String()+":"+ext)
		}
	}, nil)
	return out
}

// scheduleAndCheck applies the default schedule, checks that the
// interpreter gives the same results before and after, and that the
// compiled scheduled code matches the interpreter.
func scheduleAndCheck(t *testing.T, src, fn string, bits int, rel float64) *tir.PrimFunc {
	t.Helper()
	m := parseModule(t, src)
	f := m.Func(fn)
	sf := DefaultSchedule(f, bits)
	require.NoError(t, tir.VerifyFunc(sf))
	args := randomArgs(f, rand.New(rand.NewSource(11)))
	a1, a2 := cloneArgs(args), cloneArgs(args)
	require.NoError(t, tir.RunArgs(f, a1))
	require.NoError(t, tir.RunArgs(sf, a2))
	assertClose(t, a1, a2, 0)
	checkAgainstInterp(t, &tir.Module{Funcs: []*tir.PrimFunc{sf}}, fn, Options{}, 12, rel)
	return sf
}

func TestDefaultScheduleMatmul(t *testing.T) {
	sf := scheduleAndCheck(t, matmulText, "matmul", 512, 0)
	assert.Equal(t, []string{"i:parallel:37", "j_o:serial:2", "j_i:vectorized:16", "k:serial:29", "j_t:serial:13", "k:serial:29"}, loopKinds(sf.Body))
	// 256-bit vectors: 8 lanes, 45 = 5·8 + 5.
	sf = scheduleAndCheck(t, matmulText, "matmul", 256, 0)
	assert.Equal(t, []string{"i:parallel:37", "j_o:serial:5", "j_i:vectorized:8", "k:serial:29", "j_t:serial:5", "k:serial:29"}, loopKinds(sf.Body))
}

// A one-dimensional loop is both the parallel and the vectorized loop:
// its outer part runs in parallel.
func TestDefaultScheduleElementwise(t *testing.T) {
	src := `tir.func @ew(%A: buffer<1000xf32>, out %B: buffer<1000xf32>) {
  tir.for %i = 0 to 1000 {
    tir.block "B"(%vi = spatial(0:1000, %i)) reads(%A[%vi]) writes(%B[%vi]) {
      %B[%vi] = tanh(%A[%vi]) * exp(%A[%vi]) + sigmoid(%A[%vi])
    }
  }
}
`
	sf := scheduleAndCheck(t, src, "ew", 512, 1e-5)
	assert.Equal(t, []string{"i_o:parallel:62", "i_i:vectorized:16", "i_t:serial:8"}, loopKinds(sf.Body))
}

// Conv2d: batch extent 1 is skipped for parallelism; the innermost
// spatial loop x (extent 7 ≤ 16 lanes) is vectorized whole around the
// reduction loops.
func TestDefaultScheduleConv2d(t *testing.T) {
	src := strings.Replace(strings.Replace(conv2dText, " parallel", "", -1), "2x3x9x9", "1x3x9x9", 1)
	src = strings.Replace(src, "2x4x7x7", "1x4x7x7", 1)
	src = strings.Replace(src, "tir.for %n = 0 to 2", "tir.for %n = 0 to 1", 1)
	src = strings.Replace(src, "spatial(0:2, %n)", "spatial(0:1, %n)", 1)
	sf := scheduleAndCheck(t, src, "conv2d", 512, 0)
	assert.Equal(t, []string{"n:serial:1", "f:parallel:4", "y:serial:7", "x:vectorized:7", "c:serial:3", "ky:unrolled:3", "kx:unrolled:3"}, loopKinds(sf.Body))
}

// Reductions outermost and scans are not spatial: the schedule leaves
// them serial.
func TestDefaultScheduleNonSpatial(t *testing.T) {
	src := `tir.func @scan(%A: buffer<100xf32>, out %B: buffer<100xf32>, out %S: buffer<1xf32>) {
  %B[0] = %A[0]
  tir.for %i = 1 to 100 {
    %B[%i] = %B[%i - 1] + %A[%i]
  }
  %S[0] = 0.0
  tir.for %k = 0 to 100 {
    %S[0] = %S[0] + %A[%k]
  }
}
`
	sf := scheduleAndCheck(t, src, "scan", 512, 0)
	assert.Equal(t, []string{"i:serial:99", "k:serial:100"}, loopKinds(sf.Body))

	rowmax := `tir.func @rowmax(%A: buffer<5x7xf32>, out %M: buffer<5xf32>) {
  tir.for %k = 0 to 7 {
    tir.for %i = 0 to 5 {
      tir.block "M"(%vi = spatial(0:5, %i), %vk = reduce(0:7, %k)) reads(%A[%vi, %vk]) writes(%M[%vi]) {
        tir.init {
          %M[%vi] = 0xFF800000 : f32
        }
        %M[%vi] = max(%M[%vi], %A[%vi, %vk])
      }
    }
  }
}
`
	sf = scheduleAndCheck(t, rowmax, "rowmax", 512, 0)
	assert.Equal(t, []string{"k:serial:7", "i:vectorized:5"}, loopKinds(sf.Body))
}
