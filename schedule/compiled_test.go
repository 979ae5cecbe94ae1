package schedule

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/llvm"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// A minimal dlopen driver (the approach of targets/cpu's tests): calls
// symbol with float32 buffers read from files and writes them back.
const driverSrc = `
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
typedef void *P;
int main(int argc, char **argv) {
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
	void *fn = dlsym(h, argv[2]);
	if (!fn) { fprintf(stderr, "dlsym: %s\n", dlerror()); return 2; }
	int n = argc - 3;
	P a[4] = {0};
	size_t sz[4] = {0};
	if (n > 4) return 2;
	for (int i = 0; i < n; i++) {
		FILE *f = fopen(argv[3 + i], "rb");
		if (!f) { perror(argv[3 + i]); return 2; }
		fseek(f, 0, SEEK_END); sz[i] = ftell(f); fseek(f, 0, SEEK_SET);
		a[i] = aligned_alloc(64, (sz[i] + 63) / 64 * 64);
		if (fread(a[i], 1, sz[i], f) != sz[i]) return 2;
		fclose(f);
	}
	int32_t rc;
	switch (n) {
	case 2: rc = ((int32_t (*)(P, P))fn)(a[0], a[1]); break;
	case 3: rc = ((int32_t (*)(P, P, P))fn)(a[0], a[1], a[2]); break;
	default: rc = ((int32_t (*)(P, P, P, P))fn)(a[0], a[1], a[2], a[3]); break;
	}
	for (int i = 0; i < n; i++) {
		FILE *f = fopen(argv[3 + i], "wb");
		if (!f || fwrite(a[i], 1, sz[i], f) != sz[i]) return 2;
		fclose(f);
	}
	printf("rc=%d\n", rc);
	return 0;
}
`

// TestRandomSchedulesCompiled compiles 48 random schedules (8 per
// workload) with targets/cpu into one shared object and checks each
// against the interpreter on the unscheduled function.
func TestRandomSchedulesCompiled(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles with llc/lld")
	}
	var entries []compiledEntry
	applied := map[string]int{}
	for _, name := range propertyWorkloads() {
		for i := 0; i < 8; i++ {
			seed := int64(1000 + i*31 + len(name))
			s := randomSchedule(t, name, seed, applied)
			checkReplay(t, s)
			entries = append(entries, compiledEntry{fmt.Sprintf("%s_%d", name, i), workloadSrc(name), s})
		}
	}
	compileAndCheck(t, entries)
	t.Logf("compiled %d schedules; applied: %v", len(entries), applied)
}

// buildDriver compiles a dlopen driver's C source into a fresh temporary
// directory and returns the directory and the driver's path.
func buildDriver(t testing.TB, src string) (dir, drv string) {
	t.Helper()
	dir = t.TempDir()
	drv = filepath.Join(dir, "driver")
	require.NoError(t, os.WriteFile(drv+".c", []byte(src), 0o644))
	out, err := exec.Command("cc", "-O1", "-o", drv, drv+".c", "-ldl").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return dir, drv
}

// compiledEntry is a schedule to compile as sym, checked against the
// interpreter on src (the unscheduled function).
type compiledEntry struct {
	sym, src string
	s        *Schedule
}

// compileAndCheck compiles every entry's scheduled function with
// targets/cpu into one shared object, runs each through a dlopen driver
// on the inputs interpret(…, 9) uses and compares with the interpreter's
// result on the unscheduled function.
func compileAndCheck(t *testing.T, entries []compiledEntry) {
	t.Helper()
	dir, drv := buildDriver(t, driverSrc)
	m := &tir.Module{}
	funcs := make([]*tir.PrimFunc, len(entries))
	for i, e := range entries {
		f := *e.s.Func()
		f.Name = e.sym
		f.Attrs = copyAttrs(f.Attrs)
		f.Attrs[tir.AttrGlobalSymbol] = tir.StringAttr(f.Name)
		require.NoError(t, m.Add(&f))
		funcs[i] = &f
	}
	res, err := compileCPU(m, llvm.Options{})
	require.NoError(t, err)
	so := filepath.Join(dir, "k.so")
	require.NoError(t, res.WriteShared(so))
	for i, e := range entries {
		f := funcs[i]
		want := interpret(t, parseFunc(t, e.src), 9)
		// The same random inputs as interpret(…, 9).
		inputs := randomInputs(t, f, 9)
		var files []string
		for _, p := range f.Params {
			path := filepath.Join(dir, e.sym+"_"+p.Buffer.Name+".bin")
			require.NoError(t, os.WriteFile(path, f32bytes(inputs[p.Buffer.Name]), 0o644))
			files = append(files, path)
		}
		out, err := exec.Command(drv, append([]string{so, e.sym}, files...)...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Contains(t, string(out), "rc=0")
		got := map[string][]float64{}
		for i, p := range f.Params {
			if p.Role == tir.RoleIn {
				continue
			}
			b, err := os.ReadFile(files[i])
			require.NoError(t, err)
			got[p.Buffer.Name] = fromF32bytes(b)
		}
		sameOutputs(t, want, got, e.sym+":\n"+printed(f)+"\n"+e.s.Trace().String())
	}
}

// randomInputs are the arrays interpret(t, f, seed) runs on.
func randomInputs(t testing.TB, f *tir.PrimFunc, seed int64) map[string][]float64 {
	t.Helper()
	out := map[string][]float64{}
	rng := newRand(seed)
	for _, p := range f.Params {
		shape, ok := p.Buffer.ConstShape()
		require.True(t, ok)
		a := tir.NewArray(p.Buffer.DType, shape...)
		for i := range a.Floats {
			a.Floats[i] = tir.RoundFloat(p.Buffer.DType, rng.Float64()*4-2)
		}
		out[p.Buffer.Name] = a.Floats
	}
	return out
}

func f32bytes(xs []float64) []byte {
	var b []byte
	for _, x := range xs {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(float32(x)))
	}
	return b
}

func fromF32bytes(b []byte) []float64 {
	out := make([]float64, len(b)/4)
	for i := range out {
		out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])))
	}
	return out
}

// storage_align pads the allocation: the aligned dimension's stride of
// the 6×14 intermediate becomes 40 (= 32·1 + 8) in the generated code,
// every row padded to it, and the compiled kernel still matches the
// interpreter.
func TestStorageAlignCompiled(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles with llc/lld")
	}
	s := New(locWorkload(t, "chain"))
	require.NoError(t, s.StorageAlign(block(t, s, "add"), 0, 0, 32, 8))
	aligned := tir.AlignedStrides(s.Func())
	require.Len(t, aligned, 1)
	for b, st := range aligned {
		require.Equal(t, "T", b.Name)
		require.Equal(t, []int64{40, 1}, st)
	}
	m := &tir.Module{}
	require.NoError(t, m.Add(s.Func()))
	res, err := compileCPU(m, llvm.Options{})
	require.NoError(t, err)
	require.Contains(t, res.LLVM(), ", 40\n", "the padded stride addresses %T")
	require.Contains(t, res.LLVM(), "alloca [240 x float]", "6·40 elements, not 6·14: the last row is padded too (targets/llvm/codegen_pad.go)")
	compileAndCheck(t, []compiledEntry{{"aligned_chain", printed(s.Original()), s}})
}
