package tensorir

// PragmaAutoUnrollMaxStep is the loop annotation (TVM's
// pragma_auto_unroll_max_step) that lets code generation unroll the
// serial loops inside the annotated loop whose whole nest is small: a
// serial loop with a constant extent is unrolled when AutoUnrollSteps of
// it is at most the annotation's value (an IntAttr; 0 unrolls nothing).
// The annotated loop itself is unrolled by the same rule. The interpreter
// ignores it (unrolling does not change results).
const PragmaAutoUnrollMaxStep = "pragma_auto_unroll_max_step"

// AutoUnrollBudget is the step budget a loop's annotation sets for the
// loops inside it (0 when it has none; an inner annotation replaces an
// outer one).
func AutoUnrollBudget(f *For) (int64, bool) {
	a, ok := f.Annotations[PragmaAutoUnrollMaxStep]
	if !ok {
		return 0, false
	}
	v, ok := a.(IntAttr)
	if !ok || v < 0 {
		return 0, true
	}
	return int64(v), true
}

// AutoUnrolls reports whether the serial loop f is unrolled under the
// step budget of the nearest enclosing PragmaAutoUnrollMaxStep: its
// extent is a constant and AutoUnrollSteps(f) ≤ budget. The rule follows
// TVM's UnrollLoop pass (src/tir/transforms/unroll_loop.cc): the steps of
// a loop are its extent times the steps of its body.
func AutoUnrolls(f *For, budget int64) bool {
	if f.Kind != Serial || budget <= 0 {
		return false
	}
	steps, ok := AutoUnrollSteps(f)
	return ok && steps <= budget
}

// AutoUnrollSteps counts the statements executed by one run of s when
// every loop in it is unrolled: a loop's extent times its body's steps, a
// sequence's sum, a block's body (and init), one for any other
// statement; a vectorized loop counts once (one vector operation). ok is
// false when a loop inside has a non-constant extent or is parallel or
// thread-bound (such nests are never unrolled).
func AutoUnrollSteps(s Stmt) (steps int64, ok bool) {
	const limit = 1 << 40 // saturate, never overflow
	switch x := s.(type) {
	case nil:
		return 0, true
	case *For:
		if x.Kind == Parallel || x.Kind == ThreadBinding {
			return 0, false
		}
		body, ok := AutoUnrollSteps(x.Body)
		if x.Kind == Vectorized || !ok {
			return max(body, 1), ok
		}
		e, isConst := x.Extent.(*IntImm)
		if !isConst || e.Value < 0 {
			return 0, false
		}
		return min(e.Value*max(body, 1), limit), true
	case *SeqStmt:
		for _, c := range x.Stmts {
			n, ok := AutoUnrollSteps(c)
			if !ok {
				return 0, false
			}
			steps = min(steps+n, limit)
		}
		return steps, true
	case *BlockRealize:
		body, ok := AutoUnrollSteps(x.Block.Body)
		init, ok2 := AutoUnrollSteps(x.Block.Init)
		return body + init, ok && ok2
	case *IfThenElse:
		a, ok := AutoUnrollSteps(x.Then)
		b, ok2 := AutoUnrollSteps(x.Else)
		return max(a+b, 1), ok && ok2
	case *LetStmt:
		return AutoUnrollSteps(x.Body)
	case *Allocate:
		return AutoUnrollSteps(x.Body)
	}
	return 1, true
}
