package runtime

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/ebitengine/purego"
)

// ErrClosed is returned (wrapped) by every operation on a Library after
// Close, and by calls through an Entry of a closed Library.
var ErrClosed = errors.New("runtime: library is closed")

// Library is a shared object (.so) loaded into this process with dlopen
// through purego, so it works with and without cgo (CGO_ENABLED=0).
//
// dlopen caches libraries by path: opening a path that is already loaded
// returns the already-loaded code, even if the file was rebuilt since.
// Callers must therefore give every distinct library a unique path, or use
// OpenCopy, which loads a private, content-hashed copy. Every Open or
// OpenCopy must be balanced by one Close. Close unloads the library but
// never libgomp, which compiled parallel loops start worker threads in:
// Open marks it resident (RTLD_NODELETE) once a library has pulled it in.
//
// A Library is safe for concurrent use: calls through its entries may run
// in parallel, and Close waits for calls in flight to return.
type Library struct {
	path   string // the path the caller gave
	loaded string // the absolute path handed to dlopen
	tmpDir string // OpenCopy's private directory, removed by Close

	mu     sync.RWMutex // held for reading during calls, for writing by Close
	handle uintptr      // 0 once closed
}

// Open loads the shared object at path (made absolute, so a bare file name
// is never searched for on the library path) with RTLD_NOW|RTLD_LOCAL:
// every undefined symbol is resolved now, and its symbols do not leak into
// other libraries. It returns an error when the file does not exist or
// dlopen fails (the message includes dlerror's text).
func Open(path string) (*Library, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("runtime: open %s: %w", path, err)
	}
	return open(path, abs, "")
}

// OpenCopy copies the shared object at path to a fresh private temporary
// directory under a content-hashed name (<base>-<sha256 prefix>.so) and
// loads the copy, so a path that has been rebuilt since it was last loaded
// yields the new code. Close unloads the library and removes the copy.
func OpenCopy(path string) (*Library, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("runtime: open %s: %w", path, err)
	}
	sum := sha256.Sum256(data)
	dir, err := os.MkdirTemp("", "tessera-lib-")
	if err != nil {
		return nil, fmt.Errorf("runtime: open %s: %w", path, err)
	}
	base := strings.TrimSuffix(filepath.Base(path), ".so")
	copyPath := filepath.Join(dir, base+"-"+hex.EncodeToString(sum[:8])+".so")
	if err := os.WriteFile(copyPath, data, 0o700); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("runtime: open %s: copy: %w", path, err)
	}
	lib, err := open(path, copyPath, dir)
	if err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	return lib, nil
}

func open(path, abs, tmpDir string) (*Library, error) {
	if _, err := os.Stat(abs); err != nil {
		return nil, fmt.Errorf("runtime: open %s: %w", path, err)
	}
	h, err := purego.Dlopen(abs, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		return nil, fmt.Errorf("runtime: open %s: dlopen: %w", path, err)
	}
	keepRuntimeLibsResident()
	return &Library{path: path, loaded: abs, tmpDir: tmpDir, handle: h}, nil
}

// Path is the path the library was opened from (as given to Open or
// OpenCopy).
func (l *Library) Path() string { return l.path }

// LoadedPath is the absolute path handed to dlopen: Path made absolute for
// Open, the private copy for OpenCopy.
func (l *Library) LoadedPath() string { return l.loaded }

// Symbol returns the address of the exported symbol name, or an error when
// the library does not define it or is closed.
func (l *Library) Symbol(name string) (uintptr, error) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	if l.handle == 0 {
		return 0, fmt.Errorf("runtime: symbol %q of %s: %w", name, l.path, ErrClosed)
	}
	if name == "" {
		return 0, fmt.Errorf("runtime: empty symbol name for %s", l.path)
	}
	p, err := purego.Dlsym(l.handle, name)
	if err != nil {
		return 0, fmt.Errorf("runtime: symbol %q not found in %s: %w", name, l.path, err)
	}
	return p, nil
}

// Close waits for calls in flight, unloads the library (dlclose) and, for
// OpenCopy, removes the private copy. Entries obtained from it fail with
// ErrClosed afterwards. Closing twice returns an error wrapping ErrClosed.
func (l *Library) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.handle == 0 {
		return fmt.Errorf("runtime: close %s: %w", l.path, ErrClosed)
	}
	err := purego.Dlclose(l.handle)
	l.handle = 0
	if err != nil {
		err = fmt.Errorf("runtime: close %s: dlclose: %w", l.path, err)
	}
	if l.tmpDir != "" {
		if rmErr := os.RemoveAll(l.tmpDir); rmErr != nil {
			err = errors.Join(err, fmt.Errorf("runtime: close %s: remove copy: %w", l.path, rmErr))
		}
	}
	return err
}

// EntrySymbol is the exported name of a compiled entry point:
// <prefix>_<func>, e.g. EntrySymbol("lenet5", "main") = "lenet5_main".
func EntrySymbol(prefix, fn string) string { return prefix + "_" + fn }
