package main

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/tessera-ml/tessera/graphir"
)

// expectation is one `// expected-<severity>[@designator] {{message}}`
// comment of a --verify-diagnostics test.
type expectation struct {
	sev     graphir.Severity
	line    int // the line the diagnostic must be reported on
	srcLine int // where the comment is
	srcCol  int
	msg     string // matched as a substring of the diagnostic's message
	matched bool
}

var (
	// expectRE is mlir-opt's syntax: a designator @+N, @-N, @above or @below
	// moves the expected line; the message is everything between the first
	// {{ and the last }} of the line.
	expectRE = regexp.MustCompile(`expected-(error|warning|note|remark)(@[^\s{]*)?\s*\{\{(.*)\}\}\s*$`)
	// anyExpectRE finds directives, to report malformed ones instead of
	// silently ignoring them.
	anyExpectRE = regexp.MustCompile(`//.*\bexpected-(error|warning|note|remark)\b`)
)

var severities = map[string]graphir.Severity{
	"error": graphir.SevError, "warning": graphir.SevWarning,
	"note": graphir.SevNote, "remark": graphir.SevRemark,
}

// parseExpectations reads the directives of a chunk. Malformed directives
// come back as error diagnostics.
func parseExpectations(file string, c chunk) ([]*expectation, graphir.Diagnostics) {
	var exps []*expectation
	var bad graphir.Diagnostics
	lines := strings.Split(c.text, "\n")
	// designator reports whether a line holds a directive; @above and
	// @below skip such lines, as in MLIR.
	designator := func(i int) bool { return anyExpectRE.MatchString(lines[i]) }
	for i, l := range lines {
		if !designator(i) {
			continue
		}
		lineNo := c.firstLine + i
		loc := anyExpectRE.FindStringIndex(l)
		col := strings.Index(l[loc[0]:], "expected-") + loc[0] + 1
		m := expectRE.FindStringSubmatch(l)
		if m == nil {
			bad = append(bad, graphir.Errorf(graphir.Location{File: file, Line: lineNo, Col: col},
				"malformed diagnostic directive (expected `expected-%s[@+N|@-N|@above|@below] {{message}}`)", anyExpectRE.FindStringSubmatch(l)[1]))
			continue
		}
		e := &expectation{sev: severities[m[1]], line: lineNo, srcLine: lineNo, srcCol: col, msg: m[3]}
		switch d := strings.TrimPrefix(m[2], "@"); {
		case m[2] == "":
		case d == "above" || d == "below":
			step := -1
			if d == "below" {
				step = 1
			}
			j := i + step
			for j >= 0 && j < len(lines) && designator(j) {
				j += step
			}
			if j < 0 || j >= len(lines) {
				bad = append(bad, graphir.Errorf(graphir.Location{File: file, Line: lineNo, Col: col}, "@%s designator has no line to refer to", d))
				continue
			}
			e.line = c.firstLine + j
		default:
			n, err := strconv.Atoi(d)
			if err != nil || (d[0] != '+' && d[0] != '-') {
				bad = append(bad, graphir.Errorf(graphir.Location{File: file, Line: lineNo, Col: col}, "invalid designator '%s' (use @+N, @-N, @above or @below)", m[2]))
				continue
			}
			e.line = lineNo + n
			if e.line < 1 {
				bad = append(bad, graphir.Errorf(graphir.Location{File: file, Line: lineNo, Col: col}, "designator '%s' points before the first line", m[2]))
				continue
			}
		}
		if strings.TrimSpace(e.msg) == "" {
			bad = append(bad, graphir.Errorf(graphir.Location{File: file, Line: lineNo, Col: col}, "empty expected message"))
			continue
		}
		exps = append(exps, e)
	}
	return exps, bad
}

// checkExpected matches the diagnostics of a chunk against its directives,
// reports every unexpected diagnostic and every unproduced expectation on
// w, and reports whether everything matched. A diagnostic matches a
// directive of the same severity on its line whose message is a substring
// of its own; a directive can absorb several identical diagnostics.
func checkExpected(w io.Writer, file string, c chunk, ds graphir.Diagnostics) bool {
	exps, bad := parseExpectations(file, c)
	writeDiagnostics(w, file, bad)
	ok := len(bad) == 0
	for _, d := range flatten(ds) {
		var found *expectation
		if d.loc.Known() && d.loc.File == file {
			for _, e := range exps {
				if e.sev == d.sev && e.line == d.loc.Line && strings.Contains(d.msg, e.msg) && (found == nil || found.matched && !e.matched) {
					found = e
				}
			}
		}
		if found == nil {
			fmt.Fprintf(w, "%s: error: unexpected %s: %s\n", locString(d.loc, file), d.sev, d.msg)
			ok = false
			continue
		}
		found.matched = true
	}
	for _, e := range exps {
		if !e.matched {
			fmt.Fprintf(w, "%s:%d:%d: error: expected %s \"%s\" was not produced\n", file, e.srcLine, e.srcCol, e.sev, e.msg)
			ok = false
		}
	}
	return ok
}
