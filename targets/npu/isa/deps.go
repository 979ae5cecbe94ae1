package isa

import "fmt"

// InsertDeps sets p's dependency-token flags (replacing any it has) to
// the fewest tokens that order every access conflict between modules the
// way program order does (ISA.md, "Dependency rules"), so that the
// simulator's checker accepts the program and the modules run as far
// ahead of each other as the data allows. It is the NPU's counterpart of
// TVM's CoProcSync pass for VTA (which inserts the push/pop dependency
// calls into the tensor IR); here it runs on the instruction stream, so
// that a code generator and a hand-written program say only what each
// module does and in what order.
//
// A conflict is a read of a scratchpad entry another module last wrote
// (RAW: load → compute on inp/wgt, compute → store on acc) or a write of
// an entry another module read since (WAR: compute → load, store →
// compute). Writes never conflict across modules: each scratchpad has one
// writing module (inp and wgt the load module, uop and acc the compute
// module). For each instruction, in program order, and each other module,
// the latest conflicting instruction J of that module is found by
// enumerating the entries the instruction touches (its DMA rectangle, or
// every micro-op iteration of its loop nest, with the micro-ops the uop
// buffer holds at that point of the program). When the module's vector
// clock (program order plus the tokens it popped) already orders J
// before it, nothing is added; otherwise J pushes a token toward the
// instruction's module and the instruction pops it. Every token points
// backwards in program order, so the result cannot deadlock; pushes are
// added only with their pops, so no token is left in a queue.
//
// A double-buffered program needs no special case: a LOAD into one half
// waits for the GEMM that last read that half, which is VTA's virtual
// thread synchronization.
//
// Errors: an *Error for a program Validate refuses (after the flags are
// cleared), or for a GEMM or ALU iteration addressing an entry beyond its
// buffer or a micro-op no LOAD uop wrote.
func InsertDeps(cfg Config, p *Program) error {
	for i := range p.Insts {
		p.Insts[i].Deps = Deps{}
	}
	if err := p.Validate(cfg); err != nil {
		return err
	}
	d := newDepState(cfg, p)
	for i := range p.Insts {
		if err := d.inst(i); err != nil {
			return err
		}
	}
	return nil
}

// vclock is a vector clock over the modules: per module, how many of its
// instructions are ordered before (or are) the clock's owner.
type vclock [NumModules]int32

func (v *vclock) join(o vclock) {
	for m, x := range o {
		v[m] = max(v[m], x)
	}
}

// entryState is, per entry of one scratchpad, its last writer and, per
// module, the last instruction of that module that read it since (-1:
// none); seen stamps the entries the current instruction has already
// read (bit 0) and written (bit 1), so a loop touching an entry many
// times costs one check.
type entryState struct {
	writer []int32
	reader [NumModules][]int32
	seen   []int32
	how    []uint8
}

// depState is InsertDeps' walk over the program.
type depState struct {
	p     *Program
	mem   [numMemories]*entryState
	uops  []Uop // the uop buffer at this point of the program
	mod   []Module
	seq   []int32  // an instruction's sequence number in its module (from 1)
	clock []vclock // an instruction's clock when it completes
	cur   [NumModules]vclock
	need  [NumModules]int32 // the running instruction's latest conflict per module
	run   int
}

func newDepState(cfg Config, p *Program) *depState {
	n := len(p.Insts)
	d := &depState{p: p, mod: make([]Module, n), seq: make([]int32, n), clock: make([]vclock, n),
		uops: make([]Uop, cfg.Depth(MemUop, p.Datapath))}
	for m := range d.mem {
		depth := cfg.Depth(Memory(m), p.Datapath)
		s := &entryState{writer: make([]int32, depth), seen: make([]int32, depth), how: make([]uint8, depth)}
		for k := range s.reader {
			s.reader[k] = make([]int32, depth)
		}
		for e := 0; e < depth; e++ {
			s.writer[e], s.seen[e] = -1, -1
			for k := range s.reader {
				s.reader[k][e] = -1
			}
		}
		d.mem[m] = s
	}
	return d
}

