package graph

import (
	"math"
	"sort"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// ResizeOp is graph.resize(x) {sizes, scales, mode, coordinate_transformation_mode,
// nearest_mode, cubic_coeff_a, exclude_outside, extrapolation_value, roi}:
// ONNX Resize (opsets 10–17; Upsample maps to it), N-D, with its
// tensor inputs given as attributes:
//
//   - sizes (required): the result shape, one entry ≥ 0 per dim.
//   - scales: the scale factor of each dim (default sizes/dims), used by
//     the coordinate transformation exactly as ONNX uses the `scales` input
//     (when a model gives sizes, ONNX's scale is sizes/dims).
//   - roi: [start_0, ..., start_{r−1}, end_0, ..., end_{r−1}], normalized
//     coordinates, only read by tf_crop_and_resize (default all 0 … 1).
//
// Each dim is interpolated separately (the ONNX reference interpolates
// dim by dim too): an output coordinate x maps to an input coordinate
// x_ori by coordinate_transformation_mode (half_pixel: (x+0.5)/s − 0.5;
// pytorch_half_pixel: the same, or −0.5 when the output length s·d is 1;
// align_corners: x·(d−1)/(s·d−1), 0 when s·d is 1; asymmetric: x/s;
// tf_half_pixel_for_nn: (x+0.5)/s; tf_crop_and_resize: start·(d−1) +
// x·(end−start)·(d−1)/(s·d−1), where an x_ori outside [0, d−1] gives
// extrapolation_value). The n taps (nearest and linear 2, cubic 4) are
// the n input positions nearest x_ori in the edge-padded input, preferring
// the lower one on a tie, with weights: linear (1−r, r); cubic Keys'
// kernel with a = cubic_coeff_a (default −0.75, PyTorch's bicubic);
// nearest the one-hot of nearest_mode (round_prefer_floor,
// round_prefer_ceil, floor, ceil); r = x_ori − ⌊x_ori⌋, or 1 when x_ori is
// an integer. exclude_outside zeroes the weights of taps outside the input
// and renormalizes. This is the algorithm of the ONNX reference
// implementation (onnx/backend/test/case/node/resize.py).
const ResizeOp = "graph.resize"

// Resize modes.
var (
	ResizeModes          = []string{"nearest", "linear", "cubic"}
	ResizeCoordinateMode = []string{"half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric", "tf_half_pixel_for_nn", "tf_crop_and_resize"}
	ResizeNearestModes   = []string{"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"}
)

func init() {
	register(&graphir.OpDef{
		Name:     ResizeOp,
		Summary:  "resize by nearest, linear or cubic interpolation along every dim (ONNX Resize)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs: []graphir.AttrSpec{
			{Name: "sizes", Kind: graphir.KindIntArray, Required: true},
			{Name: "scales", Kind: graphir.KindFloatArray},
			{Name: "roi", Kind: graphir.KindFloatArray},
			{Name: "mode", Kind: graphir.KindEnum, Enum: ResizeModes, Default: graphir.StringAttr("nearest")},
			{Name: "coordinate_transformation_mode", Kind: graphir.KindEnum, Enum: ResizeCoordinateMode, Default: graphir.StringAttr("half_pixel")},
			{Name: "nearest_mode", Kind: graphir.KindEnum, Enum: ResizeNearestModes, Default: graphir.StringAttr("round_prefer_floor")},
			{Name: "cubic_coeff_a", Kind: graphir.KindFloat, Default: graphir.F32Attr(-0.75)},
			{Name: "exclude_outside", Kind: graphir.KindBool, Default: graphir.BoolAttr(false)},
			{Name: "extrapolation_value", Kind: graphir.KindFloat, Default: graphir.F32Attr(0)},
		},
		Infer:  inferResize,
		Eval:   evalResize,
		Pretty: true,
	}, Conversions{Legalize: legalizeResize})
}

// resizeCfg is a resolved graph.resize.
type resizeCfg struct {
	in, out           []int64
	scales, roi       []float64
	mode, coord, near string
	cubicA, extrap    float64
	excludeOutside    bool
}

func resizeConfig(op *graphir.Op) (*resizeCfg, *graphir.TensorType, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, nil, err
	}
	x := ts[0]
	c := &resizeCfg{in: x.Shape}
	if c.out, err = op.Ints("sizes"); err != nil {
		return nil, nil, err
	}
	r := x.Rank()
	if len(c.out) != r {
		return nil, nil, op.Errorf("sizes must have one entry per dimension (%d), got %d", r, len(c.out))
	}
	for i, s := range c.out {
		if s < 0 {
			return nil, nil, op.Errorf("sizes[%d] = %d is negative", i, s)
		}
	}
	if err := c.readScales(op); err != nil {
		return nil, nil, err
	}
	if err := c.readModes(op, x); err != nil {
		return nil, nil, err
	}
	return c, x, nil
}

