package npu

import (
	"encoding/binary"
	"math"

	"github.com/tessera-ml/tessera/targets/npu/sim"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// run executes the kernel on the simulator: the runtime packs the
// parameters (args, one f32 slice per kernel parameter) into the DRAM
// image in the NPU's blocked layouts (bf16 input and weight entries, f32
// accumulator entries, zero padding to whole entries), runs the program
// and unpacks the output parameter. With record it also returns the
// simulator's timeline (sim.RunTimeline), else a nil one.
func (gp *gemmProgram) run(args [][]float32, record bool) (*sim.Stats, *sim.Timeline, error) {
	dram := make([]byte, gp.dramBytes)
	gp.pack(dram, args)
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

func (gp *gemmProgram) pack(dram []byte, args [][]float32) {
	g, c := gp.g, gp.cfg
	if gp.t.Window {
		gp.packWindow(dram, args)
	} else {
		// X entry (mb, kb) holds rows mb·Batch+r, columns kb·BlockIn+i; W
		// entry (nb, kb) outputs nb·BlockOut+o (rows) × the same columns.
		gp.packBlocks(dram[gp.xOff:], gp.eInp, gp.mb, c.Batch, g.M, args[g.X], g.XIdx)
		gp.packBlocks(dram[gp.wOff:], gp.eWgt, gp.nb, c.BlockOut, g.N, args[g.W], g.WIdx)
	}
	for i, s := range g.Epilogue {
		if gp.stepOff[i] >= 0 {
			gp.packOperand(dram[gp.stepOff[i]:], s, args)
		}
	}
}

// packWindow writes the window layout's operands (Window): the image as
// [image][channel block][H][W] entries of BlockIn channels, the weights
// as [N block][channel block][KH][KW] entries of BlockOut × BlockIn, bf16,
// zero beyond the last channel and output.
func (gp *gemmProgram) packWindow(dram []byte, args [][]float32) {
	w, g := gp.g.Win, gp.g
	bi, bo, cb := gp.cfg.BlockIn, gp.cfg.BlockOut, w.CB(gp.cfg)
	x, wt := args[g.X], args[g.W]
	put := func(dst []byte, i int, v float32) { binary.LittleEndian.PutUint16(dst[2*i:], tir.Float32ToBF16(v)) }
	dst, e := dram[gp.xOff:], 0
	for img := 0; img < w.Imgs; img++ {
		for b := 0; b < cb; b++ {
			for h := 0; h < w.H; h++ {
				for col := 0; col < w.W; col++ {
					for i := 0; i < bi; i++ {
						var v float32
						if c := b*bi + i; c < w.C {
							v = x[w.ImgBase[img]+int64(c)*w.StrideC+int64(h)*w.StrideH+int64(col)*w.StrideW]
						}
						put(dst[e*gp.eInp:], i, v)
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
							var v float32
							if n, c := nb*bo+o, b*bi+i; n < g.N && c < w.C {
								v = at(wt, w.WgtIdx[((n*w.C+c)*w.KH+kh)*w.KW+kw])
							}
							put(dst[e*gp.eWgt:], o*bi+i, v)
						}
					}
					e++
				}
			}
		}
	}
}

// packBlocks writes an operand of rows × K (table idx[row·K+k] into src)
// as blocks × Kb bf16 entries of rowsPer × BlockIn values, zero beyond
// the last row and column.
func (gp *gemmProgram) packBlocks(dst []byte, entryBytes, blocks, rowsPer, rows int, src []float32, idx []int32) {
	g, bi := gp.g, gp.cfg.BlockIn
	for rb := 0; rb < blocks; rb++ {
		for kb := 0; kb < gp.kb; kb++ {
			e := dst[(rb*gp.kb+kb)*entryBytes:]
			for r := 0; r < rowsPer; r++ {
				for i := 0; i < bi; i++ {
					row, k := rb*rowsPer+r, kb*bi+i
					var v float32
					if row < rows && k < g.K {
						v = at(src, idx[row*g.K+k])
					}
					binary.LittleEndian.PutUint16(e[2*(r*bi+i):], tir.Float32ToBF16(v))
				}
			}
		}
	}
}

// at is v[i], or 0 for a table entry of −1 (outside a padded operand).
func at(v []float32, i int32) float32 {
	if i < 0 {
		return 0
	}
	return v[i]
}

// packOperand writes an epilogue operand as accumulator entries: a vector
// as Nb entries (repeated over the Batch rows), a tile as Mb×Nb entries, a
// constant as one entry.
func (gp *gemmProgram) packOperand(dst []byte, s aluStep, args [][]float32) {
	g, c := gp.g, gp.cfg
	b, bo := c.Batch, c.BlockOut
	put := func(e, r, o int, v float32) {
		binary.LittleEndian.PutUint32(dst[e*gp.eAcc+4*(r*bo+o):], math.Float32bits(v))
	}
	switch s.Kind {
	case opConst:
		for r := 0; r < b; r++ {
			for o := 0; o < bo; o++ {
				put(0, r, o, s.Value)
			}
		}
	case opVector:
		for n := 0; n < g.N; n++ {
			for r := 0; r < b; r++ {
				put(n/bo, r, n%bo, args[s.Param][s.Idx[n]])
			}
		}
	case opTile:
		for m := 0; m < g.M; m++ {
			for n := 0; n < g.N; n++ {
				put((m/b)*gp.nb+n/bo, m%b, n%bo, args[s.Param][s.Idx[m*g.N+n]])
			}
		}
	}
}

// unpack copies the output entries to the output parameter.
func (gp *gemmProgram) unpack(dram []byte, out []float32) {
	g, c := gp.g, gp.cfg
	b, bo := c.Batch, c.BlockOut
	src := dram[gp.outOff:]
	for m := 0; m < g.M; m++ {
		for n := 0; n < g.N; n++ {
			e := (m/b)*gp.nb + n/bo
			out[g.OutIdx[m*g.N+n]] = math.Float32frombits(binary.LittleEndian.Uint32(src[e*gp.eAcc+4*((m%b)*bo+n%bo):]))
		}
	}
}
