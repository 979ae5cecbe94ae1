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
// and unpacks the output parameter.
func (gp *gemmProgram) run(args [][]float32) (*sim.Stats, error) {
	dram := make([]byte, gp.dramBytes)
	gp.pack(dram, args)
	st, err := sim.Run(gp.cfg, gp.prog, dram)
	if err != nil {
		return nil, err
	}
	gp.unpack(dram, args[gp.g.Out])
	return st, nil
}

func (gp *gemmProgram) pack(dram []byte, args [][]float32) {
	g, c := gp.g, gp.cfg
	b, bi, bo := c.Batch, c.BlockIn, c.BlockOut
	// X entry (mb, kb) holds rows mb·B+r, columns kb·BI+i.
	x := args[g.X]
	for mb := 0; mb < gp.mb; mb++ {
		for kb := 0; kb < gp.kb; kb++ {
			e := dram[gp.xOff+(mb*gp.kb+kb)*gp.eInp:]
			for r := 0; r < b; r++ {
				for i := 0; i < bi; i++ {
					m, k := mb*b+r, kb*bi+i
					var v float32
					if m < g.M && k < g.K {
						v = at(x, g.XIdx[m*g.K+k])
					}
					binary.LittleEndian.PutUint16(e[2*(r*bi+i):], tir.Float32ToBF16(v))
				}
			}
		}
	}
	// W entry (nb, kb) holds outputs nb·BO+o (rows) × columns kb·BI+i.
	w := args[g.W]
	for nb := 0; nb < gp.nb; nb++ {
		for kb := 0; kb < gp.kb; kb++ {
			e := dram[gp.wOff+(nb*gp.kb+kb)*gp.eWgt:]
			for o := 0; o < bo; o++ {
				for i := 0; i < bi; i++ {
					n, k := nb*bo+o, kb*bi+i
					var v float32
					if n < g.N && k < g.K {
						v = at(w, g.WIdx[n*g.K+k])
					}
					binary.LittleEndian.PutUint16(e[2*(o*bi+i):], tir.Float32ToBF16(v))
				}
			}
		}
	}
	for i, s := range g.Epilogue {
		if gp.stepOff[i] >= 0 {
			gp.packOperand(dram[gp.stepOff[i]:], s, args)
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
