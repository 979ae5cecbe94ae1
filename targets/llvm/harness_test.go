package llvm

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// The test driver: dlopens a shared object, calls an entry point with
// buffers read from files (written back after the call) and integer
// scalars, and prints the return code. Buffers and integers are passed
// as pointer-sized arguments, which the x86-64 System V ABI passes in the
// same registers as the int64_t parameters of the real prototype.
const driverC = `
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef void *P;
int main(int argc, char **argv) {
	if (argc < 3) { fprintf(stderr, "usage: driver lib.so symbol [b:file | i:int]...\n"); return 2; }
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
	void *fn = dlsym(h, argv[2]);
	if (!fn) { fprintf(stderr, "dlsym: %s\n", dlerror()); return 2; }
	int n = argc - 3;
	P a[12] = {0};
	size_t sizes[12] = {0};
	if (n > 12) { fprintf(stderr, "too many arguments\n"); return 2; }
	for (int i = 0; i < n; i++) {
		char *s = argv[3 + i];
		if (s[0] == 'i') { a[i] = (P)(intptr_t)strtoll(s + 2, 0, 10); continue; }
		FILE *f = fopen(s + 2, "rb");
		if (!f) { perror(s + 2); return 2; }
		fseek(f, 0, SEEK_END); sizes[i] = ftell(f); fseek(f, 0, SEEK_SET);
		/* 64 canary bytes on each side catch out-of-bounds stores. */
		char *raw = aligned_alloc(64, sizes[i] + 128);
		memset(raw, 0xAB, sizes[i] + 128);
		a[i] = raw + 64;
		if (fread(a[i], 1, sizes[i], f) != sizes[i]) { perror("read"); return 2; }
		fclose(f);
	}
	int32_t rc;
	switch (n) {
	case 0: rc = ((int32_t (*)(void))fn)(); break;
	case 1: rc = ((int32_t (*)(P))fn)(a[0]); break;
	case 2: rc = ((int32_t (*)(P, P))fn)(a[0], a[1]); break;
	case 3: rc = ((int32_t (*)(P, P, P))fn)(a[0], a[1], a[2]); break;
	case 4: rc = ((int32_t (*)(P, P, P, P))fn)(a[0], a[1], a[2], a[3]); break;
	case 5: rc = ((int32_t (*)(P, P, P, P, P))fn)(a[0], a[1], a[2], a[3], a[4]); break;
	case 6: rc = ((int32_t (*)(P, P, P, P, P, P))fn)(a[0], a[1], a[2], a[3], a[4], a[5]); break;
	default: rc = ((int32_t (*)(P, P, P, P, P, P, P, P, P, P, P, P))fn)(a[0], a[1], a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11]); break;
	}
	for (int i = 0; i < n; i++) {
		char *s = argv[3 + i];
		if (s[0] != 'b') continue;
		const unsigned char *raw = (const unsigned char *)a[i] - 64;
		for (size_t k = 0; k < 64; k++) {
			if (raw[k] != 0xAB || raw[64 + sizes[i] + k] != 0xAB) {
				fprintf(stderr, "argument %d: out-of-bounds store (canary %s the buffer)\n", i, raw[k] != 0xAB ? "before" : "after");
				return 3;
			}
		}
		FILE *f = fopen(s + 2, "wb");
		if (!f || fwrite(a[i], 1, sizes[i], f) != sizes[i]) { perror("write"); return 2; }
		fclose(f);
	}
	const char *wait = getenv("OMP_WAIT_POLICY");
	const char *spin = getenv("GOMP_SPINCOUNT");
	printf("rc=%d gomp=%d wait=%s spin=%s\n", rc, dlopen("libgomp.so.1", RTLD_NOW | RTLD_NOLOAD) != 0, wait ? wait : "unset", spin ? spin : "unset");
	dlclose(h);
	return 0;
}
`

var (
	driverOnce sync.Once
	driverPath string
	driverErr  error
	testDir    string
)

