package schedule

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/tessera-ml/tessera/targets/llvm"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// batchDriverSrc runs many kernels of one shared object in one process: each
// line of the manifest (argv[2]) is "symbol n file1 … filen"; the float32
// buffers are read from the files, the kernel is called, and the buffers are
// written back. It prints "symbol rc=N" for every kernel.
const batchDriverSrc = `
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
typedef void *P;
int main(int argc, char **argv) {
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) { fprintf(stderr, "dlopen: %s\n", dlerror()); return 2; }
	FILE *m = fopen(argv[2], "r");
	if (!m) { perror(argv[2]); return 2; }
	char sym[256], name[4][4096];
	int n;
	while (fscanf(m, "%255s %d", sym, &n) == 2) {
		if (n < 1 || n > 4) return 2;
		for (int i = 0; i < n; i++) if (fscanf(m, "%4095s", name[i]) != 1) return 2;
		void *fn = dlsym(h, sym);
		if (!fn) { fprintf(stderr, "dlsym: %s\n", dlerror()); return 2; }
		P a[4] = {0};
		size_t sz[4] = {0};
		for (int i = 0; i < n; i++) {
			FILE *f = fopen(name[i], "rb");
			if (!f) { perror(name[i]); return 2; }
			fseek(f, 0, SEEK_END); sz[i] = ftell(f); fseek(f, 0, SEEK_SET);
			a[i] = aligned_alloc(64, (sz[i] + 63) / 64 * 64);
			if (fread(a[i], 1, sz[i], f) != sz[i]) return 2;
			fclose(f);
		}
		int32_t rc;
		switch (n) {
		case 1: rc = ((int32_t (*)(P))fn)(a[0]); break;
		case 2: rc = ((int32_t (*)(P, P))fn)(a[0], a[1]); break;
		case 3: rc = ((int32_t (*)(P, P, P))fn)(a[0], a[1], a[2]); break;
		default: rc = ((int32_t (*)(P, P, P, P))fn)(a[0], a[1], a[2], a[3]); break;
		}
		for (int i = 0; i < n; i++) {
			FILE *f = fopen(name[i], "wb");
			if (!f || fwrite(a[i], 1, sz[i], f) != sz[i]) return 2;
			fclose(f);
			free(a[i]);
		}
		printf("%s rc=%d\n", sym, rc);
		fflush(stdout);
	}
	return 0;
}
`

// compiledCase is one generated schedule to run compiled.
type compiledCase struct {
	label string // workload/seed and trace, for failure messages
	s     *Schedule
	want  map[string][]float64 // the interpreter on the unscheduled function
}

// kernelsPerObject is how many scheduled kernels go into one shared object.
const kernelsPerObject = 180

// TestAllRandomSchedulesCompiled compiles every schedule that
// TestRandomSchedules and TestRandomLocationSchedules generate (the same
// workloads and seeds) with targets/cpu, kernelsPerObject kernels per shared
// object, runs each through one driver process per object and compares its
// outputs with the interpreter on the unscheduled function (within float32
// rounding where a summation order changed, as sameOutputs does).
func TestAllRandomSchedulesCompiled(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles with llc/lld")
	}
	var cases []compiledCase
	applied := map[string]int{}
	for _, name := range propertyWorkloads() {
		want := interpret(t, parseFunc(t, workloadSrc(name)), 9)
		for i := 0; i < randomSchedulesPerWorkload; i++ {
			seed := randomScheduleSeed(name, i)
			s := randomSchedule(t, name, seed, applied)
			cases = append(cases, compiledCase{fmt.Sprintf("loop %s/%d (index %d):\n%s", name, seed, i, s.Trace()), s, want})
		}
	}
	nLoop := len(cases)
	for _, name := range locationWorkloads {
		want := interpret(t, locWorkload(t, name), 9)
		for i := 0; i < locationSchedulesPerWorkload; i++ {
			seed := locationScheduleSeed(name, i)
			s := randomLocationSchedule(t, name, seed, applied)
			cases = append(cases, compiledCase{fmt.Sprintf("location %s/%d (index %d):\n%s", name, seed, i, s.Trace()), s, want})
		}
	}

	dir, drv := buildDriver(t, batchDriverSrc)

	// Batches compile and run two at a time (llc and lld are external
	// processes; this machine has 2 cores).
	type batchResult struct {
		refused, failed []string
		checked         int
		err             error
	}
	var results []*batchResult
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for start := 0; start < len(cases); start += kernelsPerObject {
		r := &batchResult{}
		results = append(results, r)
		batch := cases[start:min(start+kernelsPerObject, len(cases))]
		wg.Add(1)
		sem <- struct{}{}
		go func(start int) {
			defer func() { <-sem; wg.Done() }()
			r.refused, r.failed, r.checked, r.err = runCompiledBatch(dir, drv, start, batch)
		}(start)
	}
	wg.Wait()
	var refused, failed []string
	checked := 0
	for _, r := range results {
		require.NoError(t, r.err)
		refused = append(refused, r.refused...)
		failed = append(failed, r.failed...)
		checked += r.checked
	}
	t.Logf("compiled and checked %d of %d schedules (%d loop-primitive, %d location); applied: %v",
		checked, len(cases), nLoop, len(cases)-nLoop, applied)
	for _, r := range refused {
		t.Errorf("targets/cpu refused %s", r)
	}
	for _, f := range failed {
		t.Errorf("compiled result differs: %s", f)
	}
	require.Equal(t, len(cases), checked)
}

