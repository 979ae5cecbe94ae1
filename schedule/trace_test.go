package schedule

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

func TestTraceJSONFormat(t *testing.T) {
	s := NewWithSeed(parseFunc(t, chainSrc), 5)
	s.Trace().Func = "ew"
	ls := mustLoops(t, s, "relu")
	fs, err := s.SamplePerfectTile(ls[1], 2, 7)
	require.NoError(t, err)
	out, err := s.Split(ls[1], fs)
	require.NoError(t, err)
	require.NoError(t, s.Vectorize(out[1]))
	require.NoError(t, s.Annotate(ls[0], "note", tir.StringAttr("x")))
	data, err := s.Trace().JSON()
	require.NoError(t, err)
	assert.Equal(t, `{
  "func": "ew",
  "insts": [
    {"kind":"get_block","attrs":{"name":"relu"},"outputs":["b0"]},
    {"kind":"get_loops","inputs":["b0"],"outputs":["l1","l2"]},
    {"kind":"sample_perfect_tile","inputs":["l2"],"attrs":{"max_innermost":7,"n":2},"decision":[`+formatJSONInts(fs)+`],"outputs":["v3","v4"]},
    {"kind":"split","inputs":["l2"],"attrs":{"factors":["$v3","$v4"]},"outputs":["l5","l6"]},
    {"kind":"vectorize","inputs":["l6"]},
    {"kind":"annotate","inputs":["l1"],"attrs":{"key":"note","value":{"string":"x"}}}
  ]
}
`, string(data))
	tr, err := ParseTrace(data)
	require.NoError(t, err)
	assert.Equal(t, "ew", tr.Func)
	r, err := Replay(s.Original(), tr)
	require.NoError(t, err)
	assert.Equal(t, printed(s.Func()), printed(r.Func()))
	assert.Equal(t, "ew", r.Trace().Func)
	checkSame(t, s)
}

func formatJSONInts(xs []int64) string {
	s := formatInts(xs)
	s = s[1 : len(s)-1]
	out := ""
	for _, c := range s {
		if c != ' ' {
			out += string(c)
		}
	}
	return out
}

func TestEmptyTrace(t *testing.T) {
	s := New(parseFunc(t, gemmSrc))
	data, err := s.Trace().JSON()
	require.NoError(t, err)
	assert.Equal(t, "{\n  \"insts\": []\n}\n", string(data))
	checkSame(t, s)
}

func TestReplayErrors(t *testing.T) {
	f := parseFunc(t, gemmSrc)
	for _, c := range []struct{ json, want string }{
		{`{"insts":[{"kind":"frobnicate"}]}`, `replay: instruction 0: unknown kind "frobnicate"`},
		{`{"insts":[{"kind":"split","inputs":["l9"],"attrs":{"factors":[2,-1]},"outputs":["l1","l2"]}]}`, `replay: instruction 0 (split): unknown handle "l9"`},
		{`{"insts":[{"kind":"get_block","attrs":{"name":"C"},"outputs":["b0","b1"]}]}`, `replay: instruction 0 (get_block): 1 outputs, the trace has 2`},
		{`{"insts":[{"kind":"get_block","attrs":{"name":"Z"},"outputs":["b0"]}]}`, `replay: instruction 0 (get_block): get_block: no block named "Z" in @gemm`},
		{`{"insts":[{"kind":"get_block","attrs":{"name":"C"},"outputs":["b0"]},{"kind":"get_loops","inputs":["b0"],"outputs":["l1","l2","l3"]},{"kind":"split","inputs":["l1"],"attrs":{"factors":["$v7",2]},"outputs":["l4","l5"]}]}`, `replay: instruction 2 (split): unknown value "$v7"`},
		{`{"insts":[{"kind":"get_block","attrs":{"name":"C"},"outputs":["b0"]},{"kind":"get_loops","inputs":["b0"],"outputs":["l1","l2","l3"]},{"kind":"split","inputs":["b0"],"attrs":{"factors":[2,-1]},"outputs":["l4","l5"]}]}`, `replay: instruction 2 (split): input 0 is not a loop`},
		{`{"insts":[{"kind":"sample_categorical","attrs":{"candidates":[1,2],"probs":[1,1]},"decision":5,"outputs":["v0"]}]}`, `replay: instruction 0 (sample_categorical): sample_categorical: decision 5 is out of range for 2 candidates`},
	} {
		tr, err := ParseTrace([]byte(c.json))
		require.NoError(t, err, c.json)
		_, err = Replay(f, tr)
		require.Error(t, err, c.json)
		assert.Equal(t, c.want, err.Error())
	}
	for _, c := range []struct{ json, want string }{
		{`{"insts":[{"kind":""}]}`, `trace: instruction 0 has no kind`},
		{`{"insts":[{"kind":"split","bogus":1}]}`, `trace: json: unknown field "bogus"`},
		{`[`, `trace: unexpected EOF`},
	} {
		_, err := ParseTrace([]byte(c.json))
		require.Error(t, err)
		assert.Equal(t, c.want, err.Error())
	}
}

