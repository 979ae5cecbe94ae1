package graph

import (
	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// Block rearrangements between depth and space (ONNX DepthToSpace and
// SpaceToDepth), NCHW:
//
//	graph.depth_to_space(x) {blocksize (required, ≥ 1), mode = "DCR" | "CRD"}:
//	  [N, C, H, W] → [N, C/b², H·b, W·b]; C divisible by b².
//	  DCR: y[n, c, h·b+i, w·b+j] = x[n, (i·b+j)·C/b² + c, h, w]
//	  CRD: y[n, c, h·b+i, w·b+j] = x[n, c·b² + i·b + j, h, w]
//	graph.space_to_depth(x) {blocksize (required, ≥ 1)}:
//	  [N, C, H, W] → [N, C·b², H/b, W/b]; H and W divisible by b;
//	  y[n, (i·b+j)·C + c, h, w] = x[n, c, h·b+i, w·b+j].
//
// Each is a reshape to 6-D, a transpose and a reshape (ONNX's reference
// definition), which is how they evaluate and legalize.
const (
	DepthToSpaceOp = "graph.depth_to_space"
	SpaceToDepthOp = "graph.space_to_depth"
)

func init() {
	blocksize := graphir.AttrSpec{Name: "blocksize", Kind: graphir.KindInt, Required: true}
	register(&graphir.OpDef{
		Name:     DepthToSpaceOp,
		Summary:  "move depth blocks into spatial blocks (ONNX DepthToSpace)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs:    []graphir.AttrSpec{blocksize, {Name: "mode", Kind: graphir.KindEnum, Enum: []string{"DCR", "CRD"}, Default: graphir.StringAttr("DCR")}},
		Infer:    inferBlockRearrange,
		Eval:     evalBlockRearrange,
		Pretty:   true,
	}, Conversions{Legalize: legalizeBlockRearrange})
	register(&graphir.OpDef{
		Name:     SpaceToDepthOp,
		Summary:  "move spatial blocks into depth (ONNX SpaceToDepth)",
		Operands: graphir.Exactly(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs:    []graphir.AttrSpec{blocksize},
		Infer:    inferBlockRearrange,
		Eval:     evalBlockRearrange,
		Pretty:   true,
	}, Conversions{Legalize: legalizeBlockRearrange})
}

// blockRearrange is the 6-D view of op's input, the transpose of it and
// the result shape. Errors: not rank 4, a block size below 1, dimensions
// the block size does not divide.
func blockRearrange(op *graphir.Op, x *graphir.TensorType) (view, perm, out []int64, err error) {
	if x.Rank() != 4 {
		return nil, nil, nil, op.Errorf("expects a rank-4 NCHW operand, got %s", x)
	}
	b, err := op.Int("blocksize")
	if err != nil {
		return nil, nil, nil, err
	}
	if b < 1 {
		return nil, nil, nil, op.Errorf("blocksize must be at least 1, got %d", b)
	}
	n, c, h, w := x.Shape[0], x.Shape[1], x.Shape[2], x.Shape[3]
	if op.Name == SpaceToDepthOp {
		if h%b != 0 || w%b != 0 {
			return nil, nil, nil, op.Errorf("blocksize %d does not divide the spatial dimensions %d×%d", b, h, w)
		}
		return []int64{n, c, h / b, b, w / b, b}, []int64{0, 3, 5, 1, 2, 4}, []int64{n, c * b * b, h / b, w / b}, nil
	}
	if c%(b*b) != 0 {
		return nil, nil, nil, op.Errorf("blocksize² = %d does not divide the %d channels", b*b, c)
	}
	out = []int64{n, c / (b * b), h * b, w * b}
	mode, err := op.Str("mode")
	if err != nil {
		return nil, nil, nil, err
	}
	if mode == "CRD" {
		return []int64{n, c / (b * b), b, b, h, w}, []int64{0, 1, 4, 2, 5, 3}, out, nil
	}
	return []int64{n, b, b, c / (b * b), h, w}, []int64{0, 3, 4, 1, 5, 2}, out, nil
}

func inferBlockRearrange(op *graphir.Op) ([]graphir.Type, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	_, _, out, err := blockRearrange(op, ts[0])
	if err != nil {
		return nil, err
	}
	return one(&graphir.TensorType{Shape: out, Elem: ts[0].Elem}), nil
}

func evalBlockRearrange(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	view, perm, _, err := blockRearrange(op, args[0].Type)
	if err != nil {
		return nil, err
	}
	permute(args[0].Data, view, perm, out.Data)
	return []*graphir.Tensor{out.Round()}, nil
}

func legalizeBlockRearrange(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	x := op.Operand(0)
	view, perm, out, err := blockRearrange(op, graphir.AsTensor(x.Type))
	if err != nil {
		return nil, err
	}
	v, err := b.reshape(x, view)
	if err != nil {
		return nil, err
	}
	if v, err = b.insert(hlo.Transpose(v, perm, op.Loc)); err != nil {
		return nil, err
	}
	r, err := b.reshape(v, out)
	return []*graphir.Value{r}, err
}
