package schedule

import (
	"strconv"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Cache and storage primitives (TVM's
// src/tir/schedule/primitive/cache_read_write.cc and block_annotate.cc):
// cache_read, cache_write, set_scope and storage_align.
//
// cache_read(b, i, scope) makes a buffer "<X>_<scope>" of X's shape in
// scope, a block of the same name copying the region of X that b reads
// into it, and redirects b's loads of X (only b's) to the copy. The copy
// is placed as high as possible in b's scope: before the outermost
// statement holding b that holds no write of X between it and b (after
// X's producer when that shares loops with b); its loops cover the region
// b reads below that point (loops above it are kept symbolic, as in
// compute_at).
//
// cache_write(b, i, scope) makes b write "<X>_<scope>" instead of X and
// adds a block of the same name copying the region b wrote back into X,
// right after the outermost statement holding b that holds no other
// access of X. The new buffer is allocated for the whole function body
// (tir.allocate around it, or the scope block's alloc).

// allBufferNames are the names of the buffers of f.
func allBufferNames(f *tir.PrimFunc) map[string]bool {
	names := map[string]bool{}
	for _, p := range f.Params {
		names[p.Name()] = true
	}
	tir.VisitStmt(f.Body, func(x tir.Stmt) bool {
		switch n := x.(type) {
		case *tir.Allocate:
			names[n.Buffer.Name] = true
		case *tir.Block:
			for _, a := range n.Allocs {
				names[a.Name] = true
			}
		}
		return true
	})
	return names
}

func allBlockNames(f *tir.PrimFunc) map[string]bool {
	names := map[string]bool{}
	for _, r := range BlocksUnder(f.Body) {
		names[r.Block.Name] = true
	}
	return names
}

// freshName returns base, or base_1, base_2, ... not in used.
func freshName(base string, used ...map[string]bool) string {
	taken := func(n string) bool {
		for _, u := range used {
			if u[n] {
				return true
			}
		}
		return false
	}
	name := base
	for i := 1; taken(name); i++ {
		name = base + "_" + strconv.Itoa(i)
	}
	return name
}

// copyBlock is the realization (to be placed by buildNest) of a block
// named name copying src into dst element by element.
func copyBlock(name string, src, dst *tir.Buffer, loc tir.Location) *tir.BlockRealize {
	blk := &tir.Block{Name: name, Loc: loc}
	idx := make([]tir.Expr, len(dst.Shape))
	rg := make([]tir.Range, len(dst.Shape))
	for d, ext := range dst.Shape {
		v := tir.NewVar("v"+strconv.Itoa(d), ext.DType())
		blk.IterVars = append(blk.IterVars, &tir.IterVar{Var: v, Dom: tir.Range{Min: tir.IntOf(ext.DType(), 0), Extent: ext}, Kind: tir.Spatial})
		idx[d] = v
		rg[d] = tir.Range{Min: v, Extent: tir.IntOf(ext.DType(), 1)}
	}
	blk.Reads = []tir.BufferRegion{{Buffer: src, Region: rg}}
	blk.Writes = []tir.BufferRegion{{Buffer: dst, Region: rg}}
	blk.Body = &tir.BufferStore{Buffer: dst, Value: &tir.BufferLoad{Buffer: src, Indices: idx}, Indices: idx, Loc: loc}
	return &tir.BlockRealize{Block: blk, Loc: loc}
}

// cacheAnchor returns the index k on path (root ... realize) of the
// statement the new block is placed next to: the outermost statement in
// the realize's scope, other than a sequence or an allocation, for which
// conflict (placing the block next to it would be wrong) does not hold;
// at worst the realize itself.
func cacheAnchor(path []tir.Stmt, conflict func(tir.Stmt) bool) (int, bool) {
	start := 0
	for i := len(path) - 2; i >= 0; i-- {
		if _, ok := path[i].(*tir.Block); ok {
			start = i + 1
			break
		}
	}
	for k := start; k < len(path); k++ {
		switch path[k].(type) {
		case *tir.SeqStmt, *tir.Allocate:
			continue
		}
		if !conflict(path[k]) {
			return k, true
		}
	}
	return 0, false
}

// fixedEnv is the relaxation environment for accesses below path[k]: the
// loops above it are fixed.
func (s *Schedule) fixedEnv() *tir.RelaxEnv { return tir.NewRelaxEnv(s.bindingEnv()) }

// allocateFor allocates buf for the whole scope of path: in the scope
// block's alloc list, or around the function body.
func allocateFor(body tir.Stmt, path []tir.Stmt, buf *tir.Buffer) tir.Stmt {
	var scope *tir.Block
	for i := len(path) - 2; i >= 0; i-- {
		if b, ok := path[i].(*tir.Block); ok {
			scope = b
			break
		}
	}
	if scope == nil {
		return &tir.Allocate{Buffer: buf, Body: body, Loc: body.Location()}
	}
	return tir.Mutate(body, func(x tir.Stmt) (tir.Stmt, bool) {
		if x == tir.Stmt(scope) {
			c := *scope
			c.Allocs = append(append([]*tir.Buffer(nil), scope.Allocs...), buf)
			return &c, true
		}
		return nil, false
	})
}

// CacheRead caches the buffer of read region readIndex of block b in a
// new buffer of scope (global, shared, local or one a target registered: tir.RegisterScope) and returns the copying
// block; only b reads the cache.
func (s *Schedule) CacheRead(b BlockRV, readIndex int, scope string) (BlockRV, error) {
	const prim = "cache_read"
	r := findBlock(s.f.Body, b.Name)
	if r == nil {
		return BlockRV{}, s.Errorf(prim, &b, nil, "no such block in @%s", s.f.Name)
	}
	if !tir.KnownScope(scope) {
		return BlockRV{}, s.Errorf(prim, &b, nil, "unknown storage scope %q (want %s)", scope, tir.ScopeList())
	}
	blk := r.Block
	if readIndex < 0 || readIndex >= len(blk.Reads) {
		return BlockRV{}, s.Errorf(prim, &b, nil, "read index %d is out of range: the block has %d read regions", readIndex, len(blk.Reads))
	}
	x := blk.Reads[readIndex].Buffer
	loads, stores := blockBuffers(blk)
	if !loads[x] {
		return BlockRV{}, s.Errorf(prim, &b, nil, "the block does not load %%%s", x.Name)
	}
	if stores[x] {
		return BlockRV{}, s.Errorf(prim, &b, nil, "the block also writes %%%s; a cache of it would be stale", x.Name)
	}
	p := positions(s.f.Body)
	path := PathTo(s.f.Body, r)
	k, ok := cacheAnchor(path, func(st tir.Stmt) bool {
		if a, isAlloc := st.(*tir.Allocate); isAlloc && a.Buffer == x {
			return true
		}
		for i := p.pre[st]; i < p.pre[r]; i++ {
			if nodeStore(p.order[i]) == x {
				return true
			}
		}
		return false
	})
	if !ok {
		return BlockRV{}, s.Errorf(prim, &b, nil, "%%%s is written right before the block inside its loops; there is no place for the cache", x.Name)
	}
	anchor := path[k]
	re := s.fixedEnv()
	acc := tir.CollectAccessesIn(anchor, r, map[*tir.Buffer]bool{x: true}, false, re)[x]
	if acc == nil || !acc.OK {
		return BlockRV{}, s.Errorf(prim, &b, nil, "cannot bound the region of %%%s the block reads", x.Name)
	}
	out, err := s.insertCacheStage(prim, b, r, anchor, x, scope, acc, re, true)
	if err != nil {
		return BlockRV{}, err
	}
	s.Record(prim, []any{b}, map[string]any{"read_index": int64(readIndex), "scope": scope}, nil, []any{out})
	return out, nil
}

// CacheWrite makes block b write the buffer of its write region
// writeIndex into a new buffer of scope, and returns the block copying it
// back. Refused when b reads the buffer's prior contents (a reduction
// without init, or a spatial block reading what it writes).
func (s *Schedule) CacheWrite(b BlockRV, writeIndex int, scope string) (BlockRV, error) {
	const prim = "cache_write"
	r := findBlock(s.f.Body, b.Name)
	if r == nil {
		return BlockRV{}, s.Errorf(prim, &b, nil, "no such block in @%s", s.f.Name)
	}
	if !tir.KnownScope(scope) {
		return BlockRV{}, s.Errorf(prim, &b, nil, "unknown storage scope %q (want %s)", scope, tir.ScopeList())
	}
	blk := r.Block
	if writeIndex < 0 || writeIndex >= len(blk.Writes) {
		return BlockRV{}, s.Errorf(prim, &b, nil, "write index %d is out of range: the block has %d write regions", writeIndex, len(blk.Writes))
	}
	x := blk.Writes[writeIndex].Buffer
	loads, stores := blockBuffers(blk)
	if !stores[x] {
		return BlockRV{}, s.Errorf(prim, &b, nil, "the block does not store %%%s", x.Name)
	}
	reduce := false
	for _, iv := range blk.IterVars {
		reduce = reduce || iv.Kind == tir.Reduce
	}
	if loads[x] && (!reduce || blk.Init == nil) {
		return BlockRV{}, s.Errorf(prim, &b, nil, "the block reads the prior contents of %%%s, which the cache would not hold", x.Name)
	}
	p := positions(s.f.Body)
	path := PathTo(s.f.Body, r)
	k, ok := cacheAnchor(path, func(st tir.Stmt) bool {
		if a, isAlloc := st.(*tir.Allocate); isAlloc && a.Buffer == x {
			return true
		}
		for i := p.pre[st]; i <= p.end[st]; i++ {
			o := p.order[i]
			if p.inside(o, r) {
				continue
			}
			if nodeStore(o) == x {
				return true
			}
			for _, l := range nodeLoads(o) {
				if l == x {
					return true
				}
			}
		}
		return false
	})
	if !ok {
		return BlockRV{}, s.Errorf(prim, &b, nil, "%%%s is accessed next to the block inside its loops; there is no place for the write-back", x.Name)
	}
	anchor := path[k]
	re := s.fixedEnv()
	acc := tir.CollectAccessesIn(anchor, r, map[*tir.Buffer]bool{x: true}, true, re)[x]
	if acc == nil || !acc.OK {
		return BlockRV{}, s.Errorf(prim, &b, nil, "cannot bound the region of %%%s the block writes", x.Name)
	}
	out, err := s.insertCacheStage(prim, b, r, anchor, x, scope, acc, re, false)
	if err != nil {
		return BlockRV{}, err
	}
	s.Record(prim, []any{b}, map[string]any{"write_index": int64(writeIndex), "scope": scope}, nil, []any{out})
	return out, nil
}

// intermediate returns the buffer of write region i of block b when it is
// allocated in the function (not a parameter).
func (s *Schedule) intermediate(prim string, b BlockRV, i int) (*tir.Buffer, error) {
	r := findBlock(s.f.Body, b.Name)
	if r == nil {
		return nil, s.Errorf(prim, &b, nil, "no such block in @%s", s.f.Name)
	}
	if i < 0 || i >= len(r.Block.Writes) {
		return nil, s.Errorf(prim, &b, nil, "buffer index %d is out of range: the block has %d write regions", i, len(r.Block.Writes))
	}
	x := r.Block.Writes[i].Buffer
	if isParam(s.f, x) {
		return nil, s.Errorf(prim, &b, nil, "%%%s is a parameter of @%s; only buffers allocated in the function can change", x.Name, s.f.Name)
	}
	return x, nil
}

// SetScope changes the storage scope of the buffer of write region
// bufferIndex of block b (TVM's set_scope); the buffer must be allocated
// in the function.
func (s *Schedule) SetScope(b BlockRV, bufferIndex int, scope string) error {
	const prim = "set_scope"
	x, err := s.intermediate(prim, b, bufferIndex)
	if err != nil {
		return err
	}
	if !tir.KnownScope(scope) {
		return s.Errorf(prim, &b, nil, "unknown storage scope %q (want %s)", scope, tir.ScopeList())
	}
	nb := *x
	nb.Scope = scope
	if err := s.install(prim, &b, nil, tir.ReplaceBuffers(s.f.Body, map[*tir.Buffer]*tir.Buffer{x: &nb}, nil)); err != nil {
		return err
	}
	s.Record(prim, []any{b}, map[string]any{"buffer_index": int64(bufferIndex), "scope": scope}, nil, nil)
	return nil
}

// AttrBufferDimAlign is the block annotation storage_align writes (TVM's
// attr::buffer_dim_align): a list of [buffer_index, axis, factor, offset].
const AttrBufferDimAlign = tir.AttrBufferDimAlign

// StorageAlign asks that the stride of dimension axis of the buffer of
// write region bufferIndex of block b be factor·k + offset (TVM's
// storage_align, to avoid shared-memory bank conflicts). As in TVM it
// annotates the block (buffer_dim_align); the strides are for buffer
// allocation to apply.
func (s *Schedule) StorageAlign(b BlockRV, bufferIndex, axis int, factor, offset int64) error {
	const prim = "storage_align"
	x, err := s.intermediate(prim, b, bufferIndex)
	if err != nil {
		return err
	}
	if axis < 0 || axis >= len(x.Shape) {
		return s.Errorf(prim, &b, nil, "axis %d is out of range for %%%s of rank %d", axis, x.Name, len(x.Shape))
	}
	if factor <= 0 || offset < 0 || offset >= factor {
		return s.Errorf(prim, &b, nil, "factor %d and offset %d: want factor > 0 and 0 <= offset < factor", factor, offset)
	}
	r := findBlock(s.f.Body, b.Name)
	entry := tir.ArrayAttr{tir.IntAttr(bufferIndex), tir.IntAttr(axis), tir.IntAttr(factor), tir.IntAttr(offset)}
	var list tir.ArrayAttr
	if old, ok := r.Block.Annotations[AttrBufferDimAlign].(tir.ArrayAttr); ok {
		for _, e := range old {
			if a, ok := e.(tir.ArrayAttr); ok && len(a) == 4 && a[0] == entry[0] && a[1] == entry[1] {
				continue
			}
			list = append(list, e)
		}
	}
	list = append(list, entry)
	nb := *r.Block
	nb.Annotations = tir.Attrs{}
	for k, v := range r.Block.Annotations {
		nb.Annotations[k] = v
	}
	nb.Annotations[AttrBufferDimAlign] = list
	nr := *r
	nr.Block = &nb
	body := tir.Mutate(s.f.Body, func(st tir.Stmt) (tir.Stmt, bool) {
		if st == tir.Stmt(r) {
			return &nr, true
		}
		return nil, false
	})
	if err := s.install(prim, &b, nil, body); err != nil {
		return err
	}
	s.Record(prim, []any{b}, map[string]any{"buffer_index": int64(bufferIndex), "axis": int64(axis), "factor": factor, "offset": offset}, nil, nil)
	return nil
}

func init() {
	for _, kind := range []string{"cache_read", "cache_write"} {
		kind := kind
		RegisterInstruction(kind, func(s *Schedule, in []any, attrs map[string]any, _ any) ([]any, error) {
			b, err := BlockInput(in, 0)
			if err != nil {
				return nil, err
			}
			key := "read_index"
			if kind == "cache_write" {
				key = "write_index"
			}
			i, err := AttrInt(attrs, key)
			if err != nil {
				return nil, err
			}
			scope, err := AttrString(attrs, "scope")
			if err != nil {
				return nil, err
			}
			var out BlockRV
			if kind == "cache_read" {
				out, err = s.CacheRead(b, int(i), scope)
			} else {
				out, err = s.CacheWrite(b, int(i), scope)
			}
			if err != nil {
				return nil, err
			}
			return []any{out}, nil
		})
	}
	RegisterInstruction("set_scope", func(s *Schedule, in []any, attrs map[string]any, _ any) ([]any, error) {
		b, err := BlockInput(in, 0)
		if err != nil {
			return nil, err
		}
		i, err := AttrInt(attrs, "buffer_index")
		if err != nil {
			return nil, err
		}
		scope, err := AttrString(attrs, "scope")
		if err != nil {
			return nil, err
		}
		return nil, s.SetScope(b, int(i), scope)
	})
	RegisterInstruction("storage_align", func(s *Schedule, in []any, attrs map[string]any, _ any) ([]any, error) {
		b, err := BlockInput(in, 0)
		if err != nil {
			return nil, err
		}
		var v [4]int64
		for j, key := range []string{"buffer_index", "axis", "factor", "offset"} {
			if v[j], err = AttrInt(attrs, key); err != nil {
				return nil, err
			}
		}
		return nil, s.StorageAlign(b, int(v[0]), int(v[1]), v[2], v[3])
	})
}

// insertCacheStage is the common part of cache_read (read: true) and
// cache_write: it makes a copy of x in scope, redirects block r to it,
// places the copy nest over the accessed region acc before (read) or after
// (write) the anchor statement, allocates the copy around its uses and
// installs the new body. It returns the copy block.
func (s *Schedule) insertCacheStage(prim string, b BlockRV, r *tir.BlockRealize, anchor tir.Stmt, x *tir.Buffer, scope string, acc *tir.AccessRegion, re *tir.RelaxEnv, read bool) (BlockRV, error) {
	cb := *x
	cb.Name = freshName(x.Name+"_"+scope, allBufferNames(s.f))
	cb.Scope = scope
	cb.Strides, cb.ElemOffset, cb.Align = nil, nil, 0
	name := freshName(cb.Name, allBlockNames(s.f))
	from, to := x, &cb
	if !read {
		from, to = &cb, x
	}
	cr := copyBlock(name, from, to, r.Loc)
	need := make([]*tir.SymRange, len(acc.Dims))
	for i := range acc.Dims {
		need[i] = &acc.Dims[i]
	}
	nest, why := buildNest(cr, need, re.Fixed)
	if why != "" {
		return BlockRV{}, s.Errorf(prim, &b, nil, "%s", why)
	}
	nb := tir.ReplaceBuffers(r.Block, map[*tir.Buffer]*tir.Buffer{x: &cb}, nil).(*tir.Block)
	nr := *r
	nr.Block = nb
	body := tir.Mutate(s.f.Body, func(st tir.Stmt) (tir.Stmt, bool) {
		if st != anchor {
			return nil, false
		}
		repl := tir.Mutate(st, func(y tir.Stmt) (tir.Stmt, bool) {
			if y == tir.Stmt(r) {
				return &nr, true
			}
			return nil, false
		})
		if read {
			return tir.Seq(nest, repl), true
		}
		return tir.Seq(repl, nest), true
	})
	body = allocateFor(body, PathTo(body, &nr), &cb)
	if err := s.install(prim, &b, nil, body); err != nil {
		return BlockRV{}, err
	}
	return BlockRV{Name: name}, nil
}
