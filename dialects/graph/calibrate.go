package graph

import (
	"fmt"
	"math"
	"slices"

	"github.com/tessera-ml/tessera/graphir"
)

// Calibration for post-training static quantization: the f32 model runs
// on calibration batches (an Evaluator: the reference interpreter, or
// compiled code returning the activations as extra results), and the activations
// that quantized ops read get a range [lo, hi] by one of three methods:
//
//	minmax      the smallest and largest value seen
//	percentile  the p-th and (100−p)-th percentiles of the values seen
//	            (p = 99.99 by default): outliers are clipped
//	entropy     the clipping threshold T on |x| whose 128-level
//	            quantization loses the least information: the KL
//	            divergence between the 2048-bin histogram of |x| clipped
//	            at T and its quantized form is smallest (TensorRT's
//	            entropy calibration, Migacz, "8-bit Inference with
//	            TensorRT", GTC 2017); the range is [lo, hi] clipped to ±T
//
// Methods other than minmax make two passes over the batches: ranges,
// then histograms over those ranges.

// Calibration method names (tessera quantize --method).
const (
	CalibrateMinMax     = "minmax"
	CalibratePercentile = "percentile"
	CalibrateEntropy    = "entropy"
)

// CalibrationMethods lists the methods.
var CalibrationMethods = []string{CalibrateMinMax, CalibratePercentile, CalibrateEntropy}

// calibrationBins is the histogram resolution of percentile and entropy.
const calibrationBins = 2048

// Range is a calibrated activation range.
type Range struct{ Lo, Hi float64 }

// CalibrateOptions configure Calibrate.
type CalibrateOptions struct {
	Method     string  // minmax (default), percentile or entropy
	Percentile float64 // kept fraction in percent for percentile (default 99.99)
	// Progress, when set, is called after each interpreted batch with the
	// number done and the total (passes × batches).
	Progress func(done, total int)
}

// valueStats accumulates what one activation's calibration needs.
type valueStats struct {
	lo, hi float64
	seen   bool
	hist   []float64 // values over [lo, hi] (percentile) or |x| over [0, max|lo|, |hi|] (entropy)
}

// Evaluator runs the model on one calibration batch (a tensor per
// argument) and returns the tensors of the values being calibrated, in
// their order.
type Evaluator func(batch []*graphir.Tensor) ([]*graphir.Tensor, error)

// InterpreterEvaluator evaluates values of f with the reference
// interpreter.
func InterpreterEvaluator(f *graphir.Func, values []*graphir.Value) Evaluator {
	index := make(map[*graphir.Value]int, len(values))
	for i, v := range values {
		index[v] = i
	}
	return func(batch []*graphir.Tensor) ([]*graphir.Tensor, error) {
		out := make([]*graphir.Tensor, len(values))
		_, err := graphir.InterpretObserved(f, batch, func(v *graphir.Value, t *graphir.Tensor) {
			if i, ok := index[v]; ok {
				out[i] = t
			}
		})
		return out, err
	}
}

// Calibrate runs eval on every batch and returns the range of each of
// values (the values eval returns, in order). Errors: an unknown method or
// percentile, eval's.
func Calibrate(eval Evaluator, batches [][]*graphir.Tensor, values []*graphir.Value, o CalibrateOptions) (map[*graphir.Value]Range, error) {
	if o.Method == "" {
		o.Method = CalibrateMinMax
	}
	if o.Percentile == 0 {
		o.Percentile = 99.99
	}
	if !slices.Contains(CalibrationMethods, o.Method) {
		return nil, fmt.Errorf("unknown calibration method '%s' (have %v)", o.Method, CalibrationMethods)
	}
	if !(o.Percentile > 50 && o.Percentile <= 100) {
		return nil, fmt.Errorf("percentile %g must be in (50, 100]", o.Percentile)
	}
	stats := make([]valueStats, len(values))
	passes := 1
	if o.Method != CalibrateMinMax {
		passes = 2
	}
	done := 0
	for pass := 0; pass < passes; pass++ {
		for _, args := range batches {
			ts, err := eval(args)
			if err != nil {
				return nil, err
			}
			for i, t := range ts {
				stats[i].add(t.Data, pass, o.Method)
			}
			done++
			if o.Progress != nil {
				o.Progress(done, passes*len(batches))
			}
		}
	}
	out := make(map[*graphir.Value]Range, len(values))
	for i, v := range values {
		out[v] = stats[i].rangeOf(o)
	}
	return out, nil
}

