package tensorir

import (
	"errors"
	"math"
)

// Scalar semantics shared by the interpreter and the simplifier's
// constant folding, so that folding is exactly what execution computes.

var errDivZero = errors.New("integer division by zero")

// evalIntBinary applies op to integers of dtype t (results wrap to t;
// comparisons and logic give 0 or 1). Unsigned dtypes compare, divide and
// shift as unsigned (evalUnsigned).
func evalIntBinary(op BinOp, t DType, a, b int64) (int64, error) {
	if t.IsUnsigned() {
		return evalUnsigned(op, t, uint64(a), uint64(b))
	}
	var r int64
	switch op {
	case OpShl:
		r = shl(uint64(a), uint64(b), t.Bits())
	case OpShr:
		if uint64(b) >= uint64(t.Bits()) {
			b = int64(t.Bits() - 1) // sign fill
		}
		r = a >> uint(b)
	case OpAdd:
		r = a + b
	case OpSub:
		r = a - b
	case OpMul:
		r = a * b
	case OpFloorDiv:
		if b == 0 {
			return 0, errDivZero
		}
		if a == math.MinInt64 && b == -1 {
			r = a // wraps
		} else {
			r = floorDiv(a, b)
		}
	case OpFloorMod:
		if b == 0 {
			return 0, errDivZero
		}
		if b == -1 {
			r = 0
		} else {
			r = floorMod(a, b)
		}
	case OpMin:
		r = min(a, b)
	case OpMax:
		r = max(a, b)
	case OpEQ:
		return b2i(a == b), nil
	case OpNE:
		return b2i(a != b), nil
	case OpLT:
		return b2i(a < b), nil
	case OpLE:
		return b2i(a <= b), nil
	case OpGT:
		return b2i(a > b), nil
	case OpGE:
		return b2i(a >= b), nil
	case OpAnd:
		return b2i(a != 0 && b != 0), nil
	case OpOr:
		return b2i(a != 0 || b != 0), nil
	case OpDiv:
		return 0, errors.New("true division '/' of integers; use floordiv")
	}
	return WrapInt(t, r), nil
}

// evalUnsigned is evalIntBinary for unsigned dtype t: a and b are the
// values (ui64: the bit patterns). floordiv and floormod are unsigned
// division and remainder (floor and truncation agree), min, max and
// comparisons are unsigned, shr is logical.
func evalUnsigned(op BinOp, t DType, a, b uint64) (int64, error) {
	var r uint64
	switch op {
	case OpAdd:
		r = a + b
	case OpSub:
		r = a - b
	case OpMul:
		r = a * b
	case OpFloorDiv, OpFloorMod:
		if b == 0 {
			return 0, errDivZero
		}
		if op == OpFloorDiv {
			r = a / b
		} else {
			r = a % b
		}
	case OpMin:
		r = min(a, b)
	case OpMax:
		r = max(a, b)
	case OpShl:
		return WrapInt(t, shl(a, b, t.Bits())), nil
	case OpShr:
		if b >= uint64(t.Bits()) {
			return 0, nil
		}
		r = a >> b
	case OpEQ:
		return b2i(a == b), nil
	case OpNE:
		return b2i(a != b), nil
	case OpLT:
		return b2i(a < b), nil
	case OpLE:
		return b2i(a <= b), nil
	case OpGT:
		return b2i(a > b), nil
	case OpGE:
		return b2i(a >= b), nil
	case OpAnd:
		return b2i(a != 0 && b != 0), nil
	case OpOr:
		return b2i(a != 0 || b != 0), nil
	default:
		return 0, errors.New("true division '/' of integers; use floordiv")
	}
	return WrapInt(t, int64(r)), nil
}

