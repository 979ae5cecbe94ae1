package schedule

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Instruction is one entry of a trace: a primitive application or a
// sampling instruction (TVM's tir::Instruction).
type Instruction struct {
	Kind     string         `json:"kind"`               // "split", "sample_perfect_tile", ...
	Inputs   []string       `json:"inputs,omitempty"`   // handle ids ("b0", "l3") of inputs
	Attrs    map[string]any `json:"attrs,omitempty"`    // literal arguments, JSON-typed
	Decision any            `json:"decision,omitempty"` // sampling decisions
	Outputs  []string       `json:"outputs,omitempty"`  // ids of new handles
}

// Trace is the record of a schedule: its instructions in order, and
// optionally the name of the function it schedules.
type Trace struct {
	Func  string        `json:"func,omitempty"`
	Insts []Instruction `json:"insts"`
}

// JSON serializes the trace: an object with "func" (when set) and
// "insts", one instruction per line (keys sorted), so a decision can be
// edited by hand.
func (t *Trace) JSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("{\n")
	if t.Func != "" {
		name, err := json.Marshal(t.Func)
		if err != nil {
			return nil, err
		}
		b.WriteString(`  "func": ` + string(name) + ",\n")
	}
	b.WriteString(`  "insts": [`)
	for i, in := range t.Insts {
		line, err := json.Marshal(in)
		if err != nil {
			return nil, fmt.Errorf("trace: instruction %d (%s): %v", i, in.Kind, err)
		}
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString("\n    " + string(line))
	}
	if len(t.Insts) > 0 {
		b.WriteString("\n  ")
	}
	b.WriteString("]\n}\n")
	return b.Bytes(), nil
}

// ParseTrace parses a trace serialized by JSON. Numbers become int64 when
// integral and float64 otherwise.
func ParseTrace(data []byte) (*Trace, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var t Trace
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("trace: %v", err)
	}
	for i := range t.Insts {
		in := &t.Insts[i]
		if in.Kind == "" {
			return nil, fmt.Errorf("trace: instruction %d has no kind", i)
		}
		for k, v := range in.Attrs {
			in.Attrs[k] = normalizeJSON(v)
		}
		in.Decision = normalizeJSON(in.Decision)
	}
	return &t, nil
}

func normalizeJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = normalizeJSON(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = normalizeJSON(x[k])
		}
	}
	return v
}

// String renders the trace one instruction per line, Python-like (TVM's
// Trace.show).
func (t *Trace) String() string {
	var b strings.Builder
	for _, in := range t.Insts {
		if len(in.Outputs) > 0 {
			b.WriteString(strings.Join(in.Outputs, ", ") + " = ")
		}
		b.WriteString(in.Kind + "(" + strings.Join(in.Inputs, ", "))
		keys := make([]string, 0, len(in.Attrs))
		for k := range in.Attrs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for i, k := range keys {
			if i > 0 || len(in.Inputs) > 0 {
				b.WriteString(", ")
			}
			v, _ := json.Marshal(in.Attrs[k])
			b.WriteString(k + "=" + string(v))
		}
		if in.Decision != nil {
			v, _ := json.Marshal(in.Decision)
			b.WriteString(", decision=" + string(v))
		}
		b.WriteString(")\n")
	}
	return b.String()
}

// ReplayFunc re-runs one instruction kind on s: inputs are the resolved
// handles (BlockRV, LoopRV; lists are flattened), attrs the instruction's
// literal arguments (with sampled-value references "$vN" replaced by
// their int64 values) and decision the recorded sampling decision. It
// returns the instruction's outputs (handles, int64 sampled values) in
// the order they were recorded; the primitive it calls records itself in
// s's trace.
type ReplayFunc func(s *Schedule, inputs []any, attrs map[string]any, decision any) (outputs []any, err error)

var registry = map[string]ReplayFunc{}

// RegisterInstruction registers how to replay instruction kind (call it
// from the primitive's file's init).
func RegisterInstruction(kind string, fn ReplayFunc) {
	if _, dup := registry[kind]; dup {
		panic("schedule: instruction " + kind + " registered twice")
	}
	registry[kind] = fn
}

// handleID returns the trace id of a handle, or "" when it has none.
func (s *Schedule) handleID(h any) string {
	switch x := h.(type) {
	case BlockRV:
		return s.blockIDs[x.Name]
	case LoopRV:
		if x.Var == nil {
			return "root"
		}
		return s.loopIDs[x.Var]
	}
	return ""
}