func (c *resizeCfg) readScales(op *graphir.Op) error {
	r := len(c.in)
	c.scales = make([]float64, r)
	if op.Attr("scales") != nil {
		s, err := op.Floats("scales")
		if err != nil {
			return err
		}
		if len(s) != r {
			return op.Errorf("scales must have one entry per dimension (%d), got %d", r, len(s))
		}
		for i, v := range s {
			if !(v > 0) || math.IsInf(v, 0) {
				return op.Errorf("scales[%d] = %g must be positive and finite", i, v)
			}
		}
		copy(c.scales, s)
	} else {
		for i := range c.scales {
			c.scales[i] = 1
			if c.in[i] > 0 {
				c.scales[i] = float64(c.out[i]) / float64(c.in[i])
			}
		}
	}
	c.roi = make([]float64, 2*r)
	for i := r; i < 2*r; i++ {
		c.roi[i] = 1
	}
	if op.Attr("roi") != nil {
		roi, err := op.Floats("roi")
		if err != nil {
			return err
		}
		if len(roi) != 2*r {
			return op.Errorf("roi must have 2 entries per dimension (%d), got %d", 2*r, len(roi))
		}
		copy(c.roi, roi)
	}
	return nil
}

func (c *resizeCfg) readModes(op *graphir.Op, x *graphir.TensorType) error {
	var err error
	if c.mode, err = op.Str("mode"); err != nil {
		return err
	}
	if c.coord, err = op.Str("coordinate_transformation_mode"); err != nil {
		return err
	}
	if c.near, err = op.Str("nearest_mode"); err != nil {
		return err
	}
	if c.cubicA, err = op.Float("cubic_coeff_a"); err != nil {
		return err
	}
	if c.extrap, err = op.Float("extrapolation_value"); err != nil {
		return err
	}
	if c.excludeOutside, err = op.Bool("exclude_outside"); err != nil {
		return err
	}
	if c.mode != "nearest" && !x.Elem.IsFloat() {
		return op.Errorf("mode '%s' needs a float input, got %s", c.mode, x)
	}
	for i := range c.in {
		if c.in[i] == 0 && c.out[i] > 0 {
			return op.Errorf("dimension %d is empty but sizes[%d] = %d", i, i, c.out[i])
		}
	}
	return nil
}

func inferResize(op *graphir.Op) ([]graphir.Type, error) {
	c, x, err := resizeConfig(op)
	if err != nil {
		return nil, err
	}
	return one(graphir.NewTensor(x.Elem, c.out...)), nil
}

// resizeTaps are one dim's interpolation: output position o reads input
// positions idx[o][t] (clamped into range) with weights w[o][t]; outside[o]
// marks the tf_crop_and_resize positions that take the extrapolation value.
type resizeTaps struct {
	idx     [][]int64
	w       [][]float64
	outside []bool
}

// taps computes dim d's taps.
func (c *resizeCfg) taps(d int) resizeTaps {
	in, out := c.in[d], c.out[d]
	t := resizeTaps{idx: make([][]int64, out), w: make([][]float64, out), outside: make([]bool, out)}
	for o := int64(0); o < out; o++ {
		x, outside := c.original(d, float64(o))
		t.outside[o] = outside
		t.idx[o], t.w[o] = c.weights(x, in)
	}
	return t
}

// original maps output coordinate x of dim d to the input coordinate.
func (c *resizeCfg) original(d int, x float64) (float64, bool) {
	in, s := float64(c.in[d]), c.scales[d]
	outLen := s * in // ONNX's reference uses scale · input length, not the integer size
	switch c.coord {
	case "align_corners":
		if outLen == 1 {
			return 0, false
		}
		return x * (in - 1) / (outLen - 1), false
	case "asymmetric":
		return x / s, false
	case "tf_half_pixel_for_nn":
		return (x + 0.5) / s, false
	case "tf_crop_and_resize":
		start, end := c.roi[d], c.roi[len(c.in)+d]
		var xo float64
		if outLen == 1 {
			xo = (end - start) * (in - 1) / 2
		} else {
			xo = x * (end - start) * (in - 1) / (outLen - 1)
		}
		xo += start * (in - 1)
		return xo, xo < 0 || xo > in-1
	case "pytorch_half_pixel":
		if outLen == 1 {
			return -0.5, false
		}
	}
	return (x+0.5)/s - 0.5, false
}

