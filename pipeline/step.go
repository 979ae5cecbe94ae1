// Package pipeline is Tessera's compilation as one ordered table of named
// steps per target (table.go), in the manner of the Go compiler's
// ssa/compile.go pass list: graph and hlo passes, lowering to tensor IR,
// scheduling, the target's post-schedule passes and code generation. Every
// step is registered by name, so `tessera compile` and `tessera-opt` run
// the same steps: tessera-opt takes one flag per registered step (Steps)
// and runs a pipeline text through the same Runner. --print-ir-after,
// --timing and the steps' statistics cover every step at every level.
package pipeline

import (
	"fmt"
	"sort"
	"strings"

	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/internal/registry"
	"github.com/tessera-ml/tessera/targets"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// Level is the IR a step reads or writes.
type Level int

// IR levels, in compilation order.
const (
	Graph    Level = iota // graph and hlo dialects (*graphir.Module)
	TIR                   // tensor IR (*tensorir.Module)
	Artifact              // compiled code (targets.Artifact)
)

var levelNames = [...]string{"graph or hlo IR", "tensor IR", "compiled code"}

func (l Level) String() string { return levelNames[l] }

// IR is a compilation in flight: the module at its current level (the
// fields of the levels before it stay as they were when it moved on).
type IR struct {
	Level Level
	// Graph is the graph-level module until lower-to-tir, which consumes
	// it (Graph is then nil).
	Graph    *graphir.Module
	TIR      *tir.Module
	Artifact targets.Artifact
	// Target made Artifact.
	Target targets.Target
}

// Action is one configured step, run on the IR in place.
type Action interface {
	Run(ir *IR) error
}

// Step is a registered step of any level: a graph pass (graphir's
// registry), a tensor IR pass (tensorir's registry) or a step registered
// here (conversions between levels and the target-dependent steps).
type Step struct {
	Name    string
	Summary string
	// Options documents accepted options as name → description.
	Options map[string]string
	// Arg, when set, is the option a tool flag's bare value sets
	// (tessera-opt --apply-trace FILE).
	Arg string
	// From is the level the step runs on, To the level it leaves.
	From, To Level
	New      func(opts map[string]string) (Action, error)
}

var steps = registry.New[*Step]("pipeline step")

// register adds a step of this package.
func register(s *Step) { steps.Add(s.Name, s) }

// Lookup returns the step named name at any level, or nil.
func Lookup(name string) *Step {
	if s, ok := steps.Lookup(name); ok {
		return s
	}
	if p := graphir.LookupPass(name); p != nil {
		return graphStep(p)
	}
	if p := tir.LookupPass(name); p != nil {
		return tirStep(p)
	}
	return nil
}

// Steps returns every registered step, sorted by name. Names are unique
// across the registries (a test checks it).
func Steps() []*Step {
	var out []*Step
	for _, n := range stepNames() {
		out = append(out, Lookup(n))
	}
	return out
}

// stepNames lists the names of every registry, sorted.
func stepNames() []string {
	var names []string
	for _, p := range graphir.RegisteredPasses() {
		names = append(names, p.Name)
	}
	for _, p := range tir.RegisteredPasses() {
		names = append(names, p.Name)
	}
	names = append(names, steps.Names()...)
	sort.Strings(names)
	return names
}

// graphStep presents a graph pass as a step.
func graphStep(p *graphir.PassInfo) *Step {
	return &Step{Name: p.Name, Summary: p.Summary, Options: p.Options, From: Graph, To: Graph,
		New: func(opts map[string]string) (Action, error) {
			gp, err := p.New(opts)
			return graphAction{gp}, err
		}}
}

// tirStep presents a tensor IR pass as a step.
func tirStep(p *tir.PassInfo) *Step {
	return &Step{Name: p.Name, Summary: p.Summary, Options: p.Options, From: TIR, To: TIR,
		New: func(opts map[string]string) (Action, error) {
			tp, err := p.New(opts)
			return tirAction{tp}, err
		}}
}

type graphAction struct{ p graphir.Pass }

func (a graphAction) Run(ir *IR) error { return a.p.Run(ir.Graph) }

// Statistics are the pass's, when it reports any.
func (a graphAction) Statistics() []registry.Statistic { return statisticsOf(a.p) }

type tirAction struct{ p tir.Pass }

func (a tirAction) Run(ir *IR) error { return a.p.Run(ir.TIR) }

// Statistics are the pass's, when it reports any.
func (a tirAction) Statistics() []registry.Statistic { return statisticsOf(a.p) }

func statisticsOf(p any) []registry.Statistic {
	if s, ok := p.(registry.WithStatistics); ok {
		return s.Statistics()
	}
	return nil
}

// Instance is a step configured by its options, ready to run.
type Instance struct {
	Step    *Step
	Options map[string]string
	Action  Action
}

// Parse parses a pipeline text (registry.ParsePipeline's grammar, steps
// of any level) into configured steps. Errors: the grammar's, an unknown
// step (naming the known ones), an option the step does not have, the
// step's own.
func Parse(text string) ([]Instance, error) {
	items, err := registry.ParsePipeline(text)
	if err != nil {
		return nil, err
	}
	return Instantiate(items)
}

// Instantiate configures the steps items names.
func Instantiate(items []registry.Item) ([]Instance, error) {
	out := make([]Instance, len(items))
	for i, it := range items {
		s := Lookup(it.Name)
		if s == nil {
			return nil, fmt.Errorf("unknown pass '%s' in pipeline (known: %s)", it.Name, strings.Join(stepNames(), ", "))
		}
		a, err := registry.Instantiate(&registry.PassInfo[Action]{Name: s.Name, Options: s.Options, New: s.New}, it.Options)
		if err != nil {
			return nil, err
		}
		out[i] = Instance{Step: s, Options: it.Options, Action: a}
	}
	return out, nil
}

// Text renders items as a pipeline text that Parse reads back.
func Text(items []registry.Item) string {
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = it.String()
	}
	return strings.Join(parts, ",")
}
