package hlo

import (
	"fmt"
	"slices"
	"sort"
	"strconv"

	g "github.com/tessera-ml/tessera/graphir"
)

// The `fuse` pass groups the top-level hlo ops of every function into
// hlo.fusion ops, in the manner of XLA's instruction fusion:
//
//   - First, each Contraction seeds an "output" group that takes the
//     elementwise arithmetic computed from its result (bias add, relu, a
//     requantization whose values have several users, ...; not
//     DataMovement) up to a single value leaving the group (seedEpilogue),
//     so an epilogue joins the contraction that produces it rather than a
//     later reduction's input fusion or another contraction's epilogue
//     (XLA fuses such epilogues into the GEMM/convolution as output
//     fusions).
//   - Ops are visited in reverse program order. An op that is not yet in a
//     group starts one (it is the group's root). The group then absorbs
//     producers of its members, visiting candidate producers in decreasing
//     program order, when every user of the producer is already in the group
//     and the producer may take that position:
//   - elementwise-like ops (traits Elementwise or Injective: arithmetic,
//     compare, select, convert, broadcast_in_dim, reshape, transpose,
//     slice, pad, concatenate) join on the epilogue side of any group;
//   - a Contraction (dot_general, convolution) joins a group that has no
//     hero yet, which becomes an "output" fusion (e.g. relu(add(dot,
//     broadcast(bias))));
//   - on the operand side of a Contraction hero only LayoutOnly ops
//     (reshape, transpose, broadcast_in_dim) join: arithmetic there would
//     be recomputed for every output element;
//   - a Reduction (reduce, reduce_window) is a hero only as the root: its
//     group is an "input" fusion that absorbs elementwise-like producers;
//   - at most one hero per fusion; a group without a hero is a "loop"
//     fusion, a dot/convolution root alone is an "output" fusion.
//   - With FusePolicy.IntegerEpilogues (the NPU's `fuse{integer-epilogues=true}`),
//     a contraction with an integer result takes no op with a float
//     result into its group, by any of the routes above.
//   - Last, an output group whose root's users all sit in one loop group
//     takes that group as more epilogue (mergeEpilogues) unless it moves
//     the root's data: epilogues whose values have several users
//     (requantization, GELU) run in the contraction's kernel too. When
//     that loop group moves the root's data (a pad), the output group
//     takes its part before the move instead (peelEpilogue), if that
//     part's one result is no wider than the root's.
//   - Before grouping, a broadcast_in_dim, or an elementwise-like op
//     computed from constants alone, with several users is cloned once
//     per user (XLA's instruction fusion duplicates such cheap producers
//     into every consumer): each copy then fuses into its user's group, so
//     a bias or scale shared by several layers is broadcast inside each
//     consumer instead of being materialized at full size by a fusion of
//     its own and read back by every consumer.
//   - An Opaque op (hlo.rnn_scan) is an "opaque" fusion of its own: it
//     absorbs no producer and joins no consumer's group.
//   - Constants holding one stored element (splats and scalars) are cloned
//     into every fusion that uses them and never become fusion operands;
//     other constants (weights) stay outside as operands.
//   - Each group becomes an hlo.fusion at its root's position (and with the
//     root's location): operands are the values defined outside and used
//     inside, in first-use order; the region clones the members in program
//     order and returns the root's results.
//
// Why no cycle (and no dominance violation) can arise: a producer joins a
// group only when all of its users are already members, so every value
// defined by a non-root member is used only inside its group; the root's
// results are the only values that leave a group. Every member is a
// transitive producer of the root through in-group edges, hence precedes
// the root in program order. Suppose a cycle G → X → … → G through an op X
// outside G: X (transitively) uses a value leaving G, which can only be the
// root's result, so X comes after the root; and a member M of G
// (transitively) uses X's result, so M comes after X — after the root,
// contradicting that members precede the root. The same argument places
// every fusion operand before the fusion: it is a function argument, a
// constant, or the root result of another group H used by some member M of
// G, so H's root (where H's fusion goes) precedes M, which precedes G's
// root (where G's fusion goes).
//
// Because candidate producers are taken in decreasing program order and
// every new candidate precedes the member that uses it, when a producer P
// is examined every op after P that will ever join the group already has:
// the "all users inside" test (users come after P) is final, so the
// grouping does not depend on the order members were added.

