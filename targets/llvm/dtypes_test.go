package llvm

import (
	"bytes"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Kernels over the unsigned, i16, f16 and bf16 dtypes compiled and run
// against the tensor IR interpreter, bit-exactly: unsigned division,
// remainder, comparisons, min/max, conversions and logical shifts (udiv,
// urem, icmp ult, zext, uitofp, lshr) on values of 2^(bits-1) and more,
// float → every integer dtype saturating at the bounds (clamped in float,
// floatToInt), signed i16 arithmetic shifts, shifts by the width or more,
// f16 arithmetic (f32 then rounded), f64 → f16/bf16 casts rounded once,
// and bf16 arithmetic in float registers. Each loop runs vectorized (37
// iterations: full vectors and a masked tail) and scalar.
const dtypesText = `tir.func @u8(%A: buffer<37xui8>, %B: buffer<37xui8>, out %Q: buffer<37xui8>, out %R: buffer<37xui8>, out %L: buffer<37xi1>, out %M: buffer<37xui8>, out %SL: buffer<37xui8>, out %SR: buffer<37xui8>) {
  tir.for %i = 0 to 37 vectorized {
    %Q[%i] = floordiv(%A[%i], %B[%i])
    %R[%i] = floormod(%A[%i], %B[%i])
    %L[%i] = %A[%i] < %B[%i]
    %M[%i] = max(%A[%i], %B[%i]) - min(%A[%i], %B[%i])
    %SL[%i] = shl(%A[%i], floormod(%B[%i], 11 : ui8))
    %SR[%i] = shr(%A[%i], floormod(%B[%i], 11 : ui8))
  }
}

tir.func @u64(%W: buffer<37xui64>, %X: buffer<37xui64>, %B: buffer<37xui8>, %S: buffer<37xi16>, out %WQ: buffer<37xui64>, out %WR: buffer<37xui64>, out %WF: buffer<37xf64>, out %WL: buffer<37xi1>, out %WS: buffer<37xui64>, out %WZ: buffer<37xi64>, out %SS: buffer<37xi16>) {
  tir.for %i = 0 to 37 vectorized {
    %WQ[%i] = floordiv(%W[%i], %X[%i])
    %WR[%i] = floormod(%W[%i], %X[%i])
    %WF[%i] = cast<f64>(%W[%i])
    %WL[%i] = %W[%i] >= %X[%i]
    %WS[%i] = shr(%W[%i], floormod(%X[%i], 70 : ui64)) + shl(%W[%i], floormod(%X[%i], 67 : ui64))
    %WZ[%i] = cast<i64>(cast<ui32>(%W[%i])) + cast<i64>(cast<ui8>(%X[%i]))
    %SS[%i] = shr(%S[%i], cast<i16>(floormod(%B[%i], 20 : ui8))) + shl(%S[%i], 3 : i16)
  }
}

tir.func @narrow(%D: buffer<37xf64>, %H: buffer<37xf16>, %A: buffer<37xui8>, out %DH: buffer<37xf16>, out %DB: buffer<37xbf16>, out %HH: buffer<37xf16>, out %BB: buffer<37xbf16>, out %HB: buffer<37xbf16>, out %FU: buffer<37xui16>) {
  tir.for %i = 0 to 37 vectorized {
    %DH[%i] = cast<f16>(%D[%i])
    %DB[%i] = cast<bf16>(%D[%i])
    %HH[%i] = %H[%i] * %H[%i] + cast<f16>(%D[%i]) / %H[%i]
    %BB[%i] = cast<bf16>(%D[%i]) * cast<bf16>(%H[%i]) + sqrt(abs(cast<bf16>(%D[%i])))
    %HB[%i] = cast<bf16>(%H[%i]) - cast<bf16>(cast<ui8>(%A[%i]))
    %FU[%i] = cast<ui16>(%D[%i] * 1000.0 : f64)
  }
}

tir.func @tointeger(%F: buffer<37xf32>, %D: buffer<37xf64>, %H: buffer<37xf16>, out %I8: buffer<37xi8>, out %U8: buffer<37xui8>, out %I16: buffer<37xi16>, out %U16: buffer<37xui16>, out %I32: buffer<37xi32>, out %U32: buffer<37xui32>, out %I64: buffer<37xi64>, out %U64: buffer<37xui64>) {
  tir.for %i = 0 to 37 vectorized {
    %I8[%i] = cast<i8>(%F[%i])
    %U8[%i] = cast<ui8>(%F[%i])
    %I16[%i] = cast<i16>(%F[%i])
    %U16[%i] = cast<ui16>(%F[%i])
    %I32[%i] = cast<i32>(%F[%i])
    %U32[%i] = cast<ui32>(%F[%i])
    %I64[%i] = cast<i64>(%F[%i])
    %U64[%i] = cast<ui64>(%F[%i])
  }
}

tir.func @tointeger2(%F: buffer<37xf32>, %D: buffer<37xf64>, %H: buffer<37xf16>, out %DI8: buffer<37xi8>, out %DI32: buffer<37xi32>, out %DU32: buffer<37xui32>, out %HU8: buffer<37xui8>, out %HI16: buffer<37xi16>, out %HU32: buffer<37xui32>, out %BI8: buffer<37xi8>, out %BI32: buffer<37xi32>) {
  tir.for %i = 0 to 37 vectorized {
    %DI8[%i] = cast<i8>(%D[%i])
    %DI32[%i] = cast<i32>(%D[%i])
    %DU32[%i] = cast<ui32>(%D[%i])
    %HU8[%i] = cast<ui8>(%H[%i])
    %HI16[%i] = cast<i16>(%H[%i])
    %HU32[%i] = cast<ui32>(%H[%i])
    %BI8[%i] = cast<i8>(cast<bf16>(%F[%i]))
    %BI32[%i] = cast<i32>(cast<bf16>(%F[%i]))
  }
}
`

// castEdges are the float inputs of @tointeger: NaN, the infinities and
// the values around every integer dtype's bounds, where float → int
// saturates (rounded to each input's dtype).
var castEdges = []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), -0.5, -0.99, -1, -1.5, 0.99,
	127.5, 127.99, 128, -128.5, -128.99, -129, 255.5, 256, 32767.5, 32768, -32768.9, -32769, 65504, 65535.5, 65536,
	2147483520, 2147483647.5, 2147483648, -2147483648, -2147483904, -2147483648.5, 4294967040, 4294967295.5, 4294967296,
	-9.3e18, 1.9e19, 3e38}

