package sim

import (
	"fmt"

	"github.com/tessera-ml/tessera/targets/npu/isa"
)

// happensBefore orders instructions by program order within a module and
// by token push → pop across modules (vector clocks): instruction w
// happens before the running instruction iff the running one's clock has
// seen w's sequence number in w's module.
type happensBefore struct {
	mod []isa.Module
	seq []int32
	cur vclock // the running instruction's clock
	run int    // the running instruction's index
}

func newHappensBefore(n int) happensBefore {
	return happensBefore{mod: make([]isa.Module, n), seq: make([]int32, n)}
}

func (h *happensBefore) record(i int, mod isa.Module, vc vclock) {
	h.mod[i], h.seq[i], h.cur, h.run = mod, vc[mod], vc, i
}

// ordered reports whether instruction w happens before the running one.
func (h *happensBefore) ordered(w int32) bool {
	return h.cur[h.mod[w]] >= h.seq[w]
}

// tracker remembers, per scratchpad entry, its last writer and the last
// reader from another module since that write (-1: none).
type tracker struct {
	mem            isa.Memory
	writer, reader []int32
}

func newTracker(mem isa.Memory, depth int) *tracker {
	t := &tracker{mem: mem, writer: make([]int32, depth), reader: make([]int32, depth)}
	for i := range t.writer {
		t.writer[i], t.reader[i] = -1, -1
	}
	return t
}

// read checks that the running instruction may read entry e: it was
// written, by an instruction ordered before this one.
func (m *machine) read(t *tracker, e int) error {
	h := &m.hb
	w := t.writer[e]
	if w < 0 {
		return m.fail(-1, "reads %s entry %d, which no instruction has written", t.mem, e)
	}
	if h.mod[w] != h.mod[h.run] {
		if !h.ordered(w) {
			return m.fail(int(w), "reads %s entry %d, written by the other instruction with no dependency token ordering the two (a missing dependency)", t.mem, e)
		}
		t.reader[e] = int32(h.run)
	}
	return nil
}

// write checks that the running instruction may overwrite entry e: the
// last reader from another module is ordered before it.
func (m *machine) write(t *tracker, e int) error {
	h := &m.hb
	if r := t.reader[e]; r >= 0 && h.mod[r] != h.mod[h.run] && !h.ordered(r) {
		return m.fail(int(r), "overwrites %s entry %d, which the other instruction reads with no dependency token ordering the two (a missing dependency)", t.mem, e)
	}
	t.writer[e], t.reader[e] = int32(h.run), -1
	return nil
}

// fail makes an *Error for the running instruction (other ≥ 0 names a
// second one).
func (m *machine) fail(other int, format string, args ...any) error {
	i := m.hb.run
	e := &Error{Index: i, Name: m.p.Insts[i].Name(), Other: other, Reason: fmt.Sprintf(format, args...)}
	if other >= 0 {
		e.OtherName = m.p.Insts[other].Name()
	}
	return e
}
