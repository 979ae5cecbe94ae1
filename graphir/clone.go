package graphir

// Clone deep-copies op: attributes, result types and regions (with their
// blocks and nested ops). Operands found in mapping are remapped; others
// are kept. The clone's results and block arguments are recorded in
// mapping, so cloning a sequence of ops in order rewires their uses.
// The clone is detached (not in any block).
func (op *Op) Clone(mapping map[*Value]*Value) *Op {
	operands := make([]*Value, op.NumOperands())
	for i, v := range op.Operands() {
		if w, ok := mapping[v]; ok {
			operands[i] = w
		} else {
			operands[i] = v
		}
	}
	c := NewOp(op.Name, operands, valueTypes(op.Results), op.Attrs, op.Loc)
	for i, r := range op.Results {
		mapping[r] = c.Results[i]
	}
	for _, reg := range op.Regions {
		nr := NewRegion()
		for _, b := range reg.Blocks {
			nb := NewBlock()
			for _, a := range b.Args {
				mapping[a] = nb.AddArg(a.Type, a.Loc)
			}
			nr.AddBlock(nb)
		}
		for bi, b := range reg.Blocks {
			for o := b.First(); o != nil; o = o.Next() {
				nr.Blocks[bi].Append(o.Clone(mapping))
			}
		}
		c.AddRegion(nr)
	}
	return c
}
