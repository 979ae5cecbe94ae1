package runtime

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/sbinet/npyio/npy"
)

// .npy files are read and written with github.com/sbinet/npyio. This file
// checks what npyio does not (header bounds, truncation, shapes, dtypes)
// before handing it data, so malformed input yields an error, never a
// panic.

// npyDTypes maps NumPy type codes (without byte order) to DTypes.
var npyDTypes = map[string]DType{}

func init() {
	for dt := Float32; dt < numDTypes; dt++ {
		if code := dtypeInfo[dt].npy; code != "" {
			npyDTypes[code] = dt
		}
	}
}

// ReadNPY reads a NumPy .npy file (format versions 1.0 and 2.0) into a new
// Alignment-aligned tensor. Supported element types are f2, f4, f8, i1,
// i2, i4, i8, u1, u2, u4, u8 and b1, in either byte order (converted to
// native; npyio decodes all but f2, whose 16-bit patterns are copied). It
// returns an error naming the file for a missing file, a file that is not
// .npy, a truncated file or one with trailing bytes, an unsupported dtype
// (complex, strings, objects, structured), and a Fortran-order
// (column-major) array of rank 2 or more.
func ReadNPY(path string) (*Tensor, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("runtime: read npy: %w", err)
	}
	t, err := decodeNPY(data)
	if err != nil {
		return nil, fmt.Errorf("runtime: read npy %s: %w", path, err)
	}
	return t, nil
}

// DecodeNPY is ReadNPY on the bytes of r, read to EOF.
func DecodeNPY(r io.Reader) (*Tensor, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("runtime: read npy: %w", err)
	}
	t, err := decodeNPY(data)
	if err != nil {
		return nil, fmt.Errorf("runtime: read npy: %w", err)
	}
	return t, nil
}

// npyHeaderLen checks the fixed preamble and returns the offset of the
// first data byte.
func npyHeaderLen(data []byte) (int, error) {
	if len(data) == 0 {
		return 0, fmt.Errorf("empty file, not a .npy file")
	}
	if len(data) < len(npy.Magic) || !bytes.Equal(data[:len(npy.Magic)], npy.Magic[:]) {
		if len(data) < len(npy.Magic) && bytes.HasPrefix(npy.Magic[:], data) {
			return 0, fmt.Errorf("truncated file: %d bytes, shorter than the magic string", len(data))
		}
		return 0, fmt.Errorf("not a .npy file (missing the \\x93NUMPY magic string)")
	}
	if len(data) < 8 {
		return 0, fmt.Errorf("truncated file: %d bytes, no version", len(data))
	}
	major, minor := data[6], data[7]
	var start int
	switch major {
	case 1:
		if len(data) < 10 {
			return 0, fmt.Errorf("truncated file: %d bytes, no header length", len(data))
		}
		start = 10 + int(binary.LittleEndian.Uint16(data[8:10]))
	case 2:
		if len(data) < 12 {
			return 0, fmt.Errorf("truncated file: %d bytes, no header length", len(data))
		}
		n := int64(binary.LittleEndian.Uint32(data[8:12]))
		if n > int64(len(data)) {
			return 0, fmt.Errorf("truncated file: header of %d bytes, file of %d", n, len(data))
		}
		start = 12 + int(n)
	default:
		return 0, fmt.Errorf("unsupported .npy format version %d.%d (want 1.0 or 2.0)", major, minor)
	}
	if start > len(data) {
		return 0, fmt.Errorf("truncated file: header ends at byte %d, file has %d", start, len(data))
	}
	hdr := data[:start]
	if !bytes.Contains(hdr, []byte{'\n'}) || !bytes.Contains(hdr, []byte{'}'}) {
		return 0, fmt.Errorf("malformed header %q", hdr[min(len(hdr), 10):])
	}
	return start, nil
}

// readNPYHeader parses the header with npyio, turning a panic on malformed
// input into an error.
func readNPYHeader(r io.Reader) (rd *npy.Reader, err error) {
	defer func() {
		if p := recover(); p != nil {
			rd, err = nil, fmt.Errorf("malformed header (%v)", p)
		}
	}()
	rd, err = npy.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("malformed header: %w", err)
	}
	return rd, nil
}

