package schedule

import (
	"fmt"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// ApplyToModule replays t on the kernel of m named by the trace's Func
// field, or on m's only kernel when the trace names none (host functions,
// attribute tessera.host, are never scheduled). It replaces the kernel
// with the scheduled function and returns its name.
//
// Errors: no kernel of that name; no name and not exactly one kernel; any
// replay error (an *Error naming the primitive, block and loop).
func ApplyToModule(m *tir.Module, t *Trace) (string, error) {
	var targets []int
	for i, f := range m.Funcs {
		if _, host := f.Attrs[tir.AttrHost]; host {
			continue
		}
		if t.Func == "" || f.Name == t.Func {
			targets = append(targets, i)
		}
	}
	switch {
	case len(targets) == 0 && t.Func != "":
		return "", fmt.Errorf("the module has no kernel @%s", t.Func)
	case len(targets) != 1:
		return "", fmt.Errorf("the trace names no function (\"func\") and the module has %d kernels", len(targets))
	}
	i := targets[0]
	s, err := Replay(m.Funcs[i], t)
	if err != nil {
		return "", fmt.Errorf("@%s: %w", m.Funcs[i].Name, err)
	}
	m.Funcs[i] = s.Func()
	return m.Funcs[i].Name, nil
}
