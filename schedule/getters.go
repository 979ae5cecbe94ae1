package schedule

import (
	"fmt"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Getters (TVM's src/tir/schedule/primitive/get_block_loop.cc): handles of
// blocks and loops, and the producer/consumer relation between blocks.

// GetBlock returns the handle of the block named name.
func (s *Schedule) GetBlock(name string) (BlockRV, error) {
	if findBlock(s.f.Body, name) == nil {
		return BlockRV{}, s.Errorf("get_block", nil, nil, "no block named %q in @%s", name, s.f.Name)
	}
	b := BlockRV{Name: name}
	s.Record("get_block", nil, map[string]any{"name": name}, nil, []any{b})
	return b, nil
}

// GetLoops returns the loops enclosing block b (inside its parent block),
// outermost first.
func (s *Schedule) GetLoops(b BlockRV) ([]LoopRV, error) {
	fors, err := s.LoopsOf(b)
	if err != nil {
		return nil, s.Errorf("get_loops", &b, nil, "no such block in @%s", s.f.Name)
	}
	out := make([]LoopRV, len(fors))
	for i, f := range fors {
		out[i] = LoopRV{Var: f.Var}
	}
	s.Record("get_loops", []any{b}, nil, nil, []any{out})
	return out, nil
}

// childBlocks returns the realizations directly below st (not inside a
// nested block).
func childBlocks(st tir.Stmt) []*tir.BlockRealize {
	var out []*tir.BlockRealize
	var walk func(x tir.Stmt)
	walk = func(x tir.Stmt) {
		if r, ok := x.(*tir.BlockRealize); ok {
			if r.Block != nil {
				out = append(out, r)
			}
			return
		}
		for _, c := range tir.SubStmts(x) {
			walk(c)
		}
	}
	for _, c := range tir.SubStmts(st) {
		walk(c)
	}
	return out
}

// GetChildBlocks returns the blocks directly below parent (a BlockRV or a
// LoopRV; the root LoopRV stands for the function body), not counting
// blocks nested in those, in program order.
func (s *Schedule) GetChildBlocks(parent any) ([]BlockRV, error) {
	var st tir.Stmt
	switch p := parent.(type) {
	case BlockRV:
		r, err := s.FindBlock(p)
		if err != nil {
			return nil, s.Errorf("get_child_blocks", &p, nil, "no such block in @%s", s.f.Name)
		}
		st = r.Block
	case LoopRV:
		if p.IsRoot() {
			st = &tir.SeqStmt{Stmts: []tir.Stmt{s.f.Body}}
		} else {
			f, err := s.FindLoop(p)
			if err != nil {
				return nil, s.Errorf("get_child_blocks", nil, &p, "no such loop in @%s", s.f.Name)
			}
			st = f
		}
	default:
		return nil, s.Errorf("get_child_blocks", nil, nil, "parent %v is neither a block nor a loop", parent)
	}
	var out []BlockRV
	for _, r := range childBlocks(st) {
		out = append(out, BlockRV{Name: r.Block.Name})
	}
	s.Record("get_child_blocks", []any{parent}, nil, nil, []any{out})
	return out, nil
}

// scopeBlocks returns the blocks of b's scope: the child blocks of its
// parent block (or of the function body), in program order, and b's
// position among them.
func (s *Schedule) scopeBlocks(b BlockRV) ([]*tir.BlockRealize, int, error) {
	r, err := s.FindBlock(b)
	if err != nil {
		return nil, 0, err
	}
	path := PathTo(s.f.Body, r)
	var scope tir.Stmt = &tir.SeqStmt{Stmts: []tir.Stmt{s.f.Body}}
	for _, st := range path[:len(path)-1] {
		if blk, ok := st.(*tir.Block); ok {
			scope = blk
		}
	}
	sib := childBlocks(scope)
	for i, x := range sib {
		if x == r {
			return sib, i, nil
		}
	}
	return nil, 0, fmt.Errorf("block %q not found in its scope", b.Name)
}

func regionBuffers(rs []tir.BufferRegion) map[*tir.Buffer]bool {
	m := map[*tir.Buffer]bool{}
	for _, r := range rs {
		m[r.Buffer] = true
	}
	return m
}

func touches(rs []tir.BufferRegion, bufs map[*tir.Buffer]bool) bool {
	for _, r := range rs {
		if bufs[r.Buffer] {
			return true
		}
	}
	return false
}

// GetProducers returns the blocks of b's scope that run before b and write
// a buffer b reads (TVM's get_producers, at buffer granularity), in
// program order.
func (s *Schedule) GetProducers(b BlockRV) ([]BlockRV, error) {
	sib, i, err := s.scopeBlocks(b)
	if err != nil {
		return nil, s.Errorf("get_producers", &b, nil, "no such block in @%s", s.f.Name)
	}
	reads := regionBuffers(sib[i].Block.Reads)
	var out []BlockRV
	for _, x := range sib[:i] {
		if touches(x.Block.Writes, reads) {
			out = append(out, BlockRV{Name: x.Block.Name})
		}
	}
	s.Record("get_producers", []any{b}, nil, nil, []any{out})
	return out, nil
}

// GetConsumers returns the blocks of b's scope that run after b and read a
// buffer b writes, in program order.
func (s *Schedule) GetConsumers(b BlockRV) ([]BlockRV, error) {
	sib, i, err := s.scopeBlocks(b)
	if err != nil {
		return nil, s.Errorf("get_consumers", &b, nil, "no such block in @%s", s.f.Name)
	}
	writes := regionBuffers(sib[i].Block.Writes)
	var out []BlockRV
	for _, x := range sib[i+1:] {
		if touches(x.Block.Reads, writes) {
			out = append(out, BlockRV{Name: x.Block.Name})
		}
	}
	s.Record("get_consumers", []any{b}, nil, nil, []any{out})
	return out, nil
}

func blocksOut(bs []BlockRV, err error) ([]any, error) {
	if err != nil {
		return nil, err
	}
	return []any{bs}, nil
}

func init() {
	RegisterInstruction("get_block", func(s *Schedule, _ []any, attrs map[string]any, _ any) ([]any, error) {
		name, err := AttrString(attrs, "name")
		if err != nil {
			return nil, err
		}
		b, err := s.GetBlock(name)
		return []any{b}, err
	})
	RegisterInstruction("get_loops", func(s *Schedule, in []any, _ map[string]any, _ any) ([]any, error) {
		b, err := BlockInput(in, 0)
		if err != nil {
			return nil, err
		}
		ls, err := s.GetLoops(b)
		return []any{ls}, err
	})
	RegisterInstruction("get_child_blocks", func(s *Schedule, in []any, _ map[string]any, _ any) ([]any, error) {
		if len(in) != 1 {
			return nil, fmt.Errorf("want 1 input, have %d", len(in))
		}
		return blocksOut(s.GetChildBlocks(in[0]))
	})
	RegisterInstruction("get_producers", func(s *Schedule, in []any, _ map[string]any, _ any) ([]any, error) {
		b, err := BlockInput(in, 0)
		if err != nil {
			return nil, err
		}
		return blocksOut(s.GetProducers(b))
	})
	RegisterInstruction("get_consumers", func(s *Schedule, in []any, _ map[string]any, _ any) ([]any, error) {
		b, err := BlockInput(in, 0)
		if err != nil {
			return nil, err
		}
		return blocksOut(s.GetConsumers(b))
	})
}
