package tensorir

import (
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestValueRangeOf: clamps, selects and casts are followed exactly,
// integer arithmetic by intervals until it could wrap, float arithmetic
// not at all.
func TestValueRangeOf(t *testing.T) {
	i32, ui8, f32 := DType{Kind: I32, Lanes: 1}, DType{Kind: UI8, Lanes: 1}, DType{Kind: F32, Lanes: 1}
	x := &BufferLoad{Buffer: NewBuffer("x", f32, 4), Indices: []Expr{Int(0)}}
	n := &BufferLoad{Buffer: NewBuffer("n", i32, 4), Indices: []Expr{Int(0)}}
	unknown := func(ld *BufferLoad) ValueRange { return TypeRange(ld.Buffer.DType) }
	clamp := func(e, lo, hi Expr) Expr { return &Binary{Op: OpMin, A: &Binary{Op: OpMax, A: e, B: lo}, B: hi} }
	fl := func(v float64) Expr { return &FloatImm{Type: f32, Value: v} }
	in := func(v int64) Expr { return &IntImm{Type: i32, Value: v} }
	inf := math.Inf(1)
	for _, c := range []struct {
		name string
		e    Expr
		want ValueRange
	}{
		{"float clamp then cast", &Cast{Type: ui8, X: clamp(&Binary{Op: OpDiv, A: x, B: fl(0.5)}, fl(0), fl(127))}, ValueRange{0, 127}},
		{"truncation", &Cast{Type: ui8, X: clamp(x, fl(0.5), fl(99.9))}, ValueRange{0, 99}},
		{"int clamp", &Cast{Type: ui8, X: clamp(n, in(3), in(200))}, ValueRange{3, 200}},
		{"cast that wraps", &Cast{Type: ui8, X: clamp(n, in(-1), in(200))}, ValueRange{0, 255}},
		{"select", &Select{Cond: &Binary{Op: OpLT, A: n, B: in(0)}, T: in(7), F: clamp(n, in(0), in(5))}, ValueRange{0, 7}},
		{"add", &Binary{Op: OpAdd, A: clamp(n, in(0), in(5)), B: in(10)}, ValueRange{10, 15}},
		{"mul", &Binary{Op: OpMul, A: clamp(n, in(-2), in(5)), B: in(-3)}, ValueRange{-15, 6}},
		{"add that may wrap", &Binary{Op: OpAdd, A: n, B: in(1)}, TypeRange(i32)},
		{"float arithmetic", &Binary{Op: OpAdd, A: clamp(x, fl(0), fl(1)), B: fl(1)}, ValueRange{-inf, inf}},
		{"shift", &Binary{Op: OpShr, A: clamp(n, in(0), in(5)), B: in(1)}, TypeRange(i32)},
		{"small integers to float", &Cast{Type: f32, X: clamp(n, in(-3), in(200))}, ValueRange{-3, 200}},
	} {
		assert.Equal(t, c.want, ValueRangeOf(c.e, unknown), c.name)
	}
	// Rounding to f32 may move a bound beyond it: 2^24 + 3 rounds to 2^24 + 4.
	r := ValueRangeOf(&Cast{Type: f32, X: clamp(n, in(0), in(1<<24+3))}, unknown)
	assert.GreaterOrEqual(t, r.Hi, float64(1<<24+4))
	assert.Equal(t, 0.0, r.Lo)
	bf := ValueRangeOf(&Cast{Type: DType{Kind: BF16, Lanes: 1}, X: clamp(x, fl(0.5), fl(126.9))}, unknown)
	assert.GreaterOrEqual(t, bf.Hi, 127.0, "126.9 rounds to 127 in bf16")
	assert.LessOrEqual(t, bf.Lo, 0.5)
}

// TestStoredRanges: a buffer's range is the union of what is stored into
// it; one whose stores read itself (an accumulator) gets its dtype's.
func TestStoredRanges(t *testing.T) {
	mod, err := ParseString("r.tir", `
tir.func @f(%in0: buffer<4xi32>, out %out0: buffer<4xi32>) {
  tir.allocate %a: buffer<4xi32, "local"> {
    tir.allocate %s: buffer<1xi32, "local"> {
      tir.for %i = 0 to 4 {
        %a[%i] = min(%in0[%i], 9 : i32)
      }
      %s[0] = 0 : i32
      tir.for %i = 0 to 4 {
        %s[0] = %s[0] + %a[%i]
      }
      tir.for %i = 0 to 4 {
        %out0[%i] = select(%in0[%i] > 0 : i32, max(%a[%i], -1 : i32), 20 : i32)
      }
    }
  }
}`)
	if err != nil {
		t.Fatal(err)
	}
	f := mod.Funcs[0]
	in0 := f.Params[0].Buffer
	sr := NewStoredRanges(f.Body, map[*Buffer]ValueRange{in0: {-5, 50}})
	bufs := map[string]*Buffer{}
	VisitStmt(f.Body, func(s Stmt) bool {
		if x, ok := s.(*BufferStore); ok {
			bufs[x.Buffer.Name] = x.Buffer
		}
		return true
	})
	assert.Equal(t, ValueRange{-5, 9}, sr.Of(bufs["a"]))
	assert.Equal(t, TypeRange(in0.DType), sr.Of(bufs["s"]))
	assert.Equal(t, ValueRange{-1, 20}, sr.Of(bufs["out0"]))
	assert.Equal(t, ValueRange{-5, 50}, sr.Of(in0))
}
