package main

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/graphir"
)

// TestCommittedExampleIsCurrent: examples/mlp_small.mlir is exactly what
// the generator writes, and it parses back to a verified module whose
// constants are full (not splat) dense values.
func TestCommittedExampleIsCurrent(t *testing.T) {
	want, err := Generate()
	require.NoError(t, err)
	got, err := os.ReadFile("../mlp_small.mlir")
	require.NoError(t, err)
	require.Equal(t, want, string(got), "examples/mlp_small.mlir is stale: run go generate ./examples/gen")

	m, err := graphir.Parse("mlp_small.mlir", got)
	require.NoError(t, err)
	require.NoError(t, graphir.Verify(m))
	consts := 0
	distinct := map[float64]bool{}
	m.Walk(func(op *graphir.Op) {
		if d, ok := op.Attr("value").(*graphir.DenseElementsAttr); ok {
			consts++
			assert.False(t, d.IsSplat(), "%s constant is a splat", d.Type)
			assert.Equal(t, int(d.Type.NumElements()), d.Len())
			for _, v := range d.Floats {
				distinct[v] = true
			}
		}
	})
	assert.Equal(t, 4, consts)
	assert.Greater(t, len(distinct), 1000, "weights should look random")
}
