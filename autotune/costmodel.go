package autotune

import (
	"math"
	"math/rand"
	"sort"
)

// CostModel predicts a score (higher = faster) per candidate from its
// features (ExtractFeatures vectors). The tuner feeds normalized
// throughputs in [0, 1]: the task's best latency divided by the
// candidate's, 0 for a failed trial.
type CostModel interface {
	// Update retrains on all the data seen so far plus these (features,
	// score) pairs.
	Update(feats [][]float64, scores []float64)
	// Predict returns one score per feature vector (zeros before any
	// data).
	Predict(feats [][]float64) []float64
	// NumSamples is the number of (features, score) pairs seen.
	NumSamples() int
}

// GBDT is a gradient-boosted regression-tree model: Friedman's gradient
// boosting ("Greedy function approximation: a gradient boosting machine",
// Annals of Statistics, 2001) with XGBoost's second-order, L2-regularized
// leaf weights and split gain for the squared error (the loss of
// MetaSchedule's XGBModel and Ansor's cost model), over histogram splits:
// each feature is cut at up to MaxBins−1 quantile thresholds (midpoints
// between distinct training values) and a node's split is the best
// threshold of any feature. Histograms of the larger child are the
// parent's minus the smaller child's.
//
// Every Update retrains from scratch on all the data seen, with a random
// generator seeded by the model's seed, so a model is a deterministic
// function of its seed and its data. Feature vectors may have any length
// (a missing entry reads as 0); non-finite scores count as 0, and NaN
// features go to the right of every split.
//
// The exported fields are the hyper-parameters; change them before an
// Update. A GBDT is not safe for concurrent use.
type GBDT struct {
	NumTrees       int     // boosting rounds (default 100)
	MaxDepth       int     // depth of each tree (default 6)
	LearningRate   float64 // shrinkage of each tree's leaf values (default 0.2)
	MinSamplesLeaf int     // fewest training rows in a leaf (default 2)
	Lambda         float64 // L2 regularization of leaf values (default 1)
	Subsample      float64 // fraction of rows each tree is grown on (default 0.8)
	MaxBins        int     // histogram bins per feature, 2..256 (default 64)

	seed  int64
	x     [][]float64
	y     []float64
	width int
	base  float64
	trees [][]gbdtNode
}

// gbdtNode is a tree node: a leaf when feature < 0. A row goes left when
// its value of feature is ≤ threshold (bin ≤ bin in the binned training
// matrix, active feature index active).
type gbdtNode struct {
	feature     int
	active      int
	bin         int
	threshold   float64
	left, right int
	value       float64
}

// NewGBDT returns an untrained gradient-boosted tree model with the
// default hyper-parameters whose row subsampling draws from seed.
func NewGBDT(seed int64) *GBDT {
	return &GBDT{
		NumTrees:       100,
		MaxDepth:       6,
		LearningRate:   0.2,
		MinSamplesLeaf: 2,
		Lambda:         1,
		Subsample:      0.8,
		MaxBins:        64,
		seed:           seed,
	}
}

// NumSamples is the number of training pairs seen.
func (m *GBDT) NumSamples() int { return len(m.y) }

// Update adds the pairs (feats[i], scores[i]) — pairs beyond the shorter
// of the two slices are ignored — and retrains the model on all data.
func (m *GBDT) Update(feats [][]float64, scores []float64) {
	n := min(len(feats), len(scores))
	for i := 0; i < n; i++ {
		row := make([]float64, len(feats[i]))
		for j, v := range feats[i] {
			switch {
			case math.IsInf(v, 1):
				v = math.MaxFloat64
			case math.IsInf(v, -1):
				v = -math.MaxFloat64
			}
			row[j] = v
		}
		m.width = max(m.width, len(row))
		y := scores[i]
		if math.IsNaN(y) || math.IsInf(y, 0) {
			y = 0
		}
		m.x = append(m.x, row)
		m.y = append(m.y, y)
	}
	if len(m.y) > 0 {
		m.train()
	}
}

// Predict returns the model's score for each feature vector; zeros
// before the first Update with data.
func (m *GBDT) Predict(feats [][]float64) []float64 {
	out := make([]float64, len(feats))
	if len(m.y) == 0 {
		return out
	}
	for i, row := range feats {
		p := m.base
		for _, t := range m.trees {
			p += predictTree(t, row)
		}
		out[i] = p
	}
	return out
}

func predictTree(t []gbdtNode, row []float64) float64 {
	k := 0
	for t[k].feature >= 0 {
		v := 0.0
		if t[k].feature < len(row) {
			v = row[t[k].feature]
		}
		if v <= t[k].threshold {
			k = t[k].left
		} else {
			k = t[k].right
		}
	}
	return t[k].value
}

