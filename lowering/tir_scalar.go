package lowering

import (
	"github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Scalar semantics of the hlo elementwise ops as tensor IR expressions,
// matching the hlo reference evaluators (dialects/hlo/elementwise.go):
//   - add/multiply/maximum/minimum on i1 are or/and/or/and;
//   - integer divide truncates toward zero and x / 0 = -1 (XLA);
//   - negate of a float multiplies by -1 (so -(+0) = -0);
//   - integer power is computed in f64 and truncated back;
//   - compare gives i1; convert is a cast (float → int truncates toward
//     zero, → i1 tests for non-zero).
//
// scalarOp is shared by the elementwise blocks and the translation of
// reduce / reduce_window bodies.

// isElementwiseOp reports whether op is an hlo op scalarOp handles.
func isElementwiseOp(name string) bool {
	_, bin := binaryScalar[name]
	_, un := unaryScalar[name]
	return bin || un || name == "hlo.compare" || name == "hlo.select" || name == "hlo.convert"
}

var binaryScalar = map[string]bool{
	"hlo.add": true, "hlo.subtract": true, "hlo.multiply": true, "hlo.divide": true,
	"hlo.maximum": true, "hlo.minimum": true, "hlo.power": true,
}

var unaryScalar = map[string]string{
	"hlo.negate": "", "hlo.abs": "abs", "hlo.exponential": "exp", "hlo.log": "log",
	"hlo.tanh": "tanh", "hlo.logistic": "sigmoid", "hlo.rsqrt": "rsqrt", "hlo.sqrt": "sqrt",
}

var compareOps = map[string]tir.BinOp{
	"EQ": tir.OpEQ, "NE": tir.OpNE, "LT": tir.OpLT, "LE": tir.OpLE, "GT": tir.OpGT, "GE": tir.OpGE,
}

// scalarOp returns the expression op computes from its operands' values
// args (of the operands' dtypes); res is the result dtype.
func scalarOp(op *graphir.Op, args []tir.Expr, res tir.DType) (tir.Expr, error) {
	need := func(n int) error {
		if len(args) != n {
			return errorAt(op, "expects %d operands, got %d", n, len(args))
		}
		return nil
	}
	if binaryScalar[op.Name] {
		if err := need(2); err != nil {
			return nil, err
		}
		return binaryExpr(op, args[0], args[1], res)
	}
	if fn, ok := unaryScalar[op.Name]; ok {
		if err := need(1); err != nil {
			return nil, err
		}
		x := args[0]
		if op.Name == "hlo.negate" {
			if res.IsFloat() {
				return tir.Mul(x, tir.Float(res, -1)), nil
			}
			return tir.Sub(tir.IntOf(res, 0), x), nil
		}
		if res.IsBool() || (!res.IsFloat() && fn != "abs") {
			return nil, errorAt(op, "'%s' does not take %s", op.Name, res)
		}
		return &tir.Call{Name: fn, Args: []tir.Expr{x}}, nil
	}
	switch op.Name {
	case "hlo.compare":
		if err := need(2); err != nil {
			return nil, err
		}
		dir := op.StringAttrOr("comparison_direction", "")
		c, ok := compareOps[dir]
		if !ok {
			return nil, errorAt(op, "unknown comparison_direction %q", dir)
		}
		return tir.Bin(c, args[0], args[1]), nil
	case "hlo.select":
		if err := need(3); err != nil {
			return nil, err
		}
		return &tir.Select{Cond: args[0], T: args[1], F: args[2]}, nil
	case "hlo.convert":
		if err := need(1); err != nil {
			return nil, err
		}
		if args[0].DType() == res {
			return args[0], nil
		}
		return &tir.Cast{Type: res, X: args[0]}, nil
	}
	return nil, errorAt(op, "'%s' is not an elementwise op", op.Name)
}

func binaryExpr(op *graphir.Op, a, b tir.Expr, t tir.DType) (tir.Expr, error) {
	if t.IsBool() {
		switch op.Name {
		case "hlo.add", "hlo.maximum":
			return tir.Bin(tir.OpOr, a, b), nil
		case "hlo.multiply", "hlo.minimum":
			return tir.Bin(tir.OpAnd, a, b), nil
		}
		return nil, errorAt(op, "'%s' does not take i1", op.Name)
	}
	switch op.Name {
	case "hlo.add":
		return tir.Add(a, b), nil
	case "hlo.subtract":
		return tir.Sub(a, b), nil
	case "hlo.multiply":
		return tir.Mul(a, b), nil
	case "hlo.maximum":
		return tir.Max(a, b), nil
	case "hlo.minimum":
		return tir.Min(a, b), nil
	case "hlo.divide":
		if t.IsFloat() {
			return tir.Div(a, b), nil
		}
		return truncDiv(a, b, t), nil
	case "hlo.power":
		if t.IsFloat() {
			return &tir.Call{Name: "pow", Args: []tir.Expr{a, b}}, nil
		}
		p := &tir.Call{Name: "pow", Args: []tir.Expr{&tir.Cast{Type: tir.DF64, X: a}, &tir.Cast{Type: tir.DF64, X: b}}}
		return &tir.Cast{Type: t, X: p}, nil
	}
	return nil, errorAt(op, "'%s' is not a binary op", op.Name)
}

// truncDiv is integer division truncating toward zero with x / 0 = -1:
// with d = (b == 0 ? 1 : b), q = floordiv(a, d) corrected by one when the
// remainder is non-zero and the signs differ.
func truncDiv(a, b tir.Expr, t tir.DType) tir.Expr {
	zero := tir.IntOf(t, 0)
	isZero := tir.Bin(tir.OpEQ, b, zero)
	d := &tir.Select{Cond: isZero, T: tir.IntOf(t, 1), F: b}
	q := tir.FloorDiv(a, d)
	r := tir.FloorMod(a, d)
	signsDiffer := tir.Bin(tir.OpNE, tir.LT(a, zero), tir.LT(d, zero))
	fix := tir.Bin(tir.OpAnd, tir.Bin(tir.OpNE, r, zero), signsDiffer)
	tq := &tir.Select{Cond: fix, T: tir.Add(q, tir.IntOf(t, 1)), F: q}
	return &tir.Select{Cond: isZero, T: tir.IntOf(t, -1), F: tq}
}

// regionScalar translates the body of a reduce / reduce_window (two
// rank-0 arguments: accumulator and element) into an expression of acc
// and x. Every op of the body must be elementwise (or a rank-0 constant).
func regionScalar(op *graphir.Op, acc, x tir.Expr) (tir.Expr, error) {
	if len(op.Regions) != 1 || len(op.Regions[0].Blocks) != 1 {
		return nil, errorAt(op, "expects one region with one block")
	}
	b := op.Regions[0].Blocks[0]
	if len(b.Args) != 2 {
		return nil, errorAt(op, "body must have two arguments, got %d", len(b.Args))
	}
	env := map[*graphir.Value]tir.Expr{b.Args[0]: acc, b.Args[1]: x}
	for o := b.First(); o != nil; o = o.Next() {
		if o.Name == "hlo.return" {
			if o.NumOperands() != 1 {
				return nil, o.Errorf("lower-to-tir: reduction body must return one value")
			}
			r, ok := env[o.Operand(0)]
			if !ok {
				return nil, o.Errorf("lower-to-tir: reduction body returns a value defined outside it")
			}
			return r, nil
		}
		if len(o.Results) != 1 {
			return nil, o.Errorf("lower-to-tir: cannot lower '%s' in a reduction body", o.Name)
		}
		_, dt, err := tensorOf(o, o.Results[0])
		if err != nil {
			return nil, err
		}
		if o.Name == "hlo.constant" {
			d, ok := o.Attr("value").(*graphir.DenseElementsAttr)
			if !ok || d.Elided || len(d.Values()) == 0 {
				return nil, o.Errorf("lower-to-tir: constant in a reduction body needs a value")
			}
			env[o.Results[0]] = immediate(dt, d.Values()[0])
			continue
		}
		if !isElementwiseOp(o.Name) {
			return nil, o.Errorf("lower-to-tir: cannot lower '%s' in a reduction body (only elementwise ops)", o.Name)
		}
		args := make([]tir.Expr, o.NumOperands())
		for i, v := range o.Operands() {
			e, ok := env[v]
			if !ok {
				return nil, o.Errorf("lower-to-tir: operand #%d of a reduction body op is defined outside the body", i)
			}
			args[i] = e
		}
		e, err := scalarOp(o, args, dt)
		if err != nil {
			return nil, err
		}
		env[o.Results[0]] = e
	}
	return nil, errorAt(op, "reduction body does not end with hlo.return")
}
