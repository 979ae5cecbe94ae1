package graphir

import (
	"fmt"
	"strings"

	"github.com/tessera-ml/tessera/internal/registry"
)

// Pass transforms a module in place. Errors should be diagnostics located
// at the offending op.
type Pass interface {
	Name() string
	Run(m *Module) error
}

// PassInfo registers a pass under a pipeline name.
type PassInfo = registry.PassInfo[Pass]

var passes = registry.NewPasses[Pass]("graphir")

// RegisterPass makes a pass available to pipelines and tools. A duplicate
// name panics at start-up.
func RegisterPass(info *PassInfo) { passes.Register(info) }

// LookupPass returns the registered pass info, or nil.
func LookupPass(name string) *PassInfo { return passes.Info(name) }

// RegisteredPasses returns all passes sorted by name.
func RegisteredPasses() []*PassInfo { return passes.All() }

// FuncPass adapts a per-function transformation to a Pass.
type FuncPass struct {
	PassName string
	Fn       func(f *Func) error
}

// Name returns the pipeline name.
func (p *FuncPass) Name() string { return p.PassName }

// Run applies Fn to every function of m, stopping at the first error.
func (p *FuncPass) Run(m *Module) error {
	for _, f := range m.Funcs {
		if err := p.Fn(f); err != nil {
			return err
		}
	}
	return nil
}

// RegisterFuncPass registers a pass without options that applies fn to
// every function of the module.
func RegisterFuncPass(name, summary string, fn func(f *Func) error) {
	RegisterPass(&PassInfo{Name: name, Summary: summary, New: func(map[string]string) (Pass, error) {
		return &FuncPass{PassName: name, Fn: fn}, nil
	}})
}

// RunPasses applies ps to m in order and verifies m after each one with
// opts. A pass error, or a verifier failure (noted with the name of the
// pass that left the IR invalid), stops the run. Tools run passes through
// pipeline.Runner, which keeps this contract and adds IR dumps, timing and
// statistics.
func RunPasses(m *Module, opts VerifyOptions, ps ...Pass) error {
	for _, p := range ps {
		if err := p.Run(m); err != nil {
			return err
		}
		if verr := VerifyWith(m, opts); verr != nil {
			return InvalidAfter(verr, p.Name())
		}
	}
	return nil
}

// InvalidAfter is the verifier error err with a note naming the pass that
// left the IR invalid (either level's: both report syntax diagnostics).
func InvalidAfter(err error, pass string) Diagnostics {
	ds := AsDiagnostics(err)
	ds[0].AddNote(Location{}, "the IR is invalid after pass '%s'", pass)
	return ds
}

// RunPipeline parses text (ParsePipeline) and runs it with RunPasses and
// the default verifier options.
func RunPipeline(m *Module, text string) error {
	ps, err := ParsePipeline(text)
	if err != nil {
		return err
	}
	return RunPasses(m, VerifyOptions{}, ps...)
}

// ParsePipeline parses a comma-separated pass list such as
// "canonicalize,cse" or "constant-fold{max-elements=1024},dce"
// (registry.ParsePipeline's grammar) into graph passes. Errors: the
// grammar's, an unknown pass (naming the known ones), an option the pass
// does not have, the pass's own.
func ParsePipeline(text string) ([]Pass, error) {
	items, err := registry.ParsePipeline(text)
	if err != nil {
		return nil, err
	}
	out := make([]Pass, len(items))
	for i, it := range items {
		info := LookupPass(it.Name)
		if info == nil {
			return nil, fmt.Errorf("unknown pass '%s' in pipeline (known: %s)", it.Name, strings.Join(passes.Names(), ", "))
		}
		if out[i], err = registry.Instantiate(info, it.Options); err != nil {
			return nil, err
		}
	}
	return out, nil
}