func (s *Schedule) newID(prefix string) string {
	id := prefix + strconv.Itoa(s.next)
	s.next++
	return id
}

// Record appends an instruction to the trace. inputs are BlockRV, LoopRV,
// []BlockRV or []LoopRV (lists are flattened); a block handle the trace
// has not seen yet is looked up by name with an implicit get_block
// instruction. outputs are handles (BlockRV, LoopRV, lists of them) or
// sampled int64 values ([]int64 flattened), each given a new id ("b<n>",
// "l<n>", "v<n>"). Sampled values may be referenced by later
// instructions' attrs through ValueRefs.
func (s *Schedule) Record(kind string, inputs []any, attrs map[string]any, decision any, outputs []any) {
	in := Instruction{Kind: kind, Attrs: attrs, Decision: decision}
	if len(in.Attrs) == 0 {
		in.Attrs = nil
	}
	for _, h := range flattenHandles(inputs) {
		id := s.handleID(h)
		if id == "" {
			switch x := h.(type) {
			case BlockRV:
				id = s.newID("b")
				s.blockIDs[x.Name] = id
				s.trace.Insts = append(s.trace.Insts, Instruction{Kind: "get_block", Attrs: map[string]any{"name": x.Name}, Outputs: []string{id}})
			case LoopRV:
				if s.EnsureLoopIDs(x) {
					id = s.loopIDs[x.Var]
				} else {
					id = s.newID("l")
					s.loopIDs[x.Var] = id
				}
			default:
				id = fmt.Sprint(h)
			}
		}
		in.Inputs = append(in.Inputs, id)
	}
	var group *sampleGroup
	for _, h := range flattenHandles(outputs) {
		var id string
		switch x := h.(type) {
		case BlockRV:
			id = s.newID("b")
			s.blockIDs[x.Name] = id
		case LoopRV:
			if x.Var == nil {
				id = "root"
			} else {
				id = s.newID("l")
				s.loopIDs[x.Var] = id
			}
		case int64:
			id = s.newID("v")
			if group == nil {
				group = &sampleGroup{}
			}
			group.ids = append(group.ids, id)
			group.vals = append(group.vals, x)
		default:
			id = s.newID("x")
		}
		in.Outputs = append(in.Outputs, id)
	}
	if group != nil {
		s.samples = append(s.samples, *group)
	}
	s.trace.Insts = append(s.trace.Insts, in)
}

// EnsureLoopIDs gives loop handles the trace has not seen (made from a
// loop variable rather than returned by get_loops, split, fuse, ...) an
// id, by recording get_loops on the first block under each loop; it
// reports whether every loop has an id. A primitive that removes its
// input loops calls it before changing the body (Record calls it too,
// which is enough for primitives that keep their input loops).
func (s *Schedule) EnsureLoopIDs(loops ...LoopRV) bool {
	ok := true
	for _, l := range loops {
		if l.Var == nil || s.loopIDs[l.Var] != "" {
			continue
		}
		f := findLoop(s.f.Body, l.Var)
		if f == nil {
			ok = false
			continue
		}
		name := firstBlock(f)
		if name == "" {
			ok = false
			continue
		}
		fors, err := s.LoopsOf(BlockRV{Name: name})
		if err != nil {
			ok = false
			continue
		}
		hs := make([]LoopRV, len(fors))
		for i, g := range fors {
			hs[i] = LoopRV{Var: g.Var}
		}
		s.Record("get_loops", []any{BlockRV{Name: name}}, nil, nil, []any{hs})
		ok = ok && s.loopIDs[l.Var] != ""
	}
	return ok
}

func flattenHandles(xs []any) []any {
	var out []any
	for _, x := range xs {
		switch v := x.(type) {
		case []BlockRV:
			for _, b := range v {
				out = append(out, b)
			}
		case []LoopRV:
			for _, l := range v {
				out = append(out, l)
			}
		case []int64:
			for _, i := range v {
				out = append(out, i)
			}
		case int:
			out = append(out, int64(v))
		default:
			out = append(out, x)
		}
	}
	return out
}

// ValueRefs returns the attr form of vals: when they are exactly the
// outputs of a sampling instruction not yet referenced, the references
// "$vN" to those outputs (so a replay with changed decisions uses the new
// values); otherwise the literal values. Each value is looked up alone
// too (the most recent unreferenced sample of equal value).
func (s *Schedule) ValueRefs(vals []int64) []any { return s.valueRefs(nil, vals) }

