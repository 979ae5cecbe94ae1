package tensorir

import "math"

// Interval is an inclusive integer interval [Lo, Hi]. The full interval
// (Lo = math.MinInt64, Hi = math.MaxInt64) means "unknown"; any other
// interval is a proven bound.
type Interval struct {
	Lo, Hi int64
}

// Full is the unknown interval.
var Full = Interval{math.MinInt64, math.MaxInt64}

// Point is the interval [v, v].
func Point(v int64) Interval { return Interval{v, v} }

// IsFull reports whether nothing is known.
func (iv Interval) IsFull() bool { return iv.Lo == math.MinInt64 || iv.Hi == math.MaxInt64 }

// IsPoint reports whether the interval holds one value.
func (iv Interval) IsPoint() bool { return !iv.IsFull() && iv.Lo == iv.Hi }

// Within reports whether iv ⊆ [lo, hi].
func (iv Interval) Within(lo, hi int64) bool { return !iv.IsFull() && iv.Lo >= lo && iv.Hi <= hi }

// BoundEnv maps variables to the intervals of their values, e.g. loop
// variables to [min, min+extent-1].
type BoundEnv map[*Var]Interval

// Bound returns an interval containing every value of the integer
// expression e when its variables range over env (variables not in env
// range over their dtype). The analysis is sound under the wrapping
// semantics of integer arithmetic: whenever an intermediate result could
// leave its dtype's range, the result is Full. Non-integer expressions
// return Full. (TVM's arith::ConstIntBound plays the same role.)
func Bound(e Expr, env BoundEnv) Interval {
	t := e.DType()
	if !t.IsInt() || !t.IsScalar() {
		return Full
	}
	iv := bound(e, env)
	if iv.IsFull() {
		return Full
	}
	if lo, hi := dtypeRange(t); iv.Lo < lo || iv.Hi > hi {
		return Full
	}
	return iv
}

// dtypeRange is the range of values of integer dtype t (index: int64).
// For ui64, whose values from 2^63 are held as negative int64 bit
// patterns, it is the part that intervals of int64s describe: 0 ... 2^63-1.
func dtypeRange(t DType) (int64, int64) {
	switch t.Kind {
	case Bool:
		return 0, 1
	case I8:
		return math.MinInt8, math.MaxInt8
	case I16:
		return math.MinInt16, math.MaxInt16
	case I32:
		return math.MinInt32, math.MaxInt32
	case UI8:
		return 0, math.MaxUint8
	case UI16:
		return 0, math.MaxUint16
	case UI32:
		return 0, math.MaxUint32
	case UI64:
		return 0, math.MaxInt64
	}
	return math.MinInt64, math.MaxInt64
}

func typeInterval(t DType) Interval {
	lo, hi := dtypeRange(t)
	if t.Kind == I64 || t.Kind == Index || t.Kind == UI64 {
		return Full
	}
	return Interval{lo, hi}
}

func bound(e Expr, env BoundEnv) Interval {
	switch x := e.(type) {
	case *IntImm:
		return Point(x.Value)
	case *Var:
		if iv, ok := env[x]; ok {
			return iv
		}
		return typeInterval(x.Type)
	case *Binary:
		if x.Op.IsCompare() || x.Op.IsLogic() {
			return Interval{0, 1}
		}
		a, b := Bound(x.A, env), Bound(x.B, env)
		if a.IsFull() || b.IsFull() {
			return Full
		}
		switch x.Op {
		case OpAdd:
			return hull(addOv(a.Lo, b.Lo), addOv(a.Hi, b.Hi))
		case OpSub:
			return hull(subOv(a.Lo, b.Hi), subOv(a.Hi, b.Lo))
		case OpMul:
			return hull(mulOv(a.Lo, b.Lo), mulOv(a.Lo, b.Hi), mulOv(a.Hi, b.Lo), mulOv(a.Hi, b.Hi))
		case OpMin:
			return Interval{min(a.Lo, b.Lo), min(a.Hi, b.Hi)}
		case OpMax:
			return Interval{max(a.Lo, b.Lo), max(a.Hi, b.Hi)}
		case OpFloorDiv:
			if b.Lo > 0 || b.Hi < 0 {
				return hull(divOv(a.Lo, b.Lo), divOv(a.Lo, b.Hi), divOv(a.Hi, b.Lo), divOv(a.Hi, b.Hi))
			}
		case OpFloorMod:
			if b.IsPoint() && b.Lo > 0 {
				c := b.Lo
				if floorDiv(a.Lo, c) == floorDiv(a.Hi, c) {
					return Interval{floorMod(a.Lo, c), floorMod(a.Hi, c)}
				}
				return Interval{0, c - 1}
			}
			if b.Lo > 0 {
				return Interval{0, b.Hi - 1}
			}
			if b.Hi < 0 {
				return Interval{b.Lo + 1, 0}
			}
		}
		return Full
	case *Not:
		return Interval{0, 1}
	case *Select:
		a, b := Bound(x.T, env), Bound(x.F, env)
		if a.IsFull() || b.IsFull() {
			return typeInterval(x.DType())
		}
		return Interval{min(a.Lo, b.Lo), max(a.Hi, b.Hi)}
	case *Cast:
		if x.X.DType().IsInt() {
			iv := Bound(x.X, env)
			if lo, hi := dtypeRange(x.Type); !iv.IsFull() && iv.Lo >= lo && iv.Hi <= hi {
				return iv
			}
		}
		return typeInterval(x.Type)
	case *Call:
		if x.Name == "abs" && len(x.Args) == 1 {
			iv := Bound(x.Args[0], env)
			if iv.IsFull() || iv.Lo == math.MinInt64 {
				return typeInterval(x.DType())
			}
			if iv.Lo >= 0 {
				return iv
			}
			if iv.Hi <= 0 {
				return Interval{-iv.Hi, -iv.Lo}
			}
			return Interval{0, max(-iv.Lo, iv.Hi)}
		}
	}
	return typeInterval(e.DType())
}

// ovFlag marks an overflowed endpoint computation.
type endpoint struct {
	v  int64
	ok bool
}

func hull(ps ...endpoint) Interval {
	iv := Interval{math.MaxInt64, math.MinInt64}
	for _, p := range ps {
		if !p.ok {
			return Full
		}
		iv.Lo = min(iv.Lo, p.v)
		iv.Hi = max(iv.Hi, p.v)
	}
	if iv.Lo == math.MinInt64 || iv.Hi == math.MaxInt64 {
		return Full
	}
	return iv
}

func addOv(a, b int64) endpoint {
	s := a + b
	return endpoint{s, (b >= 0) == (s >= a)}
}

func subOv(a, b int64) endpoint {
	s := a - b
	return endpoint{s, (b >= 0) == (s <= a)}
}

func mulOv(a, b int64) endpoint {
	if a == 0 || b == 0 {
		return endpoint{0, true}
	}
	p := a * b
	return endpoint{p, p/b == a && !(a == -1 && b == math.MinInt64) && !(b == -1 && a == math.MinInt64)}
}

func divOv(a, b int64) endpoint {
	if b == 0 || a == math.MinInt64 && b == -1 {
		return endpoint{0, false}
	}
	return endpoint{floorDiv(a, b), true}
}

// floorDiv is ⌊a/b⌋ (b ≠ 0).
func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// floorMod is a - b⌊a/b⌋, with the sign of b (b ≠ 0).
func floorMod(a, b int64) int64 {
	m := a % b
	if m != 0 && ((m < 0) != (b < 0)) {
		m += b
	}
	return m
}
