package tensorir_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// TestRelaxSymbolicFactor: a relaxed variable multiplied or divided by a
// fixed symbolic value (a split or fuse of a symbolic extent) has the
// interval of the two ends, ordered by the value's sign when the fixed
// bounds prove it, else by min and max.
func TestRelaxSymbolicFactor(t *testing.T) {
	j := tir.NewVar("j", tir.DIndex)
	n := tir.NewVar("n", tir.DIndex)
	set := func(e tir.Expr, fixed tir.BoundEnv) string {
		r := tir.NewRelaxEnv(fixed)
		r.Relaxed[j] = tir.SymRange{Lo: tir.Int(0), Hi: tir.Int(3)}
		s, ok := r.Set(e)
		require.True(t, ok, tir.ExprString(e))
		return tir.ExprString(s.Lo) + " : " + tir.ExprString(s.Hi)
	}
	unknown := tir.BoundEnv{}
	positive := tir.BoundEnv{n: {Lo: 1, Hi: 100}}
	negative := tir.BoundEnv{n: {Lo: -100, Hi: -1}}
	for _, c := range []struct {
		e     tir.Expr
		fixed tir.BoundEnv
		want  string
	}{
		{tir.Mul(j, n), unknown, "min(0, %n * 3) : max(0, %n * 3)"},
		{tir.Mul(j, n), positive, "0 : %n * 3"},
		{tir.Mul(n, j), negative, "%n * 3 : 0"},
		{tir.Add(tir.Mul(j, tir.Mul(n, tir.Int(2))), tir.Int(1)), positive, "1 : %n * 6 + 1"},
		{tir.FloorDiv(j, n), positive, "floordiv(0, %n) : floordiv(3, %n)"},
		{tir.FloorMod(j, n), positive, "0 : %n - 1"},
		{tir.FloorMod(j, n), unknown, "min(0, %n + 1) : max(0, %n - 1)"},
	} {
		require.Equal(t, c.want, set(c.e, c.fixed), tir.ExprString(c.e))
	}
	// Two relaxed factors are still not bounded.
	r := tir.NewRelaxEnv(tir.BoundEnv{})
	r.Relaxed[j] = tir.SymRange{Lo: tir.Int(0), Hi: tir.Int(3)}
	r.Relaxed[n] = tir.SymRange{Lo: tir.Int(0), Hi: tir.Int(3)}
	_, ok := r.Set(tir.Mul(j, n))
	require.False(t, ok)
}
