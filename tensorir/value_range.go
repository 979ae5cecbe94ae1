package tensorir

import "math"

// ValueRange is a closed interval [Lo, Hi] holding the values an
// expression or a buffer's elements can take (integers and floats alike,
// as float64; ±Inf for an unbounded side). NaN is not a value any range
// holds: a float computation that may produce NaN is simply not bounded
// by it (casting NaN to an integer is undefined in compiled code and in
// the interpreter alike). This is the value-range half of what LLVM's
// range metadata and MLIR's integer range inference
// (InferIntRangeInterface) describe; Bound is its index-arithmetic
// counterpart.
type ValueRange struct{ Lo, Hi float64 }

// exactInt is the largest magnitude at which every integer is a float64;
// integer bounds beyond it are widened to ±Inf, so that no bound is ever
// rounded inward.
const exactInt = 1 << 53

// TypeRange is the range of every value of dtype t: the integer types'
// limits, ±Inf for floats and 64-bit integers.
func TypeRange(t DType) ValueRange {
	if !t.IsInt() {
		return ValueRange{math.Inf(-1), math.Inf(1)}
	}
	lo, hi := dtypeRange(t)
	return widenInexact(ValueRange{float64(lo), float64(hi)})
}

// widenInexact replaces bounds beyond exactInt by ±Inf.
func widenInexact(r ValueRange) ValueRange {
	if r.Lo < -exactInt {
		r.Lo = math.Inf(-1)
	}
	if r.Hi > exactInt {
		r.Hi = math.Inf(1)
	}
	return r
}

// Union is the smallest range holding r and o.
func (r ValueRange) Union(o ValueRange) ValueRange {
	return ValueRange{math.Min(r.Lo, o.Lo), math.Max(r.Hi, o.Hi)}
}

// Within reports whether r ⊆ [lo, hi].
func (r ValueRange) Within(lo, hi float64) bool { return r.Lo >= lo && r.Hi <= hi }

// emptyRange is the range of no value, Union's identity.
var emptyRange = ValueRange{math.Inf(1), math.Inf(-1)}

// ValueRangeOf returns a range holding every value of the scalar expression e
// (NaN aside) when each load reads a value within load's range of it.
// Min, max, select and casts are followed exactly; integer add, sub and
// mul by interval arithmetic, widened to the dtype's range when the
// result could wrap; other operations (float arithmetic, division,
// shifts, intrinsics) give their dtype's range. A lane-vector expression
// gives its dtype's range.
func ValueRangeOf(e Expr, load func(*BufferLoad) ValueRange) ValueRange {
	t := e.DType()
	if !t.IsScalar() {
		return TypeRange(t)
	}
	switch x := e.(type) {
	case *IntImm:
		return widenInexact(ValueRange{float64(x.Value), float64(x.Value)})
	case *FloatImm:
		return ValueRange{x.Value, x.Value}
	case *BufferLoad:
		return load(x)
	case *Select:
		return ValueRangeOf(x.T, load).Union(ValueRangeOf(x.F, load))
	case *Cast:
		return castRange(ValueRangeOf(x.X, load), x.X.DType(), x.Type)
	case *Binary:
		return binaryRange(x, load)
	}
	return TypeRange(t)
}

// binaryRange is ValueRangeOf for a Binary.
func binaryRange(x *Binary, load func(*BufferLoad) ValueRange) ValueRange {
	t := x.DType()
	if x.Op.IsCompare() || x.Op.IsLogic() {
		return ValueRange{0, 1}
	}
	if t.IsUnsigned() && t.Kind == UI64 {
		return TypeRange(t) // held as int64 bit patterns
	}
	a, b := ValueRangeOf(x.A, load), ValueRangeOf(x.B, load)
	switch x.Op {
	case OpMin:
		return ValueRange{math.Min(a.Lo, b.Lo), math.Min(a.Hi, b.Hi)}
	case OpMax:
		return ValueRange{math.Max(a.Lo, b.Lo), math.Max(a.Hi, b.Hi)}
	}
	if !t.IsInt() {
		return TypeRange(t)
	}
	var r ValueRange
	switch x.Op {
	case OpAdd:
		r = ValueRange{a.Lo + b.Lo, a.Hi + b.Hi}
	case OpSub:
		r = ValueRange{a.Lo - b.Hi, a.Hi - b.Lo}
	case OpMul:
		p := [4]float64{a.Lo * b.Lo, a.Lo * b.Hi, a.Hi * b.Lo, a.Hi * b.Hi}
		r = ValueRange{math.Min(math.Min(p[0], p[1]), math.Min(p[2], p[3])), math.Max(math.Max(p[0], p[1]), math.Max(p[2], p[3]))}
	default:
		return TypeRange(t)
	}
	return fitOrWrap(r, t)
}

