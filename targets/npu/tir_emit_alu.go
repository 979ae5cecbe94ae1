package npu

import (
	"fmt"
	"sort"

	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Epilogues in emitTensorIR: a block computed on the accumulator (it
// reads the buffer the last reset made the accumulator and writes a
// buffer in npu.acc, element for element) is a chain of ALU operations
// on the accumulator's entries, in place — VTA's ALU stages after the
// GEMM. Its stored value must be the accumulator's element under steps
// op(·, operand) with op add, sub, mul, min or max (the accumulator on
// the left of sub), each operand an immediate (a bf16 value in the bf16
// datapath, a signed 16-bit integer in the int8 one) or an npu.acc
// buffer's element: an M×N tile at the same element, or a vector (rank
// 1) indexed by the column (a bias) or by the row (a row operand), whose
// image repeats it over an entry's rows or columns. Each step is one ALU instruction over the run's entries (its
// micro-ops folded into the loop levels); the block's output buffer then
// names the accumulator's entries, which the STORE copies out.

// aluChain is an epilogue block's value read as ALU steps.
type aluChain struct {
	accLoad *tir.BufferLoad // the accumulator's element
	steps   []aluChainStep
}

type aluChainStep struct {
	op   isa.ALUOp
	load *tir.BufferLoad // the operand, or nil: the immediate imm
	imm  uint16
}

// aluRun is an epilogue block's instances being gathered: each one's
// element and its operands' elements (nil for immediates).
type aluRun struct {
	out   *tir.Buffer
	chain *aluChain
	pts   []aluPoint
}

type aluPoint struct {
	i, j int64
	ops  [][2]int64
}

var aluOpOf = map[tir.BinOp]isa.ALUOp{tir.OpAdd: isa.ALUAdd, tir.OpSub: isa.ALUSub, tir.OpMul: isa.ALUMul, tir.OpMin: isa.ALUMin, tir.OpMax: isa.ALUMax}

// isEpilogue reports whether block b stores into npu.acc a value that
// reads the accumulator.
func (e *tirEmitter) isEpilogue(b *tir.Block) bool {
	st, ok := b.Body.(*tir.BufferStore)
	if !ok || e.acc == nil || st.Buffer.Scope != ScopeAcc || b.Init != nil {
		return false
	}
	return readsBuffer(st.Value, e.acc)
}

// chainOf reads v as the accumulator's load under ALU steps, innermost
// first.
func (e *tirEmitter) chainOf(v tir.Expr) (*aluChain, error) {
	switch x := v.(type) {
	case *tir.BufferLoad:
		if x.Buffer == e.acc {
			return &aluChain{accLoad: x}, nil
		}
	case *tir.Binary:
		op, ok := aluOpOf[x.Op]
		if !ok {
			break
		}
		in, other := x.A, x.B
		if !readsBuffer(in, e.acc) && x.Op != tir.OpSub {
			in, other = x.B, x.A
		}
		if !readsBuffer(in, e.acc) || readsBuffer(other, e.acc) {
			return nil, fmt.Errorf("%s: the accumulator must be one (the left, for sub) operand", tir.ExprString(x))
		}
		c, err := e.chainOf(in)
		if err != nil {
			return nil, err
		}
		s, err := e.operand(op, other)
		if err != nil {
			return nil, err
		}
		c.steps = append(c.steps, s)
		return c, nil
	}
	return nil, fmt.Errorf("%s is not an ALU operation (add, sub, mul, min, max) of the accumulator %%%s", tir.ExprString(v), e.acc.Name)
}

// operand is step op with operand x: an immediate or an npu.acc load.
func (e *tirEmitter) operand(op isa.ALUOp, x tir.Expr) (aluChainStep, error) {
	s := aluChainStep{op: op}
	switch c := x.(type) {
	case *tir.FloatImm:
		f := float32(c.Value)
		if e.prog.Datapath != isa.DPBF16 || isa.RoundBF16(f) != f {
			return s, fmt.Errorf("constant %s is not an ALU immediate (a bf16 value in the bf16 datapath)", tir.ExprString(c))
		}
		s.imm = tir.Float32ToBF16(f)
		return s, nil
	case *tir.IntImm:
		if e.prog.Datapath != isa.DPInt8 || c.Value < -1<<15 || c.Value >= 1<<15 {
			return s, fmt.Errorf("constant %s is not an ALU immediate (a signed 16-bit integer in the int8 datapath)", tir.ExprString(c))
		}
		s.imm = uint16(int16(c.Value))
		return s, nil
	case *tir.BufferLoad:
		if c.Buffer.Scope == ScopeAcc {
			s.load = c
			return s, nil
		}
	}
	return s, fmt.Errorf("operand %s is neither an immediate nor an element of an npu.acc buffer", tir.ExprString(x))
}

// epilogue gathers an epilogue block's instance into the ALU run.
func (e *tirEmitter) epilogue(r *tir.BlockRealize) error {
	b := r.Block
	c, ok := e.chains[b]
	if !ok {
		var err error
		if c, err = e.chainOf(b.Body.(*tir.BufferStore).Value); err != nil {
			return fmt.Errorf("block %q: %v", b.Name, err)
		}
		e.chains[b] = c
	}
	st := b.Body.(*tir.BufferStore)
	if e.alu != nil && e.alu.chain != c || e.reset || len(e.run) > 0 {
		if err := e.flush(); err != nil {
			return err
		}
	}
	if e.alu == nil {
		e.alu = &aluRun{out: st.Buffer, chain: c}
	}
	i, j, err := e.point(st.Buffer, st.Indices)
	if err != nil {
		return fmt.Errorf("block %q: %v", b.Name, err)
	}
	ai, aj, err := e.point(c.accLoad.Buffer, c.accLoad.Indices)
	if err != nil || ai != i || aj != j {
		return fmt.Errorf("block %q: stores [%d, %d] from the accumulator's [%d, %d], not in place", b.Name, i, j, ai, aj)
	}
	pt := aluPoint{i: i, j: j}
	for _, s := range c.steps {
		var p [2]int64
		if s.load != nil {
			p[0], p[1], err = e.point(s.load.Buffer, s.load.Indices)
			if err != nil {
				return fmt.Errorf("block %q: %v", b.Name, err)
			}
			if len(s.load.Indices) == 1 && (e.column[s.load.Buffer] && p[0] != i || !e.column[s.load.Buffer] && p[1] != j) {
				return fmt.Errorf("block %q: the vector %%%s is not indexed by the accumulator's row (a row operand) or column (a bias)", b.Name, s.load.Buffer.Name)
			}
		}
		pt.ops = append(pt.ops, p)
	}
	e.alu.pts = append(e.alu.pts, pt)
	return nil
}

// flushALU emits the ALU run's steps; its output buffer then names the
// accumulator's entries.
func (e *tirEmitter) flushALU() error {
	run := e.alu
	dst := map[uint32][]int{} // accumulator entry → the points in it
	for n, p := range run.pts {
		at, _, _, err := e.locate(e.acc, p.i, p.j)
		if err != nil {
			return fmt.Errorf("epilogue into %%%s: %v", run.out.Name, err)
		}
		dst[at] = append(dst[at], n)
	}
	entries := make([]uint32, 0, len(dst))
	for at := range dst {
		entries = append(entries, at)
	}
	sort.Slice(entries, func(a, b int) bool { return entries[a] < entries[b] })
	for k, s := range run.chain.steps {
		var uops []isa.Uop
		for _, at := range entries {
			src, err := e.source(run, s, k, dst[at])
			if err != nil {
				return err
			}
			uops = append(uops, isa.Uop{Acc: at, Inp: src})
		}
		in := loopRun(uops)
		first := e.uopRange(uops[:in.UopEnd])
		in.Op, in.ALU, in.UopBegin, in.UopEnd = isa.OpALU, s.op, uint32(first), uint32(first)+in.UopEnd
		in.WgtFactor = [2]uint32{}
		in.UseImm, in.Imm = s.load == nil, s.imm
		e.prog.Insts = append(e.prog.Insts, in)
	}
	e.held[run.out], e.base[run.out] = e.held[e.acc], e.base[e.acc]
	return nil
}

// source is the entry step k's operand takes for the accumulator entry
// holding points pts: the same for all of them, each value at its
// point's place in the entry (any row of a row vector's entry).
func (e *tirEmitter) source(run *aluRun, s aluChainStep, k int, pts []int) (uint32, error) {
	if s.load == nil {
		return 0, nil
	}
	var src uint32
	for n, p := range pts {
		pt := run.pts[p]
		_, ri, ci, _ := e.locate(e.acc, pt.i, pt.j)
		at, si, sj, err := e.locate(s.load.Buffer, pt.ops[k][0], pt.ops[k][1])
		if err != nil {
			return 0, fmt.Errorf("epilogue into %%%s: %v", run.out.Name, err)
		}
		vector := len(s.load.Indices) == 1 // its image repeats it over the entry's other dimension
		rowOp := vector && e.column[s.load.Buffer]
		if n > 0 && at != src || sj != ci && !rowOp || si != ri && !(vector && !rowOp) {
			return 0, fmt.Errorf("epilogue into %%%s: %%%s[%d, %d] is not in the entry or place of the accumulator's [%d, %d]", run.out.Name, s.load.Buffer.Name, pt.ops[k][0], pt.ops[k][1], pt.i, pt.j)
		}
		src = at
	}
	return src, nil
}
