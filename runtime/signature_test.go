package runtime_test

import (
	"bytes"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	rt "github.com/tessera-ml/tessera/runtime"
)

func exampleSignature() rt.Signature {
	return rt.Signature{Target: "cpu", MCPU: "native", VectorBits: 256, Threads: 2, Prefix: "m", Entries: []rt.EntrySignature{{
		Func: "main", Symbol: "m_main",
		Inputs:  []rt.TensorSpec{{Name: "arg0", DType: rt.Float32, Shape: []int64{2, 3}}, {Name: "k", DType: rt.Int64}},
		Outputs: []rt.TensorSpec{{Name: "out0", DType: rt.Bool, Shape: []int64{0, 4}}},
	}}}
}

// section is a signature as the section holds it: the document and NUL.
func section(t *testing.T, s rt.Signature) []byte {
	t.Helper()
	doc, err := rt.EncodeSignature(s)
	require.NoError(t, err)
	return append(doc, 0)
}

func TestSignatureRoundTrip(t *testing.T) {
	want := exampleSignature()
	data := section(t, want)
	assert.True(t, bytes.HasPrefix(data, []byte(`{"version":1,"target":"cpu"`)), "%s", data)
	got, err := rt.DecodeSignature(append(data, 0, 0, 0)) // alignment padding
	require.NoError(t, err)
	assert.Equal(t, want, *got)
	e, ok := got.Entry("main")
	require.True(t, ok)
	assert.Equal(t, "m_main", e.Symbol)
	_, ok = got.Entry("other")
	assert.False(t, ok)
}

func TestDecodeSignatureErrors(t *testing.T) {
	good := string(section(t, exampleSignature()))
	for _, c := range []struct{ data, want string }{
		{"", "no terminating NUL byte"},
		{"\x00", "the section is empty"},
		{good[:40] + "\x00", "corrupted signature: unexpected end of JSON input"},
		{strings.TrimSuffix(good, "\x00"), "no terminating NUL byte"},
		{good + good, "more than one document"},
		{strings.Replace(good, `"version":1`, `"version":7`, 1), "signature format version 7, but this tessera reads version 1: recompile the model"},
		{strings.Replace(good, `"version":1,`, ``, 1), `no "version" field`},
		{strings.Replace(good, `"shape":[2,3]`, `"shapf":[2,3]`, 1), `unknown field "shapf"`},
		{strings.Replace(good, `,"shape":[2,3]`, ``, 1), `entry 0 input 0: no "shape" field`},
		{strings.Replace(good, `"f32"`, `"f8"`, 1), `unknown dtype "f8"`},
		{strings.Replace(good, `[2,3]`, `[2,-3]`, 1), "negative"},
		{strings.Replace(good, `"m_main"`, `"m main"`, 1), "not a C identifier"},
		{strings.Replace(good, `"target":"cpu"`, `"target":""`, 1), "no target"},
		{strings.Replace(good, "}]}\x00", "}]} {}\x00", 1), "after top-level value"},
	} {
		_, err := rt.DecodeSignature([]byte(c.data))
		if assert.Error(t, err, "%q", c.data) {
			assert.Contains(t, err.Error(), c.want, "%q", c.data)
		}
	}
	many := exampleSignature()
	many.Entries[0].Inputs = make([]rt.TensorSpec, rt.MaxTensors)
	for i := range many.Entries[0].Inputs {
		many.Entries[0].Inputs[i] = rt.TensorSpec{DType: rt.Float32}
	}
	_, err := rt.EncodeSignature(many)
	assert.ErrorContains(t, err, "at most 32 are supported")
}

// signatureC defines a signature in its section, as tessera compile does.
func signatureC(doc []byte) string {
	lit := strings.ReplaceAll(strings.ReplaceAll(string(doc), `\`, `\\`), `"`, `\"`)
	return `__attribute__((section(".tessera.signature"), used)) const char m_tessera_signature[] = "` + lit + `";
int m_main(void) { return 0; }
`
}

func TestReadSignature(t *testing.T) {
	dir := t.TempDir()
	doc, err := rt.EncodeSignature(exampleSignature())
	require.NoError(t, err)
	so := buildSO(t, dir, "sig", signatureC(doc))
	got, err := rt.ReadSignature(so)
	require.NoError(t, err)
	assert.Equal(t, exampleSignature(), *got)

	plain := buildSO(t, dir, "plain", "int f(void) { return 1; }\n")
	_, err = rt.ReadSignature(plain)
	assert.ErrorIs(t, err, rt.ErrNoSignature)

	obj := filepath.Join(dir, "sig.o")
	out, err := exec.Command(findCC(), "-c", "-o", obj, filepath.Join(dir, "sig.c")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	_, err = rt.ReadSignature(obj)
	assert.ErrorContains(t, err, "a relocatable object (ELF ET_REL), not a shared object")

	data, err := os.ReadFile(so)
	require.NoError(t, err)
	arm := filepath.Join(dir, "arm.so")
	binary.LittleEndian.PutUint16(data[18:], 183) // e_machine = EM_AARCH64
	require.NoError(t, os.WriteFile(arm, data, 0o644))
	_, err = rt.ReadSignature(arm)
	assert.ErrorContains(t, err, "built for another architecture (EM_AARCH64)")

	for name, content := range map[string]string{"text.so": "hello, this is not an ELF file at all, is it?", "short.so": "\x7fEL"} {
		p := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(p, []byte(content), 0o644))
		_, err = rt.ReadSignature(p)
		assert.ErrorContains(t, err, "not an ELF shared object", name)
	}
	_, err = rt.ReadSignature(filepath.Join(dir, "missing.so"))
	assert.ErrorContains(t, err, "cannot read it: no such file or directory")
}

// FuzzDecodeSignature: no input makes the decoder panic, and what it
// accepts encodes back to a signature that decodes to the same value.
func FuzzDecodeSignature(f *testing.F) {
	doc, err := rt.EncodeSignature(exampleSignature())
	require.NoError(f, err)
	f.Add(append(doc, 0))
	f.Add(append(doc[:len(doc)/2], 0))
	f.Add([]byte(`{"version":2}` + "\x00"))
	f.Add([]byte(`{"version":1,"target":"cpu","mcpu":"","vector_bits":0,"threads":0,"strict_fp":true,"prefix":"","entries":[]}` + "\x00\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := rt.DecodeSignature(data)
		if err != nil {
			return
		}
		doc, err := rt.EncodeSignature(*s)
		require.NoError(t, err)
		again, err := rt.DecodeSignature(append(doc, 0))
		require.NoError(t, err)
		assert.Equal(t, s, again)
	})
}
