package llvm

import (
	"fmt"

	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// The AVX-512 VNNI dot product (Intel's vpdpbusd: for each of 16 i32
// lanes, acc += Σ_{q<4} u8(a[4·lane+q]) · s8(b[4·lane+q]), exact and
// wrapping like the i32 adds it replaces; Intel SDM vol. 2C, VPDPBUSD;
// TVM's x86 dot_16x1x16_uint8_int8_int32 intrinsic computes the same).
//
// The int8 schedule rule (schedule/rules_vnni.go) leaves an i32
// contraction of a ui8 operand by an i8 operand as
//
//	for j in 0..16 (vectorized)        the output's lanes
//	  for q in 0..4 (serial or unrolled) the innermost reduction digit
//	    block: C[.. j ..] = C[.. j ..] + i32(A[.. q ..]) * i32(B[.. j, q ..])
//
// with B (the weight) stored by rewrite-layout as [..][16][4], so that
// the 64 bytes of B one step reads are contiguous, A's four bytes are
// contiguous and C's 16 lanes are contiguous. vnniDot recognizes this
// nest from the accesses' strides and emits one call of
// llvm.x86.avx512.vpdpbusd.512 for it: a 4-byte load of A broadcast to the
// 16 lanes, a 64-byte load of B, and the accumulator's vector load and
// store (which LLVM keeps in a register across the unrolled tile); on a
// processor without it, the instruction set Options.Dot8 names computes
// the same step (dot8: AVX-VNNI's 256-bit vpdpbusd twice, or the exact
// vpmaddubsw emulation on AVX-512BW or AVX2). Any other nest — other
// strides, a lane-dependent predicate — or Dot8None widens the nest as
// usual, with the same results.

// vnniLanes and vnniDepth are the instruction's i32 lanes and the 8-bit
// products each lane sums.
const (
	vnniLanes = tir.Int8DotLanes
	vnniDepth = tir.Int8DotDepth
)

// vnniMatch is a recognized VNNI nest: the accumulator's, the
// unsigned operand's and the signed operand's flat indices as functions
// of the loop variables (block bindings substituted), and the block's
// predicate (nil: none, or one loop versioning assumes: codegen_version.go).
type vnniMatch struct {
	lanes, depth *tir.Var
	min          tir.Expr
	acc, u, s    *tir.BufferLoad
	flat         [3]tir.Expr // acc, u, s
	pred         tir.Expr
	// guard is the condition U is read under (a padded convolution's
	// window), nil when always; it must not depend on the lanes or steps.
	guard tir.Expr
}

// matchVNNI recognizes the nest above at vectorized loop x (nil when it
// is not one).
func (g *fgen) matchVNNI(x *tir.For) *vnniMatch {
	if e, ok := x.Extent.(*tir.IntImm); !ok || e.Value != vnniLanes {
		return nil
	}
	in, ok := x.Body.(*tir.For)
	if !ok || (in.Kind != tir.Serial && in.Kind != tir.Unrolled) {
		return nil
	}
	if lo, ok := in.Min.(*tir.IntImm); !ok || lo.Value != 0 {
		return nil
	}
	if e, ok := in.Extent.(*tir.IntImm); !ok || e.Value != vnniDepth {
		return nil
	}
	r, ok := in.Body.(*tir.BlockRealize)
	if !ok || r.Block == nil || r.Block.Init != nil || len(r.Block.Allocs) != 0 || len(r.Values) != len(r.Block.IterVars) {
		return nil
	}
	st, _ := r.Block.Body.(*tir.BufferStore)
	d, ok := tir.Int8Dot(st)
	if !ok {
		return nil
	}
	m := &vnniMatch{lanes: x.Var, depth: in.Var, min: x.Min, acc: d.Acc, u: d.U, s: d.S}
	binding := map[*tir.Var]tir.Expr{}
	for i, iv := range r.Block.IterVars {
		binding[iv.Var] = r.Values[i]
	}
	for i, ld := range []*tir.BufferLoad{m.acc, m.u, m.s} {
		m.flat[i] = tir.Substitute(g.flatIndex(ld.Buffer, ld.Indices), binding)
	}
	if !g.predicateHolds(r) {
		if c, ok := r.Predicate.(*tir.IntImm); !ok || c.Value == 0 {
			m.pred = tir.Substitute(r.Predicate, binding)
		}
	}
	if d.Guard != nil && !g.allAssumed(d.Guard) {
		m.guard = tir.Substitute(d.Guard, binding)
	}
	if !m.strides() {
		return nil
	}
	return m
}

// strides checks the accesses' strides per lane and per reduction step
// (in elements): the accumulator 1 and 0, the unsigned operand 0 and 1,
// the signed operand 4 and 1; and a predicate independent of both loops.
func (m *vnniMatch) strides() bool {
	lane, step := newVecState(m.lanes, vnniLanes), newVecState(m.depth, vnniDepth)
	want := [3][2]int64{{1, 0}, {0, 1}, {vnniDepth, 1}}
	for i, e := range m.flat {
		cl, ok1 := lane.coeff(e)
		cs, ok2 := step.coeff(e)
		if !ok1 || !ok2 || cl != want[i][0] || cs != want[i][1] {
			return false
		}
	}
	if m.guard != nil && (lane.isVarying(m.guard) || step.isVarying(m.guard)) {
		return false
	}
	return m.pred == nil || !step.isVarying(m.pred)
}

// vnniDot emits vectorized loop x as one vpdpbusd when the processor has
// VNNI and x is the nest above; ok is false (nothing emitted) otherwise.
func (g *fgen) vnniDot(x *tir.For) (ok bool, err error) {
	if g.m.opts.Dot8 == Dot8None || g.m.device {
		return false, nil
	}
	m := g.matchVNNI(x)
	if m == nil {
		return false, nil
	}
	if m.pred == nil {
		return true, g.emitVNNI(m, nil)
	}
	if newVecState(m.lanes, vnniLanes).isVarying(m.pred) {
		// A column tail: the lanes where the guard fails neither read nor
		// write (masked loads and store of the accumulator and of S).
		lo, err := g.cond(m.min)
		if err != nil {
			return true, err
		}
		var mask value.Value
		err = g.widened(m.lanes, m.min, lo, vnniLanes, func() error {
			var err error
			mask, err = g.expr(m.pred)
			return err
		})
		if err != nil {
			return true, err
		}
		// A's 4 bytes are read only when a lane is active (a guard that
		// also bounds the rows fails on every lane past the last row).
		bits := g.cur.NewBitCast(mask, types.NewInt(vnniLanes))
		some := g.cur.NewICmp(enum.IPredNE, bits, constant.NewInt(types.NewInt(vnniLanes), 0))
		return true, g.ifThen(some, func() error { return g.emitVNNI(m, mask) }, nil)
	}
	c, err := g.cond(m.pred)
	if err != nil {
		return true, err
	}
	return true, g.ifThen(c, func() error { return g.emitVNNI(m, nil) }, nil)
}

// emitVNNI generates the matched step: acc = vpdpbusd(acc, splat(A's 4
// bytes), B's 64 bytes), on the lanes of mask (nil: all).
func (g *fgen) emitVNNI(m *vnniMatch, mask value.Value) error {
	first := map[*tir.Var]tir.Expr{m.lanes: m.min, m.depth: tir.IntOf(m.depth.Type, 0)}
	ptr := func(ld *tir.BufferLoad, flat tir.Expr) (value.Value, error) {
		a, err := g.access(ld.Buffer, ld.Indices)
		if err != nil {
			return nil, err
		}
		idx, err := g.expr(tir.Substitute(flat, first))
		if err != nil {
			return nil, err
		}
		return g.elemPtr(a, g.toI64(idx)), nil
	}
	pc, err := ptr(m.acc, m.flat[0])
	if err != nil {
		return err
	}
	pu, err := ptr(m.u, m.flat[1])
	if err != nil {
		return err
	}
	ps, err := ptr(m.s, m.flat[2])
	if err != nil {
		return err
	}
	v16 := types.NewVector(vnniLanes, types.I32)
	load := func(t types.Type, p value.Value, align ir.Align, mask value.Value) value.Value {
		p = g.cur.NewBitCast(p, ptrTo(t, p))
		if mask != nil {
			return g.maskedLoad(t, p, align, mask)
		}
		ld := g.cur.NewLoad(t, p)
		ld.Align = align
		return ld
	}
	acc := load(v16, pc, 4, mask)
	var a value.Value = load(types.I32, pu, 1, nil)
	if m.guard != nil {
		// Outside the window U reads 0 (its address is clamped in bounds).
		c, err := g.cond(tir.Substitute(m.guard, first))
		if err != nil {
			return err
		}
		a = g.cur.NewSelect(c, a, constant.NewInt(types.I32, 0))
	}
	b := load(v16, ps, 1, mask)
	sum := g.dot8(acc, a, b, g.below128(m.u.Buffer))
	dst := g.cur.NewBitCast(pc, ptrTo(v16, pc))
	if mask != nil {
		g.maskedStore(sum, dst, 4, mask)
		return nil
	}
	g.cur.NewStore(sum, dst).Align = 4
	return nil
}

// dot8 is vpdpbusd(acc, splat(word), b) — acc <16 x i32>, word A's 4
// bytes as an i32, b <16 x i32> holding S's 64 bytes — in the options'
// instruction set: one 512-bit instruction, or the 256-bit halves of acc
// and b (LLVM keeps each <16 x i32> in two ymm registers, so the halves'
// shuffles cost nothing), natively or emulated (dotBW).
func (g *fgen) dot8(acc, word, b value.Value, narrow bool) value.Value {
	isa := g.m.opts.Dot8
	bits := isa.Bits()
	lanes := bits / 32
	step := func(acc, b value.Value) value.Value {
		vt := types.NewVector(uint64(lanes), types.I32)
		if isa == Dot8AVX512VNNI || isa == Dot8AVXVNNI {
			f := g.m.declare(fmt.Sprintf("llvm.x86.avx512.vpdpbusd.%d", bits), vt, vt, vt, vt)
			return g.cur.NewCall(f, acc, g.splat(word, lanes), b)
		}
		return g.dotBW(acc, word, b, bits, narrow)
	}
	if lanes == vnniLanes {
		return step(acc, b)
	}
	lo := step(g.half(acc, 0), g.half(b, 0))
	hi := step(g.half(acc, 1), g.half(b, 1))
	return g.cur.NewShuffleVector(lo, hi, laneMask(0, 1, vnniLanes))
}

// half is the lower (h = 0) or upper (h = 1) half of the lanes of
// vector v.
func (g *fgen) half(v value.Value, h int) value.Value {
	n := int(v.Type().(*types.VectorType).Len) / 2
	return g.cur.NewShuffleVector(v, constant.NewUndef(v.Type()), laneMask(h*n, 1, n))
}

// laneMask is the shufflevector mask <from, from+step, ...,
// from+(n-1)·step>.
func laneMask(from, step, n int) *constant.Vector {
	idx := make([]constant.Constant, n)
	for i := range idx {
		idx[i] = constant.NewInt(types.I32, int64(from+i*step))
	}
	return constant.NewVector(types.NewVector(uint64(n), types.I32), idx...)
}

// dotBW computes vpdpbusd(acc, splat(word), b) exactly on vectors of
// bits (512: AVX-512BW, for processors without VNNI such as
// skylake-avx512; 256: AVX2, haswell to znver3) with vpmaddubsw and
// vpmaddwd. vpmaddubsw multiplies u8 by s8 bytes and adds adjacent pairs
// into i16 with saturation, which 255·(−128)·2 would overflow (the u8×s8
// pitfall). When the unsigned operand is known to stay below 128
// (narrow: its buffer's value range, arg_ranges.go, as 7-bit activations
// quantized with tessera quantize --reduce-range are), no pair sum leaves
// ±2·127·128 and one vpmaddubsw, one vpmaddwd by 1 (to the 4-product i32
// sums) and the add are exact. Otherwise the unsigned word is split into
// its bytes' upper 7 bits and lowest bit, u = 2·(u >> 1) + (u & 1), whose
// pair sums stay within ±2·127·128 and ±2·128: two vpmaddubsw, then
// vpmaddwd by 2 and by 1, bit-exact too. (fbgemm and ONNX Runtime accept
// the saturation on full-range activations instead, and advise
// reduce_range; Tessera's results stay the interpreter's either way.)
func (g *fgen) dotBW(acc, word, b value.Value, bits int, narrow bool) value.Value {
	lanes := bits / 32
	vb, vw := types.NewVector(uint64(bits/8), types.I8), types.NewVector(uint64(bits/16), types.I16)
	vd := types.NewVector(uint64(lanes), types.I32)
	bytes := func(v value.Value) value.Value { return g.cur.NewBitCast(v, vb) }
	pairs := g.m.declare("llvm.x86.avx512.pmaddubs.w.512", vw, vb, vb)
	widen := g.m.declare("llvm.x86.avx512.pmaddw.d.512", vd, vw, vw)
	if bits == 256 {
		pairs = g.m.declare("llvm.x86.avx2.pmadd.ub.sw", vw, vb, vb)
		widen = g.m.declare("llvm.x86.avx2.pmadd.wd", vd, vw, vw)
	}
	bb := bytes(b)
	k := func(v int64) value.Value { return g.splat(constant.NewInt(types.I16, v), bits/16) }
	dot := func(w value.Value, scale int64) value.Value {
		return g.cur.NewCall(widen, g.cur.NewCall(pairs, bytes(g.splat(w, lanes)), bb), k(scale))
	}
	if narrow {
		return g.cur.NewAdd(acc, dot(word, 1))
	}
	i32 := func(v int64) constant.Constant { return constant.NewInt(types.I32, v) }
	hi := g.cur.NewAnd(g.cur.NewLShr(word, i32(1)), i32(0x7F7F7F7F))
	lo := g.cur.NewAnd(word, i32(0x01010101))
	return g.cur.NewAdd(acc, g.cur.NewAdd(dot(hi, 2), dot(lo, 1)))
}

// below128 reports whether buffer b's elements are known to lie in
// [0, 127] in the kernel being generated (arg_ranges.go).
func (g *fgen) below128(b *tir.Buffer) bool {
	return g.m.values != nil && g.m.values.Of(b).Within(0, 127)
}
