package llvm

import (
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"
)

// Narrow float formats on the CPU. f16 is LLVM's half: x86 computes each
// half operation in float and rounds the result back (F16C's vcvtph2ps and
// vcvtps2ph), exactly the interpreters' "compute in f32, round to f16".
// bf16 has no llir type: a bf16 value lives in a float register, always
// holding a value bfloat16 represents (every bf16 operation rounds its
// float result with roundBF16), and is stored as its upper 16 bits. f64 →
// f16/bf16 rounds once, through float32Odd, as tensorir.RoundFloat does
// (and numpy for float64 → float16); LLVM's own f64 → half fptrunc would
// call __truncdfhf2, which the linked objects do not have.

// bf16ToFloat widens bf16 bits (i16, or a vector of them) to float.
func (g *fgen) bf16ToFloat(v value.Value) value.Value {
	n := lanesOf(v)
	i := g.cur.NewZExt(v, withLanes(types.I32, n))
	return g.cur.NewBitCast(g.cur.NewShl(i, constOf(i.Type(), 16)), withLanes(types.Float, n))
}

// floatToBF16Bits is the upper half of the bits of a float that holds a
// bf16 value (exact: the lower half is zero).
func (g *fgen) floatToBF16Bits(v value.Value) value.Value {
	n := lanesOf(v)
	b := g.cur.NewBitCast(v, withLanes(types.I32, n))
	return g.cur.NewTrunc(g.cur.NewLShr(b, constOf(b.Type(), 16)), withLanes(types.I16, n))
}

// roundBF16 rounds a float (or vector) to the nearest bf16 value, ties to
// even, as tensorir.Float32ToBF16: add 0x7FFF plus the lowest kept bit,
// clear the low 16 bits; a NaN keeps its upper bits and becomes quiet.
func (g *fgen) roundBF16(v value.Value) value.Value {
	c := g.cur
	n := lanesOf(v)
	it := withLanes(types.I32, n)
	b := c.NewBitCast(v, it)
	lsb := c.NewAnd(c.NewLShr(b, constOf(it, 16)), constOf(it, 1))
	r := c.NewAnd(c.NewAdd(b, c.NewAdd(lsb, constOf(it, 0x7FFF))), constOf(it, -65536))
	nan := c.NewOr(c.NewAnd(b, constOf(it, -65536)), constOf(it, 0x400000))
	r2 := c.NewSelect(c.NewFCmp(enum.FPredUNO, v, v), nan, r)
	return c.NewBitCast(r2, withLanes(types.Float, n))
}

// float32Odd rounds a double (or vector) to float with round-to-odd
// (tensorir.Float32Odd): truncate toward zero and set the last bit when
// inexact, so that a second rounding to f16 or bf16 equals one rounding
// of the double.
func (g *fgen) float32Odd(v value.Value) value.Value {
	c := g.cur
	n := lanesOf(v)
	ft, it := withLanes(types.Float, n), withLanes(types.I32, n)
	f := c.NewFPTrunc(v, ft)
	back := c.NewFPExt(f, v.Type())
	b := c.NewBitCast(f, it)
	// Rounded away from zero: step back one ulp (±inf → ±max finite).
	away := c.NewFCmp(enum.FPredOGT, g.callIntrinsic("llvm.fabs", back), g.callIntrinsic("llvm.fabs", v))
	b1 := c.NewSub(b, c.NewZExt(away, it))
	inexact := c.NewFCmp(enum.FPredONE, back, v)
	b2 := c.NewOr(b1, c.NewZExt(inexact, it))
	return c.NewBitCast(b2, ft)
}