// inst finds instruction i's conflicts, adds the tokens it needs and
// advances its module's clock.
func (d *depState) inst(i int) error {
	in := &d.p.Insts[i]
	q := in.Module()
	d.run, d.mod[i] = i, q
	d.need = [NumModules]int32{-1, -1, -1}
	if err := d.accesses(in); err != nil {
		return &Error{Index: i, Name: in.Name(), Reason: err.Error()}
	}
	for r, j := range d.need {
		if j < 0 || d.cur[q][r] >= d.seq[j] {
			continue
		}
		src := &d.p.Insts[j]
		if Module(r) < q {
			src.PushNext, in.PopPrev = true, true
		} else {
			src.PushPrev, in.PopNext = true, true
		}
		d.cur[q].join(d.clock[j])
	}
	d.cur[q][q]++
	d.seq[i], d.clock[i] = d.cur[q][q], d.cur[q]
	return nil
}

// accesses visits every scratchpad entry in reads and writes, as the
// simulator does (sim's dma, loadUops, gemm and alu).
func (d *depState) accesses(in *Inst) error {
	switch in.Op {
	case OpLoad, OpStore:
		for e, end := int(in.SRAMBase), int(in.SRAMBase)+int(in.Entries()); e < end; e++ {
			if in.Op == OpStore {
				d.read(in.Mem, e)
				continue
			}
			d.write(in.Mem, e)
			if in.Mem == MemUop {
				d.uops[e] = d.p.Uops[int(in.DRAMBase)+e-int(in.SRAMBase)]
			}
		}
		return nil
	case OpGEMM, OpALU:
		return d.loop(in)
	}
	return nil
}

// loop visits a GEMM's or ALU's micro-ops and iterations.
func (d *depState) loop(in *Inst) error {
	if int(in.UopEnd) > len(d.uops) {
		return fmt.Errorf("micro-ops [%d, %d) are beyond the uop buffer's %d entries", in.UopBegin, in.UopEnd, len(d.uops))
	}
	for u := int(in.UopBegin); u < int(in.UopEnd); u++ {
		if d.mem[MemUop].writer[u] < 0 {
			return fmt.Errorf("reads micro-op %d, which no load.uop has written", u)
		}
		d.read(MemUop, u)
	}
	src := MemInp
	if in.Op == OpALU {
		src = MemAcc
	}
	return in.ForEachIteration(d.uops, func(it Iteration) error {
		if !d.inRange(MemAcc, it.Dst) || !d.inRange(src, it.Src) || (in.Op == OpGEMM && !in.Reset && !d.inRange(MemWgt, it.Wgt)) {
			return fmt.Errorf("iteration (i0 %d, i1 %d, micro-op %d) addresses acc %d, %s %d, wgt %d: beyond the buffers", it.I0, it.I1, it.Uop, it.Dst, src, it.Src, it.Wgt)
		}
		switch {
		case in.Op == OpGEMM && in.Reset:
		case in.Op == OpGEMM:
			d.read(MemInp, it.Src)
			d.read(MemWgt, it.Wgt)
			d.read(MemAcc, it.Dst)
		default:
			if in.ALU != ALUMov {
				d.read(MemAcc, it.Dst)
			}
			if !in.UseImm {
				d.read(MemAcc, it.Src)
			}
		}
		d.write(MemAcc, it.Dst)
		return nil
	})
}

func (d *depState) inRange(m Memory, e int) bool { return e >= 0 && e < len(d.mem[m].writer) }

// read records that the running instruction reads entry e of m: a RAW
// conflict with its writer when that is another module's.
func (d *depState) read(m Memory, e int) {
	s := d.mem[m]
	if !d.first(s, e, 1) {
		return
	}
	q := d.mod[d.run]
	if w := s.writer[e]; w >= 0 && d.mod[w] != q {
		d.need[d.mod[w]] = max(d.need[d.mod[w]], w)
	}
	s.reader[q][e] = int32(d.run)
}

// write records that the running instruction writes entry e of m: a WAR
// conflict with each other module's last reader since the last write.
func (d *depState) write(m Memory, e int) {
	s := d.mem[m]
	if !d.first(s, e, 2) {
		return
	}
	q := d.mod[d.run]
	for r := range s.reader {
		if rd := s.reader[r][e]; rd >= 0 && Module(r) != q {
			d.need[r] = max(d.need[r], rd)
		}
		s.reader[r][e] = -1
	}
	s.writer[e] = int32(d.run)
}

// first reports whether the running instruction touches entry e the way
// bit says (1 read, 2 write) for the first time, and stamps it.
func (d *depState) first(s *entryState, e int, bit uint8) bool {
	if s.seen[e] != int32(d.run) {
		s.seen[e], s.how[e] = int32(d.run), 0
	}
	if s.how[e]&bit != 0 {
		return false
	}
	s.how[e] |= bit
	return true
}
