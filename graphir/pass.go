package graphir

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// Pass transforms a module in place. Errors should be diagnostics located
// at the offending op.
type Pass interface {
	Name() string
	Run(m *Module) error
}

// PassInfo registers a pass under a pipeline name.
type PassInfo struct {
	Name    string
	Summary string
	// Options documents accepted options as name → description.
	Options map[string]string
	// New builds the pass from its pipeline options (`name{key=value}`).
	New func(opts map[string]string) (Pass, error)
}

var (
	passMu    sync.RWMutex
	passTable = map[string]*PassInfo{}
)

// RegisterPass makes a pass available to pipelines and tools. A duplicate
// name panics at start-up.
func RegisterPass(info *PassInfo) {
	passMu.Lock()
	defer passMu.Unlock()
	if _, dup := passTable[info.Name]; dup {
		panic("graphir: pass registered twice: " + info.Name)
	}
	passTable[info.Name] = info
}

// LookupPass returns the registered pass info, or nil.
func LookupPass(name string) *PassInfo {
	passMu.RLock()
	defer passMu.RUnlock()
	return passTable[name]
}

// RegisteredPasses returns all passes sorted by name.
func RegisteredPasses() []*PassInfo {
	passMu.RLock()
	defer passMu.RUnlock()
	out := make([]*PassInfo, 0, len(passTable))
	for _, p := range passTable {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

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
	timings      []passTiming
}

type passTiming struct {
	name string
	d    time.Duration
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
			pm.timings = append(pm.timings, passTiming{p.Name(), time.Since(start)})
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
func (pm *PassManager) WriteTiming(w io.Writer) {
	var total time.Duration
	for _, t := range pm.timings {
		total += t.d
	}
	fmt.Fprintf(w, "===-------------------------------------------------------------------------===\n")
	fmt.Fprintf(w, "                         ... Pass execution timing report ...\n")
	fmt.Fprintf(w, "===-------------------------------------------------------------------------===\n")
	fmt.Fprintf(w, "  Total Execution Time: %.4f seconds\n\n", total.Seconds())
	fmt.Fprintf(w, "  ----Wall Time----  ----Name----\n")
	for _, t := range pm.timings {
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(t.d) / float64(total)
		}
		fmt.Fprintf(w, "  %8.4f (%5.1f%%)  %s\n", t.d.Seconds(), pct, t.name)
	}
	fmt.Fprintf(w, "  %8.4f (100.0%%)  Total\n", total.Seconds())
}

// ParsePipeline parses a comma-separated pass list such as
// "canonicalize,cse" or "constant-fold{max-elements=1024},dce". MLIR's
// nesting wrappers builtin.module(...) and func.func(...) are accepted and
// flattened, since every Tessera pass runs on the whole module.
func ParsePipeline(text string) ([]Pass, error) {
	var passes []Pass
	items, err := splitPipeline(text)
	if err != nil {
		return nil, err
	}
	for _, it := range items {
		name, opts, err := parsePassItem(it)
		if err != nil {
			return nil, err
		}
		if name == "builtin.module" || name == "func.func" || name == "any" {
			inner, err := ParsePipeline(opts["__nested__"])
			if err != nil {
				return nil, err
			}
			passes = append(passes, inner...)
			continue
		}
		info := LookupPass(name)
		if info == nil {
			return nil, fmt.Errorf("unknown pass '%s' in pipeline (known: %s)", name, strings.Join(passNames(), ", "))
		}
		for k := range opts {
			if _, ok := info.Options[k]; !ok {
				return nil, fmt.Errorf("pass '%s' has no option '%s'", name, k)
			}
		}
		p, err := info.New(opts)
		if err != nil {
			return nil, fmt.Errorf("pass '%s': %v", name, err)
		}
		passes = append(passes, p)
	}
	return passes, nil
}

func passNames() []string {
	var ns []string
	for _, p := range RegisteredPasses() {
		ns = append(ns, p.Name)
	}
	return ns
}

// splitPipeline splits on top-level commas, respecting () and {} nesting.
func splitPipeline(s string) ([]string, error) {
	var items []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(', '{':
			depth++
		case ')', '}':
			depth--
			if depth < 0 {
				return nil, fmt.Errorf("unbalanced '%c' in pass pipeline at offset %d", s[i], i)
			}
		case ',':
			if depth == 0 {
				items = append(items, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, fmt.Errorf("unbalanced brackets in pass pipeline %q", s)
	}
	if last := strings.TrimSpace(s[start:]); last != "" || len(items) > 0 {
		items = append(items, last)
	}
	for _, it := range items {
		if it == "" {
			return nil, fmt.Errorf("empty pass name in pipeline %q", s)
		}
	}
	return items, nil
}

func parsePassItem(it string) (string, map[string]string, error) {
	opts := map[string]string{}
	if i := strings.IndexByte(it, '('); i >= 0 {
		if !strings.HasSuffix(it, ")") {
			return "", nil, fmt.Errorf("malformed pipeline element %q", it)
		}
		opts["__nested__"] = it[i+1 : len(it)-1]
		return strings.TrimSpace(it[:i]), opts, nil
	}
	i := strings.IndexByte(it, '{')
	if i < 0 {
		return it, opts, nil
	}
	if !strings.HasSuffix(it, "}") {
		return "", nil, fmt.Errorf("malformed pass options in %q", it)
	}
	for _, kv := range strings.Fields(it[i+1 : len(it)-1]) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			v = "true"
		}
		opts[k] = v
	}
	return strings.TrimSpace(it[:i]), opts, nil
}
