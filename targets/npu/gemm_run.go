package npu

import (
	"encoding/binary"
	"fmt"
	"math"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	"github.com/tessera-ml/tessera/targets/npu/sim"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// arg is a kernel parameter's values: f32 ones as a slice, integer ones
// (i8, ui8, i32, i64) as their tensor.
type arg struct {
	f32 []float32
	t   *rt.Tensor
}

// argsOf views a kernel call's tensors.
func argsOf(ts []*rt.Tensor) []arg {
	out := make([]arg, len(ts))
	for i, t := range ts {
		out[i].t = t
		if t.DType() == rt.Float32 {
			out[i].f32, _ = t.Float32s()
		}
	}
	return out
}

// int is integer element i (int8, uint8, int32 or int64 tensors).
func (a arg) int(i int32) int64 {
	b := a.t.Bytes()
	switch a.t.DType() {
	case rt.Int8:
		return int64(int8(b[i]))
	case rt.Uint8:
		return int64(b[i])
	case rt.Int32:
		return int64(int32(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return int64(binary.LittleEndian.Uint64(b[8*i:]))
}

// run executes the kernel on the simulator: the runtime packs the
// parameters (args, one per kernel parameter) into the DRAM image in the
// NPU's blocked layouts (bf16, or i8/u8 bytes in the int8 datapath, for
// input and weight entries; f32 or i32 accumulator entries; zero padding
// to whole entries), runs the program and unpacks the output parameter.
// With record it also returns the simulator's timeline
// (sim.RunTimeline), else a nil one. Errors: a requantization shift
// below 1 (see aluStep.Shift), the simulator's.
func (gp *gemmProgram) run(args []arg, record bool) (*sim.Stats, *sim.Timeline, error) {
	dram := make([]byte, gp.dramBytes)
	if err := gp.pack(dram, args); err != nil {
		return nil, nil, err
	}
	var st *sim.Stats
	var tl *sim.Timeline
	var err error
	if record {
		st, tl, err = sim.RunTimeline(gp.cfg, gp.prog, dram)
	} else {
		st, err = sim.Run(gp.cfg, gp.prog, dram)
	}
	if err != nil {
		return nil, nil, err
	}
	gp.unpack(dram, args[gp.g.Out])
	return st, tl, nil
}

func (gp *gemmProgram) pack(dram []byte, args []arg) error {
	g, c := gp.g, gp.cfg
	if gp.t.Window {
		gp.packWindow(dram, args)
	} else {
		// X entry (mb, kb) holds rows mb·Batch+r, columns kb·BlockIn+i; W
		// entry (nb, kb) outputs nb·BlockOut+o (rows) × the same columns.
		gp.packBlocks(dram[gp.xOff:], gp.eInp, gp.mb, c.Batch, g.M, args[g.X], g.XIdx)
		if g.RowW { // [M][Nb][Kb]: row m's own W (Batch is 1)
			per := g.N * g.K
			for m := 0; m < g.M; m++ {
				gp.packBlocks(dram[gp.wOff+m*gp.nb*gp.kb*gp.eWgt:], gp.eWgt, gp.nb, c.BlockOut, g.N, args[g.W], g.WIdx[m*per:(m+1)*per])
			}
		} else {
			gp.packBlocks(dram[gp.wOff:], gp.eWgt, gp.nb, c.BlockOut, g.N, args[g.W], g.WIdx)
		}
	}
	for i, s := range g.Epilogue {
		if err := checkShift(s, args); err != nil {
			return err
		}
		if gp.stepOff[i] >= 0 {
			gp.packOperand(dram[gp.stepOff[i]:], s, args)
		}
		if gp.scaleOff[i] >= 0 {
			gp.packOperand(dram[gp.scaleOff[i]:], aluStep{Kind: opConst, Value: s.Scale}, args)
		}
	}
	return nil
}

// checkShift refuses a requantization shift below 1: mulq then shr is
// exact only from 1 (ISA.md, "ALU"); such a shift means a real
// multiplier of at least 0.5, which quantized layers do not have.
func checkShift(s aluStep, args []arg) error {
	if !s.Shift || s.Kind == opConst { // a constant shift is checked when compiled
		return nil
	}
	for _, i := range s.Idx {
		if v := args[s.Param].int(i); v < 1 {
			return fmt.Errorf("requantization shift %d is below 1 (a multiplier of 0.5 or more); the NPU's mulq then shr needs at least 1", v)
		}
	}
	return nil
}

// putValue writes value j of an input or weight entry: element idx of a
// as bf16, or its raw byte in the int8 datapath; nothing for idx −1
// (outside a padded operand: the fresh DRAM image holds zero there).
func (gp *gemmProgram) putValue(e []byte, j int, a arg, idx int32) {
	switch {
	case idx < 0:
	case gp.g.DP == isa.DPInt8:
		e[j] = a.t.Bytes()[idx]
	default:
		binary.LittleEndian.PutUint16(e[2*j:], tir.Float32ToBF16(a.f32[idx]))
	}
}

// packWindow writes the window layout's operands (Window): the image as
// [image][channel block][H][W] entries of BlockIn channels, the weights
// as [N block][channel block][KH][KW] entries of BlockOut × BlockIn (putValue),
// zero beyond the last channel and output.
func (gp *gemmProgram) packWindow(dram []byte, args []arg) {
	w, g := gp.g.Win, gp.g
	bi, bo, cb := gp.cfg.BlockIn, gp.cfg.BlockOut, w.CB(gp.cfg)
	x, wt := args[g.X], args[g.W]
	dst, e := dram[gp.xOff:], 0
	for img := 0; img < w.Imgs; img++ {
		for b := 0; b < cb; b++ {
			for h := 0; h < w.H; h++ {
				for col := 0; col < w.W; col++ {
					for i := 0; i < bi; i++ {
						idx := int32(-1)
						if c := b*bi + i; c < w.C {
							idx = int32(w.ImgBase[img] + int64(c)*w.StrideC + int64(h)*w.StrideH + int64(col)*w.StrideW)
						}
						gp.putValue(dst[e*gp.eInp:], i, x, idx)
					}
					e++
				}
			}
		}
	}
	dst, e = dram[gp.wOff:], 0
	for nb := 0; nb < gp.nb; nb++ {
		for b := 0; b < cb; b++ {
			for kh := 0; kh < w.KH; kh++ {
				for kw := 0; kw < w.KW; kw++ {
					for o := 0; o < bo; o++ {
						for i := 0; i < bi; i++ {
							idx := int32(-1)
							if n, c := nb*bo+o, b*bi+i; n < g.N && c < w.C {
								idx = w.WgtIdx[((n*w.C+c)*w.KH+kh)*w.KW+kw]
							}
							gp.putValue(dst[e*gp.eWgt:], o*bi+i, wt, idx)
						}
					}
					e++
				}
			}
		}
	}
}

// packBlocks writes an operand of rows × K (table idx[row·K+k] into a)
// as blocks × Kb entries of rowsPer × BlockIn values (putValue), zero
// beyond the last row and column.
func (gp *gemmProgram) packBlocks(dst []byte, entryBytes, blocks, rowsPer, rows int, a arg, idx []int32) {
	g, bi := gp.g, gp.cfg.BlockIn
	for rb := 0; rb < blocks; rb++ {
		for kb := 0; kb < gp.kb; kb++ {
			e := dst[(rb*gp.kb+kb)*entryBytes:]
			for r := 0; r < rowsPer; r++ {
				for i := 0; i < bi; i++ {
					if row, k := rb*rowsPer+r, kb*bi+i; row < rows && k < g.K {
						gp.putValue(e, r*bi+i, a, idx[row*g.K+k])
					}
				}
			}
		}
	}
}

// packOperand writes an epilogue operand as accumulator entries (f32, or
// i32 in the int8 datapath): a vector as Nb entries (repeated over the
// Batch rows), a tile as Mb×Nb entries, a row operand as Mb entries
// (repeated over the BlockOut columns), a constant as one entry.
func (gp *gemmProgram) packOperand(dst []byte, s aluStep, args []arg) {
	g, c := gp.g, gp.cfg
	b, bo := c.Batch, c.BlockOut
	entry, size := gp.eAcc, 4 // a constant: f32 or i32
	if s.Kind != opConst {
		entry, size = gp.operandEntry(s), s.Elem.Bytes()
	}
	put := func(e, r, o int, v uint32) {
		at := e*entry + size*(r*bo+o)
		if size == 1 {
			dst[at] = byte(v)
			return
		}
		binary.LittleEndian.PutUint32(dst[at:], v)
	}
	value := func(a arg, i int32) uint32 {
		if g.DP == isa.DPInt8 {
			return uint32(int32(a.int(i)))
		}
		return math.Float32bits(a.f32[i])
	}
	switch s.Kind {
	case opConst:
		v := math.Float32bits(float32(s.Value))
		if g.DP == isa.DPInt8 {
			v = uint32(int32(s.Value))
		}
		for r := 0; r < b; r++ {
			for o := 0; o < bo; o++ {
				put(0, r, o, v)
			}
		}
	case opVector:
		for n := 0; n < g.N; n++ {
			for r := 0; r < b; r++ {
				put(n/bo, r, n%bo, value(args[s.Param], s.Idx[n]))
			}
		}
	case opTile:
		for m := 0; m < g.M; m++ {
			for n := 0; n < g.N; n++ {
				put((m/b)*gp.nb+n/bo, m%b, n%bo, value(args[s.Param], s.Idx[m*g.N+n]))
			}
		}
	case opRow:
		for m := 0; m < g.M; m++ {
			v := value(args[s.Param], s.Idx[m])
			for o := 0; o < bo; o++ {
				put(m/b, m%b, o, v)
			}
		}
	}
}

// unpack copies the output entries to the output parameter: f32 (or
// bf16 widened, narrowOutputs), i32 (sign-extended into an i64 output,
// Widen) or bytes (i8, u8).
func (gp *gemmProgram) unpack(dram []byte, out arg) {
	g, c := gp.g, gp.cfg
	b, bo := c.Batch, c.BlockOut
	src := dram[gp.outOff:]
	size := g.OutType.Bytes()
	for m := 0; m < g.M; m++ {
		for n := 0; n < g.N; n++ {
			e := (m/b)*gp.nb + n/bo
			v := src[e*gp.eOut+size*((m%b)*bo+n%bo):]
			i := g.OutIdx[m*g.N+n]
			switch {
			case g.OutType == isa.DTBF16:
				out.f32[i] = tir.BF16ToFloat32(binary.LittleEndian.Uint16(v))
			case g.DP == isa.DPBF16:
				out.f32[i] = math.Float32frombits(binary.LittleEndian.Uint32(v))
			case size == 1:
				out.t.Bytes()[i] = v[0]
			case g.Widen:
				binary.LittleEndian.PutUint64(out.t.Bytes()[8*i:], uint64(int64(int32(binary.LittleEndian.Uint32(v)))))
			default:
				copy(out.t.Bytes()[4*i:4*i+4], v[:4])
			}
		}
	}
}