// shl is a << b for a bits-wide integer; amounts ≥ bits give 0.
func shl(a, b uint64, bits int) int64 {
	if b >= uint64(bits) {
		return 0
	}
	return int64(a << b)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// FMax is max(a, b) as compiled code computes it (NumPy's maximum, ONNX
// Max): NaN if either is NaN — unlike Go's math.Max, whose
// max(+Inf, NaN) is +Inf — and max(−0, +0) = +0.
func FMax(a, b float64) float64 {
	if a != a || b != b {
		return a + b
	}
	return math.Max(a, b)
}

// FMin is min(a, b) as compiled code computes it: NaN if either is NaN,
// min(−0, +0) = −0.
func FMin(a, b float64) float64 {
	if a != a || b != b {
		return a + b
	}
	return math.Min(a, b)
}

// evalFloatBinary applies an arithmetic op to floats of dtype t, rounding
// the result to t (so f32 arithmetic is exactly float32 arithmetic).
// min and max propagate NaN (FMin, FMax).
func evalFloatBinary(op BinOp, t DType, a, b float64) float64 {
	var r float64
	switch op {
	case OpAdd:
		r = a + b
	case OpSub:
		r = a - b
	case OpMul:
		r = a * b
	case OpDiv:
		r = a / b
	case OpMin:
		r = FMin(a, b)
	case OpMax:
		r = FMax(a, b)
	default:
		return math.NaN()
	}
	return RoundFloat(t, r)
}

// evalFloatCompare compares floats (IEEE: any comparison with NaN is
// false except !=).
func evalFloatCompare(op BinOp, a, b float64) int64 {
	switch op {
	case OpEQ:
		return b2i(a == b)
	case OpNE:
		return b2i(a != b)
	case OpLT:
		return b2i(a < b)
	case OpLE:
		return b2i(a <= b)
	case OpGT:
		return b2i(a > b)
	}
	return b2i(a >= b)
}

// castIntToFloat converts an integer of dtype from to float dtype t (ui64
// values are their unsigned bit patterns).
func castIntToFloat(from, t DType, v int64) float64 {
	if from.Kind == UI64 {
		return RoundFloat(t, float64(uint64(v)))
	}
	return RoundFloat(t, float64(v))
}

// castFloatToInt converts a float to integer dtype t: truncation toward
// zero, saturating at t's range (unsigned: at 0 and 2^bits-1); NaN
// becomes 0; i1 tests for non-zero.
func castFloatToInt(t DType, v float64) int64 {
	if t.Kind == Bool {
		return b2i(v != 0)
	}
	if math.IsNaN(v) {
		return 0
	}
	if t.Kind == UI64 {
		switch v = math.Trunc(v); {
		case v <= 0:
			return 0
		case v >= 1<<64:
			return -1 // 2^64-1
		}
		return int64(uint64(v))
	}
	lo, hi := dtypeRange(t)
	v = math.Trunc(v)
	if v <= float64(lo) {
		return lo
	}
	if v >= float64(hi) {
		return hi
	}
	return int64(v)
}

// IntFn is an integer expression compiled by CompileInt: its value for
// the variable values vals (indexed by the slots CompileInt assigned),
// ok as EvalInt's.
type IntFn func(vals []int64, known []bool) (int64, bool)

// CompileInt compiles integer (or i1) expression e for repeated
// evaluation with EvalInt's semantics: slot gives each variable its index
// in the vals and known slices the function is called with (a variable
// whose known entry is false makes ok false, as EvalInt's env does). The
// dtypes are resolved once, not per evaluation, so a loop evaluating the
// same indices for every element runs several times faster.
func CompileInt(e Expr, slot func(*Var) int) IntFn {
	fail := func([]int64, []bool) (int64, bool) { return 0, false }
	switch x := e.(type) {
	case *IntImm:
		v := x.Value
		return func([]int64, []bool) (int64, bool) { return v, true }
	case *Var:
		i := slot(x)
		return func(vals []int64, known []bool) (int64, bool) { return vals[i], known[i] }
	case *Cast:
		if !x.Type.IsInt() || !x.X.DType().IsInt() {
			return fail
		}
		t, a := x.Type, CompileInt(x.X, slot)
		return func(vals []int64, known []bool) (int64, bool) {
			v, ok := a(vals, known)
			return WrapInt(t, v), ok
		}
	case *Not:
		a := CompileInt(x.X, slot)
		return func(vals []int64, known []bool) (int64, bool) {
			v, ok := a(vals, known)
			return b2i(v == 0), ok
		}
	case *Select:
		c, t, f := CompileInt(x.Cond, slot), CompileInt(x.T, slot), CompileInt(x.F, slot)
		return func(vals []int64, known []bool) (int64, bool) {
			v, ok := c(vals, known)
			if !ok {
				return 0, false
			}
			if v != 0 {
				return t(vals, known)
			}
			return f(vals, known)
		}
	case *Binary:
		if !x.A.DType().IsInt() {
			return fail
		}
		op, t, a, b := x.Op, x.A.DType(), CompileInt(x.A, slot), CompileInt(x.B, slot)
		return func(vals []int64, known []bool) (int64, bool) {
			va, ok := a(vals, known)
			if !ok {
				return 0, false
			}
			vb, ok := b(vals, known)
			if !ok {
				return 0, false
			}
			v, err := evalIntBinary(op, t, va, vb)
			return v, err == nil
		}
	}
	return fail
}

// EvalInt evaluates an integer (or i1) expression with the interpreter's
// semantics, taking variables from env; ok is false when e reads a
// buffer, involves floats or calls, names a variable env does not know,
// or divides by zero.
func EvalInt(e Expr, env func(*Var) (int64, bool)) (v int64, ok bool) {
	switch x := e.(type) {
	case *IntImm:
		return x.Value, true
	case *Var:
		return env(x)
	case *Cast:
		if !x.Type.IsInt() || !x.X.DType().IsInt() {
			return 0, false
		}
		v, ok := EvalInt(x.X, env)
		return WrapInt(x.Type, v), ok
	case *Not:
		v, ok := EvalInt(x.X, env)
		return b2i(v == 0), ok
	case *Select:
		c, ok := EvalInt(x.Cond, env)
		if !ok {
			return 0, false
		}
		if c != 0 {
			return EvalInt(x.T, env)
		}
		return EvalInt(x.F, env)
	case *Binary:
		if !x.A.DType().IsInt() {
			return 0, false
		}
		a, ok := EvalInt(x.A, env)
		if !ok {
			return 0, false
		}
		b, ok := EvalInt(x.B, env)
		if !ok {
			return 0, false
		}
		v, err := evalIntBinary(x.Op, x.A.DType(), a, b)
		return v, err == nil
	}
	return 0, false
}
