package graphir

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// denseErr carries the byte offset of an error inside a dense<...> body.
type denseErr struct {
	off int
	err error
}

func (e *denseErr) Error() string { return e.err.Error() }

// parseDenseBody parses the inside of dense<...> for tensor type t: a
// single (splat) element, nested lists matching t's shape exactly, or a
// hex string "0x..." of little-endian element bytes (MLIR's hex form).
func parseDenseBody(body string, t *TensorType) (*DenseElementsAttr, error) {
	s := &denseScanner{src: body, t: t, d: &DenseElementsAttr{Type: t}}
	s.skip()
	if s.pos < len(s.src) && s.src[s.pos] == '"' {
		return s.hexBlob()
	}
	if s.pos < len(s.src) && s.src[s.pos] != '[' {
		if err := s.elem(); err != nil {
			return nil, err
		}
		return s.end()
	}
	if err := s.list(0); err != nil {
		return nil, err
	}
	if s.d.Len() != int(t.NumElements()) {
		return nil, &denseErr{0, fmt.Errorf("dense literal has %d elements but %s has %d", s.d.Len(), t, t.NumElements())}
	}
	return s.end()
}

type denseScanner struct {
	src string
	pos int
	t   *TensorType
	d   *DenseElementsAttr
}

func (s *denseScanner) skip() {
	for s.pos < len(s.src) && strings.IndexByte(" \t\r\n", s.src[s.pos]) >= 0 {
		s.pos++
	}
}

func (s *denseScanner) fail(format string, args ...any) error {
	return &denseErr{s.pos, fmt.Errorf(format, args...)}
}

func (s *denseScanner) end() (*DenseElementsAttr, error) {
	s.skip()
	if s.pos != len(s.src) {
		return nil, s.fail("unexpected %q in dense literal", s.src[s.pos:])
	}
	// An empty literal stores an empty (not nil) slice of the right kind.
	if s.t.Elem.IsFloat() && s.d.Floats == nil && s.d.Raw == nil {
		s.d.Floats = []float64{}
	} else if !s.t.Elem.IsFloat() && s.d.Ints == nil {
		s.d.Ints = []int64{}
	}
	return s.d, nil
}

// list parses a bracketed list at nesting depth dim, checking its length
// against the shape.
func (s *denseScanner) list(dim int) error {
	if dim >= s.t.Rank() && !(dim == 0 && s.t.NumElements() == 0) {
		return s.fail("dense literal nests deeper than the rank %d of %s", s.t.Rank(), s.t)
	}
	s.pos++ // '['
	s.skip()
	n := int64(0)
	if s.pos < len(s.src) && s.src[s.pos] == ']' {
		s.pos++
		if s.t.NumElements() != 0 {
			return s.fail("empty list in dense literal of %s", s.t)
		}
		return nil
	}
	for {
		s.skip()
		if s.pos >= len(s.src) {
			return s.fail("unterminated list in dense literal")
		}
		var err error
		if s.src[s.pos] == '[' {
			err = s.list(dim + 1)
		} else if dim+1 != s.t.Rank() {
			err = s.fail("expected a nested list at depth %d of %s", dim+1, s.t)
		} else {
			err = s.elem()
		}
		if err != nil {
			return err
		}
		n++
		s.skip()
		if s.pos < len(s.src) && s.src[s.pos] == ',' {
			s.pos++
			continue
		}
		if s.pos < len(s.src) && s.src[s.pos] == ']' {
			s.pos++
			break
		}
		return s.fail("expected ',' or ']' in dense literal")
	}
	if n != s.t.Shape[dim] {
		return s.fail("dimension %d of the dense literal has %d elements, but %s needs %d", dim, n, s.t, s.t.Shape[dim])
	}
	return nil
}

func (s *denseScanner) elem() error {
	start := s.pos
	for s.pos < len(s.src) && strings.IndexByte(",] \t\r\n", s.src[s.pos]) < 0 {
		s.pos++
	}
	lit := s.src[start:s.pos]
	if lit == "" {
		return s.fail("expected an element in dense literal")
	}
	el := s.t.Elem
	switch {
	case lit == "true" || lit == "false":
		if el != I1 {
			return &denseErr{start, fmt.Errorf("boolean literal %s for element type %s", lit, el)}
		}
		s.d.Ints = append(s.d.Ints, map[string]int64{"true": 1, "false": 0}[lit])
	case el.IsFloat():
		v, err := parseFloatLit(lit, el)
		if err != nil {
			return &denseErr{start, err}
		}
		s.d.Floats = append(s.d.Floats, v)
	default:
		v, err := parseIntLit(lit, &ScalarType{el})
		if err != nil {
			return &denseErr{start, err}
		}
		s.d.Ints = append(s.d.Ints, v)
	}
	return nil
}

