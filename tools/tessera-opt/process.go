package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/pipeline"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// chunk is a piece of the input processed on its own: the whole file, or
// one part of it under --split-input-file.
type chunk struct {
	text string
	// firstLine is the 1-based line of the input where text starts; the
	// chunk is parsed with firstLine-1 newlines in front so that
	// diagnostics carry the line numbers of the original file.
	firstLine int
}

// splitMarker separates chunks under --split-input-file, as in mlir-opt.
const splitMarker = "// -----"

// splitInput splits src on lines starting (after blanks) with `// -----`.
// The marker lines belong to no chunk; a file ending with a marker yields
// a last, empty chunk.
func splitInput(src string) []chunk {
	var chunks []chunk
	var cur strings.Builder
	first, line := 1, 1
	for _, l := range strings.SplitAfter(src, "\n") {
		if l == "" {
			continue
		}
		if strings.HasPrefix(strings.TrimLeft(l, " \t"), splitMarker) {
			chunks = append(chunks, chunk{text: cur.String(), firstLine: first})
			cur.Reset()
			first = line + 1
		} else {
			cur.WriteString(l)
		}
		line++
	}
	return append(chunks, chunk{text: cur.String(), firstLine: first})
}

// source returns the chunk text padded so that its lines keep their numbers.
func (c chunk) source() string {
	return strings.Repeat("\n", c.firstLine-1) + c.text
}

func readInput(o *options, stdin io.Reader) ([]byte, error) {
	if o.inputName == "" || o.inputName == "-" {
		o.display = stdinName
		src, err := io.ReadAll(stdin)
		if err != nil {
			return nil, fmt.Errorf("could not read stdin: %v", err)
		}
		return src, nil
	}
	o.display = o.inputName
	src, err := os.ReadFile(o.inputName)
	if err != nil {
		return nil, fmt.Errorf("could not open input file: %v", err)
	}
	return src, nil
}

func (o *options) printOptions() graphir.PrintOptions {
	po := graphir.PrintOptions{Generic: o.generic, DebugInfo: o.debugInfo, ElideLargerThan: o.elideLargerThan}
	if o.printLargeConsts || po.ElideLargerThan < 0 {
		po.ElideLargerThan = 0
	}
	return po
}

// result is the outcome of one chunk.
type result struct {
	ok       bool   // parsed, verified and transformed without error
	out      string // the printed IR when ok
	diags    graphir.Diagnostics
	internal bool // a panic was reported
}

// processChunk parses, verifies, transforms and prints one chunk. A panic
// anywhere below is reported as an internal error.
func processChunk(o *options, c chunk, stderr io.Writer) (res result) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "%s:%d: internal error: %v\nThis is a bug in Tessera; please report it with the input.\n%s", o.display, c.firstLine, r, debug.Stack())
			res = result{internal: true}
		}
	}()
	ir, err := o.parse(c)
	if err != nil {
		res.diags = graphir.AsDiagnostics(err)
		return res
	}
	r := o.runner(stderr)
	if o.verifyEach {
		if err := r.Verify(ir); err != nil {
			res.diags = graphir.AsDiagnostics(err)
			return res
		}
	}
	steps, err := pipeline.Parse(o.pipelineText())
	if err != nil {
		res.diags = graphir.Diagnostics{graphir.Errorf(graphir.Location{}, "invalid pass pipeline: %v", err)}
		return res
	}
	err = r.Run(ir, steps)
	if o.timing {
		r.WriteTiming(stderr)
	}
	if err != nil {
		res.diags = graphir.AsDiagnostics(err)
		return res
	}
	res.out, err = o.print(r, ir)
	if err != nil {
		res.diags = graphir.AsDiagnostics(err)
		return res
	}
	res.ok = true
	return res
}

// parse reads a chunk at the input's level.
func (o *options) parse(c chunk) (*pipeline.IR, error) {
	if o.tirInput {
		tm, err := tir.Parse(o.display, []byte(c.source()))
		return &pipeline.IR{Level: pipeline.TIR, TIR: tm}, err
	}
	m, err := graphir.Parse(o.display, []byte(c.source()))
	return &pipeline.IR{Level: pipeline.Graph, Graph: m}, err
}

