package registry

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"
)

// Item is one element of a textual pass pipeline: a pass name and its
// options.
type Item struct {
	Name    string
	Options map[string]string
}

// String renders the item back in pipeline syntax, options sorted by key.
func (it Item) String() string {
	if len(it.Options) == 0 {
		return it.Name
	}
	var kv []string
	for _, k := range slices.Sorted(maps.Keys(it.Options)) {
		kv = append(kv, k+"="+it.Options[k])
	}
	return it.Name + "{" + strings.Join(kv, " ") + "}"
}

// ParsePipeline parses MLIR's textual pass pipeline: comma-separated
// items `name` or `name{key=value key2=value2}` (a key alone means
// "true"); the nesting wrappers builtin.module(...), func.func(...) and
// any(...) are accepted and flattened, since every Tessera pass runs on
// the whole module. Errors: unbalanced brackets, empty or malformed items.
func ParsePipeline(text string) ([]Item, error) {
	parts, err := splitPipeline(text)
	if err != nil {
		return nil, err
	}
	var items []Item
	for _, part := range parts {
		name, opts, nested, err := parsePassItem(part)
		if err != nil {
			return nil, err
		}
		if name == "builtin.module" || name == "func.func" || name == "any" {
			inner, err := ParsePipeline(nested)
			if err != nil {
				return nil, err
			}
			items = append(items, inner...)
			continue
		}
		items = append(items, Item{Name: name, Options: opts})
	}
	return items, nil
}

// Instantiate builds the pass info describes with opts. Errors: an option
// the pass does not declare, the pass's own (prefixed with its name).
func Instantiate[P any](info *PassInfo[P], opts map[string]string) (P, error) {
	var zero P
	for k := range opts {
		if _, ok := info.Options[k]; !ok {
			return zero, fmt.Errorf("pass '%s' has no option '%s'", info.Name, k)
		}
	}
	p, err := info.New(opts)
	if err != nil {
		return zero, fmt.Errorf("pass '%s': %v", info.Name, err)
	}
	return p, nil
}

// Timing is the wall-clock time of one pass run.
type Timing struct {
	Name string
	D    time.Duration
}

// WriteTiming prints a per-pass wall-clock report in the style of
// mlir-opt's -mlir-timing.
func WriteTiming(w io.Writer, timings []Timing) {
	var total time.Duration
	for _, t := range timings {
		total += t.D
	}
	fmt.Fprintf(w, "===-------------------------------------------------------------------------===\n")
	fmt.Fprintf(w, "                         ... Pass execution timing report ...\n")
	fmt.Fprintf(w, "===-------------------------------------------------------------------------===\n")
	fmt.Fprintf(w, "  Total Execution Time: %.4f seconds\n\n", total.Seconds())
	fmt.Fprintf(w, "  ----Wall Time----  ----Name----\n")
	for _, t := range timings {
		pct := 0.0
		if total > 0 {
			pct = 100 * float64(t.D) / float64(total)
		}
		fmt.Fprintf(w, "  %8.4f (%5.1f%%)  %s\n", t.D.Seconds(), pct, t.Name)
	}
	fmt.Fprintf(w, "  %8.4f (100.0%%)  Total\n", total.Seconds())
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

// parsePassItem splits one item into its name and options, or the
// pipeline nested in a wrapper's parentheses.
func parsePassItem(it string) (name string, opts map[string]string, nested string, err error) {
	opts = map[string]string{}
	if i := strings.IndexByte(it, '('); i >= 0 && (strings.IndexByte(it, '{') < 0 || i < strings.IndexByte(it, '{')) {
		if !strings.HasSuffix(it, ")") {
			return "", nil, "", fmt.Errorf("malformed pipeline element %q", it)
		}
		name = strings.TrimSpace(it[:i])
		return name, opts, it[i+1 : len(it)-1], checkPassName(name, it)
	}
	i := strings.IndexByte(it, '{')
	if i < 0 {
		return it, opts, "", checkPassName(it, it)
	}
	if !strings.HasSuffix(it, "}") {
		return "", nil, "", fmt.Errorf("malformed pass options in %q", it)
	}
	name = strings.TrimSpace(it[:i])
	if err := checkPassName(name, it); err != nil {
		return "", nil, "", err
	}
	for _, kv := range strings.Fields(it[i+1 : len(it)-1]) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			v = "true"
		}
		if k == "" {
			return "", nil, "", fmt.Errorf("pass option without a name in %q", it)
		}
		opts[k] = v
	}
	return name, opts, "", nil
}

// checkPassName accepts the names MLIR's pass registry does: letters,
// digits, '_', '.', '-'.
func checkPassName(name, item string) error {
	if name == "" {
		return fmt.Errorf("empty pass name in pipeline element %q", item)
	}
	for _, r := range name {
		ok := r == '_' || r == '.' || r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
		if !ok {
			return fmt.Errorf("invalid pass name %q (letters, digits, '_', '.', '-')", name)
		}
	}
	return nil
}