func (s *denseScanner) hexBlob() (*DenseElementsAttr, error) {
	end := strings.IndexByte(s.src[s.pos+1:], '"')
	if end < 0 {
		return nil, s.fail("unterminated hex string in dense literal")
	}
	lit := s.src[s.pos+1 : s.pos+1+end]
	if !strings.HasPrefix(lit, "0x") {
		return nil, s.fail("expected a hex string \"0x...\" in dense literal")
	}
	raw, err := hex.DecodeString(lit[2:])
	if err != nil {
		return nil, s.fail("invalid hex string in dense literal: %v", err)
	}
	s.pos += end + 2
	el := s.t.Elem
	if el == I1 {
		return s.hexBits(raw)
	}
	width := max(1, el.Bits()/8)
	n := len(raw) / width
	if len(raw)%width != 0 || (int64(n) != s.t.NumElements() && n != 1) {
		return nil, s.fail("hex dense literal has %d bytes; %s needs %d (or one element for a splat)", len(raw), s.t, s.t.NumElements()*int64(width))
	}
	if el.IsFloat() {
		s.d.Raw = raw
		return s.end()
	}
	for i := 0; i < n; i++ {
		b := raw[i*width : (i+1)*width]
		switch el {
		case I8:
			s.d.Ints = append(s.d.Ints, int64(int8(b[0])))
		case UI8:
			s.d.Ints = append(s.d.Ints, int64(b[0]))
		case I16:
			s.d.Ints = append(s.d.Ints, int64(int16(binary.LittleEndian.Uint16(b))))
		case UI16:
			s.d.Ints = append(s.d.Ints, int64(binary.LittleEndian.Uint16(b)))
		case I32:
			s.d.Ints = append(s.d.Ints, int64(int32(binary.LittleEndian.Uint32(b))))
		case UI32:
			s.d.Ints = append(s.d.Ints, int64(binary.LittleEndian.Uint32(b)))
		case UI64, I64:
			s.d.Ints = append(s.d.Ints, int64(binary.LittleEndian.Uint64(b)))
		}
	}
	return s.end()
}

// hexBits decodes MLIR's hex form of i1 elements: bits packed LSB first,
// ⌈n/8⌉ bytes, or one byte for a splat (non-zero is true).
func (s *denseScanner) hexBits(raw []byte) (*DenseElementsAttr, error) {
	n := s.t.NumElements()
	switch {
	case len(raw) == 1 && n != 1 && n > 8:
		s.d.Ints = append(s.d.Ints, min(int64(raw[0]), 1))
	case int64(len(raw)) == (n+7)/8:
		for i := int64(0); i < n; i++ {
			s.d.Ints = append(s.d.Ints, int64(raw[i/8]>>(i%8)&1))
		}
	default:
		return nil, s.fail("hex dense literal has %d bytes; %s needs %d (one bit per element) or 1 for a splat", len(raw), s.t, (n+7)/8)
	}
	return s.end()
}

// parseFloatLit parses a float literal (decimal, or hex bit pattern as MLIR
// prints non-finite values) for element type dt.
func parseFloatLit(lit string, dt DType) (float64, error) {
	if strings.HasPrefix(lit, "0x") {
		bits, err := strconv.ParseUint(lit[2:], 16, 64)
		if err != nil {
			return 0, fmt.Errorf("invalid hexadecimal float literal %s", lit)
		}
		switch dt {
		case F64:
			return math.Float64frombits(bits), nil
		case F32:
			if bits > math.MaxUint32 {
				return 0, fmt.Errorf("hexadecimal float literal %s does not fit in %s", lit, dt)
			}
			return float64(math.Float32frombits(uint32(bits))), nil
		case F16:
			if bits > math.MaxUint16 {
				return 0, fmt.Errorf("hexadecimal float literal %s does not fit in %s", lit, dt)
			}
			return F16Value(uint16(bits)), nil
		case BF16:
			if bits > math.MaxUint16 {
				return 0, fmt.Errorf("hexadecimal float literal %s does not fit in %s", lit, dt)
			}
			return float64(BF16ToFloat32(uint16(bits))), nil
		}
	}
	v, err := strconv.ParseFloat(lit, 64)
	if err != nil {
		if ne, ok := err.(*strconv.NumError); ok && ne.Err == strconv.ErrRange {
			return 0, fmt.Errorf("float literal %s is out of range for %s", lit, dt)
		}
		return 0, fmt.Errorf("invalid float literal %s", lit)
	}
	return RoundTo(dt, v), nil
}

// parseIntLit parses a decimal or hex integer literal and checks that it
// fits the integer type t (i1 accepts 0 and 1; index is 64-bit; unsigned
// types take 0 ... 2^bits-1 and no sign). It returns the 64-bit storage
// pattern (IntBits): ui64 values of 2^63 and more are negative int64s.
func parseIntLit(lit string, t Type) (int64, error) {
	dt := I64
	if st, ok := t.(*ScalarType); ok {
		dt = st.DType
		if dt.IsFloat() {
			return 0, fmt.Errorf("integer literal %s for float type %s", lit, t)
		}
	}
	var v int64
	var err error
	switch {
	case strings.HasPrefix(lit, "0x"):
		var u uint64
		u, err = strconv.ParseUint(lit[2:], 16, 64)
		v = int64(u)
	case dt.IsUnsigned():
		if strings.HasPrefix(lit, "-") {
			return 0, fmt.Errorf("negative integer literal %s for unsigned type %s", lit, t)
		}
		var u uint64
		u, err = strconv.ParseUint(lit, 10, 64)
		v = int64(u)
	default:
		v, err = strconv.ParseInt(lit, 10, 64)
	}
	if err != nil {
		if strings.ContainsAny(lit, ".eE") && !strings.HasPrefix(lit, "0x") {
			return 0, fmt.Errorf("floating point literal %s for integer type %s", lit, t)
		}
		return 0, fmt.Errorf("integer literal %s is invalid or out of range for %s", lit, t)
	}
	bits := 64
	if _, ok := t.(*ScalarType); ok {
		bits = dt.Bits()
	}
	switch {
	case bits == 1:
		if v != 0 && v != 1 {
			return 0, fmt.Errorf("integer literal %s out of range for i1", lit)
		}
	case dt.IsUnsigned() && bits < 64:
		if uint64(v) >= uint64(1)<<bits {
			return 0, fmt.Errorf("integer literal %s out of range for %s", lit, t)
		}
	case bits < 64:
		lo, hi := -(int64(1) << (bits - 1)), int64(1)<<(bits-1)-1
		if v < lo || v > hi {
			return 0, fmt.Errorf("integer literal %s out of range for %s", lit, t)
		}
	}
	return v, nil
}
