package graphir

import (
	"math"
	"strconv"
	"strings"
)

// The cse pass: common subexpression elimination of pure ops without
// regions, per block with scoping into nested regions (MLIR's -cse).
// Two ops are equivalent when they have the same name, operands,
// attributes and result types.

func init() {
	RegisterFuncPass("cse", "eliminate common subexpressions among pure ops", func(f *Func) error { CSE(f); return nil })
}

// CSE replaces each pure, region-free op that duplicates an earlier
// dominating op with that op's results. It returns the number of ops removed.
func CSE(f *Func) int {
	c := &cse{ids: map[*Value]int{}}
	return c.region(f.Body, map[string]*Op{})
}

type cse struct{ ids map[*Value]int }

func (c *cse) region(r *Region, outer map[string]*Op) int {
	removed := 0
	for _, b := range r.Blocks {
		known := make(map[string]*Op, len(outer)+b.Len())
		for k, v := range outer {
			known[k] = v
		}
		for op := b.First(); op != nil; {
			next := op.Next()
			for _, nr := range op.Regions {
				scope := known
				if op.HasTrait(IsolatedFromAbove) {
					scope = map[string]*Op{}
				}
				removed += c.region(nr, scope)
			}
			if op.HasTrait(Pure) && len(op.Regions) == 0 && len(op.Results) > 0 {
				key := c.key(op)
				if prev, ok := known[key]; ok && equivalent(prev, op) {
					for i, res := range op.Results {
						res.ReplaceAllUsesWith(prev.Results[i])
					}
					op.Erase()
					removed++
				} else {
					known[key] = op
				}
			}
			op = next
		}
	}
	return removed
}

// cseKey hashes the op's identity cheaply: name, operand identities,
// result types and a digest of attributes (large constants by sampled
// content; equivalent() confirms).
func (c *cse) key(op *Op) string {
	var b strings.Builder
	b.WriteString(op.Name)
	for _, o := range op.Operands() {
		b.WriteByte('|')
		b.WriteString(strconv.Itoa(c.id(o)))
	}
	for _, r := range op.Results {
		b.WriteByte(':')
		b.WriteString(r.Type.String())
	}
	for _, na := range op.Attrs {
		b.WriteString("," + na.Name + "=")
		if d, ok := na.Value.(*DenseElementsAttr); ok {
			b.WriteString(denseDigest(d))
			continue
		}
		b.WriteString(FormatAttr(na.Value))
	}
	return b.String()
}

// id numbers values in first-seen order so keys can name operands.
func (c *cse) id(v *Value) int {
	if id, ok := c.ids[v]; ok {
		return id
	}
	c.ids[v] = len(c.ids)
	return len(c.ids) - 1
}

func denseDigest(d *DenseElementsAttr) string {
	h := uint64(1469598103934665603)
	n := d.Len()
	step := 1
	if n > 64 {
		step = n / 64
	}
	for i := 0; i < n; i += step {
		h = (h ^ math.Float64bits(d.At(i))) * 1099511628211
	}
	return d.Type.String() + "#" + strconv.Itoa(n) + "#" + strconv.FormatUint(h, 36)
}

func equivalent(a, b *Op) bool {
	if a.Name != b.Name || a.NumOperands() != b.NumOperands() || len(a.Attrs) != len(b.Attrs) {
		return false
	}
	for i := range a.operands {
		if a.operands[i] != b.operands[i] {
			return false
		}
	}
	return AttrEqual(a.Attrs, b.Attrs) && TypesEqual(valueTypes(a.Results), valueTypes(b.Results))
}
