// Package traceevent writes and checks timelines in the Trace Event
// Format, the JSON that Perfetto (ui.perfetto.dev) and chrome://tracing
// open (Google, "Trace Event Format", the document linked from the
// Catapult project): an object whose "traceEvents" array holds events
// with a phase ("X" complete slices, "M" metadata naming processes and
// threads, "C" counters, "s"/"f" flow arrows), timestamps "ts" and
// durations "dur" in microseconds, and a process and thread (track) id.
package traceevent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/google/renameio/v2"
)

// Event is one trace event. Ts and Dur are microseconds; Dur is written
// for complete events ("X") only.
type Event struct {
	Name string         `json:"name"`
	Cat  string         `json:"cat,omitempty"`
	Ph   string         `json:"ph"`
	Ts   float64        `json:"ts"`
	Dur  *float64       `json:"dur,omitempty"`
	Pid  int            `json:"pid"`
	Tid  int            `json:"tid"`
	ID   string         `json:"id,omitempty"`
	BP   string         `json:"bp,omitempty"`
	Args map[string]any `json:"args,omitempty"`
}

// Trace is a trace file: its events and free-form data about the run
// ("otherData", shown by Perfetto as metadata).
type Trace struct {
	TraceEvents     []Event        `json:"traceEvents"`
	DisplayTimeUnit string         `json:"displayTimeUnit,omitempty"`
	OtherData       map[string]any `json:"otherData,omitempty"`
}

// Complete appends a slice ("X") of dur µs starting at ts µs on track
// (pid, tid).
func (t *Trace) Complete(name, cat string, pid, tid int, ts, dur float64, args map[string]any) {
	d := dur
	t.TraceEvents = append(t.TraceEvents, Event{Name: name, Cat: cat, Ph: "X", Ts: ts, Dur: &d, Pid: pid, Tid: tid, Args: args})
}

// NameProcess and NameThread append the metadata events that label a
// process and a thread (track).
func (t *Trace) NameProcess(pid int, name string) {
	t.TraceEvents = append(t.TraceEvents, Event{Name: "process_name", Ph: "M", Pid: pid, Args: map[string]any{"name": name}})
}

func (t *Trace) NameThread(pid, tid int, name string) {
	t.TraceEvents = append(t.TraceEvents, Event{Name: "thread_name", Ph: "M", Pid: pid, Tid: tid, Args: map[string]any{"name": name}})
}

// Counter appends a counter sample ("C"): the series in values hold from
// ts until the counter's next sample.
func (t *Trace) Counter(name string, pid int, ts float64, values map[string]any) {
	t.TraceEvents = append(t.TraceEvents, Event{Name: name, Ph: "C", Ts: ts, Pid: pid, Args: values})
}

// Flow appends a flow arrow from track (pid, fromTid) at ts0 to track
// (pid, toTid) at ts1: a start ("s") and a finish ("f", bound to the
// enclosing slice, bp "e") sharing id.
func (t *Trace) Flow(name, cat, id string, pid, fromTid int, ts0 float64, toTid int, ts1 float64) {
	t.TraceEvents = append(t.TraceEvents,
		Event{Name: name, Cat: cat, Ph: "s", Ts: ts0, Pid: pid, Tid: fromTid, ID: id},
		Event{Name: name, Cat: cat, Ph: "f", BP: "e", Ts: ts1, Pid: pid, Tid: toTid, ID: id})
}

// Marshal is the trace as JSON.
func (t *Trace) Marshal() ([]byte, error) {
	if t.TraceEvents == nil {
		t.TraceEvents = []Event{}
	}
	return json.Marshal(t)
}

// WriteFile writes the trace to path atomically (renameio: a temporary
// file renamed over path), so a failure leaves nothing partial. Errors:
// the file system's.
func (t *Trace) WriteFile(path string) error {
	data, err := t.Marshal()
	if err != nil {
		return err
	}
	return renameio.WriteFile(path, data, 0o644)
}

// Validate checks data against the trace event format as Tessera writes
// it: a JSON object with a "traceEvents" array; every event has a name, a
// known phase, a pid, a finite ts ≥ 0 (metadata: none needed); complete
// events have a dur ≥ 0, and on each track they start in order and nest
// (a slice that starts inside another ends inside it); flow starts and
// finishes pair up by id. It returns the decoded trace. Errors name the
// event by its index.
func Validate(data []byte) (*Trace, error) {
	var raw struct {
		TraceEvents []map[string]json.RawMessage `json:"traceEvents"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("trace: not a JSON object: %v", err)
	}
	if raw.TraceEvents == nil {
		return nil, fmt.Errorf("trace: no traceEvents array")
	}
	for i, e := range raw.TraceEvents {
		for _, k := range []string{"name", "ph", "pid"} {
			if _, ok := e[k]; !ok {
				return nil, fmt.Errorf("trace: event %d has no %q", i, k)
			}
		}
	}
	var t Trace
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("trace: %v", err)
	}
	type track struct{ pid, tid int }
	open := map[track][]float64{} // per track, the end times of the enclosing slices
	last := map[track]float64{}
	flows := map[string]int{}
	for i, e := range t.TraceEvents {
		if e.Ph != "M" && (math.IsNaN(e.Ts) || math.IsInf(e.Ts, 0) || e.Ts < 0) {
			return nil, fmt.Errorf("trace: event %d (%s) has ts %v", i, e.Name, e.Ts)
		}
		switch e.Ph {
		case "M", "C":
		case "s":
			flows[e.ID]++
		case "f":
			flows[e.ID]--
		case "X":
			if e.Dur == nil || *e.Dur < 0 || math.IsNaN(*e.Dur) {
				return nil, fmt.Errorf("trace: complete event %d (%s) has no duration ≥ 0", i, e.Name)
			}
			k := track{e.Pid, e.Tid}
			if l, ok := last[k]; ok && e.Ts < l {
				return nil, fmt.Errorf("trace: event %d (%s) starts at %v µs, before the previous slice on its track (%v µs)", i, e.Name, e.Ts, l)
			}
			last[k] = e.Ts
			stack := open[k]
			for len(stack) > 0 && stack[len(stack)-1] <= e.Ts {
				stack = stack[:len(stack)-1]
			}
			end := e.Ts + *e.Dur
			if len(stack) > 0 && end > stack[len(stack)-1]+1e-6 {
				return nil, fmt.Errorf("trace: event %d (%s) ends at %v µs, after the slice it starts in (%v µs)", i, e.Name, end, stack[len(stack)-1])
			}
			open[k] = append(stack, end)
		default:
			return nil, fmt.Errorf("trace: event %d (%s) has unknown phase %q", i, e.Name, e.Ph)
		}
	}
	for id, n := range flows {
		if n != 0 {
			return nil, fmt.Errorf("trace: flow %q does not pair a start with a finish", id)
		}
	}
	return &t, nil
}