// weights returns the taps of input coordinate x on an input of length
// in: the positions (clamped to [0, in−1]: the edge padding) and weights.
func (c *resizeCfg) weights(x float64, in int64) ([]int64, []float64) {
	r := 1.0
	if x != math.Floor(x) {
		r = x - math.Floor(x)
	}
	coeffs := c.coeffs(r)
	n := len(coeffs)
	pad := int64((n + 1) / 2)
	pos := nearestPositions(x+float64(pad), n, in+2*pad)
	idx := make([]int64, n)
	sum := 0.0
	for i, p := range pos {
		p -= pad
		if c.excludeOutside && (p < 0 || p >= in) {
			coeffs[i] = 0
		}
		sum += coeffs[i]
		idx[i] = min(max(p, 0), in-1)
	}
	if c.excludeOutside {
		for i := range coeffs {
			coeffs[i] /= sum
		}
	}
	return idx, coeffs
}

// coeffs are the mode's tap weights for ratio r in (0, 1].
func (c *resizeCfg) coeffs(r float64) []float64 {
	switch c.mode {
	case "linear":
		return []float64{1 - r, r}
	case "cubic":
		a := c.cubicA
		far := func(t float64) float64 { return ((a*t-5*a)*t+8*a)*t - 4*a } // 1 < t < 2
		near := func(t float64) float64 { return ((a+2)*t-(a+3))*t*t + 1 }  // t ≤ 1
		return []float64{far(r + 1), near(r), near(1 - r), far(2 - r)}
	}
	if r == 1 {
		return []float64{0, 1}
	}
	hi := c.near == "ceil" || c.near == "round_prefer_floor" && r > 0.5 || c.near == "round_prefer_ceil" && r >= 0.5
	if hi {
		return []float64{0, 1}
	}
	return []float64{1, 0}
}

