package graphir_test

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/tessera-ml/tessera/graphir"
)

func TestDictAttrIsPersistent(t *testing.T) {
	base := make(graphir.DictAttr, 0, 8).Set("a", graphir.IntAttr(1)).Set("c", graphir.IntAttr(3))
	x := base.Set("b", graphir.IntAttr(2))
	y := base.Set("b", graphir.IntAttr(20))
	z := base.Set("a", graphir.IntAttr(10)).Delete("c")
	assert.Equal(t, `{a = 1, c = 3}`, graphir.FormatAttr(base))
	assert.Equal(t, `{a = 1, b = 2, c = 3}`, graphir.FormatAttr(x))
	assert.Equal(t, `{a = 1, b = 20, c = 3}`, graphir.FormatAttr(y))
	assert.Equal(t, `{a = 10}`, graphir.FormatAttr(z))
	assert.Nil(t, x.Get("zz"))
}
