// Package registry is the one named registry Tessera's extension points
// share: ops and passes of each IR level, and targets register themselves
// by name in an init function of the file that defines them, and tools
// list them from here (MLIR's registration, without a central list).
package registry

import (
	"fmt"
	"sort"
	"sync"
)

// Registry maps names to entries of type T. The zero value is ready to
// use and safe for concurrent use.
type Registry[T any] struct {
	// what names the kind of entry in panics ("pass", "target").
	what string
	mu   sync.RWMutex
	m    map[string]T
}

// New returns an empty registry of entries called what.
func New[T any](what string) *Registry[T] {
	return &Registry[T]{what: what}
}

// Add registers v under name. A duplicate name panics: it is a programming
// error, caught at start-up.
func (r *Registry[T]) Add(name string, v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.m[name]; dup {
		panic(fmt.Sprintf("%s registered twice: %s", r.what, name))
	}
	if r.m == nil {
		r.m = map[string]T{}
	}
	r.m[name] = v
}

// Lookup returns the entry registered under name.
func (r *Registry[T]) Lookup(name string) (T, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	v, ok := r.m[name]
	return v, ok
}

// Names returns the registered names, sorted.
func (r *Registry[T]) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.m))
	for n := range r.m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// All returns the entries sorted by name.
func (r *Registry[T]) All() []T {
	names := r.Names()
	out := make([]T, len(names))
	for i, n := range names {
		out[i], _ = r.Lookup(n)
	}
	return out
}

// PassInfo describes a pass of some IR level: P is that level's pass
// interface (graphir.Pass, tensorir.Pass). Passes register one in an init
// function of their file; tools make a flag of each.
type PassInfo[P any] struct {
	Name    string
	Summary string
	// Options documents accepted options as name → description.
	Options map[string]string
	// New builds the pass from its pipeline options (`name{key=value}`).
	New func(opts map[string]string) (P, error)
}

// Passes is a registry of the passes of one IR level.
type Passes[P any] struct{ Registry[*PassInfo[P]] }

// NewPasses returns an empty pass registry for the level named what.
func NewPasses[P any](what string) *Passes[P] {
	return &Passes[P]{Registry[*PassInfo[P]]{what: what + " pass"}}
}

// Register adds a pass; a duplicate name panics at start-up.
func (r *Passes[P]) Register(info *PassInfo[P]) { r.Add(info.Name, info) }

// Info returns the pass registered under name, or nil.
func (r *Passes[P]) Info(name string) *PassInfo[P] {
	p, _ := r.Lookup(name)
	return p
}

// Statistic is one counter a pass reports about its last run (MLIR's pass
// statistics): what it changed, for --stats and tests.
type Statistic struct {
	Name  string // short, hyphenated: "params-rewritten"
	Help  string // what it counts
	Value int64
}

// WithStatistics is implemented by passes that report statistics.
type WithStatistics interface {
	Statistics() []Statistic
}
