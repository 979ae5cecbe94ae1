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

// padText is an elementwise pad of a 3×13 image by one element on each
// side, as the default rules schedule it: a serial loop %t over 8-lane
// tiles of the 15-wide output row, the last tile guarded by the block
// predicate. Loop versioning cannot drop that predicate (it uses %t, the
// loop inside which the versioned loop would run); the tile loop is
// split on it instead, with the padding select's lane facts, so the
// middle tiles load and store whole vectors.
const padText = `tir.func @pad(%X: buffer<3x13xf32>, out %Y: buffer<5x15xf32>) {
  tir.for %r = 0 to 5 {
    tir.for %t = 0 to 2 {
      tir.for %i = 0 to 8 vectorized {
        tir.block "pad"(%vr = spatial(0:5, %r), %vc = spatial(0:15, %t * 8 + %i)) where(%t * 8 + %i < 15) reads(%X[0:3, 0:13]) writes(%Y[%vr, %vc]) {
          %Y[%vr, %vc] = select(%vr - 1 >= 0 && %vr - 1 < 3 && %vc - 1 >= 0 && %vc - 1 < 13, %X[min(max(%vr - 1, 0), 2), min(max(%vc - 1, 0), 12)], 0.0)
        }
      }
    }
  }
}
`

// copyText is a 21-element copy in 8-lane tiles: the predicate alone.
const copyText = `tir.func @cp(%X: buffer<21xf32>, out %Y: buffer<21xf32>) {
  tir.for %t = 0 to 3 {
    tir.for %i = 0 to 8 vectorized {
      tir.block "cp"(%v = spatial(0:21, %t * 8 + %i)) where(%t * 8 + %i < 21) reads(%X[%v]) writes(%Y[%v]) {
        %Y[%v] = %X[%v] * 2.0
      }
    }
  }
}
`

func TestLanePredicatePartition(t *testing.T) {
	for _, c := range []struct{ name, text string }{{"pad", padText}, {"cp", copyText}} {
		t.Run(c.name, func(t *testing.T) {
			res, _ := checkAgainstInterp(t, parseModule(t, c.text), c.name, Options{}, 5, 0)
			ll := res.LLVM()
			assert.Contains(t, ll, "store <8 x float>", "the middle tiles store whole vectors")
			assert.Contains(t, ll, "@llvm.masked.store.v8f32", "the tail tile is masked")
		})
	}
}
