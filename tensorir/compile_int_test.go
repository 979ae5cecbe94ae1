package tensorir

import (
	"math/rand"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestCompileIntMatchesEvalInt: a compiled integer expression gives
// EvalInt's value and ok for random bindings — index arithmetic with
// floordiv/floormod (divisors that may be zero), min/max, comparisons,
// selects, a narrowing cast and a variable left unbound.
func TestCompileIntMatchesEvalInt(t *testing.T) {
	a, b, c := NewVar("a", DIndex), NewVar("b", DIndex), NewVar("c", DIndex)
	exprs := []Expr{
		Add(Mul(a, Int(7)), FloorMod(b, Int(3))),
		FloorDiv(Sub(a, b), c),
		FloorMod(a, c),
		&Select{Cond: Bin(OpAnd, LT(a, Int(5)), &Not{X: LT(b, Int(0))}), T: Min(a, b), F: Max(a, Int(-2))},
		&Cast{Type: DI8, X: Mul(a, Int(97))},
		Bin(OpEQ, FloorDiv(a, Int(4)), b),
	}
	slots := map[*Var]int{a: 0, b: 1, c: 2}
	r := rand.New(rand.NewSource(1))
	for _, e := range exprs {
		f := CompileInt(e, func(v *Var) int { return slots[v] })
		for range 200 {
			vals := []int64{r.Int63n(41) - 20, r.Int63n(41) - 20, r.Int63n(5) - 2}
			known := []bool{true, true, r.Intn(4) != 0}
			want, wantOK := EvalInt(e, func(v *Var) (int64, bool) { return vals[slots[v]], known[slots[v]] })
			got, ok := f(vals, known)
			require.Equal(t, wantOK, ok, "%s at %v %v", ExprString(e), vals, known)
			require.Equal(t, want, got, "%s at %v %v", ExprString(e), vals, known)
		}
	}
}
