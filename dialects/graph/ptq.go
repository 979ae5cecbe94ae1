package graph

import (
	"fmt"
	"math"
	"slices"

	"github.com/tessera-ml/tessera/graphir"
)

// Post-training static quantization (tessera quantize): the contractions
// (graph.conv2d, graph.matmul, graph.gemm) and the residual adds whose
// result is quantized again (activationSites) read their activations
// through a quantize_linear/dequantize_linear pair with the calibrated range (ui8,
// asymmetric, per tensor: scale = (hi − lo) / 255, zero point =
// round(−lo / scale)) and their constant weights as int8 constants
// dequantized per output channel (symmetric: scale = max|w| / 127, zero
// point 0), ONNX Runtime's default QDQ scheme (QUInt8 activations, QInt8
// per-channel weights). Biases stay float. The result is QDQ text: the
// reference interpreter and compiled code compute the quantized model's
// values, and it is the form the integer kernels start from.
//
// With QuantizeOptions.ReduceRange the activations get 7 bits, [0, 127]
// in ui8 (scale = (hi − lo) / 127, zero point in [0, 127], and the
// quantize_linear ops carry max = 127): PyTorch torch.ao.quantization's
// reduce_range, which fbgemm's default x86 qconfig sets for activations
// only (weights stay symmetric int8). A u8×s8 pair sum then stays within
// i16 (2·127·128 < 2^15), so AVX2's vpmaddubsw cannot saturate and code
// generation can use it where it otherwise emulates it exactly; the cost
// is one bit of activation resolution.

// QuantizeOptions select QuantizeStatic's scheme.
type QuantizeOptions struct {
	// ReduceRange quantizes activations to [0, 127] (7 bits) instead of
	// [0, 255] (PyTorch's reduce_range).
	ReduceRange bool
}

// ReducedActivationMax is the largest quantized activation with
// QuantizeOptions.ReduceRange.
const ReducedActivationMax = 127

// activationMax is the largest quantized activation: 255, or 127 with
// ReduceRange.
func (o QuantizeOptions) activationMax() float64 {
	if o.ReduceRange {
		return ReducedActivationMax
	}
	return highestValue(graphir.UI8)
}

// QuantizedInputs are the activations of f that PTQ quantizes (see
// activationSites), in first-use order.
func QuantizedInputs(f *graphir.Func) []*graphir.Value {
	var out []*graphir.Value
	seen := map[*graphir.Value]bool{}
	ops, sites := activationSites(f)
	for _, op := range ops {
		for _, i := range sites[op] {
			if v := op.Operand(i); !seen[v] {
				seen[v] = true
				out = append(out, v)
			}
		}
	}
	return out
}

// activationSites lists the ops of f that PTQ rewrites, in order, and the
// operand indices of each that it quantizes as activations:
//   - a contraction's (conv2d, matmul, gemm) non-constant f32 operands;
//   - both operands of a quantized join: a graph.add of two non-constant
//     f32 activations (a residual connection) whose result, through a
//     single-use chain of the ops fold-qdq absorbs (relu, clip, flatten,
//     reshape, max_pool2d), is read only where PTQ quantizes it again.
//
// A join's 8-bit operands and output let fold-qdq make it an integer add
// (foldAdd), and the block input shared by a residual connection and the
// next convolution is quantized once for both: PyTorch's quantized
// ResNets (FloatFunctional.add_relu) and ONNX Runtime's QDQ Add do the
// same. A join whose result is read as float (a model output, a global
// average pool) stays float: quantizing it would only round.
func activationSites(f *graphir.Func) ([]*graphir.Op, map[*graphir.Op][]int) {
	var all []*graphir.Op
	f.Walk(func(op *graphir.Op) { all = append(all, op) })
	sites := map[*graphir.Op][]int{}
	for i := len(all) - 1; i >= 0; i-- { // users first
		op := all[i]
		switch op.Name {
		case Conv2DOp, GemmOp, MatMulOp:
			sites[op] = floatActivations(op)
		case AddOp:
			if ins := floatActivations(op); len(ins) == 2 && quantizedAgain(op.Results[0], sites) {
				sites[op] = ins
			}
		}
	}
	var ops []*graphir.Op
	for _, op := range all {
		if _, ok := weightAxis(op); ok || len(sites[op]) > 0 {
			ops = append(ops, op)
		}
	}
	return ops, sites
}

