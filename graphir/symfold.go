package graphir

// SymAlgebra is what FoldSym builds another IR's expression of a SymExpr
// with (the tensor IR's index expressions, say): constants, symbols, sums,
// products and floor divisions by a positive constant.
type SymAlgebra[T any] struct {
	Const    func(c int64) T
	Symbol   func(name string) T
	Add, Mul func(a, b T) T
	FloorDiv func(a T, d int64) T
}

// FoldSym rebuilds e with a: the sum of its terms, each its coefficient
// times its factors (a coefficient of 1 and a constant term of 0 are left
// out).
func FoldSym[T any](e *SymExpr, a SymAlgebra[T]) T {
	var sum T
	have := false
	for _, t := range e.terms {
		var p T
		hasP := false
		if t.coef != 1 || len(t.factors) == 0 {
			p, hasP = a.Const(t.coef), true
		}
		for _, f := range t.factors {
			var x T
			if f.num != nil {
				x = a.FloorDiv(FoldSym(f.num, a), f.den)
			} else {
				x = a.Symbol(f.name)
			}
			if hasP {
				p = a.Mul(p, x)
			} else {
				p, hasP = x, true
			}
		}
		if have {
			sum = a.Add(sum, p)
		} else {
			sum, have = p, true
		}
	}
	if !have {
		return a.Const(0)
	}
	return sum
}

// NonNegative reports whether e is a sum of products of symbols with
// non-negative coefficients (no floor division): then e ≥ 0 for all
// non-negative values of its symbols, and e ≥ f for all of them whenever
// e - f is NonNegative (how a memory plan compares symbolic sizes).
func (e *SymExpr) NonNegative() bool {
	for _, t := range e.terms {
		if t.coef < 0 {
			return false
		}
		for _, f := range t.factors {
			if f.num != nil {
				return false
			}
		}
	}
	return true
}

// RoundUp returns an expression that is at least e and a multiple of m
// (m ≥ 1) for every non-negative value of the symbols: e's coefficients
// rounded up to multiples of m when e is NonNegative (a slight
// over-estimate, without division), else floordiv(e + m - 1, m) · m.
func (e *SymExpr) RoundUp(m int64) *SymExpr {
	if !e.NonNegative() {
		q, _ := e.AddConst(m - 1).FloorDiv(m)
		return q.Scale(m)
	}
	out := make([]symTerm, len(e.terms))
	for i, t := range e.terms {
		t.coef = (t.coef + m - 1) / m * m
		out[i] = t
	}
	return &SymExpr{terms: out}
}
