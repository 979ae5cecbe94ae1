package runtime_test

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/x448/float16"

	rt "github.com/tessera-ml/tessera/runtime"
)

// These tests need no C compiler.

// handNPY builds a version 1.0 .npy file the way NumPy's np.save does: the
// header dictionary padded with spaces to a multiple of 64 bytes, ending in
// a newline, then the raw data.
func handNPY(dict string, data []byte) []byte {
	pad := 64 - (10+len(dict)+1)%64
	if pad == 64 {
		pad = 0
	}
	hdr := dict + strings.Repeat(" ", pad) + "\n"
	out := append([]byte("\x93NUMPY\x01\x00"), byte(len(hdr)), byte(len(hdr)>>8))
	return append(append(out, hdr...), data...)
}

func le[T any](vals ...T) []byte {
	var b bytes.Buffer
	if err := binary.Write(&b, binary.LittleEndian, vals); err != nil {
		panic(err)
	}
	return b.Bytes()
}

func writeFile(t *testing.T, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "x.npy")
	require.NoError(t, os.WriteFile(p, data, 0o644))
	return p
}

func TestReadNPYNumPyFile(t *testing.T) {
	// Exactly what np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3)) writes.
	file := append([]byte("\x93NUMPY\x01\x00\x76\x00{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"+strings.Repeat(" ", 58)+"\n"),
		le[float32](0, 1, 2, 3, 4, 5)...)
	require.Len(t, file, 128+24)
	x, err := rt.ReadNPY(writeFile(t, file))
	require.NoError(t, err)
	assert.Equal(t, "tensor<2x3xf32>", x.String())
	v, err := x.Float32s()
	require.NoError(t, err)
	assert.Equal(t, []float32{0, 1, 2, 3, 4, 5}, v)
	assert.Equal(t, file, handNPY("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", le[float32](0, 1, 2, 3, 4, 5)), "handNPY matches NumPy's layout")
}

func TestReadNPYHandMade(t *testing.T) {
	cases := []struct {
		descr, shape string
		data         []byte
		want         *rt.Tensor
	}{
		{"<f8", "(3,)", le[float64](1.5, -2, math.Inf(1)), mustSlice(t, []int64{3}, []float64{1.5, -2, math.Inf(1)})},
		{">f4", "(2,)", []byte{0x3f, 0x80, 0, 0, 0xc0, 0, 0, 0}, mustSlice(t, []int64{2}, []float32{1, -2})},
		{"|i1", "(2, 2)", []byte{0xff, 1, 0x80, 0x7f}, mustSlice(t, []int64{2, 2}, []int8{-1, 1, -128, 127})},
		{"<i2", "(1, 1, 2)", le[int16](-300, 300), mustSlice(t, []int64{1, 1, 2}, []int16{-300, 300})},
		{"<i4", "(2,)", le[int32](math.MinInt32, 7), mustSlice(t, []int64{2}, []int32{math.MinInt32, 7})},
		{">i8", "(1,)", []byte{0, 0, 0, 0, 0, 0, 1, 2}, mustSlice(t, []int64{1}, []int64{258})},
		{"|u1", "(3,)", []byte{0, 128, 255}, mustSlice(t, []int64{3}, []uint8{0, 128, 255})},
		{"<u2", "(1,)", le[uint16](65535), mustSlice(t, []int64{1}, []uint16{65535})},
		{"<u4", "(1,)", le[uint32](1 << 31), mustSlice(t, []int64{1}, []uint32{1 << 31})},
		{"<u8", "(1,)", le[uint64](1 << 63), mustSlice(t, []int64{1}, []uint64{1 << 63})},
		{"|b1", "(3,)", []byte{1, 0, 1}, mustSlice(t, []int64{3}, []bool{true, false, true})},
		{"<f4", "()", le[float32](3.25), mustSlice(t, nil, []float32{3.25})},
		{"<f4", "(0, 4)", nil, mustSlice(t, []int64{0, 4}, []float32{})},
		// Fortran order is the same layout for rank 0 and 1.
		{"<i4", "(2,)", le[int32](5, 6), mustSlice(t, []int64{2}, []int32{5, 6})},
	}
	for i, c := range cases {
		t.Run(fmt.Sprintf("%s%s", c.descr, c.shape), func(t *testing.T) {
			fortran := "False"
			if i == len(cases)-1 {
				fortran = "True"
			}
			dict := fmt.Sprintf("{'descr': '%s', 'fortran_order': %s, 'shape': %s, }", c.descr, fortran, c.shape)
			got, err := rt.ReadNPY(writeFile(t, handNPY(dict, c.data)))
			require.NoError(t, err)
			assert.Equal(t, c.want.String(), got.String())
			assert.Equal(t, c.want.Bytes(), got.Bytes())
		})
	}
}

func TestReadNPYVersion2(t *testing.T) {
	dict := "{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }\n"
	file := append([]byte("\x93NUMPY\x02\x00"), le[uint32](uint32(len(dict)))...)
	file = append(append(file, dict...), le[int64](-5, 5)...)
	x, err := rt.DecodeNPY(bytes.NewReader(file))
	require.NoError(t, err)
	v, err := x.Int64s()
	require.NoError(t, err)
	assert.Equal(t, []int64{-5, 5}, v)
}

