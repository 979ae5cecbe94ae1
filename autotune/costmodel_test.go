package autotune

import (
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/schedule"
)

var _ CostModel = (*GBDT)(nil)

// cmRanks are the ranks of xs (ties get their average rank).
func cmRanks(xs []float64) []float64 {
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return xs[idx[a]] < xs[idx[b]] })
	r := make([]float64, len(xs))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && xs[idx[j+1]] == xs[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j) / 2
		}
		i = j + 1
	}
	return r
}

// cmSpearman is Spearman's rank correlation of a and b.
func cmSpearman(a, b []float64) float64 {
	ra, rb := cmRanks(a), cmRanks(b)
	var ma, mb float64
	for i := range ra {
		ma += ra[i]
		mb += rb[i]
	}
	ma /= float64(len(ra))
	mb /= float64(len(rb))
	var sab, saa, sbb float64
	for i := range ra {
		sab += (ra[i] - ma) * (rb[i] - mb)
		saa += (ra[i] - ma) * (ra[i] - ma)
		sbb += (rb[i] - mb) * (rb[i] - mb)
	}
	if saa == 0 || sbb == 0 {
		return 0
	}
	return sab / math.Sqrt(saa*sbb)
}

// cmSynthetic draws n rows of d features in [0, 1) (plus a constant and
// a discrete column) and a nonlinear target with interactions.
func cmSynthetic(rng *rand.Rand, n, d int) ([][]float64, []float64) {
	xs := make([][]float64, n)
	ys := make([]float64, n)
	for i := range xs {
		x := make([]float64, d)
		for j := range x {
			x[j] = rng.Float64()
		}
		x[d-1] = 3                    // constant
		x[d-2] = float64(rng.Intn(4)) // discrete
		y := math.Sin(3*x[0]) * x[1]  // smooth interaction
		if x[2] > 0.5 {               // threshold
			y += x[3] * x[3]
		}
		y += 0.3 * x[d-2] * x[4]
		y += 0.01 * rng.NormFloat64()
		xs[i] = x
		ys[i] = y
	}
	return xs, ys
}

func TestGBDTLearnsNonlinear(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	xs, ys := cmSynthetic(rng, 2000, 12)
	m := NewGBDT(1)
	m.Update(xs[:1500], ys[:1500])
	require.Equal(t, 1500, m.NumSamples())
	pred := m.Predict(xs[1500:])
	rho := cmSpearman(pred, ys[1500:])
	t.Logf("held-out Spearman %.4f", rho)
	require.Greater(t, rho, 0.9)
	// Much better than predicting the mean: R² on held-out data.
	var mean float64
	for _, y := range ys[1500:] {
		mean += y
	}
	mean /= 500
	var sse, sst float64
	for i, y := range ys[1500:] {
		sse += (pred[i] - y) * (pred[i] - y)
		sst += (mean - y) * (mean - y)
	}
	require.Greater(t, 1-sse/sst, 0.8)
}

// Scores in [0, 1] that grow with one feature among noise features.
func TestGBDTMonotone(t *testing.T) {
	rng := rand.New(rand.NewSource(11))
	var xs [][]float64
	var ys []float64
	for i := 0; i < 400; i++ {
		x := []float64{rng.Float64() * 10, rng.Float64(), rng.Float64()}
		xs = append(xs, x)
		ys = append(ys, x[0]/10)
	}
	m := NewGBDT(3)
	m.Update(xs, ys)
	var grid [][]float64
	var want []float64
	for v := 0.05; v < 10; v += 0.1 {
		grid = append(grid, []float64{v, 0.5, 0.5})
		want = append(want, v)
	}
	pred := m.Predict(grid)
	require.Greater(t, cmSpearman(pred, want), 0.99)
	require.Less(t, pred[0], 0.1)
	require.Greater(t, pred[len(pred)-1], 0.9)
	// Training rows are fitted closely.
	for i, p := range m.Predict(xs) {
		require.InDelta(t, ys[i], p, 0.05)
	}
}

func TestGBDTDeterministic(t *testing.T) {
	rng := rand.New(rand.NewSource(5))
	xs, ys := cmSynthetic(rng, 600, 8)
	test, _ := cmSynthetic(rng, 100, 8)

	a, b := NewGBDT(42), NewGBDT(42)
	a.Update(xs, ys)
	// Updating in two steps retrains on the same data: the same model.
	b.Update(xs[:250], ys[:250])
	b.Update(xs[250:], ys[250:])
	require.Equal(t, 600, b.NumSamples())
	require.Equal(t, a.Predict(test), b.Predict(test))

	c := NewGBDT(43)
	c.Update(xs, ys)
	require.NotEqual(t, a.Predict(test), c.Predict(test), "the seed drives row subsampling")
}

