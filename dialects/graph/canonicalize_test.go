package graph

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/tessera-ml/tessera/graphir"
)

// canonicalizeCase parses src twice, canonicalizes one copy with the graph
// patterns and checks the op counts and the numerical equivalence.
func canonicalizeCase(t *testing.T, src string, wantCounts map[string]int) *graphir.Module {
	t.Helper()
	before := parseModule(t, src)
	after := parseModule(t, src)
	changed, err := graphir.ApplyPatternsGreedily(after.Lookup("main"), graphPatterns())
	require.NoError(t, err)
	require.True(t, changed)
	require.NoError(t, graphir.Verify(after))
	for name, n := range wantCounts {
		assert.Equal(t, n, countOps(after, name), "count of %s in\n%s", name, graphir.Print(after))
	}
	requireSameResults(t, before, after)
	return after
}

func TestCanonicalizeReshapeChain(t *testing.T) {
	m := canonicalizeCase(t, `module {
  func.func @main(%arg0: tensor<2x3x4xf32>) -> tensor<4x6xf32> {
    %0 = graph.reshape %arg0 {shape = [6, -1]} : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
    %1 = graph.reshape %0 {shape = [0, 2, 2]} : (tensor<6x4xf32>) -> tensor<6x2x2xf32>
    %2 = graph.flatten %1 {axis = 1} : (tensor<6x2x2xf32>) -> tensor<6x4xf32>
    %3 = graph.reshape %2 {shape = [4, 6]} : (tensor<6x4xf32>) -> tensor<4x6xf32>
    func.return %3 : tensor<4x6xf32>
  }
}`, map[string]int{ReshapeOp: 1, FlattenOp: 0})
	op := m.Lookup("main").Entry().First()
	assert.Equal(t, ReshapeOp, op.Name)
	assert.Equal(t, []int64{4, 6}, must(op.Ints("shape")))
	assert.Equal(t, m.Lookup("main").Args()[0], op.Operand(0))
}

func TestCanonicalizeReshapeChainBackToInput(t *testing.T) {
	canonicalizeCase(t, `module {
  func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = graph.flatten %arg0 {axis = 0} : (tensor<2x3xf32>) -> tensor<1x6xf32>
    %1 = graph.reshape %0 {shape = [2, 3]} : (tensor<1x6xf32>) -> tensor<2x3xf32>
    %2 = graph.relu %1 : tensor<2x3xf32>
    func.return %2 : tensor<2x3xf32>
  }
}`, map[string]int{ReshapeOp: 0, FlattenOp: 0, ReluOp: 1})
}

func TestCanonicalizeIdentityReshapeAndFlatten(t *testing.T) {
	canonicalizeCase(t, `module {
  func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = graph.reshape %arg0 {shape = [2, 3]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    %1 = graph.flatten %0 : tensor<2x3xf32>
    %2 = graph.sigmoid %1 : tensor<2x3xf32>
    func.return %2 : tensor<2x3xf32>
  }
}`, map[string]int{ReshapeOp: 0, FlattenOp: 0, SigmoidOp: 1})
}

func TestCanonicalizeReshapeChainWithZeroDimKept(t *testing.T) {
	// a 0-sized result cannot be written as a shape attribute (0 means copy)
	m := parseModule(t, `module {
  func.func @main(%arg0: tensor<3x0xf32>) -> tensor<0x3xf32> {
    %0 = graph.reshape %arg0 {shape = [-1]} : (tensor<3x0xf32>) -> tensor<0xf32>
    %1 = graph.reshape %0 {shape = [-1, 3]} : (tensor<0xf32>) -> tensor<0x3xf32>
    func.return %1 : tensor<0x3xf32>
  }
}`)
	_, err := graphir.ApplyPatternsGreedily(m.Lookup("main"), graphPatterns())
	require.NoError(t, err)
	require.NoError(t, graphir.Verify(m))
	assert.Equal(t, 2, countOps(m, ReshapeOp))
}

func TestCanonicalizeTranspose(t *testing.T) {
	m := canonicalizeCase(t, `module {
  func.func @main(%arg0: tensor<2x3x4xf32>) -> tensor<3x4x2xf32> {
    %0 = graph.transpose %arg0 {perm = [1, 0, 2]} : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
    %1 = graph.transpose %0 {perm = [0, 2, 1]} : (tensor<3x2x4xf32>) -> tensor<3x4x2xf32>
    func.return %1 : tensor<3x4x2xf32>
  }
}`, map[string]int{TransposeOp: 1})
	op := m.Lookup("main").Entry().First()
	assert.Equal(t, []int64{1, 2, 0}, must(op.Ints("perm")))

	canonicalizeCase(t, `module {
  func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = graph.transpose %arg0 : (tensor<2x3xf32>) -> tensor<3x2xf32>
    %1 = graph.transpose %0 {perm = [1, 0]} : (tensor<3x2xf32>) -> tensor<2x3xf32>
    %2 = graph.transpose %1 {perm = [0, 1]} : tensor<2x3xf32>
    %3 = graph.tanh %2 : tensor<2x3xf32>
    func.return %3 : tensor<2x3xf32>
  }
}`, map[string]int{TransposeOp: 0, TanhOp: 1})
}

func TestCanonicalizeKeepsSquareTranspose(t *testing.T) {
	// same type but not the identity: must stay
	m := parseModule(t, `module {
  func.func @main(%arg0: tensor<3x3xf32>) -> tensor<3x3xf32> {
    %0 = graph.transpose %arg0 : tensor<3x3xf32>
    func.return %0 : tensor<3x3xf32>
  }
}`)
	changed, err := graphir.ApplyPatternsGreedily(m.Lookup("main"), graphPatterns())
	require.NoError(t, err)
	assert.False(t, changed)
	assert.Equal(t, 1, countOps(m, TransposeOp))
}

func TestCanonicalizeReluConcat(t *testing.T) {
	canonicalizeCase(t, `module {
  func.func @main(%arg0: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = graph.relu %arg0 : tensor<2x3xf32>
    %1 = graph.relu %0 : tensor<2x3xf32>
    %2 = graph.relu %1 : tensor<2x3xf32>
    %3 = graph.concat %2 {axis = 1} : tensor<2x3xf32>
    func.return %3 : tensor<2x3xf32>
  }
}`, map[string]int{ReluOp: 1, ConcatOp: 0})
}