// valueRefs is ValueRefs; with a loop, a group of values is only linked
// when it was sampled on that loop (sample_perfect_tile).
func (s *Schedule) valueRefs(loop *tir.Var, vals []int64) []any {
	out := make([]any, len(vals))
	for i, v := range vals {
		out[i] = v
	}
	for g := len(s.samples) - 1; g >= 0; g-- {
		sg := &s.samples[g]
		if sg.used || !equalInts(sg.vals, vals) || (loop != nil && sg.loop != loop) {
			continue
		}
		sg.used = true
		for i, id := range sg.ids {
			out[i] = "$" + id
		}
		return out
	}
	for i, v := range vals {
		for g := len(s.samples) - 1; g >= 0; g-- {
			sg := &s.samples[g]
			if !sg.used && len(sg.vals) == 1 && sg.vals[0] == v && (len(vals) > 1 || loop == nil || sg.loop == loop) {
				sg.used = true
				out[i] = "$" + sg.ids[0]
				break
			}
		}
	}
	return out
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Replay re-applies trace t on f (the unscheduled function) and returns
// the new schedule. Sampling instructions use their recorded decisions,
// so a trace whose decisions were edited replays with the new decisions
// (and every instruction referencing a sampled value sees the new value).
func Replay(f *tir.PrimFunc, t *Trace) (*Schedule, error) {
	return replayOn(New(f), t)
}

// ReplayGeneralized replays trace t, made on f specialized at a
// representative size of its symbolic dimensions (tensorir.Specialize),
// on f itself: a split whose factors are all constants on a loop whose
// extent is symbolic infers its outermost factor instead (the loop is
// tiled as at the representative size, the outermost loop running to
// ceil(extent / inner tiles), the tail guarded unless proven exact), so
// the schedule is correct for every value of the symbols; vectorizing or
// unrolling a loop of symbolic extent is left out (it stays serial); a
// split of a loop of constant extent that its factors do not tile (a
// loop whose extent depends on the symbols) infers its outermost factor,
// or splits into ones a loop of one iteration; a sample_perfect_tile of
// such a loop keeps its recorded decision, unrecorded (the split using it
// generalizes as above). The instructions are
// recorded as applied, so the returned schedule's trace replays on f with
// Replay. Errors: those of Replay, and any primitive that refuses a
// symbolic extent (sampling a perfect tiling of it).
func ReplayGeneralized(f *tir.PrimFunc, t *Trace) (*Schedule, error) {
	return ReplayGeneralizedAt(f, t, nil)
}

// ReplayGeneralizedAt is ReplayGeneralized for a trace made at the sizes
// vals (by symbol name): a get_loops that finds more loops than the trace
// did leaves out the unnamed ones whose extent is 1 at vals (a region
// loop compute_at elided at the representative size but cannot prove of
// one iteration at every size).
func ReplayGeneralizedAt(f *tir.PrimFunc, t *Trace, vals map[string]int64) (*Schedule, error) {
	s := New(f)
	s.generalize = true
	s.repVals = vals
	r, err := replayOn(s, t)
	if r != nil {
		r.generalize = false
	}
	return r, err
}

// replayOn replays t's instructions on the fresh schedule s.
func replayOn(s *Schedule, t *Trace) (*Schedule, error) {
	s.trace.Func = t.Func
	env := map[string]any{"root": RootLoop}
	vals := map[string]int64{}
	for i, in := range t.Insts {
		fn, ok := registry[in.Kind]
		if !ok {
			return nil, fmt.Errorf("replay: instruction %d: unknown kind %q", i, in.Kind)
		}
		inputs := make([]any, len(in.Inputs))
		for j, id := range in.Inputs {
			h, ok := env[id]
			if !ok {
				return nil, fmt.Errorf("replay: instruction %d (%s): unknown handle %q", i, in.Kind, id)
			}
			inputs[j] = h
		}
		attrs := map[string]any{}
		for k, v := range in.Attrs {
			r, err := resolveRefs(v, vals)
			if err != nil {
				return nil, fmt.Errorf("replay: instruction %d (%s): %v", i, in.Kind, err)
			}
			attrs[k] = r
		}
		var named map[*tir.Var]bool
		if s.generalize && in.Kind == "get_loops" {
			named = map[*tir.Var]bool{}
			for v := range s.loopIDs {
				named[v] = true
			}
		}
		outs, err := fn(s, inputs, attrs, in.Decision)
		if err != nil {
			return nil, fmt.Errorf("replay: instruction %d (%s): %w", i, in.Kind, err)
		}
		outs = flattenHandles(outs)
		if len(outs) > len(in.Outputs) && s.generalize && in.Kind == "get_loops" {
			outs = s.dropRepresentativeUnitLoops(outs, len(outs)-len(in.Outputs), named)
		}
		if len(outs) != len(in.Outputs) {
			return nil, fmt.Errorf("replay: instruction %d (%s): %d outputs, the trace has %d", i, in.Kind, len(outs), len(in.Outputs))
		}
		for j, id := range in.Outputs {
			env[id] = outs[j]
			if v, ok := outs[j].(int64); ok {
				vals[id] = v
			}
		}
	}
	return s, nil
}

func resolveRefs(v any, vals map[string]int64) (any, error) {
	switch x := v.(type) {
	case string:
		if strings.HasPrefix(x, "$") {
			val, ok := vals[x[1:]]
			if !ok {
				return nil, fmt.Errorf("unknown value %q", x)
			}
			return val, nil
		}
	case []any:
		out := make([]any, len(x))
		for i := range x {
			r, err := resolveRefs(x[i], vals)
			if err != nil {
				return nil, err
			}
			out[i] = r
		}
		return out, nil
	case map[string]any:
		out := make(map[string]any, len(x))
		for k := range x {
			r, err := resolveRefs(x[k], vals)
			if err != nil {
				return nil, err
			}
			out[k] = r
		}
		return out, nil
	}
	return v, nil
}

// AttrInt reads an integer attr (int, int64 or integral float64).
func AttrInt(attrs map[string]any, key string) (int64, error) {
	v, ok := attrs[key]
	if !ok {
		return 0, fmt.Errorf("missing attr %q", key)
	}
	return toInt(v, key)
}

func toInt(v any, key string) (int64, error) {
	switch x := v.(type) {
	case int:
		return int64(x), nil
	case int64:
		return x, nil
	case float64:
		if x == math.Trunc(x) && math.Abs(x) < 1<<62 {
			return int64(x), nil
		}
	case json.Number:
		return x.Int64()
	}
	return 0, fmt.Errorf("attr %q: %v is not an integer", key, v)
}

// AttrInts reads a list of integers.
func AttrInts(attrs map[string]any, key string) ([]int64, error) {
	v, ok := attrs[key]
	if !ok {
		return nil, fmt.Errorf("missing attr %q", key)
	}
	switch x := v.(type) {
	case []int64:
		return x, nil
	case []any:
		out := make([]int64, len(x))
		for i, e := range x {
			n, err := toInt(e, key)
			if err != nil {
				return nil, err
			}
			out[i] = n
		}
		return out, nil
	}
	return nil, fmt.Errorf("attr %q: %v is not a list of integers", key, v)
}

// AttrFloats reads a list of numbers.
func AttrFloats(attrs map[string]any, key string) ([]float64, error) {
	v, ok := attrs[key]
	if !ok {
		return nil, fmt.Errorf("missing attr %q", key)
	}
	switch x := v.(type) {
	case []float64:
		return x, nil
	case []any:
		out := make([]float64, len(x))
		for i, e := range x {
			switch n := e.(type) {
			case float64:
				out[i] = n
			case int64:
				out[i] = float64(n)
			case int:
				out[i] = float64(n)
			default:
				return nil, fmt.Errorf("attr %q: %v is not a number", key, e)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("attr %q: %v is not a list of numbers", key, v)
}

// AttrString reads a string attr.
func AttrString(attrs map[string]any, key string) (string, error) {
	v, ok := attrs[key].(string)
	if !ok {
		return "", fmt.Errorf("attr %q: %v is not a string", key, attrs[key])
	}
	return v, nil
}

// EncodeAttr turns an IR attribute into its JSON form: a one-key object
// {"unit": true}, {"bool": b}, {"int": n}, {"float": x} (non-finite:
// "inf", "-inf", "nan"), {"string": s} or {"array": [...]}.
func EncodeAttr(a tir.Attr) any {
	switch x := a.(type) {
	case tir.UnitAttr:
		return map[string]any{"unit": true}
	case tir.BoolAttr:
		return map[string]any{"bool": bool(x)}
	case tir.IntAttr:
		return map[string]any{"int": int64(x)}
	case tir.FloatAttr:
		f := float64(x)
		switch {
		case math.IsInf(f, 1):
			return map[string]any{"float": "inf"}
		case math.IsInf(f, -1):
			return map[string]any{"float": "-inf"}
		case math.IsNaN(f):
			return map[string]any{"float": "nan"}
		}
		return map[string]any{"float": f}
	case tir.StringAttr:
		return map[string]any{"string": string(x)}
	case tir.ArrayAttr:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = EncodeAttr(e)
		}
		return map[string]any{"array": out}
	}
	return nil
}

// DecodeAttr is the inverse of EncodeAttr (also on parsed JSON).
func DecodeAttr(v any) (tir.Attr, error) {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return nil, fmt.Errorf("attribute value %v is not a one-key object", v)
	}
	for k, x := range m {
		switch k {
		case "unit":
			return tir.UnitAttr{}, nil
		case "bool":
			b, ok := x.(bool)
			if !ok {
				return nil, fmt.Errorf("bool attribute %v", x)
			}
			return tir.BoolAttr(b), nil
		case "int":
			n, err := toInt(x, "int")
			if err != nil {
				return nil, err
			}
			return tir.IntAttr(n), nil
		case "float":
			switch f := x.(type) {
			case float64:
				return tir.FloatAttr(f), nil
			case int64:
				return tir.FloatAttr(float64(f)), nil
			case string:
				switch f {
				case "inf":
					return tir.FloatAttr(math.Inf(1)), nil
				case "-inf":
					return tir.FloatAttr(math.Inf(-1)), nil
				case "nan":
					return tir.FloatAttr(math.NaN()), nil
				}
			}
			return nil, fmt.Errorf("float attribute %v", x)
		case "string":
			str, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("string attribute %v", x)
			}
			return tir.StringAttr(str), nil
		case "array":
			xs, ok := x.([]any)
			if !ok {
				return nil, fmt.Errorf("array attribute %v", x)
			}
			out := make(tir.ArrayAttr, len(xs))
			for i, e := range xs {
				a, err := DecodeAttr(e)
				if err != nil {
					return nil, err
				}
				out[i] = a
			}
			return out, nil
		}
		return nil, fmt.Errorf("unknown attribute kind %q", k)
	}
	return nil, nil
}

// LoopInput converts a replayed input to a loop handle.
func LoopInput(inputs []any, i int) (LoopRV, error) {
	if i >= len(inputs) {
		return LoopRV{}, fmt.Errorf("missing input %d", i)
	}
	l, ok := inputs[i].(LoopRV)
	if !ok {
		return LoopRV{}, fmt.Errorf("input %d is not a loop", i)
	}
	return l, nil
}

// BlockInput converts a replayed input to a block handle.
func BlockInput(inputs []any, i int) (BlockRV, error) {
	if i >= len(inputs) {
		return BlockRV{}, fmt.Errorf("missing input %d", i)
	}
	b, ok := inputs[i].(BlockRV)
	if !ok {
		return BlockRV{}, fmt.Errorf("input %d is not a block", i)
	}
	return b, nil
}

// dropRepresentativeUnitLoops removes n loops from the handles hs that
// the trace had not named (named: a compute_at's region loops) and whose
// extents are 1 at the representative sizes s.repVals (loops a
// primitive elided there); hs is returned unchanged unless exactly n such
// loops exist.
func (s *Schedule) dropRepresentativeUnitLoops(hs []any, n int, named map[*tir.Var]bool) []any {
	bind := map[*tir.Var]tir.Expr{}
	for _, p := range s.f.Params {
		if p.Var != nil {
			if v, ok := s.repVals[p.Var.Name]; ok {
				bind[p.Var] = tir.IntOf(p.Var.Type, v)
			}
		}
	}
	var out []any
	for _, h := range hs {
		if l, ok := h.(LoopRV); ok && !named[l.Var] {
			if f := findLoop(s.f.Body, l.Var); f != nil {
				if k, ok := constInt(tir.Simplify(tir.Substitute(f.Extent, bind), nil)); ok && k == 1 {
					continue
				}
			}
		}
		out = append(out, h)
	}
	if len(hs)-len(out) != n {
		return hs
	}
	return out
}