// floatActivations are those of op's first two operands that are
// non-constant f32 tensors.
func floatActivations(op *graphir.Op) []int {
	var out []int
	for i := range 2 {
		if t := graphir.AsTensor(op.Operand(i).Type); t != nil && t.Elem == graphir.F32 && ConstantOf(op.Operand(i)) == nil {
			out = append(out, i)
		}
	}
	return out
}

// quantizedAgain reports whether every read of v, past a single-use
// chain of ops fold-qdq absorbs, is an operand that sites quantizes.
func quantizedAgain(v *graphir.Value, sites map[*graphir.Op][]int) bool {
	users := v.Uses()
	if len(users) == 1 && absorbedAct(users[0].Name) && users[0].Operand(0) == v {
		return quantizedAgain(users[0].Results[0], sites)
	}
	for _, u := range users {
		for i := range u.NumOperands() {
			if u.Operand(i) == v && !slices.Contains(sites[u], i) {
				return false
			}
		}
	}
	return len(users) > 0
}

// QuantizeStatic rewrites f to QDQ form with the calibrated ranges and
// the scheme of o (see above). Errors: an activation without a range.
func QuantizeStatic(f *graphir.Func, ranges map[*graphir.Value]Range, o QuantizeOptions) error {
	ops, sites := activationSites(f)
	dq := map[*graphir.Value]*graphir.Value{}
	for _, op := range ops {
		for _, i := range sites[op] {
			v := op.Operand(i)
			if dq[v] == nil {
				r, ok := ranges[v]
				if !ok {
					return op.Errorf("operand #%d has no calibrated range", i)
				}
				dq[v] = quantizeActivation(op, v, r, o.activationMax())
			}
			op.SetOperand(i, dq[v])
		}
		if axis, ok := weightAxis(op); ok {
			w := op.Operand(1)
			if dq[w] == nil {
				dq[w] = quantizeWeight(op, w, axis)
			}
			op.SetOperand(1, dq[w])
			if w.Def != nil && w.Def.IsUnused() {
				w.Def.Erase()
			}
		}
	}
	return nil
}

// weightAxis is the output-channel axis of a contraction's constant f32
// weight (operand 1): O of conv2d's O×C×KH×KW, N of gemm's B (K×N, or
// N×K with transB) and of a 2-D matmul B (K×N); −1 (per tensor) for a
// matmul weight of another rank.
func weightAxis(op *graphir.Op) (int, bool) {
	if op.Name != Conv2DOp && op.Name != GemmOp && op.Name != MatMulOp {
		return 0, false
	}
	d := ConstantOf(op.Operand(1))
	if d == nil || d.Type.Elem != graphir.F32 {
		return 0, false
	}
	switch op.Name {
	case Conv2DOp:
		return 0, true
	case GemmOp:
		if tb, _ := op.Bool("transB"); tb {
			return 0, true
		}
		return 1, true
	case MatMulOp:
		if d.Type.Rank() == 2 {
			return 1, true
		}
		return -1, true
	}
	return 0, false
}

// quantizeActivation inserts quantize_linear/dequantize_linear of v with
// range r onto [0, qmax] before op and returns the dequantized value; the
// quantize carries max = qmax when that is below 255.
func quantizeActivation(op *graphir.Op, v *graphir.Value, r Range, qmax float64) *graphir.Value {
	scale, zp := activationParams(r, qmax)
	s := scalarConst(graphir.F32, scale, op.Loc)
	z := scalarConst(graphir.UI8, zp, op.Loc)
	t := graphir.AsTensor(v.Type)
	var a graphir.DictAttr
	if qmax < highestValue(graphir.UI8) {
		a = a.Set("max", graphir.IntAttr(int64(qmax)))
	}
	q := graphir.NewOp(QuantizeLinearOp, []*graphir.Value{v, s.Results[0], z.Results[0]}, []graphir.Type{graphir.NewTensor(graphir.UI8, t.Shape...)}, a, op.Loc)
	d := graphir.NewOp(DequantizeLinearOp, []*graphir.Value{q.Results[0], s.Results[0], z.Results[0]}, []graphir.Type{t}, nil, op.Loc)
	for _, n := range []*graphir.Op{s, z, q, d} {
		op.Block.InsertBefore(op, n)
	}
	return d.Results[0]
}