// runner is the pipeline runner the flags configure.
func (o *options) runner(stderr io.Writer) *pipeline.Runner {
	r := pipeline.NewRunner()
	r.VerifyEach = o.verifyEach
	r.VerifyOptions = graphir.VerifyOptions{AllowUnregistered: o.allowUnregistered}
	r.PrintAfterAll, r.Timing, r.Dump, r.Log = o.printIRAfterAll, o.timing, stderr, stderr
	for _, n := range o.printIRAfter {
		r.PrintAfter[n] = true
	}
	r.GraphPrint, r.TIRPrint = o.printOptions(), o.tirPrintOptions()
	return r
}

// print renders the IR at its final level as r prints it; compiled code
// as the target's text (--emit, default its first text kind).
func (o *options) print(r *pipeline.Runner, ir *pipeline.IR) (string, error) {
	if ir.Level != pipeline.Artifact {
		return r.Print(ir), nil
	}
	kind := o.emit
	if kind == "" {
		kind = ir.Target.TextEmits()[0]
	}
	if !slices.Contains(ir.Target.TextEmits(), kind) {
		return "", fmt.Errorf("--emit: the %s target prints %s, not %q", ir.Target.Name(), strings.Join(ir.Target.TextEmits(), " or "), kind)
	}
	text, err := ir.Artifact.Emit(kind, "")
	return string(text), err
}

// tirPrintOptions are the tensor IR print options of the flags.
func (o *options) tirPrintOptions() tir.PrintOptions {
	po := tir.PrintOptions{DebugInfo: o.debugInfo}
	if !o.printLargeConsts && o.elideLargerThan > 0 {
		po.ElideConstantsLargerThan = o.elideLargerThan
	}
	return po
}

// pipelineText is the steps of the command line, in order.
func (o *options) pipelineText() string { return strings.Join(o.pipeline, ",") }

// inputLevel is the level the input is parsed at.
func (o *options) inputLevel() pipeline.Level {
	if o.tirInput {
		return pipeline.TIR
	}
	return pipeline.Graph
}

// checkLevels checks, before any input is processed, that each step
// gets the level it runs on (an input's level, then each step's result).
func checkLevels(steps []pipeline.Instance, level pipeline.Level) error {
	for _, in := range steps {
		if err := pipeline.CheckLevel(in.Step, level); err != nil {
			return err
		}
		level = in.Step.To
	}
	return nil
}

// levelSpan describes the levels a step works on, for --help.
func levelSpan(s *pipeline.Step) string {
	if s.From == s.To {
		return s.From.String()
	}
	return s.From.String() + " → " + s.To.String()
}

// isTIRInput reports whether the input is tensor IR: a .tir file, or text
// whose first token (after blanks and // comments) starts with "tir.".
func isTIRInput(name string, src []byte) bool {
	if strings.HasSuffix(name, ".tir") {
		return true
	}
	s := string(src)
	for {
		s = strings.TrimLeft(s, " \t\r\n")
		if !strings.HasPrefix(s, "//") {
			break
		}
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			s = s[i+1:]
		} else {
			s = ""
		}
	}
	return strings.HasPrefix(s, "tir.")
}

// flatDiag is one diagnostic or note with its effective location.
type flatDiag struct {
	loc graphir.Location
	sev graphir.Severity
	msg string
}

// flatten lists diagnostics and their notes in order; a note without a
// location takes its diagnostic's location, as in MLIR.
func flatten(ds graphir.Diagnostics) []flatDiag {
	var out []flatDiag
	var walk func(d *graphir.Diagnostic, parent graphir.Location)
	walk = func(d *graphir.Diagnostic, parent graphir.Location) {
		if d == nil {
			return
		}
		loc := d.Loc
		if !loc.Known() && loc.File == "" {
			loc = parent
		}
		out = append(out, flatDiag{loc, d.Severity, d.Message})
		for _, n := range d.Notes {
			walk(n, loc)
		}
	}
	for _, d := range ds {
		walk(d, graphir.Location{})
	}
	return out
}

// locString renders a location for a diagnostic line; an unknown location
// becomes the input file's name.
func locString(l graphir.Location, file string) string {
	if l.Known() || l.File != "" {
		return l.String()
	}
	return file
}

// writeDiagnostics prints ds MLIR-style, one line per diagnostic and note.
func writeDiagnostics(w io.Writer, file string, ds graphir.Diagnostics) {
	for _, d := range flatten(ds) {
		fmt.Fprintf(w, "%s: %s: %s\n", locString(d.loc, file), d.sev, d.msg)
	}
}