func decodeNPY(data []byte) (*Tensor, error) {
	start, err := npyHeaderLen(data)
	if err != nil {
		return nil, err
	}
	br := bytes.NewReader(data)
	rd, err := readNPYHeader(br)
	if err != nil {
		return nil, err
	}
	if int64(br.Len()) != int64(len(data)-start) {
		return nil, fmt.Errorf("malformed header: npyio stopped at byte %d, header ends at %d", len(data)-br.Len(), start)
	}
	descr := rd.Header.Descr
	if err := crossCheckHeader(data[:start], rd.Header); err != nil {
		return nil, err
	}
	dt, err := npyDType(descr.Type)
	if err != nil {
		return nil, err
	}
	shape := make([]int64, len(descr.Shape))
	for i, d := range descr.Shape {
		shape[i] = int64(d)
	}
	if descr.Fortran && len(shape) > 1 {
		return nil, fmt.Errorf("array %s is in Fortran (column-major) order; only C order is supported (save np.ascontiguousarray(a))", typeString(dt, shape))
	}
	n, err := byteSize(dt, shape)
	if err != nil {
		return nil, err
	}
	if rest := br.Len(); rest != n {
		if rest < n {
			return nil, fmt.Errorf("truncated file: %s needs %d data bytes, file has %d", typeString(dt, shape), n, rest)
		}
		return nil, fmt.Errorf("%d trailing bytes after the %d data bytes of %s", rest-n, n, typeString(dt, shape))
	}
	t, err := NewTensor(dt, shape)
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return t, nil
	}
	switch dt {
	case Float16:
		// npyio has no float16: the data are 16-bit patterns.
		raw := data[len(data)-n:]
		big := strings.HasPrefix(descr.Type, ">")
		for i := 0; i < n; i += 2 {
			if big {
				binary.LittleEndian.PutUint16(t.data[i:], binary.BigEndian.Uint16(raw[i:]))
			} else {
				copy(t.data[i:i+2], raw[i:i+2])
			}
		}
	case Float32:
		err = readInto[float32](rd, t)
	case Float64:
		err = readInto[float64](rd, t)
	case Int8:
		err = readInto[int8](rd, t)
	case Int16:
		err = readInto[int16](rd, t)
	case Int32:
		err = readInto[int32](rd, t)
	case Int64:
		err = readInto[int64](rd, t)
	case Uint8:
		err = readInto[uint8](rd, t)
	case Uint16:
		err = readInto[uint16](rd, t)
	case Uint32:
		err = readInto[uint32](rd, t)
	case Uint64:
		err = readInto[uint64](rd, t)
	case Bool:
		err = readInto[bool](rd, t)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

var (
	reDescr   = regexp.MustCompile(`'descr'\s*:\s*'([^']*)'`)
	reFortran = regexp.MustCompile(`'fortran_order'\s*:\s*(True|False)`)
	reShape   = regexp.MustCompile(`'shape'\s*:\s*\(([^)]*)\)`)
)

// crossCheckHeader re-reads descr, fortran_order and shape from the header
// dictionary and rejects the file when npyio's positional parser (which
// assumes NumPy's exact key order and spacing) read something else.
func crossCheckHeader(hdr []byte, h npy.Header) error {
	d, f, s := reDescr.FindSubmatch(hdr), reFortran.FindSubmatch(hdr), reShape.FindSubmatch(hdr)
	if d == nil || f == nil || s == nil {
		return fmt.Errorf("malformed header %q: want 'descr', 'fortran_order' and 'shape' keys", bytes.TrimSpace(hdr[min(len(hdr), 10):]))
	}
	var shape []int
	for _, tok := range strings.Split(string(s[1]), ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			continue
		}
		n, err := strconv.Atoi(tok)
		if err != nil {
			return fmt.Errorf("malformed shape (%s) in header", s[1])
		}
		shape = append(shape, n)
	}
	if string(d[1]) != h.Descr.Type || (string(f[1]) == "True") != h.Descr.Fortran || !slices.Equal(shape, h.Descr.Shape) {
		return fmt.Errorf("unsupported header layout %q (npyio read descr %q, fortran_order %v, shape %v)",
			bytes.TrimSpace(hdr[min(len(hdr), 10):]), h.Descr.Type, h.Descr.Fortran, h.Descr.Shape)
	}
	return nil
}

// npyDType maps a header descr such as "<f4" or "|b1" to a DType.
func npyDType(descr string) (DType, error) {
	code := strings.TrimLeft(descr, "<>|")
	if dt, ok := npyDTypes[code]; ok && len(descr)-len(code) <= 1 {
		return dt, nil
	}
	return InvalidDType, fmt.Errorf("unsupported dtype %q (supported: f2, f4, f8, i1, i2, i4, i8, u1, u2, u4, u8, b1)", descr)
}

// readInto decodes the data of rd into t's memory with npyio.
func readInto[T Scalar](rd *npy.Reader, t *Tensor) error {
	v, err := View[T](t)
	if err != nil {
		return err
	}
	if err := rd.Read(&v); err != nil {
		return fmt.Errorf("decode data: %w", err)
	}
	if len(v) != t.NumElements() {
		return fmt.Errorf("decode data: got %d elements, want %d", len(v), t.NumElements())
	}
	return nil
}