// runCompiledBatch compiles batch (kernels k<start>…) into one shared
// object, runs every kernel with the driver on the inputs of
// interpret(…, 9) and compares it with the case's want. It returns the
// kernels targets/cpu refused, those whose results differ, and how many
// were checked.
func runCompiledBatch(dir, drv string, start int, batch []compiledCase) (refused, failed []string, checked int, err error) {
	var fs []*tir.PrimFunc
	var kept []compiledCase
	m := &tir.Module{}
	for i, c := range batch {
		f := *c.s.Func()
		f.Name = fmt.Sprintf("k%d", start+i)
		f.Attrs = copyAttrs(f.Attrs)
		f.Attrs[tir.AttrGlobalSymbol] = tir.StringAttr(f.Name)
		if err := m.Add(&f); err != nil {
			return nil, nil, 0, err
		}
		fs = append(fs, &f)
		kept = append(kept, c)
	}
	batch = kept
	res, err := compileCPU(m, llvm.Options{})
	if err != nil {
		// Find the kernels that targets/cpu refuses; compile the rest.
		m = &tir.Module{}
		var keptF []*tir.PrimFunc
		kept = nil
		for i, f := range fs {
			one := &tir.Module{}
			if err := one.Add(f); err != nil {
				return nil, nil, 0, err
			}
			if _, err := compileCPU(one, llvm.Options{}); err != nil {
				refused = append(refused, fmt.Sprintf("%s\n%v\n%s", batch[i].label, err, printed(f)))
				continue
			}
			if err := m.Add(f); err != nil {
				return nil, nil, 0, err
			}
			keptF = append(keptF, f)
			kept = append(kept, batch[i])
		}
		fs, batch = keptF, kept
		if len(fs) == 0 {
			return refused, nil, 0, nil
		}
		if res, err = compileCPU(m, llvm.Options{}); err != nil {
			return nil, nil, 0, err
		}
	}
	so := filepath.Join(dir, fmt.Sprintf("k%d.so", start))
	if err := res.WriteShared(so); err != nil {
		return nil, nil, 0, err
	}

	var manifest strings.Builder
	files := make([][]string, len(fs))
	for i, f := range fs {
		inputs := map[string][]float64{} // the inputs of interpret(…, 9)
		rng := newRand(9)
		for _, p := range f.Params {
			shape, ok := p.Buffer.ConstShape()
			if !ok {
				return nil, nil, 0, fmt.Errorf("%s: %s has no constant shape", f.Name, p.Buffer.Name)
			}
			a := tir.NewArray(p.Buffer.DType, shape...)
			for i := range a.Floats {
				a.Floats[i] = tir.RoundFloat(p.Buffer.DType, rng.Float64()*4-2)
			}
			inputs[p.Buffer.Name] = a.Floats
		}
		fmt.Fprintf(&manifest, "%s %d", f.Name, len(f.Params))
		for _, p := range f.Params {
			path := filepath.Join(dir, f.Name+"_"+p.Buffer.Name+".bin")
			if err := os.WriteFile(path, f32bytes(inputs[p.Buffer.Name]), 0o644); err != nil {
				return nil, nil, 0, err
			}
			files[i] = append(files[i], path)
			fmt.Fprintf(&manifest, " %s", path)
		}
		manifest.WriteString("\n")
	}
	mf := filepath.Join(dir, fmt.Sprintf("k%d.txt", start))
	if err := os.WriteFile(mf, []byte(manifest.String()), 0o644); err != nil {
		return nil, nil, 0, err
	}
	out, err := exec.Command(drv, so, mf).CombinedOutput()
	rcs := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if sym, rc, ok := strings.Cut(sc.Text(), " "); ok {
			rcs[sym] = rc
		}
	}
	if err != nil {
		// The driver died (a crash): blame the first kernel with no rc.
		for i, f := range fs {
			if _, ok := rcs[f.Name]; !ok {
				return nil, nil, 0, fmt.Errorf("driver: %v: %s\nfirst kernel without a result: %s\n%s", err, out, batch[i].label, printed(f))
			}
		}
		return nil, nil, 0, fmt.Errorf("driver: %v: %s", err, out)
	}
	for i, f := range fs {
		if rcs[f.Name] != "rc=0" {
			failed = append(failed, fmt.Sprintf("%s\nreturned %q", batch[i].label, rcs[f.Name]))
			continue
		}
		got := map[string][]float64{}
		for j, p := range f.Params {
			if p.Role == tir.RoleIn {
				continue
			}
			b, err := os.ReadFile(files[i][j])
			if err != nil {
				return nil, nil, 0, err
			}
			got[p.Buffer.Name] = fromF32bytes(b)
		}
		if msg := diffOutputs(batch[i].want, got); msg != "" {
			failed = append(failed, fmt.Sprintf("%s\n%s\n%s", batch[i].label, msg, printed(f)))
		}
		checked++
	}
	return refused, failed, checked, nil
}

// diffOutputs is sameOutputs's comparison returning the first difference
// (empty if none).
func diffOutputs(want, got map[string][]float64) string {
	if len(want) != len(got) {
		return fmt.Sprintf("%d outputs, want %d", len(got), len(want))
	}
	for name, w := range want {
		g := got[name]
		if len(g) != len(w) {
			return fmt.Sprintf("%s: %d elements, want %d", name, len(g), len(w))
		}
		for i := range w {
			if !(abs(w[i]-g[i]) <= 1e-5*(1+abs(w[i]))) {
				return fmt.Sprintf("%s[%d]: want %v, got %v", name, i, w[i], g[i])
			}
		}
	}
	return ""
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
