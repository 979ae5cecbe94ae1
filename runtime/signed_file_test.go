package runtime_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	rt "github.com/tessera-ml/tessera/runtime"
)

// TestSignedFile: a device model file round-trips its signature and
// payload, is recognised as a compiled model, and damaged ones give the
// decoder's errors.
func TestSignedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "m.cuda")
	sig := exampleSignature()
	require.NoError(t, rt.WriteSignedFile(path, sig, []byte("payload\x00bytes")))
	got, payload, err := rt.ReadSignedFile(path)
	require.NoError(t, err)
	assert.Equal(t, &sig, got)
	assert.Equal(t, "payload\x00bytes", string(payload))
	assert.True(t, rt.IsCompiledModel(path))
	s2, err := rt.ReadModelSignature(path)
	require.NoError(t, err)
	assert.Equal(t, &sig, s2)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	assert.Len(t, entries, 1, "no temporary file is left behind")

	text := filepath.Join(dir, "m.mlir")
	require.NoError(t, os.WriteFile(text, []byte("graph.func @main() {}"), 0o644))
	assert.False(t, rt.IsCompiledModel(text))
	assert.False(t, rt.IsCompiledModel(filepath.Join(dir, "missing")))

	_, _, err = rt.DecodeSignedFile([]byte("hello"))
	assert.ErrorContains(t, err, `not a Tessera device model (no "tessera-model" header)`)
	_, _, err = rt.DecodeSignedFile([]byte(rt.SignedFileMagic + `{"version":1`))
	assert.ErrorContains(t, err, "corrupted signature: no terminating NUL byte in the header")
	_, _, err = rt.DecodeSignedFile([]byte(rt.SignedFileMagic + `{"version":7}` + "\x00rest"))
	assert.ErrorContains(t, err, "signature format version 7, but this tessera reads version 1")
	_, err = rt.ReadModelSignature(filepath.Join(dir, "missing"))
	assert.ErrorContains(t, err, "cannot read it")
	require.Error(t, rt.WriteSignedFile(filepath.Join(dir, "nope", "m.cuda"), sig, nil))
}

// FuzzDecodeSignedFile: no input makes the decoder panic, and what it
// accepts re-encodes to the same signature and payload.
func FuzzDecodeSignedFile(f *testing.F) {
	doc, err := rt.EncodeSignature(exampleSignature())
	require.NoError(f, err)
	f.Add([]byte(rt.SignedFileMagic + string(doc) + "\x00payload"))
	f.Add([]byte(rt.SignedFileMagic + string(doc[:len(doc)/2]) + "\x00"))
	f.Add([]byte(rt.SignedFileMagic))
	f.Add([]byte("\x7fELF"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, payload, err := rt.DecodeSignedFile(data)
		if err != nil {
			return
		}
		path := filepath.Join(t.TempDir(), "m")
		require.NoError(t, rt.WriteSignedFile(path, *s, payload))
		s2, p2, err := rt.ReadSignedFile(path)
		require.NoError(t, err)
		assert.Equal(t, s, s2)
		assert.Equal(t, payload, p2)
	})
}
