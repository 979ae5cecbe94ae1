package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"runtime/debug"
	"slices"
	"strings"

	"github.com/spf13/pflag"

	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/pipeline"
)

// Exit statuses.
const (
	exitOK       = 0
	exitFailure  = 1 // invalid input, invalid command line, diagnostics mismatch
	exitInternal = 2 // a Go panic: a bug in Tessera, never the user's fault
)

// stdinName is the file name diagnostics use for input read from stdin.
const stdinName = "<stdin>"

// options are the parsed command-line flags.
type options struct {
	output             string
	pipeline           []string // pass pipeline fragments in command-line order
	verifyEach         bool
	printIRAfterAll    bool
	printIRAfter       []string
	timing             bool
	generic            bool
	debugInfo          bool
	printLargeConsts   bool
	elideLargerThan    int64
	allowUnregistered  bool
	splitInputFile     bool
	verifyDiagnostics  bool
	emit               string // the text kind printed after codegen ("" = the target's first)
	tirInput           bool   // the input is tensor IR (.tir)
	showHelp           bool
	inputName, display string // path to read ("" or "-" = stdin), name used in diagnostics
}

// pipelineFlag is the value of --pass-pipeline: every occurrence appends its
// text at its command-line position.
type pipelineFlag struct{ seq *[]string }

func (f pipelineFlag) String() string { return "" }
func (f pipelineFlag) Type() string   { return "pipeline" }
func (f pipelineFlag) Set(v string) error {
	v = strings.TrimSpace(v)
	if v == "" {
		return errors.New("empty pass pipeline")
	}
	*f.seq = append(*f.seq, v)
	return nil
}

// passFlag is the value of a per-step flag such as --canonicalize. A bare
// flag (or =true) adds the step; =false adds nothing; any other value is
// taken as the step's options, `--constant-fold="max-elements=64"` being
// `constant-fold{max-elements=64}` in a pipeline. A step with an Arg takes
// that option's value alone: --apply-trace FILE is apply-trace{file=FILE}.
type passFlag struct {
	name, arg string
	seq       *[]string
}

func (f passFlag) String() string { return "" }
func (f passFlag) Type() string {
	if f.arg != "" {
		return f.arg
	}
	return ""
}
func (f passFlag) Set(v string) error {
	v = strings.TrimSpace(v)
	switch {
	case f.arg != "" && v == "":
		return fmt.Errorf("--%s needs a %s", f.name, f.arg)
	case f.arg != "":
		*f.seq = append(*f.seq, f.name+"{"+f.arg+"="+v+"}")
	case v == "" || v == "true":
		*f.seq = append(*f.seq, f.name)
	case v == "false":
	default:
		v = strings.TrimSuffix(strings.TrimPrefix(v, "{"), "}")
		*f.seq = append(*f.seq, f.name+"{"+v+"}")
	}
	return nil
}

// newFlagSet builds the flag set; tool flags in toolFlags, one flag per
// registered pass in passFlags (returned for the help text).
func newFlagSet(o *options) (fs, toolFlags *pflag.FlagSet, passNames []string) {
	toolFlags = pflag.NewFlagSet("tessera-opt", pflag.ContinueOnError)
	toolFlags.SortFlags = false
	toolFlags.StringVarP(&o.output, "output", "o", "-", "output `FILE` (- = stdout); a file is written only when the run succeeds")
	toolFlags.Var(pipelineFlag{&o.pipeline}, "pass-pipeline", "comma-separated passes to run, e.g. 'canonicalize,cse' or 'builtin.module(func.func(cse))'; runs at its position among the pass flags")
	toolFlags.BoolVar(&o.verifyEach, "verify-each", true, "verify the IR after parsing and after every pass (--verify-each=false turns both off)")
	toolFlags.BoolVar(&o.printIRAfterAll, "print-ir-after-all", false, "print the IR to stderr after every pass")
	toolFlags.StringArrayVar(&o.printIRAfter, "print-ir-after", nil, "print the IR to stderr after the pass named `NAME` (repeatable)")
	toolFlags.BoolVar(&o.timing, "timing", false, "print the wall-clock time of every pass to stderr")
	toolFlags.BoolVar(&o.generic, "mlir-print-op-generic", false, "print every op in MLIR's generic form (readable by mlir-opt-16 --allow-unregistered-dialect)")
	toolFlags.BoolVar(&o.debugInfo, "mlir-print-debuginfo", false, "print op locations as loc(\"file\":line:col)")
	toolFlags.BoolVar(&o.printLargeConsts, "print-large-constants", false, fmt.Sprintf("print dense constants of every size (default: elide constants of more than %d elements)", graphir.DefaultElideThreshold))
	toolFlags.Int64Var(&o.elideLargerThan, "mlir-elide-elementsattrs-if-larger", graphir.DefaultElideThreshold, "elide dense constants with more elements than `N` (0: never)")
	toolFlags.BoolVar(&o.allowUnregistered, "allow-unregistered-dialect", false, "accept ops that no dialect registers (they are kept and printed, not verified)")
	toolFlags.BoolVar(&o.splitInputFile, "split-input-file", false, "split the input on lines '// -----' and process each chunk separately (diagnostics keep the file's line numbers); outputs are joined with '// -----'")
	toolFlags.BoolVar(&o.verifyDiagnostics, "verify-diagnostics", false, "match the diagnostics against '// expected-error[@+N|@-N|@above|@below] {{message}}' comments (and expected-warning, -note, -remark) instead of printing them; the IR of chunks without errors is printed")
	toolFlags.StringVar(&o.emit, "emit", "", "after --codegen, the target's text `KIND` to print (cpu: llvm or asm; default: the first)")
	toolFlags.BoolVarP(&o.showHelp, "help", "h", false, "show this help")

	fs = pflag.NewFlagSet("tessera-opt", pflag.ContinueOnError)
	fs.SortFlags = false
	fs.SetInterspersed(true)
	fs.AddFlagSet(toolFlags)
	for _, s := range pipeline.Steps() {
		if fs.Lookup(s.Name) != nil || strings.HasPrefix(s.Name, "-") {
			continue // shadowed by a tool flag; still usable in --pass-pipeline
		}
		fs.Var(passFlag{s.Name, s.Arg, &o.pipeline}, s.Name, s.Summary)
		if s.Arg == "" {
			fs.Lookup(s.Name).NoOptDefVal = "true"
		}
		passNames = append(passNames, s.Name)
	}
	fs.SetOutput(io.Discard)
	return fs, toolFlags, passNames
}