func TestReadNPYErrors(t *testing.T) {
	good := handNPY("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", le[float32](0, 1, 2, 3, 4, 5))
	v3 := bytes.Clone(good)
	v3[6] = 3
	cases := []struct {
		name string
		file []byte
		msg  string
	}{
		{"empty", nil, "not a .npy file"},
		{"short magic", []byte("\x93NUM"), "truncated file: 4 bytes"},
		{"bad magic", []byte("PK\x03\x04 this is a zip"), "not a .npy file"},
		{"no version", []byte("\x93NUMPY\x01"), "no version"},
		{"no header length", []byte("\x93NUMPY\x01\x00\x10"), "no header length"},
		{"truncated header", good[:60], "truncated file: header ends at byte 128, file has 60"},
		{"truncated data", good[:len(good)-3], "truncated file: tensor<2x3xf32> needs 24 data bytes, file has 21"},
		{"trailing bytes", append(bytes.Clone(good), 0, 0), "2 trailing bytes after the 24 data bytes"},
		{"version 3", v3, "unsupported .npy format version 3.0"},
		{"huge v2 header", append([]byte("\x93NUMPY\x02\x00\xff\xff\xff\x7f"), "{}\n"...), "truncated file: header of 2147483647 bytes"},
		{"no newline", append([]byte("\x93NUMPY\x01\x00\x04\x00"), "{  }"...), "malformed header"},
		{"no dict", handNPY("hello", nil), "malformed header"},
		{"float128", handNPY("{'descr': '<f16', 'fortran_order': False, 'shape': (1,), }", make([]byte, 16)), `unsupported dtype "<f16"`},
		{"complex", handNPY("{'descr': '<c8', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)), `unsupported dtype "<c8"`},
		{"string", handNPY("{'descr': '|S3', 'fortran_order': False, 'shape': (1,), }", []byte("abc")), `unsupported dtype "|S3"`},
		{"object", handNPY("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", make([]byte, 8)), `unsupported dtype "|O"`},
		{"structured", handNPY("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", make([]byte, 4)), "malformed header"},
		{"fortran 2-D", handNPY("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", make([]byte, 24)), "Fortran (column-major) order; only C order is supported"},
		{"negative dim", handNPY("{'descr': '<f4', 'fortran_order': False, 'shape': (-1, 3), }", nil), "dimension 0 is negative"},
		{"bad dim", handNPY("{'descr': '<f4', 'fortran_order': False, 'shape': (x, 3), }", nil), "malformed"},
		{"no trailing comma", handNPY("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3)}", make([]byte, 24)), "unsupported header layout"},
		{"keys reordered", handNPY("{'shape': (2, 3), 'fortran_order': False, 'descr': '<f4', }", make([]byte, 24)), "malformed header"},
		{"bad order value", handNPY("{'descr': '<f4', 'fortran_order': 0, 'shape': (2, 3), }", make([]byte, 24)), "fortran_order"},
		{"overflowing shape", handNPY("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", nil), "overflows"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := writeFile(t, c.file)
			_, err := rt.ReadNPY(p)
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.msg)
			assert.Contains(t, err.Error(), p, "the error names the file")
		})
	}
	_, err := rt.ReadNPY(filepath.Join(t.TempDir(), "missing.npy"))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// TestNPYRoundTrip writes every dtype at several ranks with WriteNPY and
// reads it back; it also parses the written header by hand.
func TestNPYRoundTrip(t *testing.T) {
	shapes := [][]int64{nil, {0}, {5}, {2, 3}, {2, 1, 3, 2}}
	for _, dt := range allDTypes {
		if dt == rt.BFloat16 {
			continue // no NumPy dtype; see TestWriteNPYLimits
		}
		for _, shape := range shapes {
			if dt == rt.Uint32 && len(shape) == 0 {
				continue // npyio cannot write a ui32 scalar; see TestWriteNPYLimits
			}
			name := rt.TensorSpec{DType: dt, Shape: shape}.String()
			t.Run(name, func(t *testing.T) {
				x := mustNew(t, dt, shape)
				b := x.Bytes()
				for i := range b {
					b[i] = byte(i*37 + 11)
					if dt == rt.Bool {
						b[i] = byte(i % 3 % 2)
					}
				}
				p := filepath.Join(t.TempDir(), "t.npy")
				require.NoError(t, rt.WriteNPY(p, x))

				file, err := os.ReadFile(p)
				require.NoError(t, err)
				checkWrittenHeader(t, file, dt, shape, b)

				y, err := rt.ReadNPY(p)
				require.NoError(t, err)
				assert.Equal(t, x.String(), y.String())
				assert.Equal(t, b, y.Bytes())

				var buf bytes.Buffer
				require.NoError(t, rt.EncodeNPY(&buf, x))
				assert.Equal(t, file, buf.Bytes(), "EncodeNPY writes what WriteNPY does")
			})
		}
	}
}

// checkWrittenHeader parses a .npy file written by WriteNPY independently
// of npyio: version 2.0, NumPy's descr and shape spelling, C order, then
// the raw little-endian data.
func checkWrittenHeader(t *testing.T, file []byte, dt rt.DType, shape []int64, data []byte) {
	t.Helper()
	require.True(t, bytes.HasPrefix(file, []byte("\x93NUMPY\x02\x00")), "magic and version 2.0")
	n := int(binary.LittleEndian.Uint32(file[8:12]))
	hdr := string(file[12 : 12+n])
	assert.True(t, strings.HasSuffix(hdr, "\n"))
	codes := map[rt.DType]string{rt.Float32: "<f4", rt.Float64: "<f8", rt.Int8: "|i1", rt.Int16: "<i2", rt.Int32: "<i4", rt.Int64: "<i8",
		rt.Uint8: "|u1", rt.Uint16: "<u2", rt.Uint32: "<u4", rt.Uint64: "<u8", rt.Bool: "|b1", rt.Float16: "<f2"}
	var dims []string
	for _, d := range shape {
		dims = append(dims, fmt.Sprint(d))
	}
	tuple := "(" + strings.Join(dims, ", ") + ")"
	if len(shape) == 1 {
		tuple = "(" + dims[0] + ",)"
	}
	assert.Equal(t, fmt.Sprintf("{'descr': '%s', 'fortran_order': False, 'shape': %s, }", codes[dt], tuple), strings.TrimRight(hdr, " \n"))
	assert.Equal(t, data, file[12+n:])
}

// TestReadNPYFloat16 reads float16 .npy files as NumPy writes them
// (np.array([1, -2.5, 65504, 2**-24], np.float16)), in both byte orders.
func TestReadNPYFloat16(t *testing.T) {
	want := []float64{1, -2.5, 65504, math.Ldexp(1, -24)}
	bits := []uint16{0x3C00, 0xC100, 0x7BFF, 0x0001}
	for _, order := range []string{"<", ">"} {
		var data []byte
		for _, b := range bits {
			if order == "<" {
				data = binary.LittleEndian.AppendUint16(data, b)
			} else {
				data = binary.BigEndian.AppendUint16(data, b)
			}
		}
		p := writeFile(t, handNPY("{'descr': '"+order+"f2', 'fortran_order': False, 'shape': (4,), }", data))
		x, err := rt.ReadNPY(p)
		require.NoError(t, err, order)
		assert.Equal(t, "tensor<4xf16>", x.String())
		assert.Equal(t, want, x.Float64Values(), order)
		h, err := rt.View[float16.Float16](x)
		require.NoError(t, err)
		assert.Equal(t, float16.Float16(0xC100), h[1])
	}
}

func TestWriteNPYLimits(t *testing.T) {
	dir := t.TempDir()
	err := rt.WriteNPY(filepath.Join(dir, "a.npy"), mustNew(t, rt.Float32, []int64{2, 0}))
	assert.ErrorContains(t, err, "cannot write tensor<2x0xf32>")
	err = rt.WriteNPY(filepath.Join(dir, "b.npy"), mustNew(t, rt.Uint32, nil))
	assert.ErrorContains(t, err, "cannot write tensor<ui32>")
	assert.ErrorContains(t, rt.WriteNPY(filepath.Join(dir, "c.npy"), nil), "nil tensor")
	err = rt.WriteNPY(filepath.Join(dir, "d.npy"), mustNew(t, rt.BFloat16, []int64{2}))
	assert.ErrorContains(t, err, "cannot write tensor<2xbf16>: NumPy has no bfloat16 dtype")
	assert.NoFileExists(t, filepath.Join(dir, "a.npy"), "nothing is created on a refused write")
	err = rt.WriteNPY(filepath.Join(dir, "no", "such", "dir.npy"), mustNew(t, rt.Float32, []int64{1}))
	assert.ErrorIs(t, err, os.ErrNotExist)
}

// FuzzDecodeNPY checks that no input makes the reader panic, and that what
// it accepts survives a write/read round trip.
func FuzzDecodeNPY(f *testing.F) {
	f.Add(handNPY("{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }", le[float32](0, 1, 2, 3, 4, 5)))
	f.Add(handNPY("{'descr': '|b1', 'fortran_order': False, 'shape': (), }", []byte{1}))
	f.Add(handNPY("{'descr': '>u2', 'fortran_order': True, 'shape': (1,), }", []byte{1, 2}))
	f.Add(handNPY("{'descr': '>f2', 'fortran_order': False, 'shape': (2,), }", []byte{0x3c, 0, 0x7c, 1}))
	f.Add([]byte("\x93NUMPY\x02\x00\x05\x00\x00\x00{}  \n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := rt.DecodeNPY(bytes.NewReader(data))
		if err != nil {
			return
		}
		var buf bytes.Buffer
		if err := rt.EncodeNPY(&buf, x); err != nil {
			return // the documented npyio write limits
		}
		y, err := rt.DecodeNPY(&buf)
		require.NoError(t, err)
		assert.Equal(t, x.String(), y.String())
		assert.Equal(t, x.Bytes(), y.Bytes())
	})
}
