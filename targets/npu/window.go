package npu

import (
	"slices"

	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Window is a convolution whose image operand X is read through a
// sliding window (NCHW or NCW, any stride, dilation and zero padding):
//
//	X[n…, c, h, w]   c = ci,  h = SH·oh + DH·kh + PH,  w = SW·ow + DW·kw + PW
//
// zero where h or w falls outside the image. On the window layout the
// runtime stores the image once, as entries of BlockIn channels
// ([image][channel block][H][W], bf16), and each output tile's LOADs
// fetch its rows with their halo, padding on the fly (ISA.md, LOAD's pad
// fields), instead of an im2col matrix that repeats every input value
// KH·KW times. The weights are stored as [N block][channel block][KH][KW]
// entries of BlockOut × BlockIn.
type Window struct {
	Imgs, C, H, W  int // images (the batch variables' volume), channels, rows, columns
	OH, OW, KH, KW int
	SH, SW, DH, DW int
	PH, PW         int // row and column of output 0 at kernel offset 0 (negative: padding)
	// ImgBase[i] is image i's element offset in X; StrideC/H/W the
	// offsets of one channel, row and column.
	ImgBase                   []int64
	StrideC, StrideH, StrideW int64
	// WgtIdx[((n·C + c)·KH + kh)·KW + kw] is the weight's element offset
	// in W (−1: none).
	WgtIdx []int32
}

// CB is the number of channel blocks (entries per pixel).
func (w *Window) CB(cfg isa.Config) int { return ceilDiv(w.C, cfg.BlockIn) }

// linearForm is Σ coef·var + c.
type linearForm struct {
	coef map[*tir.Var]int64
	c    int64
}

// linear reads e as an affine form of variables (+, −, × by a constant),
// after removing clamps min(·, constant) and max(·, constant): lowering
// clamps a padded convolution's input indices, which matters only where
// the operand's condition is false (the table check confirms it).
func linear(e tir.Expr) (linearForm, bool) {
	switch x := e.(type) {
	case *tir.IntImm:
		return linearForm{coef: map[*tir.Var]int64{}, c: x.Value}, true
	case *tir.Var:
		return linearForm{coef: map[*tir.Var]int64{x: 1}}, true
	case *tir.Binary:
		_, bConst := x.B.(*tir.IntImm)
		if (x.Op == tir.OpMin || x.Op == tir.OpMax) && bConst {
			return linear(x.A)
		}
		a, okA := linear(x.A)
		b, okB := linear(x.B)
		if !okA || !okB {
			return linearForm{}, false
		}
		switch x.Op {
		case tir.OpAdd, tir.OpSub:
			sign := int64(1)
			if x.Op == tir.OpSub {
				sign = -1
			}
			for v, k := range b.coef {
				a.coef[v] += sign * k
			}
			a.c += sign * b.c
			return a, true
		case tir.OpMul:
			if len(a.coef) > 0 && len(b.coef) > 0 {
				return linearForm{}, false
			}
			if len(a.coef) > 0 {
				a, b = b, a
			}
			for v := range b.coef {
				b.coef[v] *= a.c
			}
			b.c *= a.c
			return b, true
		}
	}
	return linearForm{}, false
}

// only returns the form's single variable with a positive coefficient
// among vars (nil, 0 when none), refusing a second one.
func (l linearForm) only(vars []*tir.IterVar) (*tir.IterVar, int64, bool) {
	var found *tir.IterVar
	var k int64
	for _, iv := range vars {
		if c := l.coef[iv.Var]; c != 0 {
			if found != nil || c < 0 {
				return nil, 0, false
			}
			found, k = iv, c
		}
	}
	return found, k, true
}

// windowOf recognizes op, read over the spatial variables mv (only it
// reads them) and the reduction variables, as a convolution's image. It
// returns the window (without weights), M's variable order (batch
// variables, then the output row and column) and K's (channel, kernel row
// and column). ok is false when op is not such an image; the window is
// then simply not offered.
func windowOf(op gather, shape []int64, mv, reduce []*tir.IterVar) (w *Window, order, kOrder []*tir.IterVar, ok bool) {
	idx := op.load.Indices
	if len(idx) != len(shape) {
		return nil, nil, nil, false
	}
	strides := make([]int64, len(shape))
	s := int64(1)
	for d := len(shape) - 1; d >= 0; d-- {
		strides[d] = s
		s *= shape[d]
	}
	w = &Window{Imgs: 1, H: 1, W: 1, OH: 1, OW: 1, KH: 1, KW: 1, SH: 1, SW: 1, DH: 1, DW: 1}
	var batch, spatialM, spatialR []*tir.IterVar
	var constBase int64
	batchDims := map[*tir.IterVar]int64{}
	var ci *tir.IterVar
	type spatialDim struct {
		m, r       *tir.IterVar
		sm, sr, c  int64
		size, stri int64
	}
	var sp []spatialDim
	for d, e := range idx {
		l, ok := linear(e)
		if !ok {
			return nil, nil, nil, false
		}
		m, sm, okM := l.only(mv)
		r, sr, okR := l.only(reduce)
		if !okM || !okR {
			return nil, nil, nil, false
		}
		switch {
		case m == nil && r == nil:
			constBase += l.c * strides[d]
		case r == nil && sm == 1 && batchDims[m] == 0 && !slices.Contains(spatialM, m) && !slices.Contains(batch, m):
			batch = append(batch, m)
			batchDims[m] = strides[d]
			constBase += l.c * strides[d]
		case m == nil && sr == 1 && l.c == 0 && ci == nil && !slices.Contains(spatialR, r):
			ci, w.StrideC = r, strides[d]
		default:
			if (m != nil && (slices.Contains(spatialM, m) || slices.Contains(batch, m))) || (r != nil && (r == ci || slices.Contains(spatialR, r))) {
				return nil, nil, nil, false
			}
			sp = append(sp, spatialDim{m: m, r: r, sm: max(sm, 1), sr: max(sr, 1), c: l.c, size: shape[d], stri: strides[d]})
			if m != nil {
				spatialM = append(spatialM, m)
			}
			if r != nil {
				spatialR = append(spatialR, r)
			}
		}
	}
	if ci == nil || len(sp) == 0 || len(sp) > 2 || len(spatialM) == 0 || len(batch)+len(spatialM) != len(mv) || 1+len(spatialR) != len(reduce) {
		return nil, nil, nil, false
	}
	w.C = extent(ci)
	if len(sp) == 1 {
		sp = append([]spatialDim{{sm: 1, sr: 1, size: 1}}, sp...)
	}
	ext := func(iv *tir.IterVar) int {
		if iv == nil {
			return 1
		}
		return extent(iv)
	}
	h, x := sp[0], sp[1]
	w.H, w.OH, w.KH, w.SH, w.DH, w.PH, w.StrideH = int(h.size), ext(h.m), ext(h.r), int(h.sm), int(h.sr), int(h.c), h.stri
	w.W, w.OW, w.KW, w.SW, w.DW, w.PW, w.StrideW = int(x.size), ext(x.m), ext(x.r), int(x.sm), int(x.sr), int(x.c), x.stri
	w.Imgs = volume(batch)
	w.ImgBase = make([]int64, w.Imgs)
	for i := range w.ImgBase {
		off, r := constBase, i
		for j := len(batch) - 1; j >= 0; j-- {
			e := extent(batch[j])
			off += int64(r%e) * batchDims[batch[j]]
			r /= e
		}
		w.ImgBase[i] = off
	}
	order = slices.Clone(batch)
	for _, d := range sp {
		if d.m != nil {
			order = append(order, d.m)
		}
	}
	kOrder = []*tir.IterVar{ci}
	for _, d := range sp {
		if d.r != nil {
			kOrder = append(kOrder, d.r)
		}
	}
	if !w.matches(tabulate(op, shape, order, kOrder)) {
		return nil, nil, nil, false
	}
	return w, order, kOrder, true
}

// at is the element offset the window formula gives for output pixel
// (i, oh, ow) and kernel point (c, kh, kw), −1 outside the image.
func (w *Window) at(i, oh, ow, c, kh, kw int) int64 {
	h, x := w.SH*oh+w.DH*kh+w.PH, w.SW*ow+w.DW*kw+w.PW
	if h < 0 || h >= w.H || x < 0 || x >= w.W {
		return -1
	}
	return w.ImgBase[i] + int64(c)*w.StrideC + int64(h)*w.StrideH + int64(x)*w.StrideW
}

// matches checks the window formula against the operand's table over
// (image, oh, ow) × (c, kh, kw) at every point.
func (w *Window) matches(table []int32) bool {
	p := 0
	for i := 0; i < w.Imgs; i++ {
		for oh := 0; oh < w.OH; oh++ {
			for ow := 0; ow < w.OW; ow++ {
				for c := 0; c < w.C; c++ {
					for kh := 0; kh < w.KH; kh++ {
						for kw := 0; kw < w.KW; kw++ {
							if int64(table[p]) != w.at(i, oh, ow, c, kh, kw) {
								return false
							}
							p++
						}
					}
				}
			}
		}
	}
	return true
}

// rowSpan is the DMA of an input span: first = the span's first
// coordinate (negative: in the padding), n its length; it gives the
// leading padding, the image coordinate and count to load, and the
// trailing padding. ok is false when the span holds no image element or
// a padding exceeds the LOAD's 4-bit pad field.
func rowSpan(first, n, size int) (pad0, at, count, pad1 int, ok bool) {
	pad0 = max(0, -first)
	at = max(first, 0)
	end := min(first+n, size)
	count = end - at
	pad1 = n - pad0 - count
	return pad0, at, count, pad1, count > 0 && pad0 <= 15 && pad1 <= 15
}

// inRows is the input rows an output tile of rows output rows reads; inCols
// the columns a full output row reads.
func (w *Window) inRows(rows int) int { return (rows-1)*w.SH + (w.KH-1)*w.DH + 1 }
func (w *Window) inCols() int         { return (w.OW-1)*w.SW + (w.KW-1)*w.DW + 1 }

// loadable reports whether every tile of rows output rows, and the
// columns, can be fetched by LOADs (see rowSpan).
func (w *Window) loadable(rows int) bool {
	if _, _, _, _, ok := rowSpan(w.PW, w.inCols(), w.W); !ok {
		return false
	}
	for oh0 := 0; oh0 < w.OH; oh0 += rows {
		r := min(rows, w.OH-oh0)
		if _, _, _, _, ok := rowSpan(oh0*w.SH+w.PH, w.inRows(r), w.H); !ok {
			return false
		}
	}
	return true
}
