package hlo

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	g "github.com/tessera-ml/tessera/graphir"
)

// TestEveryOpHasALowering: every hlo op but the structural ones (the
// constant, the fusion and its terminator, which lower-to-tir handles
// itself) registers a tensor IR lowering with its definition, elementwise
// ops a scalar one and the others a computation.
func TestEveryOpHasALowering(t *testing.T) {
	for _, name := range g.RegisteredOps() {
		if !strings.HasPrefix(name, "hlo.") {
			continue
		}
		def := g.LookupOp(name)
		low, ok := LoweringOf(name)
		if def.Traits&(g.ConstantLike|g.Terminator) != 0 || name == FusionOp {
			assert.False(t, ok, "%s is structural and needs no lowering", name)
			continue
		}
		if assert.True(t, ok, "%s has no tensor IR lowering", name) {
			assert.Equal(t, def.Traits&g.Elementwise != 0, low.Scalar != nil, "%s: elementwise ops lower through Scalar, the others through Compute", name)
			n := 0
			for _, set := range []bool{low.Scalar != nil, low.Compute != nil, low.Kernel != nil} {
				if set {
					n++
				}
			}
			assert.Equal(t, 1, n, "%s must have exactly one of Scalar, Compute and Kernel", name)
			assert.Equal(t, def.Traits&g.Opaque != 0, low.Kernel != nil, "%s: Opaque ops (only they) lower through Kernel", name)
		}
	}
}

// TestFusionKindsFromTraits: every hlo op the fuse pass may put in a
// fusion carries exactly one of the fusion traits (Opaque ops, which are
// fusions of their own, none of the others), and heroes none of the
// elementwise ones.
func TestFusionKindsFromTraits(t *testing.T) {
	for _, name := range g.RegisteredOps() {
		def := g.LookupOp(name)
		if !strings.HasPrefix(name, "hlo.") || def.Traits&(g.ConstantLike|g.Terminator) != 0 || name == FusionOp {
			continue
		}
		hero := def.Traits&(g.Reduction|g.Contraction) != 0
		local := def.Traits&(g.Elementwise|g.Injective) != 0
		if def.Traits&g.Opaque != 0 {
			assert.False(t, hero || local, "%s: Opaque ops carry no other fusion trait", name)
			continue
		}
		assert.True(t, hero != local, "%s must be a hero (Reduction, Contraction) or elementwise-like (Elementwise, Injective)", name)
		if def.Traits&g.LayoutOnly != 0 {
			assert.NotZero(t, def.Traits&g.DataMovement, "%s: LayoutOnly ops move data", name)
		}
	}
}
