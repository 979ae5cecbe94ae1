package tensorir

// Buffer scopes (TVM storage scopes).
const (
	ScopeGlobal = "global" // device or host memory, visible to every thread
	ScopeShared = "shared" // GPU shared memory, per thread block
	ScopeLocal  = "local"  // per-thread registers or stack
)

// Buffer is a multi-dimensional array of scalars (TVM's tir::Buffer).
//
// Shape has one index-typed expression per dimension (constants or
// expressions of scalar function parameters); a zero-dimensional buffer
// holds one element. Strides, when set, give the element stride of each
// dimension (the default is row-major: the last dimension has stride 1).
// ElemOffset, when set, is the element offset of element 0 from the
// start of the underlying allocation; Align is the data alignment in bytes
// (0: the target's default). Buffers are compared by identity.
type Buffer struct {
	Name       string
	DType      DType
	Shape      []Expr
	Strides    []Expr
	ElemOffset Expr
	Align      int64
	Scope      string
	Loc        Location
}

// NewBuffer makes a global row-major buffer with a constant shape.
func NewBuffer(name string, t DType, shape ...int64) *Buffer {
	b := &Buffer{Name: name, DType: t, Scope: ScopeGlobal}
	for _, d := range shape {
		b.Shape = append(b.Shape, Int(d))
	}
	return b
}

// ConstShape returns the shape as integers when every dimension is a
// constant.
func (b *Buffer) ConstShape() ([]int64, bool) {
	out := make([]int64, len(b.Shape))
	for i, d := range b.Shape {
		c, ok := d.(*IntImm)
		if !ok {
			return nil, false
		}
		out[i] = c.Value
	}
	return out, true
}

// Range is the half-open interval [Min, Min+Extent).
type Range struct {
	Min, Extent Expr
}

// RangeOf makes the constant range [lo, lo+extent) of index dtype.
func RangeOf(lo, extent int64) Range { return Range{Int(lo), Int(extent)} }

// BufferRegion is the part of a buffer a block reads or writes: one Range
// per dimension (a single point has extent 1).
type BufferRegion struct {
	Buffer *Buffer
	Region []Range
}
