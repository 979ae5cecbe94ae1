package tensorir

import "github.com/tessera-ml/tessera/internal/registry"

// Pass transforms a tensor IR module in place: the tensor-level
// counterpart of graphir.Pass. Passes register themselves (RegisterPass)
// in the file that defines them; tessera-opt gets a flag for each, and
// the compilation pipeline (package pipeline) runs them by name.
type Pass interface {
	Name() string
	Run(m *Module) error
}

// PassInfo registers a tensor IR pass under its pipeline name.
type PassInfo = registry.PassInfo[Pass]

var passes = registry.NewPasses[Pass]("tensorir")

// RegisterPass makes a pass available to pipelines and tools. A duplicate
// name panics at start-up.
func RegisterPass(info *PassInfo) { passes.Register(info) }

// LookupPass returns the registered pass info, or nil.
func LookupPass(name string) *PassInfo { return passes.Info(name) }

// RegisteredPasses returns all tensor IR passes sorted by name.
func RegisteredPasses() []*PassInfo { return passes.All() }

// ModulePass adapts a module transformation to a Pass.
type ModulePass struct {
	PassName string
	Fn       func(m *Module) error
}

// Name returns the pipeline name.
func (p *ModulePass) Name() string { return p.PassName }

// Run applies Fn.
func (p *ModulePass) Run(m *Module) error { return p.Fn(m) }

// RegisterModulePass registers a pass without options that runs fn.
func RegisterModulePass(name, summary string, fn func(m *Module) error) {
	RegisterPass(&PassInfo{Name: name, Summary: summary, New: func(map[string]string) (Pass, error) {
		return &ModulePass{PassName: name, Fn: fn}, nil
	}})
}