func init() {
	g.RegisterPass(&g.PassInfo{
		Name:    "fuse",
		Summary: "XLA-style fusion of top-level hlo ops into hlo.fusion (loop, input, output)",
		Options: map[string]string{
			"integer-epilogues": "true: an integer contraction's fusion keeps only integer ops (a conversion to float and what follows it fuse apart), for a target whose integer datapath has no float unit; default false",
		},
		New: func(opts map[string]string) (g.Pass, error) {
			var pol FusePolicy
			if v, ok := opts["integer-epilogues"]; ok {
				b, err := strconv.ParseBool(v)
				if err != nil {
					return nil, fmt.Errorf("option integer-epilogues must be true or false, got %q", v)
				}
				pol.IntegerEpilogues = b
			}
			return &g.FuncPass{PassName: "fuse", Fn: func(f *g.Func) error { return FuseFuncWith(f, pol) }}, nil
		},
	})
}

// FusePolicy adjusts the fusion for a target.
type FusePolicy struct {
	// IntegerEpilogues keeps float ops out of the fusion of a contraction
	// with an integer result: fold-qdq's dequantizing epilogue (convert
	// to f32, scale, bias, a residual add) becomes a loop fusion of its
	// own, so the contraction's kernel is integer-only (the NPU's int8
	// datapath has no float ALU); and a contraction whose epilogue ends
	// at an 8-bit result does not take its users' loop fusion
	// (endsEpilogue). An integer epilogue itself (a requantization, an
	// integer residual add and its requantization) is seeded as without
	// the policy.
	IntegerEpilogues bool
}

// excludes reports whether op may not join a group whose hero is hero:
// a float result in an integer contraction's group.
func (p FusePolicy) excludes(hero, op *g.Op) bool {
	return p.IntegerEpilogues && hero != nil && integerContraction(hero) && floatResult(op)
}

// endsEpilogue reports whether root, the one result of a contraction's
// output fusion, keeps it from merging its users' loop fusion
// (mergeEpilogues): with IntegerEpilogues, an 8-bit result of an integer
// contraction (a requantization's), which the NPU's int8 epilogue
// stores; a loop fusion reading it runs as a kernel of its own.
func (p FusePolicy) endsEpilogue(hero, root *g.Op) bool {
	t := g.AsTensor(root.Results[0].Type)
	return p.IntegerEpilogues && integerContraction(hero) && t != nil && t.Elem.IsInt() && t.Elem.Bits() <= 8
}

// excludesAny reports whether some member of ops may not join a group
// whose hero is hero.
func (p FusePolicy) excludesAny(hero *g.Op, ops map[*g.Op]role) bool {
	for m := range ops {
		if p.excludes(hero, m) {
			return true
		}
	}
	return false
}

// integerContraction: a contraction whose result is an integer tensor.
func integerContraction(op *g.Op) bool {
	if !isContractionHero(op) || len(op.Results) != 1 {
		return false
	}
	t := g.AsTensor(op.Results[0].Type)
	return t != nil && t.Elem.IsInt()
}

// floatResult: an op with a float tensor result.
func floatResult(op *g.Op) bool {
	for _, r := range op.Results {
		if t := g.AsTensor(r.Type); t != nil && t.Elem.IsFloat() {
			return true
		}
	}
	return false
}

// role of a member in its group
type role uint8

const (
	epilogue role = iota // computed once per output element, after the hero
	hero                 // dot_general, convolution, reduce, reduce_window
	prologue             // feeds the hero's operands
)

type group struct {
	root    *g.Op
	hero    *g.Op
	members map[*g.Op]role
	grown   bool
}

func (gr *group) kind() string {
	switch {
	case gr.hero != nil && isOpaque(gr.hero):
		return "opaque"
	case gr.hero == nil:
		return "loop"
	case gr.hero.HasTrait(g.Reduction):
		return "input"
	}
	return "output"
}

// The pass reads op traits (graphir.Trait), never op names: a hero is a
// Reduction or a Contraction, elementwise-like ops are Elementwise or
// Injective, and LayoutOnly / DataMovement refine where they may join.

func isHero(op *g.Op) bool { return op.HasTrait(g.Reduction | g.Contraction) }

func isContractionHero(op *g.Op) bool { return op.HasTrait(g.Contraction) }

// isOpaque: ops whose lowering builds their kernel whole (g.Opaque).
func isOpaque(op *g.Op) bool { return op.HasTrait(g.Opaque) }

// isElementwiseLike: ops computable per output element with O(1) work.
func isElementwiseLike(op *g.Op) bool {
	return op.Dialect() == "hlo" && len(op.Regions) == 0 && op.HasTrait(g.Elementwise|g.Injective)
}

