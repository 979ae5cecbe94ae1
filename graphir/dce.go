package graphir

// The dce pass: removes pure ops whose results are unused, iterating to a
// fixed point (an op whose users were all removed is removed too).

func init() {
	RegisterFuncPass("dce", "remove pure ops whose results are unused", func(f *Func) error { DCE(f); return nil })
}

// DCE erases dead pure ops in f (nested regions included) and returns how
// many ops it removed. Terminators and impure ops are kept.
func DCE(f *Func) int {
	removed := 0
	for _, b := range allBlocksPostOrder(f.Body) {
		for op := b.Last(); op != nil; {
			prev := op.Prev()
			if isTriviallyDead(op) {
				op.Erase()
				removed++
			}
			op = prev
		}
	}
	return removed
}

// allBlocksPostOrder lists nested blocks before their enclosing block so
// dead uses inside regions disappear before their outer definitions are checked.
func allBlocksPostOrder(r *Region) []*Block {
	var out []*Block
	for _, b := range r.Blocks {
		for op := b.First(); op != nil; op = op.Next() {
			for _, nr := range op.Regions {
				out = append(out, allBlocksPostOrder(nr)...)
			}
		}
		out = append(out, b)
	}
	return out
}