func TestAttrEncoding(t *testing.T) {
	for _, a := range []tir.Attr{
		tir.UnitAttr{}, tir.BoolAttr(false), tir.IntAttr(math.MaxInt64), tir.FloatAttr(1), tir.FloatAttr(-2.5),
		tir.FloatAttr(math.Inf(1)), tir.FloatAttr(math.Inf(-1)), tir.StringAttr(""),
		tir.ArrayAttr{}, tir.ArrayAttr{tir.ArrayAttr{tir.IntAttr(1)}, tir.UnitAttr{}},
	} {
		tr := &Trace{Insts: []Instruction{{Kind: "annotate", Attrs: map[string]any{"value": EncodeAttr(a)}}}}
		data, err := tr.JSON()
		require.NoError(t, err)
		back, err := ParseTrace(data)
		require.NoError(t, err)
		got, err := DecodeAttr(back.Insts[0].Attrs["value"])
		require.NoError(t, err)
		assert.Equal(t, a, got, string(data))
	}
	nan, err := DecodeAttr(EncodeAttr(tir.FloatAttr(math.NaN())))
	require.NoError(t, err)
	assert.True(t, math.IsNaN(float64(nan.(tir.FloatAttr))))
	_, err = DecodeAttr(map[string]any{"nope": 1})
	assert.EqualError(t, err, `unknown attribute kind "nope"`)
	_, err = DecodeAttr(3)
	assert.EqualError(t, err, `attribute value 3 is not a one-key object`)
}

func TestErrorRenderingIsBounded(t *testing.T) {
	s := New(parseFunc(t, convSrc))
	ls := mustLoops(t, s, "conv")
	err := s.Vectorize(ls[3])
	require.Error(t, err)
	_, err = s.Split(ls[0], []int64{1, 1})
	require.Error(t, err)
	assert.Equal(t, `split: block "conv", loop %co: factors [1, 1] multiply to 1, less than the extent 4
  tir.for %co = 0 to 4 {
    tir.for %h = 0 to 6 {
      tir.for %w = 0 to 6 {
        tir.for %ci = 0 to 3 {
          tir.for %kh = 0 to 3 {
            tir.for %kw = 0 to 3 {
              tir.block "conv"(%vco = spatial(0:4, %co), %vh = spatial(0:6, %h), %vw = spatial(0:6, %w), %vci = reduce(0:3, %ci), %vkh = reduce(0:3, %kh), %vkw = reduce(0:3, %kw)) reads(%I[%vci, %vh + %vkh, %vw + %vkw], %W[%vco, %vci, %vkh, %vkw]) writes(%O[%vco, %vh, %vw]) {
                tir.init {
                  %O[%vco, %vh, %vw] = 0.0
                }
                %O[%vco, %vh, %vw] = %O[%vco, %vh, %vw] + %I[%vci, %vh + %vkh, %vw + %vkw] * %W[%vco, %vci, %vkh, %vkw]
              }
            }
          }
  ... (4 more lines)`, err.Error())
}

// Loop handles made from loop variables (not returned by the schedule)
// get ids through an implicit get_loops, so their traces replay.
func TestHandlesFromVariables(t *testing.T) {
	f := parseFunc(t, convSrc)
	s := New(f)
	var vars []*tir.Var
	tir.VisitStmt(f.Body, func(st tir.Stmt) bool {
		if l, ok := st.(*tir.For); ok {
			vars = append(vars, l.Var)
		}
		return true
	})
	require.Len(t, vars, 6)
	_, err := s.Split(LoopRV{Var: vars[1]}, []int64{-1, 4})
	require.NoError(t, err)
	require.NoError(t, s.Parallel(LoopRV{Var: vars[0]}))
	_, err = s.Fuse(LoopRV{Var: vars[4]}, LoopRV{Var: vars[5]})
	require.NoError(t, err)
	assert.Equal(t, `b0 = get_block(name="conv")
l1, l2, l3, l4, l5, l6 = get_loops(b0)
l7, l8 = split(l2, factors=[-1,4])
parallel(l1)
l9 = fuse(l5, l6)
`, s.Trace().String())
	checkSame(t, s)
}
