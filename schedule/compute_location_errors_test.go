package schedule

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Two outputs: "first" writes the parameter %D, which "second" reads.
const twoOutputsSrc = `tir.func @two(%A: buffer<8xf32>, out %D: buffer<8xf32>, out %E: buffer<8xf32>) attributes {tessera.kernel} {
  tir.for %i = 0 to 8 {
    tir.block "first"(%vi = spatial(0:8, %i)) reads(%A[%vi]) writes(%D[%vi]) {
      %D[%vi] = %A[%vi] * 2.0
    }
  }
  tir.for %i = 0 to 8 {
    tir.block "second"(%vi = spatial(0:8, %i)) reads(%D[%vi]) writes(%E[%vi]) {
      %E[%vi] = %D[%vi] + 1.0
    }
  }
}
`

// A running sum through an intermediate: "scan" reads the element of %T
// it wrote at the previous iteration.
const scanSrc = `tir.func @scan(%A: buffer<8xf32>, out %D: buffer<8xf32>) attributes {tessera.kernel} {
  tir.allocate %T: buffer<8xf32, "local"> {
    tir.for %i = 0 to 8 {
      tir.block "scan"(%vi = spatial(0:8, %i)) reads(%A[%vi], %T[0:8]) writes(%T[%vi]) {
        %T[%vi] = select(%vi > 0, %T[max(%vi - 1, 0)], 0.0) + %A[%vi]
      }
    }
    tir.for %i = 0 to 8 {
      tir.block "use"(%vi = spatial(0:8, %i)) reads(%T[%vi]) writes(%D[%vi]) {
        %D[%vi] = %T[%vi] * 2.0
      }
    }
  }
}
`

// refusal is an illegal request and the first line of its error: the
// primitive, the block, the loop and the reason.
type refusal struct {
	name, workload string
	apply          func(t *testing.T, s *Schedule) error
	want           string
	ir             string // the first line of the rendered IR
}