// activationParams are the ui8 scale and zero point of range r (which
// holds 0) mapped onto [0, qmax] (255, or 127 with ReduceRange): scale
// (hi − lo)/qmax (1 for an empty range), zero point round(−lo/scale) in
// [0, qmax].
func activationParams(r Range, qmax float64) (scale, zp float64) {
	scale = graphir.RoundTo(graphir.F32, (r.Hi-r.Lo)/qmax)
	if scale == 0 || math.IsNaN(scale) {
		return 1, 0
	}
	return scale, math.Min(math.Max(math.RoundToEven(-r.Lo/scale), 0), qmax)
}

// quantizeWeight replaces constant weight w by its int8 quantization,
// symmetric per output channel along axis (per tensor for −1), read
// through dequantize_linear; it returns the dequantized value.
func quantizeWeight(op *graphir.Op, w *graphir.Value, axis int) *graphir.Value {
	d := ConstantOf(w)
	vals := d.Values()
	shape := d.Type.Shape
	channels, chanOf := int64(1), channelOf(shape, -1)
	if axis >= 0 {
		channels, chanOf = shape[axis], channelOf(shape, axis)
	}
	scales := make([]float64, channels)
	for i, x := range vals {
		scales[chanOf(i)] = math.Max(scales[chanOf(i)], math.Abs(x))
	}
	for c, m := range scales {
		scales[c] = graphir.RoundTo(graphir.F32, m/127)
		if scales[c] == 0 {
			scales[c] = 1
		}
	}
	q := graphir.NewZeroTensor(graphir.NewTensor(graphir.I8, shape...))
	for i, x := range vals {
		q.Data[i] = quantizeValue(graphir.RoundTo(graphir.F32, x/scales[chanOf(i)]), 0, -127, 127)
	}
	var pshape []int64
	if axis >= 0 {
		pshape = []int64{channels}
	}
	qc := newConstant(q, op.Loc)
	sc := newConstant(&graphir.Tensor{Type: graphir.NewTensor(graphir.F32, pshape...), Data: scales}, op.Loc)
	zc := newConstant(graphir.NewZeroTensor(graphir.NewTensor(graphir.I8, pshape...)), op.Loc)
	a := graphir.DictAttr{}.Set("axis", graphir.IntAttr(int64(max(axis, 0))))
	dq := graphir.NewOp(DequantizeLinearOp, []*graphir.Value{qc.Results[0], sc.Results[0], zc.Results[0]}, []graphir.Type{d.Type}, a, op.Loc)
	for _, n := range []*graphir.Op{qc, sc, zc, dq} {
		op.Block.InsertBefore(op, n)
	}
	return dq.Results[0]
}

// scalarConst is a detached rank-0 graph.constant.
func scalarConst(dt graphir.DType, v float64, loc graphir.Location) *graphir.Op {
	return newConstant(&graphir.Tensor{Type: graphir.NewTensor(dt), Data: []float64{v}}, loc)
}

// CheckCalibrationBatch checks one calibration batch against f's inputs. Errors name
// the input and both types.
func CheckCalibrationBatch(f *graphir.Func, args []*graphir.Tensor) error {
	if len(args) != len(f.Type.Inputs) {
		return fmt.Errorf("the model has %d inputs, the batch gives %d", len(f.Type.Inputs), len(args))
	}
	for i, a := range args {
		want := f.Type.Inputs[i]
		if !a.Type.Equal(want) {
			return fmt.Errorf("input #%d is %s, the calibration data is %s", i, want, a.Type)
		}
		if a.Type.NumElements() == 0 {
			return fmt.Errorf("input #%d: the calibration data is empty", i)
		}
	}
	return nil
}
