package sim

import (
	"encoding/binary"
	"math"

	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// memories are the scratchpads, typed by the program's datapath: int8
// inputs and weights with an int32 accumulator, or bf16 inputs and
// weights (held as their exact f32 values) with an f32 accumulator. An
// int8-datapath input or weight value is 8 bits plus the signedness of
// its load (i8 or u8, per entry), a 9-bit signed value in [−128, 255]:
// inpI and wgtI hold it in an int16.
type memories struct {
	dp                       isa.Datapath
	batch, blockIn, blockOut int
	vals                     [4]int // values per entry, by isa.Memory
	inpI, wgtI               []int16
	accI                     []int32
	inpF, wgtF, accF         []float32
	uop                      []isa.Uop
	trk                      [4]*tracker
}

func newMemories(cfg isa.Config, dp isa.Datapath) memories {
	mm := memories{dp: dp, batch: cfg.Batch, blockIn: cfg.BlockIn, blockOut: cfg.BlockOut}
	for _, mem := range []isa.Memory{isa.MemUop, isa.MemInp, isa.MemWgt, isa.MemAcc} {
		mm.vals[mem] = cfg.EntryValues(mem)
		mm.trk[mem] = newTracker(mem, cfg.Depth(mem, dp))
	}
	n := func(mem isa.Memory) int { return cfg.Depth(mem, dp) * mm.vals[mem] }
	mm.uop = make([]isa.Uop, cfg.Depth(isa.MemUop, dp))
	if dp == isa.DPInt8 {
		mm.inpI, mm.wgtI, mm.accI = make([]int16, n(isa.MemInp)), make([]int16, n(isa.MemWgt)), make([]int32, n(isa.MemAcc))
	} else {
		mm.inpF, mm.wgtF, mm.accF = make([]float32, n(isa.MemInp)), make([]float32, n(isa.MemWgt)), make([]float32, n(isa.MemAcc))
	}
	return mm
}

// exec performs instruction i's effect on the scratchpads and DRAM.
func (m *machine) exec(i int, in *isa.Inst) error {
	switch in.Op {
	case isa.OpLoad:
		if in.Mem == isa.MemUop {
			return m.loadUops(in)
		}
		return m.dma(in)
	case isa.OpStore:
		return m.dma(in)
	case isa.OpGEMM:
		return m.gemm(in)
	case isa.OpALU:
		return m.alu(in)
	}
	return nil
}

// dramBytes is the size of one entry of in's scratchpad on the DRAM side.
func (m *machine) dramBytes(in *isa.Inst) int {
	return m.mem.vals[in.Mem] * in.DType.Bytes()
}

// dma performs a LOAD (inp, wgt, acc) or STORE: YSize rows of XSize
// entries, rows XStride entries apart in DRAM, padded with zero entries
// in the scratchpad (LOAD).
func (m *machine) dma(in *isa.Inst) error {
	eb := int64(m.dramBytes(in))
	if end := in.DRAMEnd(m.cfg); end > int64(len(m.dram)) {
		return m.fail(-1, "DRAM bytes [%d, %d) are beyond the device memory's %d bytes", in.DRAMBase, end, len(m.dram))
	}
	width := int(in.PadLeft + in.XSize + in.PadRight)
	rows := int(in.PadTop + in.YSize + in.PadBottom)
	load := in.Op == isa.OpLoad
	t := m.mem.trk[in.Mem]
	for r := 0; r < rows; r++ {
		for c := 0; c < width; c++ {
			e := int(in.SRAMBase) + r*width + c
			y, x := r-int(in.PadTop), c-int(in.PadLeft)
			inside := y >= 0 && y < int(in.YSize) && x >= 0 && x < int(in.XSize)
			addr := int64(in.DRAMBase) + (int64(y)*int64(in.XStride)+int64(x))*eb
			if !load {
				if err := m.read(t, e); err != nil {
					return err
				}
				m.storeEntry(in.DType, e, m.dram[addr:addr+eb])
				continue
			}
			if err := m.write(t, e); err != nil {
				return err
			}
			if inside {
				m.loadEntry(in.Mem, in.DType, e, m.dram[addr:addr+eb])
			} else {
				m.zeroEntry(in.Mem, e)
			}
		}
	}
	n := int64(in.YSize) * int64(in.XSize) * eb
	if load {
		m.stats.DRAMReadBytes += n
	} else {
		m.stats.DRAMWriteBytes += n
	}
	return nil
}

// loadUops copies XSize micro-ops of the program's table from DRAMBase
// into the uop buffer at SRAMBase (8 bytes each from DRAM).
func (m *machine) loadUops(in *isa.Inst) error {
	t := m.mem.trk[isa.MemUop]
	for k := 0; k < int(in.XSize); k++ {
		e := int(in.SRAMBase) + k
		if err := m.write(t, e); err != nil {
			return err
		}
		m.mem.uop[e] = m.p.Uops[int(in.DRAMBase)+k]
	}
	m.stats.DRAMReadBytes += int64(in.XSize) * isa.UopBytes
	return nil
}

// loadEntry converts one entry from DRAM element type dt into scratchpad
// mem: i8 sign-extended and u8 zero-extended (inputs, weights and the
// int32 accumulator), int32 kept; bf16 widened; f32 rounded to bf16 for
// inputs and weights, kept for the accumulator.
func (m *machine) loadEntry(mem isa.Memory, dt isa.DType, e int, src []byte) {
	n := m.mem.vals[mem]
	if m.mem.dp == isa.DPInt8 {
		if mem == isa.MemAcc {
			dst := m.mem.accI[e*n : (e+1)*n]
			for k := range dst {
				switch dt {
				case isa.DTInt8:
					dst[k] = int32(int8(src[k]))
				case isa.DTUInt8:
					dst[k] = int32(src[k])
				default:
					dst[k] = int32(binary.LittleEndian.Uint32(src[4*k:]))
				}
			}
			return
		}
		dst := m.mem.inpI
		if mem == isa.MemWgt {
			dst = m.mem.wgtI
		}
		for k, b := range src {
			if dt == isa.DTUInt8 {
				dst[e*n+k] = int16(b)
			} else {
				dst[e*n+k] = int16(int8(b))
			}
		}
		return
	}
	var dst []float32
	switch mem {
	case isa.MemInp:
		dst = m.mem.inpF[e*n : (e+1)*n]
	case isa.MemWgt:
		dst = m.mem.wgtF[e*n : (e+1)*n]
	default:
		dst = m.mem.accF[e*n : (e+1)*n]
	}
	for k := range dst {
		if dt == isa.DTBF16 {
			dst[k] = tir.BF16ToFloat32(binary.LittleEndian.Uint16(src[2*k:]))
			continue
		}
		f := math.Float32frombits(binary.LittleEndian.Uint32(src[4*k:]))
		if mem != isa.MemAcc {
			f = isa.RoundBF16(f)
		}
		dst[k] = f
	}
}

func (m *machine) zeroEntry(mem isa.Memory, e int) {
	n := m.mem.vals[mem]
	switch {
	case mem == isa.MemInp && m.mem.inpI != nil:
		clear(m.mem.inpI[e*n : (e+1)*n])
	case mem == isa.MemWgt && m.mem.wgtI != nil:
		clear(m.mem.wgtI[e*n : (e+1)*n])
	case mem == isa.MemAcc && m.mem.accI != nil:
		clear(m.mem.accI[e*n : (e+1)*n])
	case mem == isa.MemInp:
		clear(m.mem.inpF[e*n : (e+1)*n])
	case mem == isa.MemWgt:
		clear(m.mem.wgtF[e*n : (e+1)*n])
	default:
		clear(m.mem.accF[e*n : (e+1)*n])
	}
}

// storeEntry writes accumulator entry e to DRAM as dt: i8 saturated to
// [−128, 127], u8 saturated to [0, 255], int32 as is, f32 as is, bf16
// rounded to nearest even.
func (m *machine) storeEntry(dt isa.DType, e int, dst []byte) {
	n := m.mem.vals[isa.MemAcc]
	if m.mem.dp == isa.DPInt8 {
		for k, v := range m.mem.accI[e*n : (e+1)*n] {
			switch dt {
			case isa.DTInt8:
				dst[k] = byte(int8(min(max(v, math.MinInt8), math.MaxInt8)))
			case isa.DTUInt8:
				dst[k] = byte(min(max(v, 0), math.MaxUint8))
			default:
				binary.LittleEndian.PutUint32(dst[4*k:], uint32(v))
			}
		}
		return
	}
	for k, v := range m.mem.accF[e*n : (e+1)*n] {
		if dt == isa.DTBF16 {
			binary.LittleEndian.PutUint16(dst[2*k:], tir.Float32ToBF16(v))
		} else {
			binary.LittleEndian.PutUint32(dst[4*k:], math.Float32bits(v))
		}
	}
}