// gbdtBin is one histogram cell: the gradient sum and row count.
type gbdtBin struct{ g, n float64 }

// gbdtTrainer holds the binned training matrix of one train call.
type gbdtTrainer struct {
	m        *GBDT
	features []int       // original index of each active feature
	cuts     [][]float64 // thresholds of each active feature
	off      []int       // first histogram cell of each active feature
	cells    int         // histogram cells in all
	bins     []uint8     // row-major n × len(features)
	grad     []float64
	free     [][]gbdtBin
	nodes    []gbdtNode
	rng      *rand.Rand
}

func (m *GBDT) params() (trees, depth, minLeaf, maxBins int, eta, lambda, sub float64) {
	trees, depth, minLeaf, maxBins = max(m.NumTrees, 0), max(m.MaxDepth, 0), max(m.MinSamplesLeaf, 1), m.MaxBins
	if maxBins < 2 || maxBins > 256 {
		maxBins = 64
	}
	eta, lambda, sub = m.LearningRate, m.Lambda, m.Subsample
	if !(eta > 0) || math.IsInf(eta, 0) {
		eta = 0.2
	}
	if !(lambda >= 0) || math.IsInf(lambda, 0) {
		lambda = 1
	}
	if !(sub > 0 && sub <= 1) {
		sub = 1
	}
	return
}

func (m *GBDT) train() {
	nTrees, depth, minLeaf, maxBins, eta, lambda, sub := m.params()
	n := len(m.y)
	tr := &gbdtTrainer{m: m, rng: rand.New(rand.NewSource(m.seed))}
	tr.bin(maxBins)

	m.base = 0
	for _, y := range m.y {
		m.base += y
	}
	m.base /= float64(n)
	m.trees = m.trees[:0]

	pred := make([]float64, n)
	for i := range pred {
		pred[i] = m.base
	}
	tr.grad = make([]float64, n)
	all := make([]int32, n)
	for i := range all {
		all[i] = int32(i)
	}
	rows := make([]int32, n)
	k := max(1, int(math.Round(sub*float64(n))))
	for t := 0; t < nTrees; t++ {
		for i := range pred {
			tr.grad[i] = pred[i] - m.y[i]
		}
		// Rows of this tree: a random subset of k (partial Fisher–Yates).
		copy(rows, all)
		if k < n {
			for i := 0; i < k; i++ {
				j := i + tr.rng.Intn(n-i)
				rows[i], rows[j] = rows[j], rows[i]
			}
		}
		sel := rows[:k]
		tr.nodes = nil
		h := tr.hist(sel)
		tr.grow(sel, h, depth, minLeaf, eta, lambda)
		tree := tr.nodes
		na := len(tr.features)
		for i := range pred {
			b := tr.bins[i*na : (i+1)*na]
			j := 0
			for tree[j].feature >= 0 {
				if int(b[tree[j].active]) <= tree[j].bin {
					j = tree[j].left
				} else {
					j = tree[j].right
				}
			}
			pred[i] += tree[j].value
		}
		m.trees = append(m.trees, tree)
	}
}

// bin computes each feature's thresholds (features with one distinct
// value are dropped) and the binned training matrix.
func (tr *gbdtTrainer) bin(maxBins int) {
	m := tr.m
	n := len(m.y)
	col := make([]float64, n)
	for f := 0; f < m.width; f++ {
		k := 0
		nan := false
		for _, row := range m.x {
			v := 0.0
			if f < len(row) {
				v = row[f]
			}
			if math.IsNaN(v) {
				nan = true
				continue
			}
			col[k] = v
			k++
		}
		vals := col[:k]
		sort.Float64s(vals)
		// Distinct values with their counts.
		var uniq []float64
		var counts []int
		for i, v := range vals {
			if i == 0 || v != vals[i-1] {
				uniq = append(uniq, v)
				counts = append(counts, 0)
			}
			counts[len(counts)-1]++
		}
		var cuts []float64
		if len(uniq) <= maxBins {
			for i := 0; i+1 < len(uniq); i++ {
				cuts = append(cuts, midpoint(uniq[i], uniq[i+1]))
			}
		} else {
			// Quantile cuts: close a bin once it holds its share of rows.
			acc, target := 0, 1
			for i := 0; i+1 < len(uniq) && len(cuts) < maxBins-1; i++ {
				acc += counts[i]
				if acc*maxBins >= target*k {
					cuts = append(cuts, midpoint(uniq[i], uniq[i+1]))
					for acc*maxBins >= target*k {
						target++
					}
				}
			}
		}
		if len(cuts) == 0 && !(nan && len(uniq) > 0) {
			continue // constant feature
		}
		if len(cuts) == 0 {
			// Values and NaNs: split them apart at the largest value.
			cuts = append(cuts, uniq[len(uniq)-1])
		}
		tr.features = append(tr.features, f)
		tr.cuts = append(tr.cuts, cuts)
		tr.off = append(tr.off, tr.cells)
		tr.cells += len(cuts) + 1
	}
	na := len(tr.features)
	tr.bins = make([]uint8, n*na)
	for i, row := range m.x {
		for a, f := range tr.features {
			v := 0.0
			if f < len(row) {
				v = row[f]
			}
			cuts := tr.cuts[a]
			// The first cut ≥ v (NaN: past the last).
			tr.bins[i*na+a] = uint8(sort.Search(len(cuts), func(j int) bool { return v <= cuts[j] }))
		}
	}
}

