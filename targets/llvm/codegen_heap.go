package llvm

import (
	"fmt"

	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/enum"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"
)

// keptBlock returns a 64-byte-aligned block of at least bytes bytes that
// this allocation site keeps for the calling thread: two thread_local
// globals hold the site's block and its capacity, and the block is
// replaced (free, then aligned_alloc of bytes rounded up to 64) only
// when it is too small. Heap buffers (a large Allocate, a host arena) are
// thus allocated on a thread's first call, not on every call: freeing
// megabytes each call let glibc give the heap back to the kernel and the
// next call fault it in again, page by page (SqueezeNet's first
// convolution at 1 thread: 34 ms instead of 1.6). A site's block is live
// only within its statement, which cannot nest within itself on one
// thread (no recursion), so reuse is safe; a thread keeps its blocks
// until the process exits (as TVM's workspace pools and ONNX Runtime's
// arenas keep theirs). A site inside a parallel loop keeps one block per
// worker thread.
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
	g.cur.NewCall(m.declare("free", types.Void, i8ptr), g.cur.NewLoad(i8ptr, ptr))
	rounded := g.cur.NewAnd(g.cur.NewAdd(bytes, iconst(63)), iconst(-64))
	alloc := m.declare("aligned_alloc", i8ptr, types.I64, types.I64)
	g.cur.NewStore(g.cur.NewCall(alloc, iconst(64), rounded), ptr)
	g.cur.NewStore(rounded, capacity)
	g.cur.NewBr(use)

	g.cur = use
	return g.cur.NewLoad(i8ptr, ptr)
}
