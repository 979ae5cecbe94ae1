package schedule

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

func TestPerfectTilings(t *testing.T) {
	assert.Equal(t, [][]int64{{1, 6}, {2, 3}, {3, 2}, {6, 1}}, perfectTilings(6, 2, 0))
	assert.Equal(t, [][]int64{{2, 3}, {3, 2}, {6, 1}}, perfectTilings(6, 2, 3))
	assert.Len(t, perfectTilings(16, 3, 0), 15) // C(4+2, 2)
	assert.Equal(t, [][]int64{{12}}, perfectTilings(12, 1, 0))
}

func TestSamplePerfectTileIsUniformAndPerfect(t *testing.T) {
	s := NewWithSeed(parseFunc(t, gemmSrc), 7)
	ls := mustLoops(t, s, "C")
	counts := map[string]int{}
	const n = 3000
	for i := 0; i < n; i++ {
		fs, err := s.SamplePerfectTile(ls[0], 3, 4)
		require.NoError(t, err)
		require.Len(t, fs, 3)
		assert.Equal(t, int64(16), fs[0]*fs[1]*fs[2])
		assert.LessOrEqual(t, fs[2], int64(4))
		counts[formatInts(fs)]++
	}
	// 16 = 2^4 into 3 factors with the innermost ≤ 4: 5 + 4 + 3 = 12 tilings.
	require.Len(t, counts, 12)
	for k, c := range counts {
		assert.InDelta(t, n/12, c, 80, k)
	}
	// The decision and the outputs are recorded.
	last := s.Trace().Insts[len(s.Trace().Insts)-1]
	assert.Equal(t, "sample_perfect_tile", last.Kind)
	assert.Equal(t, map[string]any{"n": int64(3), "max_innermost": int64(4)}, last.Attrs)
	assert.Len(t, last.Decision, 3)
	assert.Len(t, last.Outputs, 3)
}

func TestSampleCategoricalFollowsProbabilities(t *testing.T) {
	s := NewWithSeed(parseFunc(t, gemmSrc), 3)
	counts := map[int64]int{}
	cands := []int64{0, 16, 64, 512}
	for i := 0; i < 4000; i++ {
		v, err := s.SampleCategorical(cands, []float64{0.1, 0.2, 0.0, 0.7})
		require.NoError(t, err)
		counts[v]++
		last := s.Trace().Insts[len(s.Trace().Insts)-1]
		require.Equal(t, v, cands[last.Decision.(int64)])
	}
	assert.Zero(t, counts[64])
	assert.InDelta(t, 400, counts[0], 80)
	assert.InDelta(t, 800, counts[16], 100)
	assert.InDelta(t, 2800, counts[512], 120)
	assert.Equal(t, "sample_categorical", s.Trace().Insts[0].Kind)
}

func TestSamplingErrors(t *testing.T) {
	s := New(parseFunc(t, chainSrc))
	ls := mustLoops(t, s, "add")
	_, err := s.SamplePerfectTile(ls[1], 0, 4)
	require.Error(t, err)
	assert.Equal(t, `sample_perfect_tile: block "add", loop %j: n = 0, want at least 1
  tir.for %j = 0 to 14 {
    tir.block "add"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {
      %T[%vi, %vj] = %A[%vi, %vj] + %B[%vj]
    }
  }`, err.Error())
	// 14 = 2*7 into 2 factors with the innermost ≤ 1 is only [14, 1].
	fs, err := s.SamplePerfectTile(ls[1], 2, 1)
	require.NoError(t, err)
	assert.Equal(t, []int64{14, 1}, fs)
	for _, c := range []struct {
		cs    []int64
		ps    []float64
		wants string
	}{
		{[]int64{1, 2}, []float64{0.5}, "sample_categorical: 2 candidates but 1 probabilities"},
		{nil, nil, "sample_categorical: no candidates"},
		{[]int64{1, 2}, []float64{0, 0}, "sample_categorical: probabilities sum to 0"},
		{[]int64{1, 2}, []float64{-1, 2}, "sample_categorical: probability -1 is not a non-negative number"},
	} {
		_, err := s.SampleCategorical(c.cs, c.ps)
		require.Error(t, err)
		assert.Equal(t, c.wants, err.Error())
	}
}