var refusals = []refusal{
	{"compute_at output block", "two", func(t *testing.T, s *Schedule) error {
		return s.ComputeAt(block(t, s, "first"), mustLoops(t, s, "second")[0])
	}, `compute_at: block "first", loop %i: the block writes %D, a parameter of @two (an output block cannot be computed at a loop)`,
		`tir.for %i = 0 to 8 {`},
	{"compute_at scan", "scan", func(t *testing.T, s *Schedule) error {
		return s.ComputeAt(block(t, s, "scan"), mustLoops(t, s, "use")[0])
	}, `compute_at: block "scan", loop %i: the block reads %T, which it writes, at other elements than it updates (not a complete block)`,
		`tir.block "scan"(%vi = spatial(0:8, %i)) reads(%A[%vi], %T[0:8]) writes(%T[%vi]) {`},
	{"compute_at consumer outside", "softmax", func(t *testing.T, s *Schedule) error {
		return s.ComputeAt(block(t, s, "exp"), mustLoops(t, s, "div")[0])
	}, `compute_at: block "exp", loop %i: consumer block "sum" of %E is not under the loop`,
		`tir.block "sum"(%vi = spatial(0:4, %i), %vk = reduce(0:10, %k)) reads(%E[%vi, %vk]) writes(%S[%vi]) {`},
	{"compute_at after loop", "chain", func(t *testing.T, s *Schedule) error {
		return s.ComputeAt(block(t, s, "relu"), mustLoops(t, s, "add")[0])
	}, `compute_at: block "relu", loop %i: the block runs after the loop; use reverse_compute_at to move a consumer`,
		`tir.for %i = 0 to 6 {`},
	{"compute_at under loop", "chain", func(t *testing.T, s *Schedule) error {
		return s.ComputeAt(block(t, s, "add"), mustLoops(t, s, "add")[1])
	}, `compute_at: block "add", loop %j: the block is already under the loop`,
		`tir.for %j = 0 to 14 {`},
	{"compute_at predicate", "chain", func(t *testing.T, s *Schedule) error {
		_, err := s.Split(mustLoops(t, s, "add")[0], []int64{-1, 4})
		require.NoError(t, err)
		return s.ComputeAt(block(t, s, "add"), mustLoops(t, s, "relu")[0])
	}, `compute_at: block "add", loop %i: the block has a predicate %i_0 * 4 + %i_1 < 6 (a guarded tail); move it before splitting its loops`,
		`tir.block "add"(%vi = spatial(0:6, %i_0 * 4 + %i_1), %vj = spatial(0:14, %j)) where(%i_0 * 4 + %i_1 < 6) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {`},
	{"reverse_compute_at before loop", "chain", func(t *testing.T, s *Schedule) error {
		return s.ReverseComputeAt(block(t, s, "add"), mustLoops(t, s, "relu")[0])
	}, `reverse_compute_at: block "add", loop %i: the block runs before the loop; use compute_at to move a producer`,
		`tir.for %i = 0 to 6 {`},
	{"reverse_compute_at dependence", "softmax", func(t *testing.T, s *Schedule) error {
		return s.ReverseComputeAt(block(t, s, "div"), mustLoops(t, s, "exp")[0])
	}, `reverse_compute_at: block "div", loop %i: block "sum" writes %S between the loop and the block; moving the block would break the dependence`,
		`tir.block "sum"(%vi = spatial(0:4, %i), %vk = reduce(0:10, %k)) reads(%E[%vi, %vk]) writes(%S[%vi]) {`},
	{"reverse_compute_at splits reduction", "softmax", func(t *testing.T, s *Schedule) error {
		require.NoError(t, s.ReverseComputeAt(block(t, s, "exp"), mustLoops(t, s, "max")[0]))
		return s.ReverseComputeAt(block(t, s, "sum"), mustLoops(t, s, "exp")[1])
	}, `reverse_compute_at: block "sum", loop %ax0: the loop produces part of the range of the reduce variable %vk; moving the block would split its reduction`,
		`tir.for %ax0 = 0 to 10 {`},
	{"reverse_compute_at no producer", "conv_bias_relu", func(t *testing.T, s *Schedule) error {
		return s.ReverseComputeAt(block(t, s, "relu"), mustLoops(t, s, "conv")[0])
	}, `reverse_compute_at: block "relu", loop %co: no producer of the block's inputs under the loop`,
		`tir.for %co = 0 to 3 {`},
	{"compute_inline bound to shared loops", "softmax", func(t *testing.T, s *Schedule) error {
		i := mustLoops(t, s, "div")[0]
		require.NoError(t, s.ComputeAt(block(t, s, "sum"), i))
		require.NoError(t, s.ComputeAt(block(t, s, "exp"), i))
		return s.ComputeInline(block(t, s, "exp"))
	}, `compute_inline: block "exp": the block is bound to loops that also hold other statements`,
		`tir.block "exp"(%vi = spatial(0:4, %i), %vj = spatial(0:10, %ax0)) reads(%X[%vi, %vj], %M[%vi]) writes(%E[%vi, %vj]) {`},
	{"compute_inline reduction", "softmax", func(t *testing.T, s *Schedule) error {
		return s.ComputeInline(block(t, s, "sum"))
	}, `compute_inline: block "sum": the block is a reduction (reduce iteration variable %vk); only spatial blocks can be inlined`,
		`tir.block "sum"(%vi = spatial(0:4, %i), %vk = reduce(0:10, %k)) reads(%E[%vi, %vk]) writes(%S[%vi]) {`},
	{"compute_inline output", "chain", func(t *testing.T, s *Schedule) error {
		return s.ComputeInline(block(t, s, "relu"))
	}, `compute_inline: block "relu": the block writes the output buffer %D (a parameter of @ew)`,
		`tir.block "relu"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%T[%vi, %vj]) writes(%D[%vi, %vj]) {`},
	{"reverse_compute_inline reduction", "softmax", func(t *testing.T, s *Schedule) error {
		return s.ReverseComputeInline(block(t, s, "sum"))
	}, `reverse_compute_inline: block "sum": the block is a reduction (reduce iteration variable %vk); only spatial consumers can be inlined`,
		`tir.block "sum"(%vi = spatial(0:4, %i), %vk = reduce(0:10, %k)) reads(%E[%vi, %vk]) writes(%S[%vi]) {`},
	{"reverse_compute_inline reduction producer", "conv_bias_relu", func(t *testing.T, s *Schedule) error {
		return s.ReverseComputeInline(block(t, s, "bias"))
	}, `reverse_compute_inline: block "bias": the producer "conv" is not a single store without init, predicate (other than its tail guards) or allocations`,
		`tir.block "bias"(%vco = spatial(0:3, %co), %vh = spatial(0:6, %h), %vw = spatial(0:6, %w)) reads(%C[%vco, %vh, %vw], %Bs[%vco]) writes(%T[%vco, %vh, %vw]) {`},
	{"reverse_compute_inline two intermediates", "softmax", func(t *testing.T, s *Schedule) error {
		return s.ReverseComputeInline(block(t, s, "div"))
	}, `reverse_compute_inline: block "div": the block reads two intermediate buffers, %E and %S`,
		`tir.block "div"(%vi = spatial(0:4, %i), %vj = spatial(0:10, %j)) reads(%E[%vi, %vj], %S[%vi]) writes(%Y[%vi, %vj]) {`},
	{"reverse_compute_inline no intermediate", "gemm", func(t *testing.T, s *Schedule) error {
		return s.ReverseComputeInline(block(t, s, "C"))
	}, `reverse_compute_inline: block "C": the block is a reduction (reduce iteration variable %vk); only spatial consumers can be inlined`,
		`tir.block "C"(%vi = spatial(0:16, %i), %vj = spatial(0:10, %j), %vk = reduce(0:12, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {`},
	{"cache_read bad scope", "gemm", func(t *testing.T, s *Schedule) error {
		_, err := s.CacheRead(block(t, s, "C"), 0, "texture")
		return err
	}, `cache_read: block "C": unknown storage scope "texture" (want global, shared or local)`,
		`tir.block "C"(%vi = spatial(0:16, %i), %vj = spatial(0:10, %j), %vk = reduce(0:12, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {`},
	{"cache_read index", "gemm", func(t *testing.T, s *Schedule) error {
		_, err := s.CacheRead(block(t, s, "C"), 2, "local")
		return err
	}, `cache_read: block "C": read index 2 is out of range: the block has 2 read regions`,
		`tir.block "C"(%vi = spatial(0:16, %i), %vj = spatial(0:10, %j), %vk = reduce(0:12, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {`},
	{"cache_write accumulate", "gemm", func(t *testing.T, s *Schedule) error {
		_, err := s.DecomposeReduction(block(t, s, "C"), mustLoops(t, s, "C")[0])
		require.NoError(t, err)
		_, err = s.CacheWrite(block(t, s, "C"), 0, "local")
		return err
	}, `cache_write: block "C": the block reads the prior contents of %C, which the cache would not hold`,
		`tir.block "C"(%vi = spatial(0:16, %i), %vj = spatial(0:10, %j), %vk = reduce(0:12, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) annotations {tessera.accumulate} {`},
	{"set_scope parameter", "gemm", func(t *testing.T, s *Schedule) error {
		return s.SetScope(block(t, s, "C"), 0, "local")
	}, `set_scope: block "C": %C is a parameter of @gemm; only buffers allocated in the function can change`,
		`tir.block "C"(%vi = spatial(0:16, %i), %vj = spatial(0:10, %j), %vk = reduce(0:12, %k)) reads(%A[%vi, %vk], %B[%vk, %vj]) writes(%C[%vi, %vj]) {`},
	{"storage_align axis", "chain", func(t *testing.T, s *Schedule) error {
		return s.StorageAlign(block(t, s, "add"), 0, 2, 16, 1)
	}, `storage_align: block "add": axis 2 is out of range for %T of rank 2`,
		`tir.block "add"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {`},
	{"storage_align offset", "chain", func(t *testing.T, s *Schedule) error {
		return s.StorageAlign(block(t, s, "add"), 0, 0, 16, 16)
	}, `storage_align: block "add": factor 16 and offset 16: want factor > 0 and 0 <= offset < factor`,
		`tir.block "add"(%vi = spatial(0:6, %i), %vj = spatial(0:14, %j)) reads(%A[%vi, %vj], %B[%vj]) writes(%T[%vi, %vj]) {`},
	{"decompose no init", "chain", func(t *testing.T, s *Schedule) error {
		_, err := s.DecomposeReduction(block(t, s, "add"), mustLoops(t, s, "add")[0])
		return err
	}, `decompose_reduction: block "add", loop %i: the block has no init to decompose`,
		`tir.for %i = 0 to 6 {`},
	{"decompose inside reduction", "gemm", func(t *testing.T, s *Schedule) error {
		require.NoError(t, s.Reorder(mustLoops(t, s, "C")[2], mustLoops(t, s, "C")[0]))
		_, err := s.DecomposeReduction(block(t, s, "C"), mustLoops(t, s, "C")[1])
		return err
	}, `decompose_reduction: block "C", loop %j: loop %k above the loop feeds a reduce variable; the init would run inside the reduction`,
		`tir.for %j = 0 to 10 {`},
	{"decompose not ancestor", "softmax", func(t *testing.T, s *Schedule) error {
		_, err := s.DecomposeReduction(block(t, s, "sum"), mustLoops(t, s, "max")[0])
		return err
	}, `decompose_reduction: block "sum", loop %i: the loop is not an ancestor of the block in its scope`,
		`tir.for %i = 0 to 4 {`},
	{"rfactor spatial loop", "gemm", func(t *testing.T, s *Schedule) error {
		_, err := s.RFactor(mustLoops(t, s, "C")[0], 0)
		return err
	}, `rfactor: block "C", loop %i: the loop does not feed a reduce variable of the block`,
		`tir.for %i = 0 to 16 {`},
	{"rfactor not identity", "pool", func(t *testing.T, s *Schedule) error {
		_, err := s.RFactor(mustLoops(t, s, "pool")[3], 0)
		return err
	}, `rfactor: block "pool", loop %ry: the init value -1000.0 is not the identity of max`,
		`tir.for %ry = 0 to 2 {`},
	{"rfactor axis", "gemm", func(t *testing.T, s *Schedule) error {
		_, err := s.RFactor(mustLoops(t, s, "C")[2], 3)
		return err
	}, `rfactor: block "C", loop %k: factor axis 3 is out of range for %C of rank 2`,
		`tir.for %k = 0 to 12 {`},
	{"rfactor two blocks", "chain", func(t *testing.T, s *Schedule) error {
		require.NoError(t, s.ComputeAt(block(t, s, "add"), mustLoops(t, s, "relu")[0]))
		_, err := s.RFactor(mustLoops(t, s, "relu")[0], 0)
		return err
	}, `rfactor: block "add", loop %i: the loop holds 2 blocks, want exactly one`,
		`tir.for %i = 0 to 6 {`},
	{"sample_compute_location decision", "softmax", func(t *testing.T, s *Schedule) error {
		d := int64(5)
		_, err := s.sampleComputeLocation(block(t, s, "exp"), &d)
		return err
	}, `sample_compute_location: block "exp": decision 5 is not -1 (root) or the index of one of the 0 legal locations`,
		`tir.block "exp"(%vi = spatial(0:4, %i), %vj = spatial(0:10, %j)) reads(%X[%vi, %vj], %M[%vi]) writes(%E[%vi, %vj]) {`},
}

// TestRefusals checks each legality error: an *Error whose message names
// the primitive, block, loop and reason and renders the offending IR, and
// the schedule is left consistent.
func TestRefusals(t *testing.T) {
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			var s *Schedule
			switch c.workload {
			case "two":
				s = New(parseFunc(t, twoOutputsSrc))
			case "scan":
				s = New(parseFunc(t, scanSrc))
			default:
				s = New(locWorkload(t, c.workload))
			}
			err := c.apply(t, s)
			require.Error(t, err)
			var se *Error
			require.True(t, errors.As(err, &se), "%T", err)
			lines := strings.Split(err.Error(), "\n")
			assert.Equal(t, c.want, lines[0])
			require.Greater(t, len(lines), 1, "no IR rendered")
			assert.Equal(t, "  "+c.ir, lines[1])
			assert.NotContains(t, err.Error(), "not rendered")
			// The refusal left the schedule as it was: it verifies, computes
			// what the original computes and its trace (without the refused
			// step) replays to it.
			checkSame(t, s)
		})
	}
}