// isFusible reports whether op is a compute op the pass puts into a fusion.
func isFusible(op *g.Op) bool {
	return op.Def != nil && op.Dialect() == "hlo" && (isHero(op) || isElementwiseLike(op) || isOpaque(op))
}

// FuseFunc runs the fusion pass on one function.
func FuseFunc(f *g.Func) error { return FuseFuncWith(f, FusePolicy{}) }

// FuseFuncWith runs the fusion pass on one function with a target's
// policy.
func FuseFuncWith(f *g.Func, pol FusePolicy) error {
	block := f.Entry()
	if block == nil {
		return nil
	}
	duplicateCheapProducers(block)
	ops := block.Ops()
	pos := make(map[*g.Op]int, len(ops))
	for i, op := range ops {
		pos[op] = i
	}
	owner := map[*g.Op]*group{}
	var groups []*group
	for _, op := range ops {
		if isContractionHero(op) && owner[op] == nil {
			groups = append(groups, seedEpilogue(op, pos, owner, pol))
		}
	}
	for i := len(ops) - 1; i >= 0; i-- {
		op := ops[i]
		if gr := owner[op]; gr != nil && gr.root == op && !gr.grown {
			gr.grown = true
			grow(gr, pos, owner, pol)
			continue
		}
		if owner[op] != nil || !isFusible(op) {
			continue
		}
		gr := &group{root: op, members: map[*g.Op]role{}}
		if isOpaque(op) {
			gr.hero = op
			gr.members[op] = hero
			owner[op] = gr
			groups = append(groups, gr)
			continue
		}
		if isHero(op) {
			gr.hero = op
			gr.members[op] = hero
		} else {
			gr.members[op] = epilogue
		}
		owner[op] = gr
		grow(gr, pos, owner, pol)
		groups = append(groups, gr)
	}
	groups = mergeEpilogues(groups, owner, pol)
	for _, gr := range groups {
		if err := materialize(gr, pos); err != nil {
			return err
		}
	}
	// Splat constants were cloned into their fusions; erase the originals,
	// or give the ones still used outside any fusion a loop fusion of their own.
	for _, op := range block.Ops() {
		if !isSplatConstant(op) {
			continue
		}
		if op.IsUnused() {
			op.Erase()
			continue
		}
		gr := &group{root: op, members: map[*g.Op]role{op: epilogue}}
		if err := materialize(gr, pos); err != nil {
			return err
		}
	}
	return nil
}

// duplicateCheapProducers gives every user of a multi-user cheap producer
// its own copy, placed right after the original (its operands dominate
// it there, and it precedes every user): a broadcast_in_dim, or an
// elementwise-like op computed from constants alone (a requantization's
// per-channel rounding term, shared by CSE between layers, would
// otherwise be materialized at full size by a kernel of its own and read
// back by every consumer). Ops are taken last first, so a producer's
// copies give its own operands the extra users they are copied for.
func duplicateCheapProducers(block *g.Block) {
	ops := block.Ops()
	constant := map[*g.Op]bool{}
	for _, op := range ops {
		constant[op] = op.Name == ConstantOp || isElementwiseLike(op) && len(op.Operands()) > 0 && allDefinedBy(op, constant)
	}
	for i := len(ops) - 1; i >= 0; i-- {
		op := ops[i]
		if op.Name != BroadcastInDimOp && (op.Name == ConstantOp || !constant[op]) {
			continue
		}
		var users []*g.Op
		for _, u := range op.Results[0].Uses() {
			if !slices.Contains(users, u) {
				users = append(users, u)
			}
		}
		for _, u := range users[min(1, len(users)):] {
			c := op.Clone(map[*g.Value]*g.Value{})
			block.InsertAfter(op, c)
			for i, v := range u.Operands() {
				if v == op.Results[0] {
					u.SetOperand(i, c.Results[0])
				}
			}
		}
	}
}

// allDefinedBy reports whether every operand of op is the result of an op
// in set.
func allDefinedBy(op *g.Op, set map[*g.Op]bool) bool {
	for _, v := range op.Operands() {
		if v.Def == nil || !set[v.Def] {
			return false
		}
	}
	return true
}

