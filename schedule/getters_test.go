package schedule

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const scopedSrc = `tir.func @g(%A: buffer<8xf32>, out %C: buffer<8xf32>) {
  tir.block "root"() alloc(%T: buffer<8xf32>, %U: buffer<8xf32>) {
    tir.for %i = 0 to 8 {
      tir.block "t"(%vi = spatial(0:8, %i)) reads(%A[%vi]) writes(%T[%vi]) {
        %T[%vi] = %A[%vi] + 1.0
      }
      tir.block "u"(%vi = spatial(0:8, %i)) reads(%A[%vi]) writes(%U[%vi]) {
        %U[%vi] = %A[%vi] * 2.0
      }
    }
    tir.for %i = 0 to 8 {
      tir.block "c"(%vi = spatial(0:8, %i)) reads(%T[%vi], %U[%vi]) writes(%C[%vi]) {
        %C[%vi] = %T[%vi] + %U[%vi]
      }
    }
  }
}
`

func names(bs []BlockRV) []string {
	out := []string{}
	for _, b := range bs {
		out = append(out, b.Name)
	}
	return out
}

func TestGetters(t *testing.T) {
	s := New(parseFunc(t, scopedSrc))
	c, err := s.GetBlock("c")
	require.NoError(t, err)
	ls, err := s.GetLoops(c)
	require.NoError(t, err)
	require.Len(t, ls, 1)
	assert.Equal(t, "i", ls[0].Name())
	root, err := s.GetBlock("root")
	require.NoError(t, err)
	rl, err := s.GetLoops(root)
	require.NoError(t, err)
	assert.Empty(t, rl)

	kids, err := s.GetChildBlocks(root)
	require.NoError(t, err)
	assert.Equal(t, []string{"t", "u", "c"}, names(kids))
	tl := mustLoops(t, s, "t")
	kids, err = s.GetChildBlocks(tl[0])
	require.NoError(t, err)
	assert.Equal(t, []string{"t", "u"}, names(kids))
	kids, err = s.GetChildBlocks(RootLoop)
	require.NoError(t, err)
	assert.Equal(t, []string{"root"}, names(kids))

	prods, err := s.GetProducers(c)
	require.NoError(t, err)
	assert.Equal(t, []string{"t", "u"}, names(prods))
	cons, err := s.GetConsumers(BlockRV{Name: "u"})
	require.NoError(t, err)
	assert.Equal(t, []string{"c"}, names(cons))
	cons, err = s.GetConsumers(c)
	require.NoError(t, err)
	assert.Empty(t, cons)
	prods, err = s.GetProducers(BlockRV{Name: "t"})
	require.NoError(t, err)
	assert.Empty(t, prods)

	// A handle's id is its most recent definition (b5, b12, ... below).
	assert.Equal(t, `b0 = get_block(name="c")
l1 = get_loops(b0)
b2 = get_block(name="root")
get_loops(b2)
b3, b4, b5 = get_child_blocks(b2)
b6 = get_block(name="t")
l7 = get_loops(b6)
b8, b9 = get_child_blocks(l7)
b10 = get_child_blocks(root)
b11, b12 = get_producers(b5)
b13 = get_consumers(b12)
get_consumers(b13)
get_producers(b11)
`, s.Trace().String())
	checkSame(t, s)

	// Getters see the scheduled function.
	_, err = s.Split(ls[0], []int64{2, 4})
	require.NoError(t, err)
	ls2, err := s.GetLoops(c)
	require.NoError(t, err)
	assert.Equal(t, "i_0", ls2[0].Name())
	assert.Equal(t, "i_1", ls2[1].Name())
	checkSame(t, s)
}

func TestGetterErrors(t *testing.T) {
	s := New(parseFunc(t, scopedSrc))
	for _, c := range []struct {
		do   func() error
		want string
	}{
		{func() error { _, err := s.GetBlock("x"); return err }, `get_block: no block named "x" in @g`},
		{func() error { _, err := s.GetLoops(BlockRV{Name: "x"}); return err }, `get_loops: block "x": no such block in @g`},
		{func() error { _, err := s.GetProducers(BlockRV{Name: "x"}); return err }, `get_producers: block "x": no such block in @g`},
		{func() error { _, err := s.GetConsumers(BlockRV{Name: "x"}); return err }, `get_consumers: block "x": no such block in @g`},
		{func() error { _, err := s.GetChildBlocks(BlockRV{Name: "x"}); return err }, `get_child_blocks: block "x": no such block in @g`},
		{func() error { _, err := s.GetChildBlocks(42); return err }, `get_child_blocks: parent 42 is neither a block nor a loop`},
	} {
		err := c.do()
		require.Error(t, err)
		assert.Equal(t, c.want, err.Error())
	}
	assert.Empty(t, s.Trace().Insts)
}