// nearestPositions returns the n integers of [0, limit) nearest x, the
// lower one first on a tie, in ascending order (n ≤ limit).
func nearestPositions(x float64, n int, limit int64) []int64 {
	f := int64(math.Floor(x))
	var cand []int64
	for p := f - int64(n) - 1; p <= f+int64(n)+1; p++ {
		if p >= 0 && p < limit {
			cand = append(cand, p)
		}
	}
	if len(cand) < n { // x lies far outside: the n positions at the nearer end
		first := int64(0)
		if x > 0 {
			first = limit - int64(n)
		}
		out := make([]int64, n)
		for i := range out {
			out[i] = first + int64(i)
		}
		return out
	}
	sort.SliceStable(cand, func(i, j int) bool {
		di, dj := math.Abs(x-float64(cand[i])), math.Abs(x-float64(cand[j]))
		return di < dj || (di == dj && cand[i] < cand[j])
	})
	out := cand[:n]
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// evalResize interpolates each output element directly: the sum over all
// tap combinations of the weight products times x at the tap positions
// (float64), or the extrapolation value where a dim is outside the roi.
func evalResize(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	c, _, err := resizeConfig(op)
	if err != nil {
		return nil, err
	}
	r := len(c.in)
	taps := make([]resizeTaps, r)
	for d := range taps {
		taps[d] = c.taps(d)
	}
	x := args[0]
	xs := graphir.Strides(c.in)
	o := make([]int64, r)
	for k := range out.Data {
		unravelInto(int64(k), c.out, o)
		out.Data[k] = interpolateAt(taps, o, x.Data, xs, c.extrap)
	}
	return []*graphir.Tensor{out.Round()}, nil
}

// interpolateAt is one output element of evalResize.
func interpolateAt(taps []resizeTaps, o []int64, data []float64, strides []int64, extrap float64) float64 {
	for d, t := range taps {
		if t.outside[o[d]] {
			return extrap
		}
	}
	var rec func(d int, off int64, w float64) float64
	rec = func(d int, off int64, w float64) float64 {
		if d == len(taps) {
			return w * data[off]
		}
		s := 0.0
		for i, p := range taps[d].idx[o[d]] {
			if wt := taps[d].w[o[d]][i]; wt != 0 {
				s += rec(d+1, off+p*strides[d], w*wt)
			}
		}
		return s
	}
	return rec(0, 0, 1)
}

// legalizeResize interpolates one dim at a time: a dim whose taps read
// exactly one input position with weight 1 is one gather of those
// positions (nothing when it is the identity), another is Σ_t gather(x,
// taps t) · broadcast weights t over the taps with a non-zero weight. For
// tf_crop_and_resize the positions outside the roi of any dim then select
// the extrapolation value.
func legalizeResize(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	c, xt, err := resizeConfig(op)
	if err != nil {
		return nil, err
	}
	if product(c.out) == 0 || product(c.in) == 0 {
		return oneValue(b.splat(graphir.NewTensor(xt.Elem, c.out...), 0))
	}
	y := op.Operand(0)
	var outside *graphir.Value
	for d := range c.in {
		t := c.taps(d)
		if y, err = b.resizeDim(y, d, t); err != nil {
			return nil, err
		}
		if c.coord == "tf_crop_and_resize" {
			if outside, err = b.orOutside(outside, d, t, c.out); err != nil {
				return nil, err
			}
		}
	}
	if outside != nil {
		ch := &chain{b: b, t: graphir.NewTensor(xt.Elem, c.out...)}
		return ch.done(ch.op(hlo.SelectOp, outside, ch.splat(c.extrap), y))
	}
	return []*graphir.Value{y}, nil
}

// resizeDim interpolates y along dim d with taps t.
func (b *builder) resizeDim(y *graphir.Value, d int, t resizeTaps) (*graphir.Value, error) {
	yt := graphir.AsTensor(y.Type)
	if pick, ok := t.single(); ok {
		identity := int64(len(pick)) == yt.Shape[d]
		for o, p := range pick {
			identity = identity && p == int64(o)
		}
		if identity {
			return y, nil
		}
		return b.gatherConstant(y, d, pick)
	}
	shape := append([]int64(nil), yt.Shape...)
	shape[d] = int64(len(t.idx))
	c := &chain{b: b, t: graphir.NewTensor(yt.Elem, shape...)}
	var sum *graphir.Value
	for k := range t.idx[0] {
		pos, w, used := t.column(k)
		if !used {
			continue
		}
		g := c.do(func() (*graphir.Value, error) { return b.gatherConstant(y, d, pos) })
		wt := graphir.NewZeroTensor(graphir.NewTensor(yt.Elem, int64(len(w))))
		copy(wt.Data, w)
		wv := c.do(func() (*graphir.Value, error) {
			v, err := b.constant(wt.Round().ToDense())
			if err != nil {
				return nil, err
			}
			return b.broadcastInDim(v, shape, []int64{int64(d)})
		})
		term := c.op(hlo.MultiplyOp, g, wv)
		if sum == nil {
			sum = term
		} else {
			sum = c.op(hlo.AddOp, sum, term)
		}
	}
	return sum, c.err
}

// single returns, when every output position reads one input position
// with weight 1 (nearest, or integer coordinates), those positions.
func (t resizeTaps) single() ([]int64, bool) {
	pick := make([]int64, len(t.idx))
	for o := range t.idx {
		found := false
		for i, w := range t.w[o] {
			switch {
			case w == 0:
			case w == 1 && !found:
				pick[o], found = t.idx[o][i], true
			default:
				return nil, false
			}
		}
		if !found {
			return nil, false
		}
	}
	return pick, true
}

// column returns tap k's positions and weights over the output positions
// and whether any weight is non-zero.
func (t resizeTaps) column(k int) ([]int64, []float64, bool) {
	pos, w := make([]int64, len(t.idx)), make([]float64, len(t.idx))
	used := false
	for o := range t.idx {
		pos[o], w[o] = t.idx[o][k], t.w[o][k]
		used = used || w[o] != 0
	}
	return pos, w, used
}

// orOutside ors dim d's outside-the-roi mask, broadcast to the result
// shape, into acc (nil: none yet); nothing is built when no position of
// dim d is outside.
func (b *builder) orOutside(acc *graphir.Value, d int, t resizeTaps, shape []int64) (*graphir.Value, error) {
	mask := graphir.NewZeroTensor(graphir.NewTensor(graphir.I1, int64(len(t.outside))))
	any := false
	for o, out := range t.outside {
		if out {
			mask.Data[o], any = 1, true
		}
	}
	if !any {
		return acc, nil
	}
	v, err := b.constant(mask.ToDense())
	if err != nil {
		return nil, err
	}
	if v, err = b.broadcastInDim(v, shape, []int64{int64(d)}); err != nil {
		return nil, err
	}
	if acc == nil {
		return v, nil
	}
	return b.op(hlo.OrOp, acc, v)
}