// seedEpilogue starts an output group at the contraction hero and extends
// it over the elementwise ops computed from the hero's result, taking ops
// in program order, up to the last point where exactly one value leaves
// the group: a single-user chain (bias add, relu), or an epilogue whose
// links have several users (fold-qdq's requantization, its integer
// residual add, GELU's x·erf(x)) up to the narrowest such value (the
// last of them among equals; along a single-user chain, the chain's
// end): the kernel then stores as few bytes as it can, never more than
// the contraction alone would. It stops
// at the first user of a member that may not join (not elementwise,
// moving data, in another group or block, excluded by the policy): that
// value leaves the group whatever is added later.
//
// Acyclic: an op taken is the earliest user of the group's values outside
// it, so every op before it that depends on the group is a member (the
// earliest non-member depending on it would read a member, hence be an
// earlier user); its other operands are therefore independent of the
// group. And the group ends where every member's value other than the
// root's is used inside it.
func seedEpilogue(heroOp *g.Op, pos map[*g.Op]int, owner map[*g.Op]*group, pol FusePolicy) *group {
	gr := &group{root: heroOp, hero: heroOp, members: map[*g.Op]role{heroOp: hero}}
	owner[heroOp] = gr
	var added []*g.Op // after the chosen root
	bits := g.AsTensor(heroOp.Results[0].Type).Elem.Bits()
	for {
		u, ok := earliestUser(gr.members, pos)
		if !ok || u == nil || owner[u] != nil || !isElementwiseLike(u) || u.HasTrait(g.DataMovement) || u.Block != heroOp.Block || pol.excludes(heroOp, u) {
			break
		}
		gr.members[u] = epilogue
		added = append(added, u)
		if len(u.Results) != 1 || !onlyExit(gr.members, u) {
			continue
		}
		if b := g.AsTensor(u.Results[0].Type).Elem.Bits(); b <= bits || isChain(gr.members, u) {
			gr.root, added, bits = u, nil, b
		}
	}
	for _, m := range added {
		delete(gr.members, m)
	}
	for m := range gr.members {
		owner[m] = gr
	}
	return gr
}

// isChain reports whether the results of every member but root have one
// user each (a single-user chain ending in root).
func isChain(members map[*g.Op]role, root *g.Op) bool {
	for m := range members {
		if m == root {
			continue
		}
		for _, r := range m.Results {
			if len(r.Uses()) > 1 {
				return false
			}
		}
	}
	return true
}

// earliestUser is the first op in program order outside members using a
// member's result; ok is false when such a user lies outside pos (another
// block or a terminator).
func earliestUser(members map[*g.Op]role, pos map[*g.Op]int) (first *g.Op, ok bool) {
	for m := range members {
		for _, r := range m.Results {
			for _, u := range r.Uses() {
				if _, in := members[u]; in {
					continue
				}
				p, known := pos[u]
				if !known {
					return nil, false
				}
				if first == nil || p < pos[first] {
					first = u
				}
			}
		}
	}
	return first, true
}

// onlyExit reports whether root's result is the only member value used
// outside members (and is used).
func onlyExit(members map[*g.Op]role, root *g.Op) bool {
	for m := range members {
		for _, r := range m.Results {
			for _, u := range r.Uses() {
				if _, in := members[u]; !in && m != root {
					return false
				}
			}
		}
	}
	return root.Results[0].HasUses()
}

// mergeEpilogues joins an output group to the loop group that holds every
// user of its root, when no op of that loop group moves the root's data
// (DataMovement) and none feeds the output group: the loop group becomes
// the contraction's epilogue, computed per output element, instead of a
// kernel that reads the contraction's result back from memory. This is
// the epilogue whose links have several users, which seedEpilogue's chain
// stops at (requantization's two products of the accumulator, GELU's
// x·erf(x)): XLA fuses such multi-user epilogues into the output fusion
// too. The merged group stays acyclic: its only result is the loop
// group's root, every other member's users are inside, and no member of
// the loop group is an operand of the output group.
func mergeEpilogues(groups []*group, owner map[*g.Op]*group, pol FusePolicy) []*group {
	merged := map[*group]bool{}
	for _, gr := range groups {
		if gr.kind() != "output" || merged[gr] || len(gr.root.Results) != 1 || pol.endsEpilogue(gr.hero, gr.root) {
			continue
		}
		into := usersLoopGroup(gr, owner)
		if into == nil {
			continue
		}
		part, movesData := rootPart(gr, into, owner)
		if movesData || pol.excludesAny(gr.hero, into.members) {
			peelEpilogue(gr, into, part, owner, pol)
			continue
		}
		for m := range into.members {
			gr.members[m] = epilogue
			owner[m] = gr
		}
		gr.root = into.root
		merged[into] = true
	}
	var out []*group
	for _, gr := range groups {
		if !merged[gr] {
			out = append(out, gr)
		}
	}
	return out
}

