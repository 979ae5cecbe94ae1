package graph

import (
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
)

// EinsumOp is graph.einsum(x0, x1, ...) {equation}: ONNX Einsum (opset
// 12), with numpy.einsum's semantics (the ONNX reference implementation
// is numpy.einsum).
//
// The equation is `term,term,...[->output]`, one term per operand. A term
// is a sequence of subscript letters (a–z, A–Z) with at most one ellipsis
// `...`; spaces are ignored. Without an ellipsis a term has one letter per
// dimension of its operand; with one, the ellipsis stands for the
// dimensions its letters leave over, aligned to the right and broadcast
// across operands NumPy-style (equal sizes or 1). Every letter has one
// size in all operands; a letter repeated within a term takes that
// operand's diagonal (`ii->i`). The result is
//
//	out[output letters] = Σ over the other letters of Π_k x_k[term_k letters]
//
// so a letter missing from the output is summed. Explicit mode (`->`):
// the output lists each letter at most once, only letters of the inputs,
// and must have an ellipsis when the inputs' ellipsis stands for any
// dimension (numpy.einsum refuses the equation otherwise). Implicit mode:
// the output is the ellipsis dimensions followed by the letters that
// appear exactly once in the equation, in ASCII order (upper case first).
//
// Operands share one numeric element type (not i1), which the result has;
// the evaluator accumulates in float64 and rounds once. Errors (a
// diagnostic naming the problem): a character outside the language, a `.`
// not in `...`, more than one ellipsis in a term or `->` in the equation,
// a term count that differs from the operand count, a term whose letters
// do not fit its operand's rank, a letter with two sizes, ellipsis
// dimensions that do not broadcast, an output letter absent from the
// inputs or repeated, a missing output ellipsis.
const EinsumOp = "graph.einsum"

func init() {
	register(&graphir.OpDef{
		Name:     EinsumOp,
		Summary:  "Einstein summation over the operands (ONNX Einsum)",
		Operands: graphir.AtLeast(1),
		Results:  graphir.Exactly(1),
		Traits:   graphir.Pure,
		Attrs:    []graphir.AttrSpec{{Name: "equation", Kind: graphir.KindString, Required: true}},
		Infer: func(op *graphir.Op) ([]graphir.Type, error) {
			s, err := einsumConfig(op)
			if err != nil {
				return nil, err
			}
			return one(s.resultType()), nil
		},
		Eval:   evalEinsum,
		Pretty: true,
	}, Conversions{Legalize: legalizeEinsum})
}

// ---- equation syntax

// einsumTerm is one term of an equation: its letters in order and the
// position of its ellipsis among them (the ellipsis stands before
// letters[ellipsis]; −1 when the term has none).
type einsumTerm struct {
	text     string
	letters  []byte
	ellipsis int
}

func isEinsumLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// parseEinsumEquation splits eq into its input terms and its output term
// (nil in implicit mode), checking the syntax only.
func parseEinsumEquation(eq string) (ins []einsumTerm, out *einsumTerm, err error) {
	cur := einsumTerm{ellipsis: -1}
	start := 0
	output := false
	finish := func(end int) {
		cur.text = strings.TrimSpace(eq[start:end])
		if output {
			t := cur
			out = &t
		} else {
			ins = append(ins, cur)
		}
		cur = einsumTerm{ellipsis: -1}
	}
	for i := 0; i < len(eq); i++ {
		c := eq[i]
		switch {
		case c == ' ' || c == '\t':
		case isEinsumLetter(c):
			cur.letters = append(cur.letters, c)
		case c == '.':
			if !strings.HasPrefix(eq[i:], "...") {
				return nil, nil, errorf("'.' at offset %d is not part of an ellipsis '...'", i)
			}
			if cur.ellipsis >= 0 {
				return nil, nil, errorf("term \"%s\" has more than one ellipsis", strings.TrimSpace(eq[start:i+3]))
			}
			cur.ellipsis = len(cur.letters)
			i += 2
		case c == ',':
			if output {
				return nil, nil, errorf("',' at offset %d is in the output, which is a single term", i)
			}
			finish(i)
			start = i + 1
		case c == '-':
			if i+1 >= len(eq) || eq[i+1] != '>' {
				return nil, nil, errorf("'-' at offset %d does not start '->'", i)
			}
			if output {
				return nil, nil, errorf("more than one '->' (the second at offset %d)", i)
			}
			finish(i)
			output = true
			i++
			start = i + 1
		default:
			return nil, nil, errorf("invalid character %q at offset %d (expected letters a-z and A-Z, ',', '...', '->' and spaces)", c, i)
		}
	}
	finish(len(eq))
	return ins, out, nil
}

