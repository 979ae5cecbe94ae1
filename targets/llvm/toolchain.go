package llvm

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sync/errgroup"
)

// The target of the generated modules: x86-64 Linux (System V ABI).
const (
	TargetTriple = "x86_64-pc-linux-gnu"
	DataLayout   = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-f80:128-n8:16:32:64-S128"
)

// findTool returns the path of a tool: name on $PATH (llc-16, as), else
// for an LLVM 16 tool (a name ending in -16) /usr/lib/llvm-16/bin/<name
// without -16>; the error names the Debian package that provides it.
func findTool(name, pkg string) (string, error) {
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	where := "on PATH"
	if base, llvm := strings.CutSuffix(name, "-16"); llvm {
		alt := filepath.Join("/usr/lib/llvm-16/bin", base)
		if _, err := os.Stat(alt); err == nil {
			return alt, nil
		}
		where += " or in /usr/lib/llvm-16/bin"
	}
	return "", fmt.Errorf("%s not found %s: install the Debian package %s (apt-get install -y %s)", name, where, pkg, pkg)
}

// runTool runs a tool and returns an error with its command line and
// stderr when it fails.
func runTool(path string, args ...string) error {
	cmd := exec.Command(path, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("%s %s: %v\n%s", filepath.Base(path), strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// WriteLLVM writes the module's LLVM assembly to path.
func (r *Result) WriteLLVM(path string) error { return writeText(path, r.text(r.Module)) }

// writeText creates the file at path and prints text into it through a
// buffer. Errors: the file's.
func writeText(path string, text io.WriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	_, err = text.WriteTo(w)
	if err == nil {
		err = w.Flush()
	}
	return errors.Join(err, f.Close())
}

// toolArgs are the opt-16 arguments (nil: no opt) and the llc-16
// arguments for filetype: opt at Options.OptLevel, llc -O3
// -mcpu=<mcpu> -fp-contract=fast|off (Options.StrictFP)
// -relocation-model=pic -filetype=<filetype>.
func (r *Result) toolArgs(filetype string) (opt, llc []string) {
	mcpu := "-mcpu=" + r.opts.mcpu()
	if r.opts.OptLevel >= 0 {
		level := r.opts.OptLevel
		if level == 0 || level > 3 {
			level = 3
		}
		opt = []string{fmt.Sprintf("-O%d", level), mcpu}
	}
	return opt, []string{"-O3", mcpu, r.opts.fpContract(), "-relocation-model=pic", "-filetype=" + filetype}
}

// objects compiles the module to relocatable objects in dir: one, or one
// per part of a split module (split.go), and the blobs' object
// (blobObject) when the module has blobs, whose symbols the code's
// objects then reference as hidden externals; opt, llc and the
// assembler run in parallel.
func (r *Result) objects(dir string) ([]string, error) {
	opt, llc := r.toolArgs("obj")
	n := r.partCount()
	if n == 1 && len(r.blobs) == 0 && len(r.texts) == 0 {
		obj := filepath.Join(dir, "module.o")
		return []string{obj}, compileModule(r.text(r.Module), obj, opt, llc...)
	}
	blobs := r.blobList()
	parts, restore := r.splitModules(n)
	defer restore()
	objs := make([]string, len(parts), len(parts)+1)
	var eg errgroup.Group
	for p, m := range parts {
		objs[p] = filepath.Join(dir, partName(p))
		eg.Go(func() error { return compileModule(r.text(m), objs[p], opt, llc...) })
	}
	var blobObj string
	eg.Go(func() (err error) {
		blobObj, err = blobObject(dir, blobs)
		return err
	})
	if err := eg.Wait(); err != nil {
		return nil, err
	}
	if blobObj != "" {
		objs = append(objs, blobObj)
	}
	return objs, nil
}

// CompileObject compiles LLVM 16 assembly text (a module for
// TargetTriple) to a relocatable ELF object at path with llc-16 -O2
// -relocation-model=pic. Errors: the toolchain's (a missing llc-16 names
// its Debian package).
func CompileObject(text, path string) error {
	return compileModule(strings.NewReader(text), path, nil, "-O2", "-relocation-model=pic", "-filetype=obj")
}

// compileModule writes LLVM assembly text (a module, printed straight to
// the file rather than built as a string: ResNet-18's is tens of
// megabytes) to a temporary file, runs opt-16 with optArgs on it unless
// optArgs is nil, and llc-16 with llcArgs to out.
func compileModule(text io.WriterTo, out string, optArgs []string, llcArgs ...string) error {
	llc, err := findTool("llc-16", "llvm-16")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "tessera-llc-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "module.ll")
	if err := writeText(in, text); err != nil {
		return err
	}
	if optArgs != nil {
		optTool, err := findTool("opt-16", "llvm-16")
		if err != nil {
			return err
		}
		bc := filepath.Join(dir, "module.bc")
		if err := runTool(optTool, append(optArgs, in, "-o", bc)...); err != nil {
			return err
		}
		in = bc
	}
	return runTool(llc, append(llcArgs, in, "-o", out)...)
}

// WriteObject compiles the module to a relocatable ELF object at path. A
// program linking it needs -lm (libgomp is dlopened at start-up when the
// module has parallel loops; linking -lgomp as well is harmless).
// A split module's parts (and the blobs' object) are joined with GNU
// ld -r, and the symbols the split made hidden are local again (objcopy
// --localize-hidden), so the object exports what an unsplit one does.
func (r *Result) WriteObject(path string) error {
	return r.withObjects(func(objs []string) error { return joinObjects(objs, path) })
}

// withObjects compiles the module's objects (objects) into a temporary
// directory, calls use with their paths and removes the directory.
func (r *Result) withObjects(use func(objs []string) error) error {
	dir, err := os.MkdirTemp("", "tessera-obj-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	objs, err := r.objects(dir)
	if err != nil {
		return err
	}
	return use(objs)
}

// joinObjects writes the one relocatable object of objs to path: a copy
// of the only one, or the objects joined (GNU ld -r) with their hidden
// symbols made local (GNU objcopy --localize-hidden). The GNU tools
// stream the weights; ld.lld-16 -r and llvm-objcopy-16 each held
// ResNet-18's 47 MB three times (150 MB against 50).
func joinObjects(objs []string, path string) error {
	if len(objs) == 1 {
		data, err := os.ReadFile(objs[0])
		if err != nil {
			return err
		}
		return os.WriteFile(path, data, 0o644)
	}
	ld, err := findTool("ld.bfd", "binutils")
	if err != nil {
		return err
	}
	if err := runTool(ld, append([]string{"-r", "-o", path}, objs...)...); err != nil {
		return err
	}
	objcopy, err := findTool("objcopy", "binutils")
	if err != nil {
		return err
	}
	return runTool(objcopy, "--localize-hidden", path)
}

// WriteAsm writes the module's x86-64 assembly (AT&T syntax) to path.
func (r *Result) WriteAsm(path string) error {
	opt, llc := r.toolArgs("asm")
	return compileModule(r.text(r.Module), path, opt, llc...)
}

// WriteShared compiles the module and links it with GNU ld -shared into
// a shared object at path. The object records libm and libc as needed
// libraries, so it loads into any process (dlopen, purego); libgomp is
// loaded by the module's constructor (libgomp.go), not linked.
func (r *Result) WriteShared(path string) error {
	return r.withObjects(func(objs []string) error { return linkShared(objs, path) })
}

// linkShared links objects into a shared object at path (WriteShared)
// with GNU ld (ld.bfd), which peaks at 53 MB linking ResNet-18's 47 MB of
// weights where ld.lld-16 takes 155 MB.
func linkShared(objs []string, path string) error {
	libm, err := findLib("libm.so.6", "libc6-dev")
	if err != nil {
		return err
	}
	libc, err := findLib("libc.so.6", "libc6-dev")
	if err != nil {
		return err
	}
	ld, err := findTool("ld.bfd", "binutils")
	if err != nil {
		return err
	}
	args := append(append([]string{"-shared", "-o", path}, objs...), "--as-needed", libm, libc)
	return runTool(ld, args...)
}

// findLib locates a system library: `gcc -print-file-name=<name>` (which
// knows the compiler's private directories, where libgomp.so lives), else
// the multiarch directories. The error names the Debian package.
func findLib(name, pkg string) (string, error) {
	if out, err := exec.Command("gcc", "-print-file-name="+name).Output(); err == nil {
		p := strings.TrimSpace(string(out))
		if filepath.IsAbs(p) {
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
	}
	for _, d := range []string{"/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib"} {
		for _, n := range []string{name, name + ".1"} {
			p := filepath.Join(d, n)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			}
		}
	}
	return "", fmt.Errorf("%s not found: install the Debian package %s", name, pkg)
}