// rootPart is the part of loop group into computed from output group
// gr's root before any op that moves its data: the members of into
// reached from the root through ops that are not DataMovement.
// movesData reports whether such an op depends on the root (into then
// cannot join gr whole).
func rootPart(gr *group, into *group, owner map[*g.Op]*group) (part map[*g.Op]role, movesData bool) {
	part = map[*g.Op]role{}
	work := []*g.Value{gr.root.Results[0]}
	for len(work) > 0 {
		v := work[len(work)-1]
		work = work[:len(work)-1]
		for _, u := range v.Uses() {
			if _, in := part[u]; in || owner[u] != into {
				continue
			}
			if u.HasTrait(g.DataMovement) {
				movesData = true
				continue
			}
			part[u] = epilogue
			work = append(work, u.Results...)
		}
	}
	return part, movesData
}

// usersLoopGroup is the loop group holding every user of output group
// gr's root, when no member of gr reads a value of it; nil otherwise.
func usersLoopGroup(gr *group, owner map[*g.Op]*group) *group {
	var into *group
	for _, u := range gr.root.Results[0].Uses() {
		h := owner[u]
		if h == nil || h == gr || (into != nil && h != into) {
			return nil
		}
		into = h
	}
	if into == nil || into.hero != nil {
		return nil
	}
	for m := range gr.members {
		for _, v := range m.Operands() {
			if v != nil && v.Def != nil && owner[v.Def] == into {
				return nil
			}
		}
	}
	return into
}

// peelEpilogue moves into output group gr the part of loop group into
// (holding its root's users) that mergeEpilogues cannot take whole: the
// ops computed from the root before any op that moves its data
// (rootPart), with the producers only they use. A requantization that feeds the
// zero-point pad before the next convolution (fold-qdq's) then runs in
// the contraction's kernel, which stores the 8-bit value, and the pad
// kernel copies that instead of reading the i32 accumulator back and
// requantizing it (XLA splits such a consumer fusion the same way when
// the producer fusion can take the elementwise part). It applies only
// when the part holds every user of the root and exactly one value
// leaves it, of the root's shape and no wider element type, so the
// contraction's kernel stores no more than before; no op left behind
// feeds the part; and the policy admits every op moved.
func peelEpilogue(gr, into *group, part map[*g.Op]role, owner map[*g.Op]*group, pol FusePolicy) {
	addOnlyUsedProducers(part, into, owner)
	cut := partOutput(part, into)
	if cut == nil || !usedOnlyBy(gr.root, part) || !noWiderThan(cut.Results[0], gr.root.Results[0]) || pol.excludesAny(gr.hero, part) {
		return
	}
	for m := range part {
		for _, v := range m.Operands() {
			if _, in := part[v.Def]; v.Def != nil && owner[v.Def] == into && !in {
				return // the part would read what the loop group left computes
			}
		}
	}
	for m := range part {
		delete(into.members, m)
		gr.members[m] = epilogue
		owner[m] = gr
	}
	gr.root = cut
}

// addOnlyUsedProducers adds to part the members of into whose users are
// all in part (repeatedly: their own such producers too).
func addOnlyUsedProducers(part map[*g.Op]role, into *group, owner map[*g.Op]*group) {
	for changed := true; changed; {
		changed = false
		for m := range into.members {
			if _, in := part[m]; in || !usedOnlyBy(m, part) {
				continue
			}
			part[m] = epilogue
			changed = true
		}
	}
}

// usedOnlyBy reports whether op's results have users, all in set.
func usedOnlyBy(op *g.Op, set map[*g.Op]role) bool {
	used := false
	for _, r := range op.Results {
		for _, u := range r.Uses() {
			if _, in := set[u]; !in {
				return false
			}
			used = true
		}
	}
	return used
}

// partOutput is the one op of part whose result is used outside it (a
// single-result op that is not into's root), or nil when there is none
// or more than one.
func partOutput(part map[*g.Op]role, into *group) *g.Op {
	var cut *g.Op
	for m := range part {
		if m == into.root {
			return nil
		}
		for _, r := range m.Results {
			for _, u := range r.Uses() {
				if _, in := part[u]; in {
					continue
				}
				if (cut != nil && cut != m) || len(m.Results) != 1 {
					return nil
				}
				cut = m
			}
		}
	}
	return cut
}

