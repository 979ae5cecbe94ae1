package hlo

import (
	"testing"

	"github.com/stretchr/testify/require"
	g "github.com/tessera-ml/tessera/graphir"
)

// scatterOne builds main(x, indices, updates) { hlo.scatter with bodyOp }
// and interprets it.
func scatterOne(t *testing.T, d ScatterDims, bodyOp string, x, ind, upd *g.Tensor) *g.Tensor {
	t.Helper()
	b := newFB(t, x.Type, ind.Type, upd.Type)
	op := b.add(Scatter(b.arg(0), b.arg(1), b.arg(2), d, bodyOp, loc()))
	b.ret(op.Results...)
	require.NoError(t, b.verify())
	return interpret(t, b.f, []*g.Tensor{x, ind, upd})[0]
}

// TestScatterEval: hand-computed scatters. Rows of a 4×3 operand with
// duplicate start indices (replaced: the last wins; added: both count),
// and windows of 2 rows at start indices of which −1 and 3 do not fit (the
// window would leave the operand): those updates are skipped whole.
func TestScatterEval(t *testing.T) {
	x := tensorOf(f32(4, 3), 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)
	rows := ScatterDims{UpdateWindowDims: []int64{1}, InsertedWindowDims: []int64{0}, ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1}
	ind := tensorOf(tt(g.I64, 3), 2, 0, 2)
	upd := tensorOf(f32(3, 3), 10, 20, 30, 40, 50, 60, 70, 80, 90)
	require.Equal(t, []float64{40, 50, 60, 3, 4, 5, 70, 80, 90, 9, 10, 11}, scatterOne(t, rows, "", x, ind, upd).Data)
	require.Equal(t, []float64{40, 51, 62, 3, 4, 5, 86, 107, 128, 9, 10, 11}, scatterOne(t, rows, AddOp, x, ind, upd).Data)
	require.Equal(t, []float64{0, 50, 120, 3, 4, 5, 4200, 11200, 21600, 9, 10, 11}, scatterOne(t, rows, MultiplyOp, x, ind, upd).Data)

	// Windows of 2×2 at (start, 0) for start in {−1, 1, 3, 2}: 1 and 2 fit
	// (and overlap in row 2), −1 and 3 do not (the window would leave the
	// operand), so their updates of 100 are skipped whole.
	win := ScatterDims{UpdateWindowDims: []int64{1, 2}, ScatterDimsToOperandDims: []int64{0}, IndexVectorDim: 1}
	upd = tensorOf(f32(4, 2, 2), 100, 100, 100, 100, 1, 2, 3, 4, 100, 100, 100, 100, 5, 6, 7, 8)
	got := scatterOne(t, win, AddOp, x, tensorOf(tt(g.I32, 4), -1, 1, 3, 2), upd)
	require.Equal(t, []float64{0, 1, 2, 4, 6, 5, 14, 17, 8, 16, 18, 11}, got.Data)
	got = scatterOne(t, win, AddOp, x, tensorOf(tt(g.I32, 4), -1, 3, 4, -2), upd)
	require.Equal(t, x.Data, got.Data, "no window fits")
	require.Equal(t, []float64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, x.Data, "the operand is not modified")
}
