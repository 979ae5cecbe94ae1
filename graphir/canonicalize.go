package graphir

// The canonicalize pass: applies every registered op's canonicalization
// patterns with the greedy driver, which also drops pure ops left unused,
// as MLIR's -canonicalize does.

func init() {
	RegisterFuncPass("canonicalize", "apply the canonicalization patterns of every registered op and remove dead pure ops", Canonicalize)
}

// Canonicalize rewrites f with all registered canonicalization patterns
// until a fixed point. Errors: the rewrite did not converge.
func Canonicalize(f *Func) error {
	var ps []*Pattern
	for _, name := range RegisteredOps() {
		ps = append(ps, LookupOp(name).Canonicalize...)
	}
	_, err := ApplyPatternsGreedily(f, ps)
	return err
}
