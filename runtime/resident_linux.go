//go:build linux

package runtime

import "github.com/ebitengine/purego"

// glibc's dlopen flags (bits/dlfcn.h), which purego does not define.
const (
	rtldNoload   = 0x00004 // only return a handle if the library is already loaded
	rtldNodelete = 0x01000 // never unload the library
)

// residentLibs are runtime libraries that start threads which outlive the
// call that started them. Compiled parallel loops run on libgomp's worker
// threads, which park inside libgomp between calls; if dlclose of the last
// model using libgomp unloaded it, those threads would return into
// unmapped code and crash the process.
var residentLibs = []string{"libgomp.so.1"}

// keepRuntimeLibsResident marks every already-loaded library of
// residentLibs RTLD_NODELETE. It is called after each dlopen; it loads
// nothing (RTLD_NOLOAD) and leaves reference counts unchanged.
func keepRuntimeLibsResident() {
	for _, name := range residentLibs {
		h, err := purego.Dlopen(name, purego.RTLD_NOW|rtldNoload|rtldNodelete)
		if err == nil && h != 0 {
			_ = purego.Dlclose(h)
		}
	}
}
