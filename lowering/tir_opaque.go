package lowering

import (
	"fmt"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// lowerKernelOp lets an Opaque op's Kernel lowering build the kernel body;
// the op must be the fusion's only computation and its results the
// fusion's results, in order.
func (k *kernel) lowerKernelOp(op *graphir.Op, low hlo.Lowering, outFor map[*graphir.Value]*tir.Buffer) error {
	if len(k.blocks) > 0 || k.opaque {
		return errorAt(op, "'%s' must be alone in its fusion", op.Name)
	}
	ins := make([]*tir.Operand, op.NumOperands())
	for i := range ins {
		o, err := k.in(op, i)
		if err != nil {
			return err
		}
		ins[i] = o
	}
	outs := make([]*tir.Buffer, len(op.Results))
	for i, r := range op.Results {
		b := outFor[r]
		if b == nil || b.Name != fmt.Sprintf("out%d", i) {
			return errorAt(op, "'%s' must be alone in its fusion, returning its results in order", op.Name)
		}
		outs[i] = b
		t, dt, err := tensorOf(op, r)
		if err != nil {
			return err
		}
		k.vals[r] = &tir.Operand{Buffer: b, Shape: t.Shape, DType: dt}
	}
	body, err := low.Kernel(op, ins, outs)
	if err != nil {
		return err
	}
	k.blocks = append(k.blocks, body)
	k.opaque = true
	return nil
}