func usage(w io.Writer, toolFlags *pflag.FlagSet, passNames []string) {
	fmt.Fprintf(w, `Usage: tessera-opt [flags] [file|-] [flags]

Parses Tessera IR (MLIR syntax: graph and hlo dialects; or tensor IR, a
.tir file or text starting with tir.), verifies it, runs the requested
steps in command-line order and prints the result. Every step of
'tessera compile' is a flag: --lower-to-tir moves a fused hlo module to
tensor IR, the tensor-level steps after it (--inline-elementwise,
--default-schedule, --rewrite-layout, ...) apply to that, and --codegen
compiles it (printing the target's text: LLVM IR for cpu).
'tessera compile MODEL --print-pipeline' prints a compilation's steps.

Flags:
%s
Steps (a flag each, run in the order given; options as --NAME='key=value ...',
or inside --pass-pipeline as NAME{key=value ...}):
`, toolFlags.FlagUsages())
	flagged := map[string]bool{}
	for _, n := range passNames {
		flagged[n] = true
	}
	for _, s := range pipeline.Steps() {
		name := "--" + s.Name
		if s.Arg != "" {
			name += " " + strings.ToUpper(s.Arg)
		}
		if !flagged[s.Name] {
			name = s.Name + " (pipeline only)"
		}
		fmt.Fprintf(w, "  %-28s %s (%s)\n", name, s.Summary, levelSpan(s))
		for _, k := range slices.Sorted(maps.Keys(s.Options)) {
			fmt.Fprintf(w, "  %-28s   option %s: %s\n", "", k, s.Options[k])
		}
	}
}

// run is the whole tool; main only wires it to the process.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "tessera-opt: internal error: %v\nThis is a bug in Tessera; please report it with the input.\n%s", r, debug.Stack())
			code = exitInternal
		}
	}()
	var o options
	fs, toolFlags, passNames := newFlagSet(&o)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			usage(stdout, toolFlags, passNames)
			return exitOK
		}
		fmt.Fprintf(stderr, "tessera-opt: %v (see --help)\n", err)
		return exitFailure
	}
	if o.showHelp {
		usage(stdout, toolFlags, passNames)
		return exitOK
	}
	switch rest := fs.Args(); len(rest) {
	case 0:
	case 1:
		o.inputName = rest[0]
	default:
		fmt.Fprintf(stderr, "tessera-opt: expected at most one input file, got %d: %s\n", len(rest), strings.Join(rest, " "))
		return exitFailure
	}
	for _, n := range o.printIRAfter {
		if pipeline.Lookup(n) == nil {
			fmt.Fprintf(stderr, "tessera-opt: --print-ir-after: unknown pass '%s'\n", n)
			return exitFailure
		}
	}
	// Check the pipeline once before reading any input.
	steps, err := pipeline.Parse(o.pipelineText())
	if err != nil {
		fmt.Fprintf(stderr, "tessera-opt: invalid pass pipeline: %v\n", err)
		return exitFailure
	}

	src, err := readInput(&o, stdin)
	if err != nil {
		fmt.Fprintf(stderr, "tessera-opt: %v\n", err)
		return exitFailure
	}
	o.tirInput = isTIRInput(o.display, src)
	if err := checkLevels(steps, o.inputLevel()); err != nil {
		fmt.Fprintf(stderr, "%s: error: %v\n", o.display, err)
		return exitFailure
	}

	chunks := []chunk{{text: string(src), firstLine: 1}}
	if o.splitInputFile {
		chunks = splitInput(string(src))
	}
	var outs []string
	failed := false
	for _, c := range chunks {
		res := processChunk(&o, c, stderr)
		if res.internal {
			return exitInternal
		}
		if o.verifyDiagnostics {
			// Failing chunks are expected to fail; only mismatches count.
			if !checkExpected(stderr, o.display, c, res.diags) {
				failed = true
			}
		} else {
			writeDiagnostics(stderr, o.display, res.diags)
			if !res.ok {
				failed = true
			}
		}
		if res.ok {
			outs = append(outs, res.out)
		}
	}
	text := strings.Join(outs, "// -----\n")
	if o.output == "-" || o.output == "" {
		io.WriteString(stdout, text)
	} else if !failed {
		if err := os.WriteFile(o.output, []byte(text), 0o644); err != nil {
			fmt.Fprintf(stderr, "tessera-opt: %v\n", err)
			return exitFailure
		}
	}
	if failed {
		return exitFailure
	}
	return exitOK
}
