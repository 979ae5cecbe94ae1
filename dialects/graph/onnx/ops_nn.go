package onnx

import (
	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// Neural-network ops: Conv, ConvTranspose, MaxPool, AveragePool,
// GlobalAveragePool, GlobalMaxPool, BatchNormalization, Gemm, MatMul, Softmax, LogSoftmax.

func init() {
	registerSymbolic(convertConv, "Conv")
	register(convertConvTranspose, "ConvTranspose")
	registerSymbolic(convertPool, "MaxPool", "AveragePool")
	registerSymbolic(convertGlobalPool, "GlobalAveragePool", "GlobalMaxPool")
	registerSymbolic(convertBatchNorm, "BatchNormalization")
	registerSymbolic(convertGemm, "Gemm")
	registerSymbolic(convertMatMul, "MatMul")
	registerSymbolic(convertSoftmax, "Softmax", "LogSoftmax", "Hardmax")
	register(convertLayerNorm, "LayerNormalization")
}

// windowAttrs reads the attributes shared by Conv and the pools for a 2-D
// window with kernel k (absent ones at the defaults of graph op op) and
// resolves auto_pad to explicit pads [top, left, bottom, right].
func (n *node) windowAttrs(in []int64, k [2]int64, what, op string) (strides, pads, dilations []int64, err error) {
	if strides, err = n.intsOf("strides", op); err != nil {
		return
	}
	if dilations, err = n.intsOf("dilations", op); err != nil {
		return
	}
	if pads, err = n.intsOf("pads", op); err != nil {
		return
	}
	if len(strides) != 2 || len(dilations) != 2 || len(pads) != 4 {
		err = n.errorf("%s needs 2 strides, 2 dilations and 4 pads, got %v, %v and %v", what, strides, dilations, pads)
		return
	}
	autoPad, err := n.stringAttr("auto_pad", "NOTSET")
	if err != nil {
		return
	}
	switch autoPad {
	case "NOTSET", "":
	case "VALID":
		pads = []int64{0, 0, 0, 0}
	case "SAME_UPPER", "SAME_LOWER":
		pads = make([]int64, 4)
		for d := 0; d < 2; d++ {
			if strides[d] < 1 {
				err = n.errorf("stride %d must be at least 1", strides[d])
				return
			}
			if in[d] == graphir.Dynamic {
				err = n.errorf("auto_pad %s over symbolic spatial dimension %d: the padding depends on its size; pin it with --fix-dim", autoPad, d+2)
				return
			}
			out := (in[d] + strides[d] - 1) / strides[d]
			total := max((out-1)*strides[d]+(k[d]-1)*dilations[d]+1-in[d], 0)
			small, big := total/2, total-total/2
			if autoPad == "SAME_UPPER" {
				pads[d], pads[d+2] = small, big
			} else {
				pads[d], pads[d+2] = big, small
			}
		}
	default:
		err = n.errorf("unsupported auto_pad value '%s'", autoPad)
	}
	return
}

// spatialRank checks that x is a 4-D N×C×H×W tensor (2-D window ops).
func (n *node) spatialRank(x *value) error {
	if r := x.typ().Rank(); r != 4 {
		if r == 3 || r == 5 {
			return n.errorf("unsupported: %d-D %s (only 2-D, i.e. N×C×H×W inputs, is supported)", r-2, n.p.GetOpType())
		}
		return n.errorf("unsupported: input of rank %d (only N×C×H×W inputs are supported)", r)
	}
	return nil
}

// convertConv maps Conv to graph.conv2d (2-D only).
func convertConv(n *node) ([]*value, error) {
	if err := n.need(2, 3); err != nil {
		return nil, err
	}
	return n.convWith(n.in(0), n.in(1), n.in(2))
}

// convWith is Conv of x, w and the optional bias b, with the node's
// attributes (Conv, ConvInteger and QLinearConv share them).
func (n *node) convWith(x, w, b *value) ([]*value, error) {
	if err := n.spatialRank(x); err != nil {
		return nil, err
	}
	ws := w.typ().Shape
	if len(ws) != 4 {
		return nil, n.errorf("weight must be 4-D (O×C/group×KH×KW), got %s", w.typ())
	}
	if ks, err := n.intsAttr("kernel_shape", nil); err != nil {
		return nil, err
	} else if ks != nil && (len(ks) != 2 || ks[0] != ws[2] || ks[1] != ws[3]) {
		return nil, n.errorf("kernel_shape %v does not match the weight %s", ks, w.typ())
	}
	strides, pads, dilations, err := n.windowAttrs(x.typ().Shape[2:], [2]int64{ws[2], ws[3]}, "Conv", graph.Conv2DOp)
	if err != nil {
		return nil, err
	}
	group, err := n.intOf("group", graph.Conv2DOp, "groups")
	if err != nil {
		return nil, err
	}
	ins := list(x, w)
	if b != nil {
		ins = append(ins, b)
	}
	return n.emit("graph.conv2d", ins, attrs("strides", graphir.I64Array(strides...), "pads", graphir.I64Array(pads...),
		"dilations", graphir.I64Array(dilations...), "groups", graphir.IntAttr(group)))
}

// convertConvTranspose maps ConvTranspose (any number of spatial
// dimensions) to graph.conv_transpose, whose attributes are the node's by
// name (graph.ConvTransposeOp checks kernel_shape against W and resolves
// output_shape and auto_pad as ONNX opset 11 says). An empty bias input
// is dropped. Opsets 1–10 split an odd total padding the other way
// round (their spec: auto_pad SAME_UPPER gives (t − ⌊t/2⌋, ⌊t/2⌋), every
// other value (⌊t/2⌋, t − ⌊t/2⌋), which onnxruntime implements); the
// auto_pad written is the opset-11 value with that split
// (legacyConvTransposeAutoPad).
func convertConvTranspose(n *node) ([]*value, error) {
	if err := n.need(2, 3); err != nil {
		return nil, err
	}
	if err := n.requireOp(graph.ConvTransposeOp); err != nil {
		return nil, err
	}
	a, err := n.directAttrs(graphir.LookupOp(graph.ConvTransposeOp))
	if err != nil {
		return nil, err
	}
	if n.opset < 11 {
		if ap := legacyConvTransposeAutoPad(a); ap != "" {
			a = a.Set("auto_pad", graphir.StringAttr(ap))
		}
	}
	// Exporters write the defaults out: an array of only the value an
	// absent one means is left out.
	for name, fill := range map[string]int64{"strides": 1, "dilations": 1, "pads": 0, "output_padding": 0} {
		if allEqual(a.Get(name), fill) {
			a = a.Delete(name)
		}
	}
	ins := list(n.in(0), n.in(1))
	if b := n.in(2); b != nil {
		ins = append(ins, b)
	}
	return n.emit(graph.ConvTransposeOp, ins, a)
}

// legacyConvTransposeAutoPad is the opset-11 auto_pad that gives the pads
// of an opset 1–10 ConvTranspose with attributes a, or "" when a's own
// auto_pad does: SAME_UPPER becomes SAME_LOWER; with output_shape, or
// with SAME_LOWER, any other value becomes SAME_UPPER (the split with
// the odd unit at the end; output_shape, when given, still sets the size).
func legacyConvTransposeAutoPad(a graphir.DictAttr) string {
	ap, _ := a.Get("auto_pad").(graphir.StringAttr)
	switch {
	case ap == "SAME_UPPER":
		return "SAME_LOWER"
	case a.Get("output_shape") != nil || ap == "SAME_LOWER":
		return "SAME_UPPER"
	}
	return ""
}

// allEqual reports whether a is an integer array whose every entry is v.
func allEqual(a graphir.Attribute, v int64) bool {
	arr, ok := a.(graphir.ArrayAttr)
	if !ok {
		return false
	}
	for _, e := range arr {
		if ia, ok := e.(*graphir.IntegerAttr); !ok || ia.Value != v {
			return false
		}
	}
	return true
}

// convertPool maps MaxPool to graph.max_pool2d and AveragePool to
// graph.avg_pool2d.
func convertPool(n *node) ([]*value, error) {
	if err := n.need(1, 1); err != nil {
		return nil, err
	}
	x := n.in(0)
	if err := n.spatialRank(x); err != nil {
		return nil, err
	}
	if len(n.p.GetOutput()) > 1 && n.p.GetOutput()[1] != "" {
		return nil, n.errorf("unsupported: the Indices output of MaxPool")
	}
	ks, err := n.intsAttr("kernel_shape", nil)
	if err != nil {
		return nil, err
	}
	if len(ks) != 2 {
		return nil, n.errorf("kernel_shape must have 2 elements, got %v", ks)
	}
	strides, pads, dilations, err := n.windowAttrs(x.typ().Shape[2:], [2]int64{ks[0], ks[1]}, n.p.GetOpType(), graph.MaxPool2DOp)
	if err != nil {
		return nil, err
	}
	ceil, err := n.intOf("ceil_mode", graph.MaxPool2DOp, "ceil_mode")
	if err != nil {
		return nil, err
	}
	a := attrs("kernel", graphir.I64Array(ks...), "strides", graphir.I64Array(strides...), "pads", graphir.I64Array(pads...), "ceil_mode", graphir.BoolAttr(ceil != 0))
	if n.p.GetOpType() == "MaxPool" {
		if so, err := n.intAttr("storage_order", 0); err != nil {
			return nil, err
		} else if so != 0 {
			return nil, n.errorf("unsupported storage_order %d (only 0, row-major)", so)
		}
		a = a.Set("dilations", graphir.I64Array(dilations...))
		return n.emit("graph.max_pool2d", list(x), a)
	}
	if dilations[0] != 1 || dilations[1] != 1 {
		return nil, n.errorf("unsupported: AveragePool with dilations %v", dilations)
	}
	cip, err := n.intOf("count_include_pad", graph.AvgPool2DOp, "count_include_pad")
	if err != nil {
		return nil, err
	}
	return n.emit("graph.avg_pool2d", list(x), a.Set("count_include_pad", graphir.BoolAttr(cip != 0)))
}

// convertGlobalPool maps GlobalAveragePool to graph.global_avg_pool and
// GlobalMaxPool to graph.reduce_max over the spatial axes (keepdims).
func convertGlobalPool(n *node) ([]*value, error) {
	if err := n.need(1, 1); err != nil {
		return nil, err
	}
	x := n.in(0)
	r := x.typ().Rank()
	if r < 3 {
		return nil, n.errorf("input must be N×C×D1×…, got %s", x.typ())
	}
	if n.p.GetOpType() == "GlobalAveragePool" {
		return n.emit("graph.global_avg_pool", list(x), nil)
	}
	axes := make([]int64, 0, r-2)
	for d := 2; d < r; d++ {
		axes = append(axes, int64(d))
	}
	return n.emit("graph.reduce_max", list(x), attrs("axes", graphir.I64Array(axes...)))
}

// convertBatchNorm maps inference BatchNormalization to graph.batch_norm.
func convertBatchNorm(n *node) ([]*value, error) {
	if err := n.need(5, 5); err != nil {
		return nil, err
	}
	if tm, err := n.intAttr("training_mode", 0); err != nil {
		return nil, err
	} else if tm != 0 {
		return nil, n.errorf("unsupported: training_mode = 1 (only inference is supported)")
	}
	if sp, err := n.intAttr("spatial", 1); err != nil {
		return nil, err
	} else if sp != 1 {
		return nil, n.errorf("unsupported: spatial = %d", sp)
	}
	eps, err := n.floatOf("epsilon", graph.BatchNormOp)
	if err != nil {
		return nil, err
	}
	return n.emit("graph.batch_norm", n.ins, attrs("epsilon", graphir.F32Attr(eps)))
}

// convertGemm maps Gemm to graph.gemm.
func convertGemm(n *node) ([]*value, error) {
	if err := n.need(2, 3); err != nil {
		return nil, err
	}
	alpha, err := n.floatOf("alpha", graph.GemmOp)
	if err != nil {
		return nil, err
	}
	beta, err := n.floatOf("beta", graph.GemmOp)
	if err != nil {
		return nil, err
	}
	ta, err := n.intOf("transA", graph.GemmOp, "transA")
	if err != nil {
		return nil, err
	}
	tb, err := n.intOf("transB", graph.GemmOp, "transB")
	if err != nil {
		return nil, err
	}
	ins := list(n.in(0), n.in(1))
	if c := n.in(2); c != nil {
		ins = append(ins, c)
	}
	return n.emit("graph.gemm", ins, attrs("alpha", graphir.F32Attr(alpha), "beta", graphir.F32Attr(beta),
		"transA", graphir.BoolAttr(ta != 0), "transB", graphir.BoolAttr(tb != 0)))
}

// convertMatMul maps MatMul to graph.matmul.
func convertMatMul(n *node) ([]*value, error) {
	if err := n.need(2, 2); err != nil {
		return nil, err
	}
	return n.emit("graph.matmul", n.ins, nil)
}

// convertSoftmax maps Softmax/LogSoftmax/Hardmax. From opset 13 the op works
// along `axis` (default −1); before, the input is coerced to 2-D
// [∏ dims[:axis], ∏ dims[axis:]] (axis default 1), normalized along the
// second dimension and reshaped back.
func convertSoftmax(n *node) ([]*value, error) {
	if err := n.need(1, 1); err != nil {
		return nil, err
	}
	name := map[string]string{"Softmax": "graph.softmax", "LogSoftmax": "graph.log_softmax", "Hardmax": graph.HardmaxOp}[n.p.GetOpType()]
	if err := n.requireOp(name); err != nil {
		return nil, err
	}
	x := n.in(0)
	shape := x.typ().Shape
	if n.opset >= 13 {
		axis, err := n.intAttr("axis", -1)
		if err != nil {
			return nil, err
		}
		return n.emit(name, list(x), attrs("axis", graphir.IntAttr(axis)))
	}
	axis, err := n.intAttr("axis", 1)
	if err != nil {
		return nil, err
	}
	r := len(shape)
	if axis < -int64(r) || axis > int64(r) {
		return nil, n.errorf("axis %d is out of range for rank %d", axis, r)
	}
	if axis < 0 {
		axis += int64(r)
	}
	if r == 2 && axis == 1 {
		return n.emit(name, list(x), attrs("axis", graphir.IntAttr(1)))
	}
	if !x.typ().IsStatic() {
		return nil, n.errorf("%s before opset 13 over %s coerces the input to 2-D, which needs its shape; pin its symbols with --fix-dim", n.p.GetOpType(), x.typ())
	}
	rows, cols := int64(1), int64(1)
	for d, s := range shape {
		if int64(d) < axis {
			rows *= s
		} else {
			cols *= s
		}
	}
	flat, err := n.emit1("graph.reshape", list(x), attrs("shape", graphir.I64Array(rows, cols)))
	if err != nil {
		return nil, err
	}
	y, err := n.emit1(name, list(flat), attrs("axis", graphir.IntAttr(1)))
	if err != nil {
		return nil, err
	}
	return n.emit("graph.reshape", list(y), attrs("shape", graphir.I64Array(shape...)))
}

// convertLayerNorm maps LayerNormalization (opset 17) {axis = -1,
// epsilon = 1e-5, stash_type = 1} to graph.layer_norm, whose three results
// are the op's outputs Y, Mean and InvStdDev.
func convertLayerNorm(n *node) ([]*value, error) {
	if err := n.need(2, 3); err != nil {
		return nil, err
	}
	axis, err := n.intAttr("axis", -1)
	if err != nil {
		return nil, err
	}
	eps, err := n.floatAttr("epsilon", 1e-5)
	if err != nil {
		return nil, err
	}
	stash, err := n.intAttr("stash_type", 1)
	if err != nil {
		return nil, err
	}
	if stash != 1 {
		return nil, n.errorf("unsupported: stash_type %d (only 1, float32 statistics)", stash)
	}
	ins := list(n.in(0), n.in(1))
	if b := n.in(2); b != nil {
		ins = append(ins, b)
	}
	return n.emit(graph.LayerNormOp, ins, attrs("axis", graphir.IntAttr(axis), "epsilon", graphir.F32Attr(eps)))
}