// fitOrWrap is r when it lies within integer dtype t's range (computed
// exactly), t's range otherwise (the operation may wrap).
func fitOrWrap(r ValueRange, t DType) ValueRange {
	full := TypeRange(t)
	if math.IsNaN(r.Lo) || math.IsNaN(r.Hi) || math.IsInf(full.Lo, 0) || math.IsInf(full.Hi, 0) || !r.Within(full.Lo, full.Hi) {
		return full
	}
	return r
}

// castRange is the range of a cast from dtype from to dtype to of a
// value in r: int→int keeps r when it fits (wrapping otherwise),
// float→int truncates toward zero (a value outside the target's range is
// undefined, so the target's range is all that is known then), any→float
// widens r by the rounding to the target's precision (roundOutward).
func castRange(r ValueRange, from, to DType) ValueRange {
	switch {
	case to.IsBool():
		return ValueRange{0, 1}
	case !to.IsInt():
		return roundOutward(r, to)
	case from.IsFloat():
		return fitOrWrap(ValueRange{math.Trunc(r.Lo), math.Trunc(r.Hi)}, to)
	}
	return fitOrWrap(r, to)
}

// significandBits are the float kinds' significand widths (with the
// implicit bit).
var significandBits = map[ScalarKind]int{F16: 11, BF16: 8, F32: 24, F64: 53}

// roundOutward widens r by the most that rounding to nearest in float
// dtype t can move a bound: half an ulp, at most |x|·2^−p for p
// significand bits, or a subnormal's half ulp (below 2^−24 for every
// float type here); a bound that is exactly representable (a small
// integer) stays as it is.
func roundOutward(r ValueRange, t DType) ValueRange {
	bits := significandBits[t.Kind]
	if bits == 0 {
		return TypeRange(t)
	}
	exact := math.Ldexp(1, bits)
	widen := func(x, dir float64) float64 {
		if math.IsInf(x, 0) || x == math.Trunc(x) && math.Abs(x) <= exact {
			return x
		}
		return x + dir*(math.Abs(x)*math.Ldexp(1, -bits)+math.Ldexp(1, -24))
	}
	return ValueRange{widen(r.Lo, -1), widen(r.Hi, 1)}
}

// StoredRanges computes, for the buffers a statement writes, the range of
// the values stored into them: the union over every BufferStore of the
// stored value's ValueRangeOf. Loads of a buffer in known read that range;
// loads of another buffer read the range of what s stores into it
// (resolved recursively; a buffer whose stores read itself, directly or
// through others, gets its dtype's range), or its dtype's range when s
// does not store into it.
type StoredRanges struct {
	known  map[*Buffer]ValueRange
	stores map[*Buffer][]Expr
	memo   map[*Buffer]ValueRange
	busy   map[*Buffer]bool
}

// NewStoredRanges collects the stores of s (a kernel's body: its blocks'
// inits and bodies, every nested statement); known gives the ranges of
// buffers s only reads (a kernel's input parameters).
func NewStoredRanges(s Stmt, known map[*Buffer]ValueRange) *StoredRanges {
	sr := &StoredRanges{known: known, stores: map[*Buffer][]Expr{}, memo: map[*Buffer]ValueRange{}, busy: map[*Buffer]bool{}}
	VisitStmt(s, func(st Stmt) bool {
		if x, ok := st.(*BufferStore); ok {
			sr.stores[x.Buffer] = append(sr.stores[x.Buffer], x.Value)
		}
		return true
	})
	return sr
}

// Of is the range of buffer b's elements as the statement leaves them or
// reads them (see StoredRanges).
func (sr *StoredRanges) Of(b *Buffer) ValueRange {
	if r, ok := sr.known[b]; ok {
		return r
	}
	if r, ok := sr.memo[b]; ok {
		return r
	}
	vals := sr.stores[b]
	if len(vals) == 0 || sr.busy[b] {
		return TypeRange(b.DType)
	}
	sr.busy[b] = true
	r := emptyRange
	for _, v := range vals {
		r = r.Union(ValueRangeOf(v, sr.load))
	}
	sr.busy[b] = false
	sr.memo[b] = r
	return r
}

func (sr *StoredRanges) load(ld *BufferLoad) ValueRange { return sr.Of(ld.Buffer) }