// WriteNPY writes t to path as a NumPy .npy file (format 2.0, C order,
// little-endian) with npyio, replacing any existing file. Besides I/O
// errors it fails for a nil tensor and for two shapes npyio v0.6.0 cannot
// express: a tensor with zero elements and rank 2 or more, and a rank-0
// ui32 tensor.
func WriteNPY(path string, t *Tensor) (err error) {
	if err := checkWritable(t); err != nil {
		return fmt.Errorf("runtime: write npy %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("runtime: write npy: %w", err)
	}
	defer func() {
		if cerr := f.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("runtime: write npy: %w", cerr)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if err := encodeNPY(w, t); err != nil {
		return fmt.Errorf("runtime: write npy %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("runtime: write npy: %w", err)
	}
	return nil
}

// EncodeNPY writes t to w in the .npy format, as WriteNPY does.
func EncodeNPY(w io.Writer, t *Tensor) error {
	if err := checkWritable(t); err != nil {
		return fmt.Errorf("runtime: write npy: %w", err)
	}
	if err := encodeNPY(w, t); err != nil {
		return fmt.Errorf("runtime: write npy: %w", err)
	}
	return nil
}

func checkWritable(t *Tensor) error {
	if t == nil {
		return errors.New("nil tensor")
	}
	if t.NumElements() == 0 && t.Rank() > 1 {
		return fmt.Errorf("cannot write %s: npyio cannot express zero-size arrays of rank 2 or more", t.typeString())
	}
	if t.Rank() == 0 && t.dtype == Uint32 {
		return fmt.Errorf("cannot write %s: npyio cannot write a ui32 scalar", t.typeString())
	}
	if t.dtype == BFloat16 {
		return fmt.Errorf("cannot write %s: NumPy has no bfloat16 dtype (convert to f32 first, e.g. with a cast in the model)", t.typeString())
	}
	return nil
}

// encodeNPY hands npyio a Go value with t's shape, sharing t's memory: a
// scalar for rank 0, a flat slice for rank 1, and a slice of nested arrays
// ([d0][d1]...[dn]T as []([d1]...[dn]T)) otherwise, from which npyio
// derives the shape.
func encodeNPY(w io.Writer, t *Tensor) error {
	var val any
	switch t.dtype {
	case Float16:
		return encodeF16(w, t)
	case Float32:
		val = npyValue[float32](t)
	case Float64:
		val = npyValue[float64](t)
	case Int8:
		val = npyValue[int8](t)
	case Int16:
		val = npyValue[int16](t)
	case Int32:
		val = npyValue[int32](t)
	case Int64:
		val = npyValue[int64](t)
	case Uint8:
		val = npyValue[uint8](t)
	case Uint16:
		val = npyValue[uint16](t)
	case Uint32:
		val = npyValue[uint32](t)
	case Uint64:
		val = npyValue[uint64](t)
	case Bool:
		val = npyValue[bool](t)
	default:
		return fmt.Errorf("invalid dtype %v", t.dtype)
	}
	return npy.Write(w, val)
}

// encodeF16 writes an f16 tensor: npyio (which has no float16) writes its
// bits as uint16, and the header's descr '<u2' becomes '<f2' (same length,
// so the header stays aligned).
func encodeF16(w io.Writer, t *Tensor) error {
	bits := &Tensor{dtype: Uint16, shape: t.shape, data: t.data}
	var buf bytes.Buffer
	if err := npy.Write(&buf, npyValue[uint16](bits)); err != nil {
		return err
	}
	out := buf.Bytes()
	i := bytes.Index(out, []byte("'<u2'"))
	if i < 0 {
		return fmt.Errorf("npyio wrote an unexpected header for a uint16 array")
	}
	copy(out[i:], "'<f2'")
	_, err := w.Write(out)
	return err
}

func npyValue[T Scalar](t *Tensor) any {
	v, _ := View[T](t) // the caller switched on t.dtype
	switch t.Rank() {
	case 0:
		return v[0]
	case 1:
		return v
	}
	// Rows of the nested array type [d1][d2]...[dn]T.
	row := reflect.TypeFor[T]()
	for i := len(t.shape) - 1; i >= 1; i-- {
		row = reflect.ArrayOf(int(t.shape[i]), row)
	}
	rows := int(t.shape[0])
	s := reflect.NewAt(reflect.ArrayOf(rows, row), unsafe.Pointer(&t.data[0])).Elem().Slice(0, rows)
	return s.Interface()
}
