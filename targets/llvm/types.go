package llvm

import (
	"fmt"

	"github.com/llir/llvm/ir"
	"github.com/llir/llvm/ir/constant"
	"github.com/llir/llvm/ir/types"
	"github.com/llir/llvm/ir/value"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// scalarType is the LLVM register type of one lane of t: i1, i8, i16,
// i32, i64 (i64 for index; LLVM integers are signless, so unsigned dtypes
// share them and the operations choose udiv, icmp ult, lshr, zext, uitofp),
// half, float or double. bf16 values are float registers holding values
// that bfloat16 represents (every bf16 operation rounds its float result,
// bf16.go); llir has no bfloat type, so they are stored as i16 bits.
func scalarType(t tir.DType) (types.Type, error) {
	switch t.Kind {
	case tir.Bool:
		return types.I1, nil
	case tir.I8, tir.UI8:
		return types.I8, nil
	case tir.I16, tir.UI16:
		return types.I16, nil
	case tir.I32, tir.UI32:
		return types.I32, nil
	case tir.I64, tir.UI64, tir.Index:
		return types.I64, nil
	case tir.F16:
		return types.Half, nil
	case tir.F32, tir.BF16:
		return types.Float, nil
	case tir.F64:
		return types.Double, nil
	}
	return nil, fmt.Errorf("invalid dtype %v", t)
}

// regType is the LLVM type of a value of dtype t (a vector type when
// t.Lanes > 1).
func regType(t tir.DType) (types.Type, error) {
	s, err := scalarType(t)
	if err != nil {
		return nil, err
	}
	if t.Lanes > 1 {
		return types.NewVector(uint64(t.Lanes), s), nil
	}
	return s, nil
}

// storageType is the in-memory element type of a buffer of dtype t: the
// register type, except i1, which is stored as one byte (i8) per element
// so that buffers of booleans are byte arrays in the C ABI, and bf16,
// stored as its 16 bits (i16).
func storageType(t tir.DType) (types.Type, error) {
	var s types.Type
	switch t.Kind {
	case tir.Bool:
		s = types.I8
	case tir.BF16:
		s = types.I16
	default:
		return regType(t)
	}
	if t.Lanes > 1 {
		return types.NewVector(uint64(t.Lanes), s), nil
	}
	return s, nil
}

// lanesOf is the number of lanes of an LLVM value (1 for scalars).
func lanesOf(v value.Value) int {
	if vt, ok := v.Type().(*types.VectorType); ok {
		return int(vt.Len)
	}
	return 1
}

// elemOf is the lane type of t (t itself for scalars).
func elemOf(t types.Type) types.Type {
	if vt, ok := t.(*types.VectorType); ok {
		return vt.ElemType
	}
	return t
}

// withLanes returns the vector type of n lanes of t's lane type (the lane
// type itself when n == 1).
func withLanes(t types.Type, n int) types.Type {
	e := elemOf(t)
	if n == 1 {
		return e
	}
	return types.NewVector(uint64(n), e)
}

// constOf makes the constant c of type t, splatted when t is a vector.
// Integer types take int64(c), float types c.
func constOf(t types.Type, c float64) constant.Constant {
	var s constant.Constant
	switch e := elemOf(t).(type) {
	case *types.IntType:
		s = constant.NewInt(e, int64(c))
	case *types.FloatType:
		s = constant.NewFloat(e, c)
	default:
		panic(fmt.Sprintf("cpu: constOf on %v", t))
	}
	return splatConst(s, t)
}

func splatConst(s constant.Constant, t types.Type) constant.Constant {
	vt, ok := t.(*types.VectorType)
	if !ok {
		return s
	}
	elems := make([]constant.Constant, vt.Len)
	for i := range elems {
		elems[i] = s
	}
	return constant.NewVector(vt, elems...)
}

// bitsOf is the bit width of an integer or float lane type.
func bitsOf(t types.Type) int {
	switch e := elemOf(t).(type) {
	case *types.IntType:
		return int(e.BitSize)
	case *types.FloatType:
		switch e.Kind {
		case types.FloatKindHalf:
			return 16
		case types.FloatKindFloat:
			return 32
		case types.FloatKindDouble:
			return 64
		}
	}
	return 0
}

var i8ptr = types.NewPointer(types.I8)

// declare returns the module's declaration of an external function,
// creating it on first use.
func (m *mgen) declare(name string, ret types.Type, params ...types.Type) *ir.Func {
	if f, ok := m.decls[name]; ok {
		return f
	}
	ps := make([]*ir.Param, len(params))
	for i, p := range params {
		ps[i] = ir.NewParam("", p)
	}
	f := m.m.NewFunc(name, ret, ps...)
	m.decls[name] = f
	return f
}

// llvmSuffix is the overload suffix of an LLVM intrinsic for type t
// (f32, v16f32, i64, ...).
func llvmSuffix(t types.Type) string {
	e := elemOf(t)
	var s string
	switch x := e.(type) {
	case *types.IntType:
		s = fmt.Sprintf("i%d", x.BitSize)
	case *types.FloatType:
		s = fmt.Sprintf("f%d", bitsOf(x))
	}
	if vt, ok := t.(*types.VectorType); ok {
		return fmt.Sprintf("v%d%s", vt.Len, s)
	}
	return s
}
