package tensorir

import (
	"fmt"
	"sort"
	"strings"
	"sync"
)

// Storage scopes beyond the three every target knows (ScopeGlobal,
// ScopeShared, ScopeLocal): a target registers the memories its kernels
// stage data in, as TVM's accelerator storage scopes (VTA's
// local.inp_buffer, local.wgt_buffer, local.acc_buffer). The verifier
// and the cache primitives accept every known scope.
var (
	scopeMu sync.RWMutex
	scopes  = map[string]string{}
)

// RegisterScope adds storage scope name, described by doc (what memory it
// is), to the known scopes. It panics when name is empty, holds a quote
// or is known already.
func RegisterScope(name, doc string) {
	if name == "" || strings.ContainsAny(name, "\"\\") {
		panic(fmt.Sprintf("RegisterScope(%q): not a scope name", name))
	}
	scopeMu.Lock()
	defer scopeMu.Unlock()
	if _, ok := scopes[name]; ok || name == ScopeGlobal || name == ScopeShared || name == ScopeLocal {
		panic(fmt.Sprintf("RegisterScope(%q): already known", name))
	}
	scopes[name] = doc
}

// KnownScope reports whether name is a storage scope: global, shared,
// local or a registered one.
func KnownScope(name string) bool {
	if name == ScopeGlobal || name == ScopeShared || name == ScopeLocal {
		return true
	}
	scopeMu.RLock()
	defer scopeMu.RUnlock()
	_, ok := scopes[name]
	return ok
}

// ScopeDoc is what a registered scope is ("" for the built-in ones and
// unknown names).
func ScopeDoc(name string) string {
	scopeMu.RLock()
	defer scopeMu.RUnlock()
	return scopes[name]
}

// ScopeNames lists the known scopes: global, shared and local, then the
// registered ones sorted.
func ScopeNames() []string {
	scopeMu.RLock()
	var reg []string
	for n := range scopes {
		reg = append(reg, n)
	}
	scopeMu.RUnlock()
	sort.Strings(reg)
	return append([]string{ScopeGlobal, ScopeShared, ScopeLocal}, reg...)
}

// ScopeList is ScopeNames as diagnostics write it: "global, shared or
// local".
func ScopeList() string {
	n := ScopeNames()
	return strings.Join(n[:len(n)-1], ", ") + " or " + n[len(n)-1]
}