func dtypeArgs(f *tir.PrimFunc, r *rand.Rand) tir.Args {
	args := tir.Args{Arrays: map[string]*tir.Array{}, Ints: map[string]int64{}}
	edges := map[tir.ScalarKind][]int64{
		tir.UI8:  {0, 1, 127, 128, 129, 254, 255},
		tir.UI64: {0, 1, -1, -2, math.MinInt64, math.MaxInt64, 3},
		tir.I16:  {0, 1, -1, math.MinInt16, math.MaxInt16, -7},
	}
	floats := []float64{0, math.Copysign(0, -1), math.Inf(1), math.NaN(), 65504, 70000, 1e-7, 1 + math.Ldexp(1, -11) + math.Ldexp(1, -40), 1 + math.Ldexp(1, -8) - math.Ldexp(1, -40), -2.5, 3e38}
	for _, p := range f.Params {
		shape, _ := p.Buffer.ConstShape()
		a := tir.NewArray(p.Buffer.DType, shape...)
		for i := range a.Ints {
			e := edges[p.Buffer.DType.Kind]
			if i < len(e) {
				a.Ints[i] = e[i]
			} else {
				a.Ints[i] = tir.WrapInt(p.Buffer.DType, int64(r.Uint64()))
			}
			if (p.Buffer.Name == "B" || p.Buffer.Name == "X") && a.Ints[i] == 0 {
				a.Ints[i] = 1 // divisors
			}
		}
		edges := floats
		if strings.HasPrefix(f.Name, "tointeger") {
			edges = castEdges
		}
		for i := range a.Floats {
			v := r.Float64()*8 - 4
			if i < len(edges) {
				v = edges[i]
			}
			a.Floats[i] = tir.RoundFloat(p.Buffer.DType, v)
		}
		args.Arrays[p.Buffer.Name] = a
	}
	return args
}

func TestUnsignedAndNarrowKernels(t *testing.T) {
	for _, vectorized := range []bool{true, false} {
		src := dtypesText
		if !vectorized {
			src = string(bytes.ReplaceAll([]byte(src), []byte(" vectorized {"), []byte(" {")))
		}
		m := parseModule(t, src)
		exportAll(m)
		so, _ := buildShared(t, m, Options{StrictFP: true})
		for _, name := range []string{"u8", "u64", "narrow", "tointeger", "tointeger2"} {
			checkDTypeKernel(t, so, m.Func(name), vectorized)
		}
	}
}

func checkDTypeKernel(t *testing.T, so string, f *tir.PrimFunc, vectorized bool) {
	{
		args := dtypeArgs(f, rand.New(rand.NewSource(5)))
		want := cloneArgs(args)
		require.NoError(t, tir.RunArgs(f, want))
		runShared(t, so, f.Name, f, args)
		for _, p := range f.Params {
			if p.Role != tir.RoleOut {
				continue
			}
			w, g := want.Arrays[p.Buffer.Name], args.Arrays[p.Buffer.Name]
			assert.Equal(t, w.Ints, g.Ints, "%s (vectorized %v)", p.Buffer.Name, vectorized)
			require.Len(t, g.Floats, len(w.Floats))
			for i := range w.Floats {
				assert.Equal(t, math.Float64bits(w.Floats[i]) == math.Float64bits(g.Floats[i]) || math.IsNaN(w.Floats[i]) && math.IsNaN(g.Floats[i]), true,
					"%s[%d] (vectorized %v): got %v, want %v", p.Buffer.Name, i, vectorized, g.Floats[i], w.Floats[i])
			}
		}
	}
}

// The C header names the C type of every dtype.
func TestHeaderDTypes(t *testing.T) {
	m := parseModule(t, dtypesText)
	exportAll(m)
	var h bytes.Buffer
	require.NoError(t, WriteHeader(&h, "d", SignatureOf(m.Func("u64"), false)))
	assert.Contains(t, h.String(), "int32_t d_u64(const uint64_t *in0, const uint64_t *in1, const uint8_t *in2, const int16_t *in3, uint64_t *out0, uint64_t *out1, double *out2, uint8_t *out3, uint64_t *out4, int64_t *out5, int16_t *out6);")
	h.Reset()
	require.NoError(t, WriteHeader(&h, "d", SignatureOf(m.Func("narrow"), false)))
	assert.Contains(t, h.String(), "int32_t d_narrow(const double *in0, const uint16_t *in1, const uint8_t *in2, uint16_t *out0, uint16_t *out1, uint16_t *out2, uint16_t *out3, uint16_t *out4, uint16_t *out5);")
	assert.Contains(t, h.String(), "out1     %DB: bf16 [37], row-major, output")
}
