package llvm

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// A guarded-tail register tile (the default rules' 16-lane columns over a
// 20-wide row): the block predicate mentions the vector lane and the
// column tile jo, so jo's last iteration is peeled (a constant lane mask)
// and the k loop of the others is versioned (whole, unmasked vectors when
// every lane is in range). Rows run in reverse (vr = 2 - r), so a tail
// lane stored past a row's end would clobber the finished row after it:
// results must equal the interpreter's exactly.
const versionText = `tir.func @ver(%X: buffer<3x5x20xf32>, out %Y: buffer<3x20xf32>) {
  tir.for %r = 0 to 3 {
    tir.for %jo = 0 to 2 {
      tir.for %k = 0 to 5 {
        tir.for %ji = 0 to 16 vectorized {
          tir.block "acc"(%vr = spatial(0:3, 2 - %r), %vj = spatial(0:20, %jo * 16 + %ji), %vk = reduce(0:5, %k)) where(%jo * 16 + %ji < 20) reads(%X[%vr, %vk, %vj]) writes(%Y[%vr, %vj]) {
            tir.init {
              %Y[%vr, %vj] = 0.0
            }
            %Y[%vr, %vj] = %Y[%vr, %vj] + %X[%vr, %vk, %vj]
          }
        }
      }
    }
  }
}
`

func TestLanePredicateVersioning(t *testing.T) {
	res, _ := checkAgainstInterp(t, parseModule(t, versionText), "ver", Options{}, 5, 0)
	ll := res.LLVM()
	assert.Contains(t, ll, "store <16 x float>", "the versioned copy stores whole vectors")
	assert.Contains(t, ll, "@llvm.masked.store.v16f32", "the tail (and the fallback copy) masked")
}