// noWiderThan reports whether v has w's shape and an element type of at
// most w's width.
func noWiderThan(v, w *g.Value) bool {
	a, b := g.AsTensor(v.Type), g.AsTensor(w.Type)
	return a != nil && b != nil && slices.Equal(a.Shape, b.Shape) && a.Elem.Bits() <= b.Elem.Bits()
}

// grow absorbs producers into gr; see the comment at the top of the file.
func grow(gr *group, pos map[*g.Op]int, owner map[*g.Op]*group, pol FusePolicy) {
	cands := map[*g.Op]bool{}
	addCands := func(m *g.Op) {
		for _, v := range m.Operands() {
			if v != nil && v.Def != nil && v.Def.Block == m.Block && owner[v.Def] == nil && isFusible(v.Def) {
				cands[v.Def] = true
			}
		}
	}
	for m := range gr.members {
		addCands(m)
	}
	for len(cands) > 0 {
		// the candidate latest in program order
		var p *g.Op
		for c := range cands {
			if p == nil || pos[c] > pos[p] {
				p = c
			}
		}
		delete(cands, p)
		r, ok := admit(gr, p, owner)
		if !ok || pol.excludes(gr.hero, p) || (isContractionHero(p) && pol.excludesAny(p, gr.members)) {
			continue
		}
		gr.members[p] = r
		owner[p] = gr
		if r == hero {
			gr.hero = p
		}
		addCands(p)
	}
}

// admit decides whether producer p may join gr, and in which role.
func admit(gr *group, p *g.Op, owner map[*g.Op]*group) (role, bool) {
	if isOpaque(p) || (gr.hero != nil && isOpaque(gr.hero)) {
		return 0, false
	}
	operandSide := false
	for _, res := range p.Results {
		for _, u := range res.Uses() {
			if owner[u] != gr {
				return 0, false
			}
			if r := gr.members[u]; r == prologue || r == hero {
				operandSide = true
			}
		}
	}
	switch {
	case isContractionHero(p):
		if gr.hero != nil || operandSide {
			return 0, false
		}
		return hero, true
	case isHero(p): // reduce / reduce_window: only as a root
		return 0, false
	case !isElementwiseLike(p):
		return 0, false
	case !operandSide:
		return epilogue, true
	case isContractionHero(gr.hero) && !p.HasTrait(g.LayoutOnly):
		return 0, false
	}
	return prologue, true
}

// materialize replaces the members of gr with one hlo.fusion at the root.
func materialize(gr *group, pos map[*g.Op]int) error {
	members := make([]*g.Op, 0, len(gr.members))
	for m := range gr.members {
		members = append(members, m)
	}
	sort.Slice(members, func(i, j int) bool { return pos[members[i]] < pos[members[j]] })
	root := gr.root
	body := g.NewBlock()
	mapping := map[*g.Value]*g.Value{}
	var inputs []*g.Value
	var splats []*g.Op
	for _, m := range members {
		for _, v := range m.Operands() {
			if v == nil || mapping[v] != nil {
				continue
			}
			if _, in := gr.members[v.Def]; in && v.Def != nil {
				continue
			}
			if isSplatConstant(v.Def) {
				c := v.Def.Clone(mapping)
				splats = append(splats, c)
				mapping[v] = c.Results[0]
				continue
			}
			inputs = append(inputs, v)
			mapping[v] = body.AddArg(v.Type, v.Loc)
		}
	}
	for _, c := range splats {
		body.Append(c)
	}
	for _, m := range members {
		body.Append(m.Clone(mapping))
	}
	var rets []*g.Value
	types := make([]g.Type, len(root.Results))
	for i, r := range root.Results {
		rets = append(rets, mapping[r])
		types[i] = r.Type
	}
	body.Append(g.NewOp(ReturnOp, rets, nil, nil, root.Loc))
	fusion := g.NewOp(FusionOp, inputs, types, g.DictAttr{{Name: "kind", Value: g.StringAttr(gr.kind())}}, root.Loc)
	fusion.AddRegion(g.NewRegion(body))
	root.Block.InsertBefore(root, fusion)
	for i, r := range root.Results {
		r.ReplaceAllUsesWith(fusion.Results[i])
	}
	for i := len(members) - 1; i >= 0; i-- {
		if !members[i].IsUnused() {
			return members[i].Errorf("is still used outside its fusion (internal error of the fuse pass)")
		}
		members[i].Erase()
	}
	return nil
}
