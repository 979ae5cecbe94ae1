package llvm

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Result is the CPU target's artifact (targets.Artifact): it emits an
// object, a shared object, LLVM IR or assembly, and saves the shared
// object the CPU target loads.

// Emit writes kind to path: llvm and asm to "" are returned instead; obj
// and so also write <path without extension>.h declaring the entry point
// when the module exports exactly one (WriteHeader).
func (r *Result) Emit(kind, path string) ([]byte, error) {
	switch kind {
	case "llvm":
		if path == "" {
			return []byte(r.LLVM()), nil
		}
		return nil, r.WriteLLVM(path)
	case "asm":
		if path == "" {
			return r.asmText()
		}
		return nil, r.WriteAsm(path)
	case "obj", "so":
		write := r.WriteObject
		if kind == "so" {
			write = r.WriteShared
		}
		if err := write(path); err != nil {
			return nil, err
		}
		return nil, r.writeHeader(strings.TrimSuffix(path, filepath.Ext(path)) + ".h")
	}
	return nil, fmt.Errorf("the cpu target cannot emit %q (it emits obj, so, llvm and asm)", kind)
}

// Save writes the shared object Target.Load opens.
func (r *Result) Save(path string) error { return r.WriteShared(path) }

// asmText is the assembly, through a temporary file.
func (r *Result) asmText() ([]byte, error) {
	dir, err := os.MkdirTemp("", "tessera-asm-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "model.s")
	if err := r.WriteAsm(p); err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// writeHeader writes the C header of the one exported entry point (none
// for a module with no Prefix or another number of entries).
func (r *Result) writeHeader(path string) error {
	if r.opts.Prefix == "" || len(r.Entries) != 1 {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := WriteHeader(f, r.opts.Prefix, SignatureOf(r.Entries[0].Func, r.UsesParallel)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
