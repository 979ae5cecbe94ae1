package llvm

import (
	"fmt"

	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"
)

// blockHeader is the bytes before each kept block: the link of the
// module's list of blocks (blockList), padded to keep the block 64-byte
// aligned.
const blockHeader = 64

// keptBlock returns a 64-byte-aligned block of at least bytes bytes that
// this allocation site keeps for the calling thread: two thread_local
// globals hold the site's block and its capacity, and a call that needs
// more than the capacity takes a new block of max(bytes rounded up to
// 64, twice the capacity). Heap buffers (a large Allocate, a host arena)
// are thus allocated on a thread's first calls, not on every call:
// freeing megabytes each call let glibc give the heap back to the kernel
// and the next call fault it in again, page by page (SqueezeNet's first
// convolution at 1 thread: 34 ms instead of 1.6). A site's block is live
// only within its statement, which cannot nest within itself on one
// thread (no recursion), so reuse is safe; a site inside a parallel loop
// keeps one block per worker thread. Every block ever taken is on the
// module's list (blockList), and the module's destructor frees them all
// when the library is unloaded (dlclose) or the process exits, so a
// process that loads and unloads many models (the tuner's runner) does
// not accumulate them; replaced blocks stay on the list until then,
// which the doubling bounds to the final capacity.
func (g *fgen) keptBlock(bytes value.Value) value.Value {
	m := g.m
	name := fmt.Sprintf("tessera.block.%d", m.nBlocks)
	m.nBlocks++
	ptr := m.m.NewGlobalDef(name+".ptr", constant.NewNull(i8ptr))
	capacity := m.m.NewGlobalDef(name+".cap", constant.NewInt(types.I64, 0))
	for _, gl := range []*ir.Global{ptr, capacity} {
		gl.Linkage = enum.LinkageInternal
		gl.TLSModel = enum.TLSModelGeneric
	}
	grow, use := g.newBlock("block.grow"), g.newBlock("block.use")
	have := g.cur.NewLoad(types.I64, capacity)
	g.cur.NewCondBr(g.cur.NewICmp(enum.IPredUGE, have, bytes), use, grow)

	g.cur = grow
	rounded := g.cur.NewAnd(g.cur.NewAdd(bytes, iconst(63)), iconst(-64))
	twice := g.cur.NewShl(have, iconst(1))
	size := g.cur.NewSelect(g.cur.NewICmp(enum.IPredUGT, twice, rounded), twice, rounded)
	alloc := m.declare("aligned_alloc", i8ptr, types.I64, types.I64)
	raw := g.cur.NewCall(alloc, iconst(64), g.cur.NewAdd(size, iconst(blockHeader)))
	g.pushBlock(raw)
	g.cur.NewStore(g.cur.NewGetElementPtr(types.I8, raw, iconst(blockHeader)), ptr)
	g.cur.NewStore(size, capacity)
	g.cur.NewBr(use)

	g.cur = use
	return g.cur.NewLoad(i8ptr, ptr)
}

// pushBlock links the block raw (its header's first word) onto the
// module's list with a compare-and-swap loop: threads may push at once.
func (g *fgen) pushBlock(raw value.Value) {
	head := g.m.blockList()
	link := g.cur.NewBitCast(raw, types.NewPointer(i8ptr))
	try, done := g.newBlock("block.push"), g.newBlock("block.pushed")
	g.cur.NewBr(try)
	g.cur = try
	old := g.cur.NewLoad(i8ptr, head)
	old.Atomic, old.Ordering, old.Align = true, enum.AtomicOrderingMonotonic, 8
	g.cur.NewStore(old, link)
	cx := g.cur.NewCmpXchg(head, old, raw, enum.AtomicOrderingAcquireRelease, enum.AtomicOrderingMonotonic)
	g.cur.NewCondBr(g.cur.NewExtractValue(cx, 1), done, try)
	g.cur = done
}

// blockList is the module's list of kept blocks (the head, an i8* whose
// first word links to the next), created with the destructor that frees
// them (freeBlocks, registered in llvm.global_dtors) on first use.
func (m *mgen) blockList() *ir.Global {
	if m.blocks != nil {
		return m.blocks
	}
	m.blocks = m.m.NewGlobalDef("tessera.blocks", constant.NewNull(i8ptr))
	m.blocks.Linkage = enum.LinkageInternal
	f := m.m.NewFunc("tessera.free_blocks", types.Void)
	f.Linkage = enum.LinkageInternal
	entry, loop, body, done := f.NewBlock("entry"), f.NewBlock("loop"), f.NewBlock("body"), f.NewBlock("done")
	first := entry.NewLoad(i8ptr, m.blocks)
	entry.NewBr(loop)
	p := loop.NewPhi(ir.NewIncoming(first, entry))
	loop.NewCondBr(loop.NewICmp(enum.IPredEQ, p, constant.NewNull(i8ptr)), done, body)
	next := body.NewLoad(i8ptr, body.NewBitCast(p, types.NewPointer(i8ptr)))
	body.NewCall(m.declare("free", types.Void, i8ptr), p)
	body.NewBr(loop)
	p.Incs = append(p.Incs, ir.NewIncoming(next, body))
	done.NewStore(constant.NewNull(i8ptr), m.blocks)
	done.NewRet(nil)
	m.structor("llvm.global_dtors", f)
	return m.blocks
}