func TestGBDTEdgeCases(t *testing.T) {
	m := NewGBDT(1)
	require.Zero(t, m.NumSamples())
	require.Equal(t, []float64{0, 0}, m.Predict([][]float64{{1, 2}, nil}))
	require.Empty(t, m.Predict(nil))
	m.Update(nil, nil)
	m.Update([][]float64{{1}}, nil) // no score: ignored
	require.Zero(t, m.NumSamples())
	require.Equal(t, []float64{0}, m.Predict([][]float64{{3}}))

	// One sample: the model predicts it everywhere.
	m.Update([][]float64{{1, 2, 3}}, []float64{0.7, 0.9})
	require.Equal(t, 1, m.NumSamples())
	for _, p := range m.Predict([][]float64{{1, 2, 3}, {-5}, nil, {math.NaN(), math.Inf(1)}}) {
		require.InDelta(t, 0.7, p, 1e-12)
	}

	// Ragged rows, NaN and infinite features, non-finite scores.
	m.Update([][]float64{{}, {math.NaN()}, {math.Inf(1), 2}, {math.Inf(-1), 1, 1, 1}, {0.5}},
		[]float64{0.1, math.NaN(), math.Inf(1), 0.2, 1})
	require.Equal(t, 6, m.NumSamples())
	for _, p := range m.Predict([][]float64{{}, {math.NaN(), math.NaN()}, {math.Inf(1)}, {1, 2, 3, 4, 5, 6}}) {
		require.False(t, math.IsNaN(p) || math.IsInf(p, 0))
	}

	// Identical rows with different scores: the mean.
	m = NewGBDT(2)
	m.Subsample = 1
	m.Update([][]float64{{1, 1}, {1, 1}, {1, 1}, {1, 1}}, []float64{0, 1, 0, 1})
	require.InDelta(t, 0.5, m.Predict([][]float64{{1, 1}})[0], 1e-9)

	// Degenerate hyper-parameters fall back to sane ones.
	m = &GBDT{NumTrees: 5, MaxDepth: -1, LearningRate: math.NaN(), Subsample: 7, MaxBins: 1000}
	m.Update([][]float64{{0}, {1}, {2}, {3}}, []float64{0, 0, 1, 1})
	require.Len(t, m.Predict([][]float64{{0}}), 1)

	// A feature that is NaN in some rows still splits them from the rest.
	m = NewGBDT(4)
	m.Subsample = 1
	var xs [][]float64
	var ys []float64
	for i := 0; i < 40; i++ {
		if i%2 == 0 {
			xs, ys = append(xs, []float64{math.NaN()}), append(ys, 1)
		} else {
			xs, ys = append(xs, []float64{2}), append(ys, 0)
		}
	}
	m.Update(xs, ys)
	p := m.Predict([][]float64{{math.NaN()}, {2}})
	require.Greater(t, p[0], 0.9)
	require.Less(t, p[1], 0.1)
}

// End to end with ExtractFeatures: the model ranks random GEMM schedules
// by a synthetic score made of features it has to discover (vectorized,
// parallel, contiguous innermost accesses, loop count, footprint).
func TestGBDTOnScheduleFeatures(t *testing.T) {
	src := featGemmSrc(32, 32, 16)
	var xs [][]float64
	var ys []float64
	for seed := int64(0); seed < 240; seed++ {
		rng := rand.New(rand.NewSource(seed))
		s := schedule.NewWithSeed(featParse(t, src), seed)
		for i := 0; i < 1+rng.Intn(6); i++ {
			featRandomStep(s, rng)
		}
		v := ExtractFeatures(s.Func())
		score := 0.2*v[fVecProd] + 0.1*v[fParProd] + 0.3*v[fBufferBase+2*bufFeatures+bContig] +
			0.1*v[fNumLoops] + 0.05*v[fBufferBase+bufFeatures+bFootprint1+1]
		xs, ys = append(xs, v), append(ys, score)
	}
	m := NewGBDT(9)
	m.Update(xs[:180], ys[:180])
	rho := cmSpearman(m.Predict(xs[180:]), ys[180:])
	t.Logf("held-out Spearman %.4f", rho)
	require.Greater(t, rho, 0.8)
}

// cmBenchData is 3,000 rows of NumFeatures with the shape of feature
// vectors: log-scaled counts, flags, many constant columns.
func cmBenchData() ([][]float64, []float64) {
	rng := rand.New(rand.NewSource(1))
	xs := make([][]float64, 3000)
	ys := make([]float64, 3000)
	for i := range xs {
		x := make([]float64, NumFeatures)
		for j := range x {
			switch j % 4 {
			case 0:
				x[j] = math.Log2(1 + float64(rng.Intn(1<<uint(1+j%20))))
			case 1:
				x[j] = float64(rng.Intn(2))
			case 2:
				x[j] = rng.Float64() * 20
			}
		}
		xs[i] = x
		ys[i] = math.Min(1, math.Max(0, 0.05*x[2]+0.3*x[1]-0.01*x[4]+0.1*rng.Float64()))
	}
	return xs, ys
}

func BenchmarkGBDTUpdate(b *testing.B) {
	xs, ys := cmBenchData()
	for i := 0; i < b.N; i++ {
		m := NewGBDT(1)
		m.Update(xs, ys)
	}
}
