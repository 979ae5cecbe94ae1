package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	rt "github.com/tessera-ml/tessera/runtime"
	"github.com/tessera-ml/tessera/targets"
	"github.com/tessera-ml/tessera/targets/llvm"
)

// isCompiledModel reports whether path names an already compiled model: a
// name ending in .so, or a file that starts like one
// (runtime.IsCompiledModel: the ELF magic, so a .o gets the signature
// reader's error rather than a parse error on binary text, or a device
// model file's header).
func isCompiledModel(path string) bool {
	return strings.EqualFold(filepath.Ext(path), ".so") || rt.IsCompiledModel(path)
}

// openModel loads the model for run and bench: a compiled one (.so, .cuda) as it
// is, refusing the flags that only choose how to compile; anything else is
// compiled first (loadCompiled).
func openModel(cmd *cobra.Command, model string, o compileOptions, threads int) (*loaded, error) {
	if !isCompiledModel(model) {
		return loadCompiled(model, o, threads)
	}
	if err := refuseCompileFlags(cmd, model); err != nil {
		return nil, err
	}
	return loadPrebuilt(model, threads)
}

// refuseCompileFlags returns one error line per compile flag
// (addCompileFlags) given with the compiled model at path; nil when none.
func refuseCompileFlags(cmd *cobra.Command, path string) error {
	probe := &cobra.Command{}
	addCompileFlags(probe, &compileOptions{}, io.Discard)
	var lines []string
	probe.Flags().VisitAll(func(f *pflag.Flag) {
		if cmd.Flags().Changed(f.Name) {
			lines = append(lines, fmt.Sprintf("%s: error: --%s applies only when compiling a .mlir or .onnx model; this one is already compiled", path, f.Name))
		}
	})
	if len(lines) == 0 {
		return nil
	}
	return errors.New(strings.Join(lines, "\n"))
}

// loadPrebuilt loads a model written by tessera compile (a shared object,
// a CUDA model file) without compiling: it reads the signature
// (runtime.ReadModelSignature), checks that
// this machine has the vector width the kernels were scheduled for, sets
// the thread count (threads > 0) and opens the library through the
// recorded target, binding @main's entry point to the recorded specs.
// Errors are "path: error: ..." lines: not a Tessera model, a corrupted
// signature or another format version, another architecture, no @main.
func loadPrebuilt(path string, threads int) (*loaded, error) {
	fail := func(err error) (*loaded, error) { return nil, fmt.Errorf("%s: error: %v", path, err) }
	sig, err := rt.ReadModelSignature(path)
	if err != nil {
		return fail(err)
	}
	entry, ok := sig.Entry("main")
	if !ok {
		return fail(fmt.Errorf("its signature lists no @main entry point (%d others): not a model's shared object, or one compiled with symbolic dimensions, whose <prefix>_main takes their values and is called from C (tessera run and bench take the .mlir or .onnx and size them from the --input files)", len(sig.Entries)))
	}
	if host := llvm.HostVectorBits(); sig.Target == "cpu" && sig.VectorBits > host {
		return fail(fmt.Errorf("compiled for %d-bit vectors (-mcpu %s), but this machine has %d-bit ones: recompile it here, or with a --mcpu this machine runs", sig.VectorBits, sig.MCPU, host))
	}
	if threads > 0 {
		if err := rt.SetNumThreads(threads); err != nil {
			return nil, err
		}
	}
	t, err := targets.New(sig.Target, targets.Options{MCPU: sig.MCPU, Threads: threads, StrictFP: sig.StrictFP})
	if err != nil {
		return fail(fmt.Errorf("compiled for a target this tessera does not have: %v", err))
	}
	if err := targets.CheckAvailable(t); err != nil {
		return nil, err
	}
	l := &loaded{inputs: entry.Inputs, outputs: entry.Outputs}
	if l.mod, err = t.Load(path); err != nil {
		return fail(err)
	}
	if l.entry, err = l.mod.Entry(entry.Symbol, entry.Inputs, entry.Outputs); err != nil {
		l.Close()
		return fail(err)
	}
	return l, nil
}