// ---- analysis

// einsumSpec is an analysed einsum: every dimension of every operand and
// of the result is mapped to a label (a letter, or one dimension of the
// broadcast ellipsis), and every label has one size.
type einsumSpec struct {
	names  []string  // label names for diagnostics
	sizes  []int64   // label sizes (ellipsis labels: the broadcast size)
	ins    [][]int   // ins[k][d]: the label of dimension d of operand k
	out    []int     // the result's labels in order
	shapes [][]int64 // operand shapes
	elem   graphir.DType
}

func (s *einsumSpec) resultType() *graphir.TensorType {
	shape := make([]int64, len(s.out))
	for i, l := range s.out {
		shape[i] = s.sizes[l]
	}
	return graphir.NewTensor(s.elem, shape...)
}

// einsumConfig parses and checks op's equation against its operands.
func einsumConfig(op *graphir.Op) (*einsumSpec, error) {
	ts, err := operandTensors(op)
	if err != nil {
		return nil, err
	}
	if len(ts) == 0 {
		return nil, op.Errorf("expects at least one operand")
	}
	if err := sameElem(op, ts); err != nil {
		return nil, err
	}
	if ts[0].Elem == graphir.I1 {
		return nil, op.Errorf("operands must be numeric, got %s", ts[0])
	}
	if op.Attr("equation") == nil {
		return nil, op.Errorf("requires attribute 'equation'")
	}
	eq, err := op.Str("equation")
	if err != nil {
		return nil, err
	}
	ins, out, err := parseEinsumEquation(eq)
	if err != nil {
		return nil, op.Errorf("equation \"%s\": %v", eq, err)
	}
	fail := func(format string, args ...any) (*einsumSpec, error) {
		return nil, op.Errorf("equation \"%s\": %s", eq, errorf(format, args...).Error())
	}
	if len(ins) != len(ts) {
		return fail("%d input terms for %d operands", len(ins), len(ts))
	}
	// The ellipsis of operand k stands for ell[k] dimensions.
	ell := make([]int, len(ts))
	nEll := 0
	for k, t := range ins {
		r, n := ts[k].Rank(), len(t.letters)
		switch {
		case t.ellipsis < 0 && n != r:
			return fail("term #%d \"%s\" has %d subscripts but operand #%d has rank %d (%s)", k, t.text, n, k, r, ts[k])
		case t.ellipsis >= 0 && n > r:
			return fail("term #%d \"%s\" has %d subscripts besides its ellipsis but operand #%d has rank %d (%s)", k, t.text, n, k, r, ts[k])
		case t.ellipsis >= 0:
			ell[k] = r - n
			nEll = max(nEll, ell[k])
		}
	}
	s := &einsumSpec{elem: ts[0].Elem, ins: make([][]int, len(ts)), shapes: make([][]int64, len(ts))}
	// Labels 0..nEll-1 are the ellipsis dimensions, right-aligned.
	for e := 0; e < nEll; e++ {
		s.names = append(s.names, "...")
		s.sizes = append(s.sizes, 1)
	}
	letter := map[byte]int{}
	seen := map[int][2]int{} // a letter's first (operand, dim)
	count := map[byte]int{}
	for k, t := range ins {
		x := ts[k]
		s.shapes[k] = x.Shape
		labels := make([]int, x.Rank())
		for d := range labels {
			var c byte
			switch {
			case t.ellipsis >= 0 && d >= t.ellipsis && d < t.ellipsis+ell[k]:
				l := nEll - ell[k] + d - t.ellipsis
				labels[d] = l
				if n := x.Shape[d]; n != 1 && s.sizes[l] != 1 && n != s.sizes[l] {
					return fail("the ellipsis dimensions do not broadcast: %s", einsumEllipsisShapes(ins, ts, ell))
				} else if n != 1 {
					s.sizes[l] = n
				}
				continue
			case t.ellipsis >= 0 && d >= t.ellipsis:
				c = t.letters[d-ell[k]]
			default:
				c = t.letters[d]
			}
			count[c]++
			l, ok := letter[c]
			if !ok {
				l = len(s.sizes)
				letter[c] = l
				s.names = append(s.names, string(c))
				s.sizes = append(s.sizes, x.Shape[d])
				seen[l] = [2]int{k, d}
			} else if s.sizes[l] != x.Shape[d] {
				f := seen[l]
				if f[0] == k {
					return fail("subscript '%c' is repeated in term #%d \"%s\" over dimensions of sizes %d and %d of operand #%d (%s)", c, k, t.text, s.sizes[l], x.Shape[d], k, x)
				}
				return fail("subscript '%c' has size %d in operand #%d (%s) but %d in operand #%d (%s)", c, s.sizes[l], f[0], ts[f[0]], x.Shape[d], k, x)
			}
			labels[d] = l
		}
		s.ins[k] = labels
	}
	if out == nil {
		// Implicit: the ellipsis, then the letters used once, in ASCII order.
		s.out = iotaInts(nEll)
		var once []byte
		for c, n := range count {
			if n == 1 {
				once = append(once, c)
			}
		}
		slices.Sort(once)
		for _, c := range once {
			s.out = append(s.out, letter[c])
		}
		return s, nil
	}
	if out.ellipsis < 0 && nEll > 0 {
		return fail("the output \"%s\" has no ellipsis but the inputs' ellipsis stands for %d dimensions (numpy.einsum refuses this; write '...' in the output)", out.text, nEll)
	}
	used := map[byte]bool{}
	for i := 0; i <= len(out.letters); i++ {
		if i == out.ellipsis {
			s.out = append(s.out, iotaInts(nEll)...)
		}
		if i == len(out.letters) {
			break
		}
		c := out.letters[i]
		l, ok := letter[c]
		if !ok {
			return fail("output subscript '%c' does not appear in any input term", c)
		}
		if used[c] {
			return fail("output subscript '%c' appears more than once", c)
		}
		used[c] = true
		s.out = append(s.out, l)
	}
	return s, nil
}