func TestMain(m *testing.M) {
	d, err := os.MkdirTemp("", "tessera-cpu-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testDir = d
	code := m.Run()
	os.RemoveAll(d)
	os.Exit(code)
}

// driver builds the C driver once with cc.
func driver(t *testing.T) string {
	t.Helper()
	driverOnce.Do(func() {
		src := filepath.Join(testDir, "driver.c")
		if driverErr = os.WriteFile(src, []byte(driverC), 0o644); driverErr != nil {
			return
		}
		driverPath = filepath.Join(testDir, "driver")
		out, err := exec.Command("cc", "-O1", "-o", driverPath, src, "-ldl").CombinedOutput()
		if err != nil {
			driverErr = fmt.Errorf("cc driver.c: %v\n%s", err, out)
		}
	})
	require.NoError(t, driverErr)
	return driverPath
}

// verifyLLVM runs opt-16 -passes=verify on the module's text.
func verifyLLVM(t *testing.T, res *Result) {
	t.Helper()
	opt, err := findTool("opt-16", "llvm-16")
	require.NoError(t, err)
	ll := filepath.Join(t.TempDir(), "m.ll")
	require.NoError(t, res.WriteLLVM(ll))
	out, err := exec.Command(opt, "-passes=verify", "-disable-output", ll).CombinedOutput()
	require.NoError(t, err, "opt-16 -passes=verify:\n%s\n--- module ---\n%s", out, res.LLVM())
}

// parseModule parses tensor IR text.
func parseModule(t *testing.T, src string) *tir.Module {
	t.Helper()
	m, err := tir.ParseString(t.Name()+".tir", src)
	require.NoError(t, err)
	return m
}

// exportAll marks every function of m as an entry point under its name.
func exportAll(m *tir.Module) {
	for _, f := range m.Funcs {
		if f.Attrs == nil {
			f.Attrs = tir.Attrs{}
		}
		if _, ok := f.Attrs[tir.AttrGlobalSymbol]; !ok {
			f.Attrs[tir.AttrGlobalSymbol] = tir.StringAttr(f.Name)
		}
	}
}

// buildShared compiles m (verifying the LLVM IR) into a shared object.
func buildShared(t *testing.T, m *tir.Module, opts Options) (string, *Result) {
	t.Helper()
	res, err := Compile(m, opts)
	require.NoError(t, err)
	verifyLLVM(t, res)
	so := filepath.Join(t.TempDir(), "k.so")
	require.NoError(t, res.WriteShared(so))
	return so, res
}

// encode writes an array's elements in the C layout of its dtype.
func encode(a *tir.Array) []byte {
	var out []byte
	n := a.Len()
	for i := 0; i < n; i++ {
		switch a.DType.Kind {
		case tir.F32:
			out = binary.LittleEndian.AppendUint32(out, math.Float32bits(float32(a.Floats[i])))
		case tir.F64:
			out = binary.LittleEndian.AppendUint64(out, math.Float64bits(a.Floats[i]))
		case tir.F16:
			out = binary.LittleEndian.AppendUint16(out, tir.F16Bits(a.Floats[i]))
		case tir.BF16:
			out = binary.LittleEndian.AppendUint16(out, tir.BF16Bits(a.Floats[i]))
		default: // integers and i1: the low bytes of the value's bit pattern
			var b [8]byte
			binary.LittleEndian.PutUint64(b[:], uint64(a.Ints[i]))
			out = append(out, b[:tir.ElemBytes(a.DType)]...)
		}
	}
	return out
}

func decode(a *tir.Array, b []byte) {
	for i := 0; i < a.Len(); i++ {
		switch a.DType.Kind {
		case tir.F32:
			a.Floats[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
		case tir.F64:
			a.Floats[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		case tir.F16:
			a.Floats[i] = tir.F16Value(binary.LittleEndian.Uint16(b[2*i:]))
		case tir.BF16:
			a.Floats[i] = float64(tir.BF16ToFloat32(binary.LittleEndian.Uint16(b[2*i:])))
		default: // integers (sign- or zero-extended by WrapInt) and i1
			w := int(tir.ElemBytes(a.DType))
			var buf [8]byte
			copy(buf[:], b[w*i:w*i+w])
			a.Ints[i] = tir.WrapInt(a.DType, int64(binary.LittleEndian.Uint64(buf[:])))
		}
	}
}

// runShared calls symbol in so with f's parameters taken from args (in
// f's parameter order) and decodes the buffers back into args' arrays. It
// returns the driver's report: "rc=0 gomp=<libgomp loaded: 0/1>
// wait=<OMP_WAIT_POLICY after the call> spin=<GOMP_SPINCOUNT after it>".
func runShared(t *testing.T, so, symbol string, f *tir.PrimFunc, args tir.Args, env ...string) string {
	t.Helper()
	dir := t.TempDir()
	cmdArgs := []string{so, symbol}
	files := map[string]string{}
	for _, p := range f.Params {
		if p.Var != nil {
			cmdArgs = append(cmdArgs, "i:"+strconv.FormatInt(args.Ints[p.Var.Name], 10))
			continue
		}
		a := args.Arrays[p.Buffer.Name]
		require.NotNil(t, a, "array for %s", p.Buffer.Name)
		path := filepath.Join(dir, p.Buffer.Name+".bin")
		require.NoError(t, os.WriteFile(path, encode(a), 0o644))
		files[p.Buffer.Name] = path
		cmdArgs = append(cmdArgs, "b:"+path)
	}
	cmd := exec.Command(driver(t), cmdArgs...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "OMP_") && !strings.HasPrefix(kv, "TESSERA_") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "driver: %s", out)
	require.Contains(t, string(out), "rc=0")
	for name, path := range files {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		decode(args.Arrays[name], b)
	}
	return strings.TrimSpace(string(out))
}

// randomArgs makes random arrays for f's buffer parameters (floats in
// [-2, 2), integers in [-50, 50), booleans 0/1).
func randomArgs(f *tir.PrimFunc, r *rand.Rand) tir.Args {
	args := tir.Args{Arrays: map[string]*tir.Array{}, Ints: map[string]int64{}}
	for _, p := range f.Params {
		if p.Buffer == nil {
			continue
		}
		shape, ok := p.Buffer.ConstShape()
		if !ok {
			panic("randomArgs: symbolic shape")
		}
		a := tir.NewArray(p.Buffer.DType, shape...)
		for i := range a.Floats {
			a.Floats[i] = tir.RoundFloat(p.Buffer.DType, r.Float64()*4-2)
		}
		for i := range a.Ints {
			if p.Buffer.DType.IsBool() {
				a.Ints[i] = int64(r.Intn(2))
			} else {
				a.Ints[i] = tir.WrapInt(p.Buffer.DType, int64(r.Intn(100)-50))
			}
		}
		args.Arrays[p.Buffer.Name] = a
	}
	return args
}

func cloneArgs(a tir.Args) tir.Args {
	out := tir.Args{Arrays: map[string]*tir.Array{}, Ints: map[string]int64{}, Floats: map[string]float64{}}
	for k, v := range a.Arrays {
		c := *v
		c.Floats = append([]float64(nil), v.Floats...)
		c.Ints = append([]int64(nil), v.Ints...)
		c.Shape = append([]int64(nil), v.Shape...)
		out.Arrays[k] = &c
	}
	for k, v := range a.Ints {
		out.Ints[k] = v
	}
	for k, v := range a.Floats {
		out.Floats[k] = v
	}
	return out
}

// assertClose compares every array: integers exactly, floats within rel
// relative error (absolute rel near zero); NaNs must match NaNs.
func assertClose(t *testing.T, want, got tir.Args, rel float64) {
	t.Helper()
	for name, w := range want.Arrays {
		g := got.Arrays[name]
		require.Equal(t, w.Ints, g.Ints, "buffer %s", name)
		var bad []string
		for i := range w.Floats {
			a, b := w.Floats[i], g.Floats[i]
			if math.IsNaN(a) || math.IsNaN(b) {
				if math.IsNaN(a) != math.IsNaN(b) {
					bad = append(bad, fmt.Sprintf("[%d] want %v got %v", i, a, b))
				}
				continue
			}
			if a == b {
				continue
			}
			if math.Abs(a-b) > rel*math.Max(math.Abs(a), 1) {
				bad = append(bad, fmt.Sprintf("[%d] want %v got %v", i, a, b))
			}
		}
		if len(bad) > 0 {
			if len(bad) > 10 {
				bad = append(bad[:10], fmt.Sprintf("... %d more", len(bad)-10))
			}
			t.Errorf("buffer %s differs:\n%s", name, strings.Join(bad, "\n"))
		}
	}
}

// checkHostShared runs @main of m in the interpreter and the shared
// object so's symbol on the same random arguments (seed) and requires
// identical results; it returns the driver's report.
func checkHostShared(t *testing.T, m *tir.Module, so, symbol string, seed int64, env ...string) string {
	t.Helper()
	f := m.Func("main")
	args := randomArgs(f, rand.New(rand.NewSource(seed)))
	want := cloneArgs(args)
	require.NoError(t, tir.RunModule(m, "main", want))
	report := runShared(t, so, symbol, f, args, env...)
	assertClose(t, want, args, 0)
	return report
}

// checkAgainstInterp compiles m, runs entry fn on random inputs and
// compares with the tensorir interpreter; it returns the compiled module
// and the driver's report. rel == 0 asks for bit-identical results, so
// the module is compiled with StrictFP (no FMA contraction).
func checkAgainstInterp(t *testing.T, m *tir.Module, fn string, opts Options, seed int64, rel float64, env ...string) (*Result, string) {
	t.Helper()
	if rel == 0 {
		opts.StrictFP = true
	}
	exportAll(m)
	so, res := buildShared(t, m, opts)
	f := m.Func(fn)
	require.NotNil(t, f)
	args := randomArgs(f, rand.New(rand.NewSource(seed)))
	want := cloneArgs(args)
	require.NoError(t, tir.RunArgs(f, want))
	sym := fn
	if opts.Prefix != "" {
		sym = opts.Prefix + "_" + fn
	}
	report := runShared(t, so, sym, f, args, env...)
	assertClose(t, want, args, rel)
	return res, report
}
