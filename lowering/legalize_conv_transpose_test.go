package lowering

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/dialects/graph"
	"github.com/tessera-ml/tessera/graphir"
)

// convTransposeCases are graph.conv_transpose agreement cases (runtime
// weights): 1-D, 2-D and 3-D; strides 1, 2 and 3; asymmetric pads;
// output_padding; dilations; groups 1, 2 and depthwise; odd sizes;
// output_shape and auto_pad; with and without bias.
func convTransposeCases() []agreeCase {
	str := func(v string) graphir.Attribute { return graphir.StringAttr(v) }
	cs := []struct {
		name string
		x, w []int64
		bias bool
		a    graphir.DictAttr
	}{
		{"1d", s(2, 3, 7), s(3, 2, 3), true, attrs("strides", s(2), "pads", s(1, 0))},
		{"1d_output_padding", s(1, 2, 5), s(2, 3, 4), false, attrs("strides", s(3), "output_padding", s(2), "pads", s(0, 2))},
		{"2d_plain", s(1, 2, 4, 5), s(2, 3, 3, 3), false, nil},
		{"2d_k2_s2", s(2, 4, 5, 6), s(4, 3, 2, 2), true, attrs("strides", s(2, 2))},
		{"2d_k3_s2_p1_op1", s(1, 3, 5, 4), s(3, 2, 3, 3), true, attrs("strides", s(2, 2), "pads", s(1, 1, 1, 1), "output_padding", s(1, 1))},
		{"2d_asym_pads_s3", s(1, 2, 4, 3), s(2, 2, 3, 2), true, attrs("strides", s(3, 2), "pads", s(0, 2, 1, 0))},
		{"2d_dilations", s(1, 2, 5, 5), s(2, 1, 3, 2), false, attrs("dilations", s(2, 2), "strides", s(2, 1), "pads", s(1, 0, 0, 1))},
		{"2d_groups", s(2, 4, 5, 4), s(4, 3, 3, 3), true, attrs("group", 2, "strides", s(2, 2), "pads", s(1, 1, 0, 1))},
		{"2d_depthwise", s(1, 3, 4, 5), s(3, 1, 3, 3), true, attrs("group", 3, "strides", s(2, 2), "pads", s(1, 1, 1, 1), "output_padding", s(1, 0))},
		{"2d_depthwise_mult", s(1, 2, 3, 3), s(2, 2, 2, 2), false, attrs("group", 2)},
		{"2d_stride_over_kernel", s(1, 1, 3, 5), s(1, 1, 1, 2), false, attrs("strides", s(3, 3), "output_padding", s(2, 1))},
		{"2d_output_shape_grow", s(1, 1, 3, 3), s(1, 2, 3, 3), true, attrs("strides", s(3, 2), "output_shape", s(10, 8))},
		{"2d_output_shape_crop", s(1, 2, 4, 4), s(2, 2, 3, 3), false, attrs("strides", s(2, 2), "output_shape", s(8, 6))},
		{"2d_output_shape_same_upper", s(1, 2, 4, 4), s(2, 2, 3, 3), false, attrs("strides", s(2, 2), "output_shape", s(8, 6), "auto_pad", str("SAME_UPPER"))},
		{"2d_same_upper", s(1, 1, 3, 3), s(1, 2, 3, 3), false, attrs("strides", s(2, 2), "auto_pad", str("SAME_UPPER"))},
		{"2d_same_lower", s(1, 2, 3, 4), s(2, 3, 3, 2), true, attrs("strides", s(2, 3), "auto_pad", str("SAME_LOWER"))},
		{"2d_valid", s(1, 2, 3, 3), s(2, 2, 2, 3), false, attrs("strides", s(2, 1), "auto_pad", str("VALID"), "kernel_shape", s(2, 3))},
		{"3d", s(1, 2, 3, 4, 3), s(2, 2, 2, 3, 2), true, attrs("strides", s(2, 1, 3), "pads", s(0, 1, 0, 1, 0, 1))},
		{"3d_groups_dilations", s(1, 4, 3, 3, 2), s(4, 1, 2, 2, 3), false, attrs("group", 2, "dilations", s(2, 1, 2), "output_padding", s(1, 0, 1), "strides", s(2, 2, 2))},
	}
	var out []agreeCase
	for _, c := range cs {
		in := shapes(c.x, c.w)
		if c.bias {
			in = append(in, s(c.w[1]*groupOf(c.a)))
		}
		out = append(out, agreeCase{name: "conv_transpose/" + c.name, op: graph.ConvTransposeOp, inputs: in, attrs: c.a})
	}
	return out
}