// add folds one batch's values in: min and max on the first pass, the
// histogram on the second.
func (s *valueStats) add(data []float64, pass int, method string) {
	if pass == 0 {
		for _, x := range data {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				continue
			}
			if !s.seen || x < s.lo {
				s.lo = x
			}
			if !s.seen || x > s.hi {
				s.hi = x
			}
			s.seen = true
		}
		return
	}
	if s.hist == nil {
		s.hist = make([]float64, calibrationBins)
	}
	lo, width := s.binning(method)
	if width == 0 {
		return
	}
	for _, x := range data {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		if method == CalibrateEntropy {
			x = math.Abs(x)
		}
		s.hist[min(calibrationBins-1, max(0, int((x-lo)/width)))]++
	}
}

// binning is the histogram's origin and bin width.
func (s *valueStats) binning(method string) (lo, width float64) {
	if method == CalibrateEntropy {
		return 0, math.Max(math.Abs(s.lo), math.Abs(s.hi)) / calibrationBins
	}
	return s.lo, (s.hi - s.lo) / calibrationBins
}

// rangeOf is the calibrated range, always including 0 (so that 0 — ReLU's
// output, zero padding — is exact after quantization).
func (s *valueStats) rangeOf(o CalibrateOptions) Range {
	if !s.seen {
		return Range{}
	}
	lo, hi := s.lo, s.hi
	if s.hist != nil {
		origin, width := s.binning(o.Method)
		switch o.Method {
		case CalibratePercentile:
			lo, hi = percentileRange(s.hist, origin, width, o.Percentile)
		case CalibrateEntropy:
			t := entropyThreshold(s.hist, width)
			lo, hi = math.Max(lo, -t), math.Min(hi, t)
		}
	}
	return Range{math.Min(lo, 0), math.Max(hi, 0)}
}

// percentileRange is the interval from the (100−p)-th to the p-th
// percentile of the histogram (bin edges).
func percentileRange(hist []float64, origin, width, p float64) (lo, hi float64) {
	var total float64
	for _, c := range hist {
		total += c
	}
	cut := total * (100 - p) / 100
	var acc float64
	i := 0
	for ; i < len(hist)-1 && acc+hist[i] <= cut; i++ {
		acc += hist[i]
	}
	acc = 0
	j := len(hist) - 1
	for ; j > i && acc+hist[j] <= cut; j-- {
		acc += hist[j]
	}
	return origin + float64(i)*width, origin + float64(j+1)*width
}

// entropyThreshold is TensorRT's KL-divergence threshold on a histogram of
// |x| with the given bin width: the clipping point (i bins) whose
// 128-level quantization diverges least from the clipped distribution.
func entropyThreshold(hist []float64, width float64) float64 {
	const levels = 128
	best, bestKL := len(hist), math.Inf(1)
	for i := levels; i <= len(hist); i++ {
		p := append([]float64(nil), hist[:i]...)
		for _, c := range hist[i:] {
			p[i-1] += c // outliers are clipped into the last bin
		}
		if kl := klDivergence(p, quantizedHistogram(hist[:i], levels)); kl < bestKL {
			best, bestKL = i, kl
		}
	}
	return float64(best) * width
}

// quantizedHistogram merges hist into levels groups and spreads each
// group's count evenly over its non-empty bins.
func quantizedHistogram(hist []float64, levels int) []float64 {
	q := make([]float64, len(hist))
	per := float64(len(hist)) / float64(levels)
	for l := 0; l < levels; l++ {
		a, b := int(float64(l)*per), int(float64(l+1)*per)
		if l == levels-1 {
			b = len(hist)
		}
		var sum float64
		nonzero := 0
		for _, c := range hist[a:b] {
			sum += c
			if c > 0 {
				nonzero++
			}
		}
		for k := a; k < b; k++ {
			if hist[k] > 0 {
				q[k] = sum / float64(nonzero)
			}
		}
	}
	return q
}

// klDivergence is KL(p ‖ q) of two histograms normalized to
// distributions, q smoothed first so that a bin p has and q lacks costs
// a finite amount (ONNX Runtime's smooth_distribution, ε = 1e-4).
func klDivergence(p, q []float64) float64 {
	var sp, sq float64
	for i := range p {
		sp += p[i]
		sq += q[i]
	}
	if sp == 0 || sq == 0 {
		return math.Inf(1)
	}
	qs := smoothed(q, sq)
	var kl float64
	for i := range p {
		if p[i] > 0 {
			pi := p[i] / sp
			kl += pi * math.Log(pi/qs[i])
		}
	}
	return kl
}

// smoothed normalizes q (total sum) and moves ε of mass into each empty
// bin, taken evenly from the others (never below ε).
func smoothed(q []float64, sum float64) []float64 {
	const eps = 1e-4
	zeros := 0
	for _, c := range q {
		if c == 0 {
			zeros++
		}
	}
	take := 0.0
	if zeros < len(q) {
		take = eps * float64(zeros) / float64(len(q)-zeros)
	}
	out := make([]float64, len(q))
	for i, c := range q {
		out[i] = eps
		if c > 0 {
			out[i] = math.Max(c/sum-take, eps)
		}
	}
	return out
}
