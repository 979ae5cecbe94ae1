package main

import (
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sort"
	"strings"

	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/lowering"
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
	if o.tirInput {
		tm, err := tir.Parse(o.display, []byte(c.source()))
		if err != nil {
			res.diags = graphir.AsDiagnostics(err)
			return res
		}
		return processTIR(o, tm, stderr)
	}
	m, err := graphir.Parse(o.display, []byte(c.source()))
	if err != nil {
		res.diags = graphir.AsDiagnostics(err)
		return res
	}
	vopts := graphir.VerifyOptions{AllowUnregistered: o.allowUnregistered}
	if o.verifyEach {
		if err := graphir.VerifyWith(m, vopts); err != nil {
			res.diags = graphir.AsDiagnostics(err)
			return res
		}
	}
	passes, err := graphir.ParsePipeline(o.graphPipeline())
	if err != nil {
		res.diags = graphir.Diagnostics{graphir.Errorf(graphir.Location{}, "invalid pass pipeline: %v", err)}
		return res
	}
	po := o.printOptions()
	pm := graphir.NewPassManager()
	pm.VerifyEach = o.verifyEach
	pm.Verify = vopts
	pm.Add(passes...)
	pm.PrintAfterAll = o.printIRAfterAll
	for _, n := range o.printIRAfter {
		pm.PrintAfter[n] = true
	}
	pm.Timing = o.timing
	pm.IRDump = stderr
	pm.PrintOptions = po
	err = pm.Run(m)
	if o.timing {
		pm.WriteTiming(stderr)
	}
	if err != nil {
		res.diags = graphir.AsDiagnostics(err)
		return res
	}
	if o.lowersToTIR() {
		tm, err := lowering.LowerToTIR(m)
		if err != nil {
			res.diags = graphir.AsDiagnostics(err)
			return res
		}
		return processTIR(o, tm, stderr)
	}
	res.ok = true
	res.out = graphir.PrintWith(m, po)
	return res
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

func sortedKeys(m map[string]string) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
