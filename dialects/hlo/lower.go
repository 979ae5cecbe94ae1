package hlo

import (
	"fmt"

	g "github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Lowering is how an hlo op becomes tensor IR, registered with the op's
// definition (as TVM registers an op's FTVMCompute beside it). An op has
// one of:
//   - Scalar, for elementwise ops: the value of one result element from
//     the operands' elements at the same index (args, of the operands'
//     dtypes; res is the result dtype). The bodies of hlo.reduce and
//     hlo.reduce_window are translated through it as well.
//   - Compute, for the others: the op's result as a tensorir.Compute over
//     its operands ins (res is the result dtype); the kernel builder of
//     lower-to-tir (lowering/) turns it into one block.
//   - Kernel, for Opaque ops that are a kernel of their own (hlo.rnn_scan):
//     the kernel's whole body over the operands ins and one output buffer
//     per result (outs, in result order), with any intermediate buffers
//     allocated inside it. The kernel builder uses it when the op is alone
//     in its fusion and its results are the fusion's results in order.
//
// Structural ops (hlo.constant, hlo.fusion, hlo.return) have none: the
// kernel builder handles them itself.
//
// Symbolic marks a Compute that is correct on symbolic dimensions
// (issue 19): the Shape of its operands and of the result type hold
// graphir.Dynamic there, and the Compute uses such a dimension only as a
// loop extent (the kernel builder sets Compute.Extents from the result
// type) or refuses it with a diagnostic; a symbolic Reduce extent is
// refused by the kernel builder. Scalar lowerings (elementwise ops) are
// symbolic as they are.
type Lowering struct {
	Scalar   func(op *g.Op, args []tir.Expr, res tir.DType) (tir.Expr, error)
	Compute  func(op *g.Op, ins []*tir.Operand, res tir.DType) (*tir.Compute, error)
	Kernel   func(op *g.Op, ins []*tir.Operand, outs []*tir.Buffer) (tir.Stmt, error)
	Symbolic bool
}

var lowerings = map[string]Lowering{}

// register adds def to graphir's op registry and low as its tensor IR
// lowering: the op's whole definition is made in one place.
func register(def *g.OpDef, low Lowering) {
	g.RegisterOp(def)
	if low.Scalar != nil || low.Compute != nil || low.Kernel != nil {
		lowerings[def.Name] = low
	}
}

// LowersSymbolic reports whether hlo op name's lowering takes symbolic
// dimensions (Lowering.Symbolic; every Scalar lowering).
func LowersSymbolic(name string) bool {
	l, ok := lowerings[name]
	return ok && (l.Scalar != nil || l.Symbolic)
}

// LoweringOf returns the tensor IR lowering registered with hlo op name.
func LoweringOf(name string) (Lowering, bool) {
	l, ok := lowerings[name]
	return l, ok
}

// Lower returns the computation of op's single result over its operands
// ins (res is the result's dtype): the op's Compute, or for an
// elementwise op its Scalar applied at every result index. Errors (located
// at op): an op without a lowering, or one its lowering refuses (a dtype
// it does not take).
func Lower(op *g.Op, ins []*tir.Operand, res tir.DType) (*tir.Compute, error) {
	low, ok := lowerings[op.Name]
	switch {
	case !ok:
		return nil, errorAt(op, "no tensor IR lowering for '%s'", op.Name)
	case low.Compute != nil:
		return low.Compute(op, ins, res)
	case low.Kernel != nil:
		return nil, errorAt(op, "'%s' is lowered as a kernel of its own; it must be alone in its fusion", op.Name)
	}
	rt, err := resultTensor(op, 0)
	if err != nil {
		return nil, err
	}
	// Check the scalar lowering once on placeholder values; Body cannot
	// report errors.
	probe := make([]tir.Expr, len(ins))
	for i, o := range ins {
		probe[i] = tir.Zero(o.DType)
	}
	if _, err := low.Scalar(op, probe, res); err != nil {
		return nil, err
	}
	return &tir.Compute{Shape: rt.Shape, Body: func(n tir.Nest, _ tir.Expr) tir.Expr {
		args := make([]tir.Expr, len(ins))
		for i, o := range ins {
			args[i] = o.At(n.Index()...)
		}
		e, _ := low.Scalar(op, args, res)
		return e
	}}, nil
}

// scalarOf is the scalar lowering of an op inside a reduction body.
func scalarOf(o *g.Op, args []tir.Expr, res tir.DType) (tir.Expr, error) {
	low, ok := lowerings[o.Name]
	if !ok || low.Scalar == nil {
		return nil, o.Errorf("lower-to-tir: cannot lower '%s' in a reduction body (only elementwise ops)", o.Name)
	}
	return low.Scalar(o, args, res)
}

// TIRDType maps an element type to its tensor IR dtype.
func TIRDType(d g.DType) (tir.DType, bool) {
	switch d {
	case g.F32:
		return tir.DF32, true
	case g.F16:
		return tir.DF16, true
	case g.BF16:
		return tir.DBF16, true
	case g.F64:
		return tir.DF64, true
	case g.I1:
		return tir.DBool, true
	case g.I8:
		return tir.DI8, true
	case g.I16:
		return tir.DI16, true
	case g.I32:
		return tir.DI32, true
	case g.I64:
		return tir.DI64, true
	case g.UI8:
		return tir.DUI8, true
	case g.UI16:
		return tir.DUI16, true
	case g.UI32:
		return tir.DUI32, true
	case g.UI64:
		return tir.DUI64, true
	}
	return tir.DType{}, false
}

// errorAt is a lowering diagnostic at op.
func errorAt(op *g.Op, format string, args ...any) error {
	return op.Errorf("lower-to-tir: %s", fmt.Sprintf(format, args...))
}