// midpoint is (a+b)/2 without overflow.
func midpoint(a, b float64) float64 { return a/2 + b/2 }

func (tr *gbdtTrainer) alloc() []gbdtBin {
	if k := len(tr.free); k > 0 {
		h := tr.free[k-1]
		tr.free = tr.free[:k-1]
		clear(h)
		return h
	}
	return make([]gbdtBin, tr.cells)
}

// hist builds the histogram of rows.
func (tr *gbdtTrainer) hist(rows []int32) []gbdtBin {
	h := tr.alloc()
	na := len(tr.features)
	off := tr.off
	for _, r := range rows {
		g := tr.grad[r]
		b := tr.bins[int(r)*na : int(r)*na+na]
		for a, x := range b {
			c := &h[off[a]+int(x)]
			c.g += g
			c.n++
		}
	}
	return h
}

// grow appends the subtree of rows (with histogram h, which it consumes)
// to tr.nodes and returns its index.
func (tr *gbdtTrainer) grow(rows []int32, h []gbdtBin, depth, minLeaf int, eta, lambda float64) int {
	var G float64
	for _, r := range rows {
		G += tr.grad[r]
	}
	n := float64(len(rows))
	idx := len(tr.nodes)
	tr.nodes = append(tr.nodes, gbdtNode{feature: -1, value: -eta * G / (n + lambda)})

	if depth <= 0 || len(rows) < 2*minLeaf || len(tr.features) == 0 {
		tr.free = append(tr.free, h)
		return idx
	}
	parentScore := G * G / (n + lambda)
	bestGain, bestA, bestB := 1e-12*(1+parentScore), -1, -1
	ml := float64(minLeaf)
	for a := range tr.features {
		cells := h[tr.off[a] : tr.off[a]+len(tr.cuts[a])+1]
		var gl, nl float64
		for b := 0; b+1 < len(cells); b++ {
			gl += cells[b].g
			nl += cells[b].n
			nr := n - nl
			if nl < ml {
				continue
			}
			if nr < ml {
				break
			}
			gr := G - gl
			gain := gl*gl/(nl+lambda) + gr*gr/(nr+lambda) - parentScore
			if gain > bestGain {
				bestGain, bestA, bestB = gain, a, b
			}
		}
	}
	if bestA < 0 {
		tr.free = append(tr.free, h)
		return idx
	}

	// Partition rows: left (bin ≤ bestB) first.
	na := len(tr.features)
	i, j := 0, len(rows)-1
	for i <= j {
		if int(tr.bins[int(rows[i])*na+bestA]) <= bestB {
			i++
		} else {
			rows[i], rows[j] = rows[j], rows[i]
			j--
		}
	}
	left, right := rows[:i], rows[i:]
	// The smaller child's histogram is built; the larger one's is the
	// parent's minus it (in the parent's storage).
	small := left
	if len(right) < len(left) {
		small = right
	}
	hs := tr.hist(small)
	for k := range h {
		h[k].g -= hs[k].g
		h[k].n -= hs[k].n
	}
	hl, hr := hs, h
	if len(right) < len(left) {
		hl, hr = h, hs
	}
	tr.nodes[idx] = gbdtNode{
		feature:   tr.features[bestA],
		active:    bestA,
		bin:       bestB,
		threshold: tr.cuts[bestA][bestB],
	}
	l := tr.grow(left, hl, depth-1, minLeaf, eta, lambda)
	r := tr.grow(right, hr, depth-1, minLeaf, eta, lambda)
	tr.nodes[idx].left, tr.nodes[idx].right = l, r
	return idx
}
