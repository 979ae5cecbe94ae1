package graph

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// Requantize equals floor(acc·m / 2^(31+s) + 1/2) + zp, clamped, computed
// with exact rationals, over accumulators of every magnitude.
func TestRequantizeExact(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		acc := r.Int64N(1<<r.IntN(32)) * int64(1-2*r.IntN(2))
		m := int64(1<<30 + r.IntN(1<<30))
		s := int64(MinRequantizeShift + r.IntN(MaxRequantizeShift-MinRequantizeShift+1))
		q := new(big.Rat).SetFrac(new(big.Int).Mul(big.NewInt(acc), big.NewInt(m)), new(big.Int).Lsh(big.NewInt(1), uint(31+s)))
		q.Add(q, big.NewRat(1, 2))
		want := new(big.Int).Div(q.Num(), q.Denom()) // Euclidean: floor for a positive denominator
		w := min(max(want.Int64()+3, -128), 127)
		require.Equal(t, w, Requantize(acc, m, s, 3, -128, 127), "acc %d m %d s %d", acc, m, s)
	}
}

// QuantizedMultiplier's multiplier is normalized and the scale it
// represents is within half a Q31 step of the real scale; scales out of
// the shift range are refused.
func TestQuantizedMultiplier(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 10000 {
		scale := math.Ldexp(0.5+r.Float64()/2, r.IntN(44)-31)
		m, s, ok := QuantizedMultiplier(scale)
		require.True(t, ok, "scale %g", scale)
		require.GreaterOrEqual(t, m, int64(1<<30))
		require.Less(t, m, int64(1<<31))
		got := math.Ldexp(float64(m), -int(31+s))
		require.LessOrEqual(t, math.Abs(got-scale), math.Ldexp(scale, -31), "scale %g: m %d s %d", scale, m, s)
		require.NoError(t, checkRequantizeParams(m, s))
	}
	for _, bad := range []float64{0, -1, math.NaN(), math.Inf(1), math.Ldexp(1, -40), math.Ldexp(1, 20)} {
		_, _, ok := QuantizedMultiplier(bad)
		require.False(t, ok, "scale %g", bad)
	}
	m, s, ok := QuantizedMultiplier(math.Nextafter(1, 0)) // rounds up to 2^31: renormalized
	require.True(t, ok)
	require.Equal(t, [2]int64{1 << 30, -1}, [2]int64{m, s})
}