// TestLegalizeConvTransposeRandom: graph.conv_transpose on random
// geometry (1-D to 3-D, every attribute, output_shape and auto_pad
// included) agrees with its legalization: shape inference and the
// convolution's padding agree on every combination.
func TestLegalizeConvTransposeRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 17))
	n := func(lo, hi int) int64 { return int64(lo + r.IntN(hi-lo+1)) }
	var cs []agreeCase
	for len(cs) < 60 {
		ns := int(n(1, 3))
		group := n(1, 3)
		x, w := s(n(1, 2), group*n(1, 2)), s(0, n(1, 2))
		w[0] = x[1]
		var strides, dil, outPad, pads, outShape []int64
		for i := 0; i < ns; i++ {
			x, w = append(x, n(1, 5)), append(w, n(1, 3))
			strides, dil = append(strides, n(1, 3)), append(dil, n(1, 2))
			outPad = append(outPad, n(0, int(strides[i])-1))
		}
		for i := 0; i < 2*ns; i++ {
			pads = append(pads, n(0, 2))
		}
		a := attrs("strides", strides, "dilations", dil, "output_padding", outPad, "pads", pads, "group", int(group))
		switch r.IntN(4) {
		case 0:
			for i := 0; i < ns; i++ {
				outShape = append(outShape, n(1, 12))
			}
			a = a.Set("output_shape", graphir.I64Array(outShape...))
			if r.IntN(2) == 0 { // the split of an odd total padding
				a = a.Set("auto_pad", graphir.StringAttr("SAME_UPPER"))
			}
		case 1:
			a = a.Set("auto_pad", graphir.StringAttr([]string{"SAME_UPPER", "SAME_LOWER", "VALID"}[r.IntN(3)]))
		}
		in := shapes(x, w)
		if r.IntN(2) == 0 {
			in = append(in, s(w[1]*group))
		}
		c := agreeCase{name: fmt.Sprintf("conv_transpose/%d", len(cs)), op: graph.ConvTransposeOp, inputs: in, attrs: a}
		// Drop geometry the op rejects (pads larger than the output).
		if _, err := graphir.Build(c.op, fakeArgs(c.inputs), c.attrs, caseLoc); err == nil {
			cs = append(cs, c)
		}
	}
	for i, c := range cs {
		t.Run(c.name, func(t *testing.T) {
			ref := oneOpModule(t, c)
			args := randomArgs(ref.Funcs[0], nil, uint64(2000+i))
			want, err := graphir.Interpret(ref.Funcs[0], args)
			require.NoError(t, err)
			m := oneOpModule(t, c)
			runPipeline(t, m, graph.LegalizeToHLOPassName)
			got, err := graphir.Interpret(m.Funcs[0], args)
			require.NoError(t, err)
			requireClose(t, want, got, fmt.Sprintf("%s %s on %v", c.op, graphir.FormatAttr(c.attrs), c.inputs))
		})
	}
}

// TestLegalizeConvTransposeConstantWeight: a constant weight is flipped
// and regrouped at compile time (one hlo.constant, no slices or
// transposes), and the result keeps the graph evaluator's numbers, before
// and after the compile pipeline's hlo passes.
func TestLegalizeConvTransposeConstantWeight(t *testing.T) {
	for _, c := range []struct {
		name  string
		x, w  []int64
		attrs graphir.DictAttr
	}{
		{"2d", s(1, 3, 5, 4), s(3, 2, 3, 3), attrs("strides", s(2, 2), "pads", s(1, 1, 1, 1), "output_padding", s(1, 1))},
		{"2d_groups", s(2, 4, 3, 5), s(4, 3, 2, 3), attrs("group", 2, "strides", s(2, 3), "pads", s(0, 1, 1, 0))},
		{"3d_depthwise", s(1, 3, 3, 2, 4), s(3, 1, 2, 3, 2), attrs("group", 3, "strides", s(1, 2, 2), "dilations", s(2, 1, 1))},
	} {
		t.Run(c.name, func(t *testing.T) {
			build := func() *graphir.Module {
				mb, x := newModel(t, c.x...)
				w, b := mb.weight(0.5, c.w...), mb.weight(0.1, c.w[1]*groupOf(c.attrs))
				return mb.finish(mb.op(graph.ConvTransposeOp, c.attrs, x, w, b))
			}
			ref := build()
			args := randomArgs(ref.Funcs[0], nil, 17)
			want, err := graphir.Interpret(ref.Funcs[0], args)
			require.NoError(t, err)
			m := build()
			runPipeline(t, m, graph.LegalizeToHLOPassName+",canonicalize")
			var ops []string
			m.Walk(func(op *graphir.Op) { ops = append(ops, op.Name) })
			assert.Equal(t, []string{"hlo.constant", "hlo.constant", "hlo.convolution", "hlo.broadcast_in_dim", "hlo.add", graphir.ReturnOpName}, ops)
			got, err := graphir.Interpret(m.Funcs[0], args)
			require.NoError(t, err)
			requireClose(t, want, got, c.name)
			runPipeline(t, m, "cse,conv-kernel-layout,fuse")
			got, err = graphir.Interpret(m.Funcs[0], args)
			require.NoError(t, err)
			requireClose(t, want, got, c.name+" (kernel layout, fused)")
		})
	}
}

// groupOf is the group attribute of a conv_transpose case (1 when absent).
func groupOf(a graphir.DictAttr) int64 {
	if v, ok := a.Get("group").(*graphir.IntegerAttr); ok {
		return v.Value
	}
	return 1
}