// einsumEllipsisShapes lists the shape each operand's ellipsis stands for.
func einsumEllipsisShapes(ins []einsumTerm, ts []*graphir.TensorType, ell []int) string {
	var parts []string
	for k, t := range ins {
		if t.ellipsis >= 0 {
			parts = append(parts, "operand #"+strconv.Itoa(k)+" has "+shapeString(ts[k].Shape[t.ellipsis:t.ellipsis+ell[k]]))
		}
	}
	return strings.Join(parts, ", ")
}

func iotaInts(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// strides returns, for operand k, the element stride of every label: the
// sum of the strides of the dimensions carrying it (a repeated letter
// walks the diagonal), 0 for labels it lacks or broadcasts (size 1 where
// the label is larger).
func (s *einsumSpec) strides(k int) []int64 {
	st := make([]int64, len(s.sizes))
	ds := graphir.Strides(s.shapes[k])
	for d, l := range s.ins[k] {
		if s.shapes[k][d] == s.sizes[l] {
			st[l] += ds[d]
		}
	}
	return st
}

// ---- reference evaluation

// evalEinsum evaluates the equation directly: for every result element,
// the sum over every value of the summed labels of the operands' product.
func evalEinsum(op *graphir.Op, args []*graphir.Tensor) ([]*graphir.Tensor, error) {
	out, err := evalPrologue(op, args)
	if err != nil {
		return nil, err
	}
	s, err := einsumConfig(op)
	if err != nil {
		return nil, err
	}
	inOut := make([]bool, len(s.sizes))
	for _, l := range s.out {
		inOut[l] = true
	}
	order := append([]int(nil), s.out...)
	for l := range s.sizes {
		if !inOut[l] {
			order = append(order, l)
		}
	}
	no := len(s.out)
	outShape, sumShape := make([]int64, no), make([]int64, len(order)-no)
	for i, l := range order {
		if i < no {
			outShape[i] = s.sizes[l]
		} else {
			sumShape[i-no] = s.sizes[l]
		}
	}
	st := make([][]int64, len(args)) // per operand, per position of order
	for k := range args {
		ls := s.strides(k)
		st[k] = make([]int64, len(order))
		for i, l := range order {
			st[k][i] = ls[l]
		}
	}
	nSum := product(sumShape)
	oi, si := make([]int64, no), make([]int64, len(sumShape))
	base := make([]int64, len(args))
	for o := range out.Data {
		unravelInto(int64(o), outShape, oi)
		for k := range args {
			base[k] = 0
			for i, x := range oi {
				base[k] += x * st[k][i]
			}
		}
		acc := 0.0
		for r := int64(0); r < nSum; r++ {
			unravelInto(r, sumShape, si)
			p := 1.0
			for k, a := range args {
				off := base[k]
				for i, x := range si {
					off += x * st[k][no+i]
				}
				p *= a.Data[off]
			}
			acc += p
		}
		out.Data[o] = acc
	}
	return []*graphir.Tensor{out.Round()}, nil
}

// ---- legalization
//
// graph.einsum → hlo, in three phases:
//
//  1. each operand alone: dimensions it broadcasts (size 1 in an
//     ellipsis dimension larger elsewhere) are reshaped away; the
//     diagonal of every repeated letter is taken by one hlo.transpose
//     (the repeated dimensions last, grouped by letter), an hlo.reshape
//     merging each group of k dimensions of size n into one of size nᵏ,
//     and an hlo.slice with stride 1 + n + … + nᵏ⁻¹ along it;
//  2. while two or more operands remain, the pair whose result is
//     smallest (fewest elements; the leftmost pair on ties, so two
//     operands contract directly and a chain left to right when sizes
//     tie) is contracted: letters found in only one of the two and needed
//     nowhere else are summed first (hlo.reduce add); letters in both and
//     needed later (by the output or another operand) are batching
//     dimensions, letters in both and needed nowhere else contracting
//     dimensions of one hlo.dot_general, scheduled like any GEMM. A pair
//     with no contracting letter (outer and elementwise products) is an
//     hlo.multiply of both broadcast (hlo.broadcast_in_dim) to the
//     result. Batching letters come in output order, and the last pair is
//     swapped when that makes the product already in output order;
//  3. the last value's letters absent from the output are summed
//     (hlo.reduce add) and the rest transposed into output order.

// einsumValue is a legalized intermediate: a value and the label of each
// of its dimensions (distinct).
type einsumValue struct {
	v      *graphir.Value
	labels []int
}

func legalizeEinsum(op *graphir.Op, b *builder) ([]*graphir.Value, error) {
	s, err := einsumConfig(op)
	if err != nil {
		return nil, err
	}
	vals := make([]*einsumValue, op.NumOperands())
	for k := range vals {
		if vals[k], err = s.prepare(b, k, op.Operand(k)); err != nil {
			return nil, err
		}
	}
	for len(vals) > 1 {
		i, j := s.pickPair(vals)
		keep := s.neededBesides(vals, i, j)
		r, err := s.contract(b, vals[i], vals[j], keep, len(vals) == 2)
		if err != nil {
			return nil, err
		}
		vals[i] = r
		vals = slices.Delete(vals, j, j+1)
	}
	keep := make([]bool, len(s.sizes))
	for _, l := range s.out {
		keep[l] = true
	}
	x, err := s.sumAway(b, vals[0], keep)
	if err != nil {
		return nil, err
	}
	perm := make([]int64, len(s.out))
	for p, l := range s.out {
		perm[p] = int64(slices.Index(x.labels, l))
	}
	r, err := b.einsumTranspose(x.v, perm)
	return []*graphir.Value{r}, err
}

// prepare drops operand k's broadcast dimensions and takes the diagonals
// of its repeated letters.
func (s *einsumSpec) prepare(b *builder, k int, v *graphir.Value) (*einsumValue, error) {
	var labels []int
	var shape []int64
	for d, l := range s.ins[k] {
		if s.shapes[k][d] == s.sizes[l] {
			labels = append(labels, l)
			shape = append(shape, s.sizes[l])
		}
	}
	v, err := b.reshape(v, shape)
	if err != nil {
		return nil, err
	}
	// Group the dimensions: single letters first, then each repeated
	// letter's dimensions together.
	reps := map[int]int{}
	for _, l := range labels {
		reps[l]++
	}
	var perm []int64
	var single, groups []int
	for d, l := range labels {
		switch {
		case reps[l] == 1:
			perm = append(perm, int64(d))
			single = append(single, l)
		case !slices.Contains(groups, l):
			groups = append(groups, l)
		}
	}
	if len(groups) == 0 {
		return &einsumValue{v: v, labels: labels}, nil
	}
	merged := make([]int64, 0, len(single)+len(groups))
	for _, l := range single {
		merged = append(merged, s.sizes[l])
	}
	start := make([]int64, len(single)+len(groups))
	limit := slices.Clone(merged)
	strides := make([]int64, len(start))
	for i := range single {
		strides[i] = 1
	}
	for g, l := range groups {
		for d, ld := range labels {
			if ld == l {
				perm = append(perm, int64(d))
			}
		}
		// The diagonal element t sits at t·(1 + n + … + n^(r−1)) of the
		// merged dimension of size n^r (r repetitions of size n).
		n, full, step := s.sizes[l], int64(1), int64(0)
		for i := 0; i < reps[l]; i++ {
			step += full
			full *= n
		}
		merged = append(merged, full)
		limit = append(limit, full)
		strides[len(single)+g] = step
	}
	if v, err = b.einsumTranspose(v, perm); err != nil {
		return nil, err
	}
	if v, err = b.reshape(v, merged); err != nil {
		return nil, err
	}
	if v, err = b.insert(hlo.Slice(v, start, limit, strides, b.src.Loc)); err != nil {
		return nil, err
	}
	return &einsumValue{v: v, labels: append(single, groups...)}, nil
}

// neededBesides marks the labels that the output or any value other than
// vals[i] and vals[j] needs.
func (s *einsumSpec) neededBesides(vals []*einsumValue, i, j int) []bool {
	keep := make([]bool, len(s.sizes))
	for _, l := range s.out {
		keep[l] = true
	}
	for k, v := range vals {
		if k != i && k != j {
			for _, l := range v.labels {
				keep[l] = true
			}
		}
	}
	return keep
}

// pickPair chooses the pair of values whose contraction gives the
// fewest elements (the first such pair in (i, j) order).
func (s *einsumSpec) pickPair(vals []*einsumValue) (int, int) {
	bi, bj, best := 0, 1, int64(-1)
	for i := 0; i < len(vals); i++ {
		for j := i + 1; j < len(vals); j++ {
			keep := s.neededBesides(vals, i, j)
			size := int64(1)
			counted := map[int]bool{}
			for _, l := range append(slices.Clone(vals[i].labels), vals[j].labels...) {
				if keep[l] && !counted[l] {
					counted[l] = true
					size *= s.sizes[l]
				}
			}
			if best < 0 || size < best {
				bi, bj, best = i, j, size
			}
		}
	}
	return bi, bj
}

// sumAway sums x over its labels that are not kept.
func (s *einsumSpec) sumAway(b *builder, x *einsumValue, keep []bool) (*einsumValue, error) {
	var dims []int64
	var rest []int
	for d, l := range x.labels {
		if keep[l] {
			rest = append(rest, l)
		} else {
			dims = append(dims, int64(d))
		}
	}
	if len(dims) == 0 {
		return x, nil
	}
	v, err := b.reduce(x.v, 0, hlo.AddOp, dims)
	if err != nil {
		return nil, err
	}
	return &einsumValue{v: v, labels: rest}, nil
}

// contract multiplies x and y, summing the letters they share that keep
// does not mark; last says the product is the final one, whose labels
// should come out in output order.
func (s *einsumSpec) contract(b *builder, x, y *einsumValue, keep []bool, last bool) (*einsumValue, error) {
	in := func(v *einsumValue) []bool {
		m := make([]bool, len(s.sizes))
		for _, l := range v.labels {
			m[l] = true
		}
		return m
	}
	kx, ky := slices.Clone(keep), slices.Clone(keep)
	for l, ok := range in(y) {
		kx[l] = kx[l] || ok
	}
	for l, ok := range in(x) {
		ky[l] = ky[l] || ok
	}
	var err error
	if x, err = s.sumAway(b, x, kx); err != nil {
		return nil, err
	}
	if y, err = s.sumAway(b, y, ky); err != nil {
		return nil, err
	}
	inY := in(y)
	var batch, contracting []int
	for _, l := range x.labels {
		switch {
		case inY[l] && keep[l]:
			batch = append(batch, l)
		case inY[l]:
			contracting = append(contracting, l)
		}
	}
	outPos := func(l int) int {
		if p := slices.Index(s.out, l); p >= 0 {
			return p
		}
		return len(s.out) + slices.Index(x.labels, l)
	}
	sort.SliceStable(batch, func(a, c int) bool { return outPos(batch[a]) < outPos(batch[c]) })
	if last && !slices.Equal(einsumProductLabels(batch, x, y), s.out) && slices.Equal(einsumProductLabels(batch, y, x), s.out) {
		x, y = y, x
	}
	labels := einsumProductLabels(batch, x, y)
	if len(contracting) == 0 {
		shape := make([]int64, len(labels))
		for i, l := range labels {
			shape[i] = s.sizes[l]
		}
		place := func(v *einsumValue) (*graphir.Value, error) {
			dims := make([]int64, len(v.labels))
			for i, l := range v.labels {
				dims[i] = int64(slices.Index(labels, l))
			}
			return b.broadcastInDim(v.v, shape, dims)
		}
		xb, err := place(x)
		if err != nil {
			return nil, err
		}
		yb, err := place(y)
		if err != nil {
			return nil, err
		}
		r, err := b.op(hlo.MultiplyOp, xb, yb)
		return &einsumValue{v: r, labels: labels}, err
	}
	var dims hlo.DotDims
	for _, l := range batch {
		dims.LhsBatch = append(dims.LhsBatch, int64(slices.Index(x.labels, l)))
		dims.RhsBatch = append(dims.RhsBatch, int64(slices.Index(y.labels, l)))
	}
	for _, l := range contracting {
		dims.LhsContracting = append(dims.LhsContracting, int64(slices.Index(x.labels, l)))
		dims.RhsContracting = append(dims.RhsContracting, int64(slices.Index(y.labels, l)))
	}
	r, err := b.insert(hlo.DotGeneral(x.v, y.v, dims, b.src.Loc))
	return &einsumValue{v: r, labels: labels}, err
}

// einsumProductLabels are the labels of the product of x and y with the
// given batching labels: the batch, then x's other labels not in y, then
// y's not in x (hlo.dot_general's result order).
func einsumProductLabels(batch []int, x, y *einsumValue) []int {
	out := slices.Clone(batch)
	for _, l := range x.labels {
		if !slices.Contains(y.labels, l) {
			out = append(out, l)
		}
	}
	for _, l := range y.labels {
		if !slices.Contains(x.labels, l) {
			out = append(out, l)
		}
	}
	return out
}

// einsumTranspose is hlo.transpose of x by perm, or x for the identity.
func (b *builder) einsumTranspose(x *graphir.Value, perm []int64) (*graphir.Value, error) {
	identity := true
	for i, p := range perm {
		identity = identity && p == int64(i)
	}
	if identity {
		return x, nil
	}
	return b.insert(hlo.Transpose(x, perm, b.src.Loc))
}
