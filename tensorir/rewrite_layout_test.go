package tensorir_test

import (
	"encoding/binary"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// runHostOnRandom runs @main of m on random inputs (seeded) and returns
// every buffer parameter's contents afterwards.
func runHostOnRandom(t *testing.T, m *tir.Module, seed int64) map[string][]float64 {
	t.Helper()
	arrays := randomArrays(t, m.Func("main").Params, seed)
	require.NoError(t, tir.RunModule(m, "main", tir.Args{Arrays: arrays}))
	return contents(arrays)
}

// rewriteLayoutCase parses the pass's lit test, edited by replace (pairs
// of old and new text).
func rewriteLayoutCase(t *testing.T, replace ...string) *tir.Module {
	t.Helper()
	src, err := os.ReadFile("../lit/tir/rewrite-layout.tir")
	require.NoError(t, err)
	text := strings.NewReplacer(replace...).Replace(string(src))
	m, err := tir.Parse("rewrite-layout.tir", []byte(text))
	require.NoError(t, err)
	require.NoError(t, tir.Verify(m))
	return m
}

// TestRewriteLayout runs the lit test's @main before and after the pass on
// random inputs: the results are identical (only where each constant is
// stored moves), the module verifies, the constants and parameters named
// in the lit test are rewritten, and a second run changes nothing.
func TestRewriteLayout(t *testing.T) {
	m := rewriteLayoutCase(t)
	before := tir.Print(m)
	var want []map[string][]float64
	for seed := int64(1); seed <= 3; seed++ {
		want = append(want, runHostOnRandom(t, m, seed))
	}
	st := tir.RewriteLayoutModule(m)
	require.Equal(t, tir.LayoutRewriteStats{Params: 2, Constants: 3}, st)
	require.NoError(t, tir.Verify(m))
	after := tir.Print(m)
	require.NotEqual(t, before, after)
	for i, w := range want {
		require.Equal(t, w, runHostOnRandom(t, m, int64(i+1)))
	}
	require.Equal(t, tir.LayoutRewriteStats{}, tir.RewriteLayoutModule(m))
	require.Equal(t, after, tir.Print(m))
	// The printed result parses back to the same module.
	back, err := tir.Parse("after.tir", []byte(after))
	require.NoError(t, err)
	require.Equal(t, after, tir.Print(back))
}

// TestRewriteLayoutReleases: the pipeline's pass releases the data of
// an original constant once every use of it is rewritten (%w0, %tc), and
// keeps it where one use keeps the layout (%w1, passed to @scale) or no
// use is rewritten (%bv, %sv); RewriteLayoutModule releases nothing. The
// results are unchanged either way.
func TestRewriteLayoutReleases(t *testing.T) {
	originals := func(m *tir.Module) map[string]*tir.AllocateConst {
		out := map[string]*tir.AllocateConst{}
		tir.VisitStmt(m.Func("main").Body, func(s tir.Stmt) bool {
			if c, ok := s.(*tir.AllocateConst); ok {
				out[c.Buffer.Name] = c
			}
			return true
		})
		return out
	}
	hasData := func(c *tir.AllocateConst) bool { return c.Raw != nil || c.Floats != nil || c.Ints != nil }

	m := rewriteLayoutCase(t)
	want := runHostOnRandom(t, m, 1)
	before := originals(m)
	pass, err := tir.LookupPass(tir.RewriteLayoutPassName).New(nil)
	require.NoError(t, err)
	require.NoError(t, pass.Run(m))
	require.NoError(t, tir.Verify(m))
	require.Equal(t, want, runHostOnRandom(t, m, 1))
	for name, c := range before {
		released := name == "w0" || name == "tc"
		require.Equal(t, !released, hasData(c), "%%%s", name)
	}

	kept := rewriteLayoutCase(t)
	before = originals(kept)
	tir.RewriteLayoutModule(kept)
	for name, c := range before {
		require.True(t, hasData(c), "%%%s", name)
	}
}

// TestRewriteLayoutNeedsConstants: a parameter that one call passes a
// non-constant for keeps its layout (the caller's layout is the contract),
// and so does the constant passed to it elsewhere.
func TestRewriteLayoutNeedsConstants(t *testing.T) {
	m := rewriteLayoutCase(t,
		"tir.func @main(%x: buffer<3x6xf32>,", "tir.func @main(%x: buffer<3x6xf32>, %y: buffer<5x4xf32>,",
		"tir.call @transposed(%tc, %t4)", "tir.call @transposed(%tc, %t4)\n            tir.call @transposed(%y, %t4)")
	st := tir.RewriteLayoutModule(m)
	require.Equal(t, tir.LayoutRewriteStats{Params: 1, Constants: 2}, st)
	require.Contains(t, tir.Print(m), "%T: buffer<5x4xf32>")
	require.Contains(t, tir.Print(m), "tir.constant %tc: buffer<5x4xf32>")
}

// TestRawConstants: constants holding raw little-endian bytes (as the
// lowering gives an ONNX model's weights) print, verify, run and are
// repacked by rewrite-layout exactly as the same constants held as
// float64 values; a raw length that is not the buffer's is refused.
func TestRawConstants(t *testing.T) {
	m := rewriteLayoutCase(t)
	raw := rewriteLayoutCase(t)
	n := 0
	tir.VisitStmt(raw.Func("main").Body, func(s tir.Stmt) bool {
		if c, ok := s.(*tir.AllocateConst); ok && c.Buffer.DType.IsFloat() {
			c.Raw, c.Floats = c.Buffer.DType.Format().Encode(c.Floats), nil
			n++
		}
		return true
	})
	require.Positive(t, n)
	require.Equal(t, tir.Print(m), tir.Print(raw))
	require.NoError(t, tir.Verify(raw))
	require.Equal(t, runHostOnRandom(t, m, 1), runHostOnRandom(t, raw, 1))
	require.Equal(t, tir.RewriteLayoutModule(m), tir.RewriteLayoutModule(raw))
	require.Equal(t, tir.Print(m), tir.Print(raw))
	require.Equal(t, runHostOnRandom(t, m, 2), runHostOnRandom(t, raw, 2))
	tir.VisitStmt(raw.Func("main").Body, func(s tir.Stmt) bool {
		if c, ok := s.(*tir.AllocateConst); ok && c.Raw != nil {
			c.Raw = c.Raw[:len(c.Raw)-1]
			return false
		}
		return true
	})
	err := tir.Verify(raw)
	require.Error(t, err)
	require.Contains(t, err.Error(), "raw bytes")
}

// TestRewriteLayoutSeveralReaders: a kernel holding two loop nests that
// read a constant parameter in the same order (schedule's batch lifting
// runs one per chunk size) is rewritten in both; the results are those of
// the unrewritten module.
func TestRewriteLayoutSeveralReaders(t *testing.T) {
	m := rewriteLayoutCase(t)
	for _, f := range m.Funcs {
		if _, kernel := f.Attrs[tir.AttrKernel]; kernel {
			f.Body = tir.Seq(f.Body, tir.FreshCopy(f.Body, "_again"))
		}
	}
	require.NoError(t, tir.Verify(m), tir.Print(m))
	want := runHostOnRandom(t, m, 1)
	require.Equal(t, tir.LayoutRewriteStats{Params: 2, Constants: 3}, tir.RewriteLayoutModule(m))
	require.NoError(t, tir.Verify(m))
	require.Equal(t, want, runHostOnRandom(t, m, 1))
}

// TestRewriteParamLayouts: the one-kernel form the autotuner measures
// through. Each kernel of the lit test, its listed parameters rewritten
// and their random data transposed by ParamLayout.Permute, computes what
// the original computes on the original data; a parameter read in two
// blocks (@bias's %s) or already read in row-major order (%b) keeps its
// layout, and the kernel comes back unchanged.
func TestRewriteParamLayouts(t *testing.T) {
	m := rewriteLayoutCase(t)
	cases := []struct {
		kernel string
		params []int
		shapes [][]int64 // the rewritten parameters' new shapes
	}{
		{"matmul", []int{1}, [][]int64{{3, 3, 2, 4}}},
		{"transposed", []int{0}, [][]int64{{4, 5}}},
		{"bias", []int{1, 2}, nil},
		{"matmul", []int{0, 2, 7}, nil}, // an activation, an output, no such parameter
	}
	for _, c := range cases {
		f := m.Func(c.kernel)
		g, layouts := tir.RewriteParamLayouts(f, c.params)
		require.Len(t, layouts, len(c.shapes), c.kernel)
		if len(c.shapes) == 0 {
			require.Same(t, f, g)
			continue
		}
		require.NoError(t, tir.Verify(&tir.Module{Funcs: []*tir.PrimFunc{g}}))
		arrays := randomArrays(t, f.Params, 7)
		want := map[string][]float64{} // the inputs, before f runs
		for name, v := range contents(arrays) {
			want[name] = slices.Clone(v)
		}
		require.NoError(t, tir.Run(f, arrays))
		got := map[string]*tir.Array{}
		for _, p := range f.Params {
			a := tir.NewArray(p.Buffer.DType, arrays[p.Buffer.Name].Shape...)
			copy(a.Floats, want[p.Buffer.Name])
			got[p.Buffer.Name] = a
		}
		for i, l := range layouts {
			require.Equal(t, c.shapes[i], l.NewShape())
			p := g.Params[l.Param]
			old := arrays[p.Buffer.Name]
			raw := make([]byte, 8*len(want[p.Buffer.Name]))
			for k, v := range want[p.Buffer.Name] {
				binary.LittleEndian.PutUint64(raw[8*k:], math.Float64bits(v))
			}
			packed := l.Permute(raw, 8)
			a := tir.NewArray(old.DType, l.NewShape()...)
			for k := range a.Floats {
				a.Floats[k] = math.Float64frombits(binary.LittleEndian.Uint64(packed[8*k:]))
			}
			got[p.Buffer.Name] = a
		}
		require.NoError(t, tir.Run(g, got))
		for _, p := range g.Params {
			if p.Role == tir.RoleOut {
				require.Equal(t, arrays[p.Buffer.Name].Floats, got[p.Buffer.Name].Floats, "%s: %%%s", c.kernel, p.Buffer.Name)
			}
		}
	}
}
