package graphir

import (
	"fmt"
	"io"
	"strings"
	"time"

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

// PassManager runs an ordered list of passes, verifying after each one.
type PassManager struct {
	Passes []Pass
	// VerifyEach verifies the module after every pass (default true via NewPassManager).
	VerifyEach bool
	// Verify are the options of those verifications.
	Verify VerifyOptions
	// PrintAfterAll dumps the IR after every pass to IRDump.
	PrintAfterAll bool
	// PrintAfter dumps the IR after the passes with these names.
	PrintAfter map[string]bool
	// Timing records wall-clock time per pass, reported by WriteTiming.
	Timing bool
	// IRDump receives the dumps (stderr in tools).
	IRDump io.Writer
	// PrintOptions format the dumps.
	PrintOptions PrintOptions
	timings      []registry.Timing
}

// NewPassManager returns a pass manager that verifies after each pass.
func NewPassManager() *PassManager {
	return &PassManager{VerifyEach: true, PrintAfter: map[string]bool{}}
}

// Add appends passes.
func (pm *PassManager) Add(ps ...Pass) { pm.Passes = append(pm.Passes, ps...) }

// AddPipeline parses a textual pipeline and appends its passes.
func (pm *PassManager) AddPipeline(text string) error {
	ps, err := ParsePipeline(text)
	if err != nil {
		return err
	}
	pm.Add(ps...)
	return nil
}

// Run applies the passes in order. A pass error, or a verifier failure
// after a pass, stops the pipeline; verifier failures get a note naming the pass.
func (pm *PassManager) Run(m *Module) error {
	for _, p := range pm.Passes {
		start := time.Now()
		err := p.Run(m)
		if pm.Timing {
			pm.timings = append(pm.timings, registry.Timing{Name: p.Name(), D: time.Since(start)})
		}
		if err != nil {
			return err
		}
		if pm.VerifyEach {
			if verr := VerifyWith(m, pm.Verify); verr != nil {
				ds := AsDiagnostics(verr)
				ds[0].AddNote(Location{}, "the IR is invalid after pass '%s'", p.Name())
				return ds
			}
		}
		if pm.IRDump != nil && (pm.PrintAfterAll || pm.PrintAfter[p.Name()]) {
			fmt.Fprintf(pm.IRDump, "// -----// IR Dump After %s //----- //\n%s\n", p.Name(), PrintWith(m, pm.PrintOptions))
		}
	}
	return nil
}

// WriteTiming prints the per-pass wall-clock report, in the style of
// mlir-opt's -mlir-timing.
func (pm *PassManager) WriteTiming(w io.Writer) { registry.WriteTiming(w, pm.timings) }

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
