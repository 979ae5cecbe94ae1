package fp

import (
	"math"
	"testing"
)

// TestFormatRoundTrip encodes values already rounded to each format and
// decodes them back bit for bit (NaN as NaN), through Decode and Load.
func TestFormatRoundTrip(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -2.5, 65504, 1.0 / 1024, math.Inf(1), math.Inf(-1), math.NaN(), 3.0e-8, 1e30}
	for _, f := range []Format{F16, BF16, F32, F64} {
		in := make([]float64, len(vals))
		for i, v := range vals {
			in[i] = f.round(v)
		}
		raw := f.Encode(in)
		if len(raw) != len(in)*f.Size() {
			t.Fatalf("format %d: %d bytes for %d elements", f, len(raw), len(in))
		}
		out := make([]float64, len(in))
		f.Decode(raw, out)
		for i := range in {
			same := math.Float64bits(out[i]) == math.Float64bits(in[i]) || math.IsNaN(out[i]) && math.IsNaN(in[i])
			if !same || math.Float64bits(f.Load(raw, i)) != math.Float64bits(out[i]) {
				t.Errorf("format %d element %d: encoded %v, decoded %v, loaded %v", f, i, in[i], out[i], f.Load(raw, i))
			}
		}
	}
}

// TestEncodeRounds checks that Encode rounds to nearest even: 1 + 2^-11
// is halfway between two binary16 values and rounds down to 1.
func TestEncodeRounds(t *testing.T) {
	raw := F16.Encode([]float64{1 + math.Ldexp(1, -11), 1 + 3*math.Ldexp(1, -11)})
	out := make([]float64, 2)
	F16.Decode(raw, out)
	if out[0] != 1 || out[1] != 1+math.Ldexp(1, -9) {
		t.Errorf("binary16 rounding: got %v", out)
	}
}

// round is the value v takes in format f.
func (f Format) round(v float64) float64 {
	out := make([]float64, 1)
	f.Decode(f.Encode([]float64{v}), out)
	return out[0]
}