// A sampled tiling feeds a split; editing the decision in the JSON
// replays the split with the new factors.
func TestEditedDecisionsReplay(t *testing.T) {
	f := parseFunc(t, gemmSrc)
	s := NewWithSeed(f, 11)
	ls := mustLoops(t, s, "C")
	fs, err := s.SamplePerfectTile(ls[0], 2, 0)
	require.NoError(t, err)
	_, err = s.Split(ls[0], fs)
	require.NoError(t, err)
	u, err := s.SampleCategorical([]int64{0, 16, 64}, []float64{1, 1, 1})
	require.NoError(t, err)
	require.NoError(t, s.Annotate(ls[1], "pragma_auto_unroll_max_step", tir.IntAttr(u)))
	checkSame(t, s)
	data, err := s.Trace().JSON()
	require.NoError(t, err)
	text := string(data)
	assert.Contains(t, text, `"factors":["$v4","$v5"]`)
	assert.Contains(t, text, `"value":{"int":"$v`)

	// Edit both decisions.
	lines := strings.Split(text, "\n")
	for i, l := range lines {
		if strings.Contains(l, `"sample_perfect_tile"`) {
			lines[i] = replaceDecision(t, l, "[8,2]")
		}
		if strings.Contains(l, `"sample_categorical"`) {
			lines[i] = replaceDecision(t, l, "2")
		}
	}
	tr, err := ParseTrace([]byte(strings.Join(lines, "\n")))
	require.NoError(t, err)
	r, err := Replay(f, tr)
	require.NoError(t, err)
	out := printed(r.Func())
	assert.Contains(t, out, "tir.for %i_0 = 0 to 8 {\n    tir.for %i_1 = 0 to 2 {\n      tir.for %j = 0 to 10 annotations {pragma_auto_unroll_max_step = 64} {")
	assert.Equal(t, []any{int64(8), int64(2)}, r.Trace().Insts[2].Decision)
	sameOutputs(t, interpret(t, f, 1), interpret(t, r.Func(), 1), out)

	// A decision that is not a perfect tiling is refused.
	for i, l := range lines {
		if strings.Contains(l, `"sample_perfect_tile"`) {
			lines[i] = replaceDecision(t, l, "[3,5]")
		}
	}
	tr, err = ParseTrace([]byte(strings.Join(lines, "\n")))
	require.NoError(t, err)
	_, err = Replay(f, tr)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "replay: instruction 2 (sample_perfect_tile): sample_perfect_tile: block \"C\", loop %i: decision [3, 5] is not 2 factors of the extent 16")
}

func replaceDecision(t *testing.T, line, dec string) string {
	t.Helper()
	i := strings.Index(line, `"decision":`)
	require.GreaterOrEqual(t, i, 0, line)
	j := strings.Index(line[i:], `,"outputs"`)
	require.GreaterOrEqual(t, j, 0, line)
	return line[:i] + `"decision":` + dec + line[i+j:]
}

// A split links to a tiling sampled on its own loop only.
func TestSplitLinksOnlyItsOwnLoopsSample(t *testing.T) {
	s := NewWithSeed(parseFunc(t, convSrc), 2)
	ls := mustLoops(t, s, "conv")
	fs, err := s.SamplePerfectTile(ls[1], 2, 0) // h: 6
	require.NoError(t, err)
	_, err = s.Split(ls[2], fs) // w: 6, the same values, another loop
	require.NoError(t, err)
	_, err = s.Split(ls[1], fs)
	require.NoError(t, err)
	in := s.Trace().Insts
	n := len(in)
	assert.Equal(t, []any{fs[0], fs[1]}, in[n-2].Attrs["factors"])
	assert.Equal(t, []any{"$" + in[n-3].Outputs[0], "$" + in[n-3].Outputs[1]}, in[n-1].Attrs["factors"])
	checkSame(t, s)
}
