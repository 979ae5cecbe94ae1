package schedule

import (
	"fmt"
	"math/rand"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Schedule is a TVM-style schedule (tvm/src/tir/schedule/schedule.cc) over
// one tensor-IR PrimFunc: the function being scheduled, the unscheduled
// original, the trace of every primitive applied and a random-number
// generator for the sampling instructions.
//
// Statements are immutable: a primitive builds a new body (sharing every
// subtree it does not change) and installs it with SetBody; the original
// function is never modified.
type Schedule struct {
	f     *tir.PrimFunc
	orig  *tir.PrimFunc
	trace *Trace
	rng   *rand.Rand

	// handle ids of the trace
	blockIDs map[string]string
	loopIDs  map[*tir.Var]string
	next     int
	// sampled values not yet consumed, most recent last
	samples []sampleGroup
	// generalize is set while ReplayGeneralized replays a trace made at
	// a representative size on a function with symbolic extents.
	generalize bool
	// repVals are the representative sizes the trace ReplayGeneralizedAt
	// replays was made at.
	repVals map[string]int64
}

// sampleGroup is the output of one sampling instruction: value handles
// (ids "v<n>") with their values.
type sampleGroup struct {
	ids  []string
	vals []int64
	used bool
	loop *tir.Var // the loop of a sample_perfect_tile
}

// New makes a schedule of f with seed 1.
func New(f *tir.PrimFunc) *Schedule { return NewWithSeed(f, 1) }

// NewWithSeed makes a schedule of f whose sampling instructions draw from
// a generator seeded with seed.
func NewWithSeed(f *tir.PrimFunc, seed int64) *Schedule {
	cp := *f
	cp.Attrs = copyAttrs(f.Attrs)
	cp.Params = append([]*tir.Param(nil), f.Params...)
	return &Schedule{
		f:        &cp,
		orig:     f,
		trace:    &Trace{},
		rng:      rand.New(rand.NewSource(seed)),
		blockIDs: map[string]string{},
		loopIDs:  map[*tir.Var]string{},
	}
}

func copyAttrs(a tir.Attrs) tir.Attrs {
	if a == nil {
		return nil
	}
	out := tir.Attrs{}
	for k, v := range a {
		out[k] = v
	}
	return out
}

// Func is the current scheduled function.
func (s *Schedule) Func() *tir.PrimFunc { return s.f }

// Original is the unscheduled function the schedule was made from.
func (s *Schedule) Original() *tir.PrimFunc { return s.orig }

// Trace is the record of every instruction applied so far.
func (s *Schedule) Trace() *Trace { return s.trace }

// Rand is the schedule's random-number generator (for sampling
// instructions).
func (s *Schedule) Rand() *rand.Rand { return s.rng }

// BlockRV is a block handle: blocks are identified by their unique name.
type BlockRV struct{ Name string }

// LoopRV is a loop handle: the identity of the loop's variable, which
// primitives keep when they rebuild loops they do not replace. A LoopRV
// with a nil Var stands for the root (the function body; "root" in
// sample_compute_location).
type LoopRV struct{ Var *tir.Var }

// RootLoop is the root location (outside every loop).
var RootLoop = LoopRV{}

// Name is the loop variable's name, or "root".
func (l LoopRV) Name() string {
	if l.Var == nil {
		return "root"
	}
	return l.Var.Name
}

// IsRoot reports whether l is the root location.
func (l LoopRV) IsRoot() bool { return l.Var == nil }

func (b BlockRV) String() string { return fmt.Sprintf("block %q", b.Name) }
func (l LoopRV) String() string  { return "loop %" + l.Name() }
