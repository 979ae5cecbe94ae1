package llvm

import (
	"bytes"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

const headerMain = `#include "net.h"
#include <stdio.h>
#include <stdlib.h>

static void *readf(const char *path, size_t n) {
	void *p = malloc(n);
	FILE *f = fopen(path, "rb");
	if (!f || fread(p, 1, n, f) != n) { perror(path); exit(2); }
	fclose(f);
	return p;
}

int main(int argc, char **argv) {
	const float *a = readf(argv[1], 37 * 29 * sizeof(float));
	const float *b = readf(argv[2], 29 * 45 * sizeof(float));
	float *c = malloc(37 * 45 * sizeof(float));
	int32_t rc = net_matmul(a, b, c);
	FILE *f = fopen(argv[3], "wb");
	if (!f || fwrite(c, sizeof(float), 37 * 45, f) != 37 * 45) { perror(argv[3]); return 2; }
	fclose(f);
	return rc;
}
`

// The relocatable object links into a C program through the generated
// header (cc -Wall -Werror checks the prototype) with -lm alone.
func TestObjectHeaderLink(t *testing.T) {
	m := parseModule(t, matmulVecText)
	exportAll(m)
	res, err := Compile(m, Options{Prefix: "net", StrictFP: true})
	require.NoError(t, err)
	verifyLLVM(t, res)
	require.Len(t, res.Entries, 1)
	assert.Equal(t, "net_matmul", res.Entries[0].Symbol)

	dir := t.TempDir()
	require.NoError(t, res.WriteObject(filepath.Join(dir, "net.o")))
	var h bytes.Buffer
	require.NoError(t, WriteHeader(&h, "net", SignatureOf(m.Func("matmul"), res.UsesParallel)))
	header := h.String()
	assert.Contains(t, header, "int32_t net_matmul(const float *in0, const float *in1, float *out0);")
	assert.Contains(t, header, "in0      %A: f32 [37, 29], row-major, input")
	assert.Contains(t, header, "out0     %C: f32 [37, 45], row-major, output")
	assert.Contains(t, header, "libgomp.so.1")
	require.NoError(t, os.WriteFile(filepath.Join(dir, "net.h"), h.Bytes(), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "main.c"), []byte(headerMain), 0o644))
	out, err := exec.Command("cc", "-Wall", "-Werror", "-o", filepath.Join(dir, "prog"), filepath.Join(dir, "main.c"), filepath.Join(dir, "net.o"), "-lm").CombinedOutput()
	require.NoError(t, err, "cc: %s", out)

	f := m.Func("matmul")
	args := randomArgs(f, rand.New(rand.NewSource(21)))
	for _, name := range []string{"A", "B"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".bin"), encode(args.Arrays[name]), 0o644))
	}
	out, err = exec.Command(filepath.Join(dir, "prog"), filepath.Join(dir, "A.bin"), filepath.Join(dir, "B.bin"), filepath.Join(dir, "C.bin")).CombinedOutput()
	require.NoError(t, err, "prog: %s", out)
	want := cloneArgs(args)
	require.NoError(t, tir.RunArgs(f, want))
	got := cloneArgs(args)
	cb, err := os.ReadFile(filepath.Join(dir, "C.bin"))
	require.NoError(t, err)
	decode(got.Arrays["C"], cb)
	assertClose(t, want, got, 0)
}

func TestWriteAsm(t *testing.T) {
	m := parseModule(t, matmulVecText)
	exportAll(m)
	res, err := Compile(m, Options{MCPU: "x86-64-v4"})
	require.NoError(t, err)
	path := filepath.Join(t.TempDir(), "m.s")
	require.NoError(t, res.WriteAsm(path))
	asm, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Contains(t, string(asm), "matmul:")
	assert.Contains(t, string(asm), "zmm", "16 f32 lanes use AVX-512 registers with -mcpu=x86-64-v4")
	assert.Contains(t, string(asm), "GOMP_parallel")
}

func TestToolErrors(t *testing.T) {
	_, err := findTool("llc-99", "llvm-99")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "apt-get install -y llvm-99")

	// llc's stderr is part of the error.
	m := parseModule(t, matmulText)
	exportAll(m)
	res, err := Compile(m, Options{MCPU: "no-such-cpu", OptLevel: -1})
	require.NoError(t, err)
	err = res.WriteObject(filepath.Join(t.TempDir(), "m.o"))
	require.Error(t, err)
	assert.True(t, strings.Contains(err.Error(), "no-such-cpu"), err.Error())
}

// By default a multiply feeding an add is contracted into an FMA
// (-fp-contract=fast); StrictFP keeps separate vmulps/vaddps. The
// contracted kernel stays within f32 rounding of the interpreter.
func TestFPContract(t *testing.T) {
	asm := func(opts Options) string {
		m := parseModule(t, matmulVecText)
		exportAll(m)
		opts.MCPU = "x86-64-v4"
		res, err := Compile(m, opts)
		require.NoError(t, err)
		path := filepath.Join(t.TempDir(), "m.s")
		require.NoError(t, res.WriteAsm(path))
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		return string(b)
	}
	assert.Contains(t, asm(Options{}), "vfmadd")
	strict := asm(Options{StrictFP: true})
	assert.NotContains(t, strict, "vfmadd")
	assert.Contains(t, strict, "vmulps")
	checkAgainstInterp(t, parseModule(t, matmulVecText), "matmul", Options{}, 3, 1e-5)
}
