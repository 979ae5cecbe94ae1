package schedule

import (
	"fmt"
	"strings"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Loop kinds and annotations (TVM's src/tir/schedule/primitive/
// for_kind.cc and annotate.cc): parallel, vectorize, unroll, bind,
// annotate, unannotate.

// checkSpatial refuses a loop that is not data-parallel for every block
// under it: a block binding a reduce iteration variable to it, a block
// whose iterations all write the same region (no spatial iteration
// variable bound to the loop indexes a written region), or a store
// outside blocks whose indices ignore the loop.
func (s *Schedule) checkSpatial(prim string, l LoopRV, f *tir.For) error {
	if ext, ok := constInt(f.Extent); ok && ext == 1 && !tir.StmtUsesVar(f.Body, f.Var) {
		return nil // a unit loop whose variable nothing uses (add_unit_loop) has one iteration
	}
	for _, r := range BlocksUnder(f.Body) {
		b := r.Block
		br := BlockRV{Name: b.Name}
		bound := map[*tir.Var]bool{}
		for i, iv := range b.IterVars {
			if i >= len(r.Values) || !tir.UsesVar(r.Values[i], f.Var) {
				continue
			}
			if iv.Kind == tir.Reduce {
				return s.ErrorAt(prim, &br, &l, r, "the loop is bound to the reduce iteration variable %%%s; only spatial loops can be %s", iv.Var.Name, kindVerb(prim))
			}
			bound[iv.Var] = true
		}
		if len(b.Writes) == 0 {
			continue
		}
		distinct := false
		for _, w := range b.Writes {
			for _, rg := range w.Region {
				for v := range bound {
					if tir.UsesVar(rg.Min, v) {
						distinct = true
					}
				}
			}
		}
		if !distinct {
			return s.ErrorAt(prim, &br, &l, r, "every iteration of the loop writes the same region of %%%s (no spatial iteration variable bound to the loop indexes it); only spatial loops can be %s", b.Writes[0].Buffer.Name, kindVerb(prim))
		}
	}
	var bad *tir.BufferStore
	var walk func(x tir.Stmt)
	walk = func(x tir.Stmt) {
		switch st := x.(type) {
		case *tir.BlockRealize:
			return
		case *tir.BufferStore:
			uses := false
			for _, idx := range st.Indices {
				uses = uses || tir.UsesVar(idx, f.Var)
			}
			if !uses && bad == nil {
				bad = st
			}
		}
		for _, c := range tir.SubStmts(x) {
			walk(c)
		}
	}
	walk(f.Body)
	if bad != nil {
		return s.ErrorAt(prim, nil, &l, bad, "every iteration of the loop stores to the same element of %%%s; only spatial loops can be %s", bad.Buffer.Name, kindVerb(prim))
	}
	return nil
}

func kindVerb(prim string) string {
	switch prim {
	case "parallel":
		return "parallelized"
	case "vectorize":
		return "vectorized"
	case "bind":
		return "bound to threads"
	}
	return prim + "ed"
}

// setKind rebuilds loop f with kind and thread.
func (s *Schedule) setKind(f *tir.For, kind tir.ForKind, thread string) {
	c := *f
	c.Kind, c.Thread = kind, thread
	s.replaceStmt(f, &c)
}

// Parallel marks loop l parallel (TVM's parallel): its iterations run on
// CPU threads. Refused: a loop that is not spatial for every block under
// it (see checkSpatial), a loop inside or around another parallel loop
// (nested parallel regions), a loop bound to threads.
func (s *Schedule) Parallel(l LoopRV) error {
	const prim = "parallel"
	f, err := s.FindLoop(l)
	if err != nil {
		return s.Errorf(prim, nil, &l, "no such loop in @%s", s.f.Name)
	}
	if f.Kind == tir.ThreadBinding {
		return s.loopErr(prim, l, "the loop is bound to %s", f.Thread)
	}
	if err := s.checkSpatial(prim, l, f); err != nil {
		return err
	}
	for _, st := range PathTo(s.f.Body, f) {
		if g, ok := st.(*tir.For); ok && g != f && g.Kind == tir.Parallel {
			return s.ErrorAt(prim, nil, &l, g, "the loop is inside the parallel loop %%%s; nested parallel regions are not supported", g.Var.Name)
		}
	}
	var inner *tir.For
	tir.VisitStmt(f.Body, func(st tir.Stmt) bool {
		if g, ok := st.(*tir.For); ok && g.Kind == tir.Parallel && inner == nil {
			inner = g
		}
		return inner == nil
	})
	if inner != nil {
		return s.loopErr(prim, l, "the loop holds the parallel loop %%%s; nested parallel regions are not supported", inner.Var.Name)
	}
	s.setKind(f, tir.Parallel, "")
	s.Record(prim, []any{l}, nil, nil, nil)
	return nil
}

// Vectorize marks loop l vectorized (TVM's vectorize): its iterations run
// as SIMD lanes. Refused: a non-constant extent, a loop that is not
// spatial for every block under it, a loop bound to threads.
func (s *Schedule) Vectorize(l LoopRV) error {
	const prim = "vectorize"
	f, err := s.FindLoop(l)
	if err != nil {
		return s.Errorf(prim, nil, &l, "no such loop in @%s", s.f.Name)
	}
	if _, ok := constInt(f.Extent); !ok {
		if s.generalize {
			return nil // a representative trace's hint: the loop stays serial
		}
		return s.loopErr(prim, l, "the extent %s is not a constant", tir.ExprString(f.Extent))
	}
	if f.Kind == tir.ThreadBinding {
		return s.loopErr(prim, l, "the loop is bound to %s", f.Thread)
	}
	if err := s.checkSpatial(prim, l, f); err != nil {
		return err
	}
	s.setKind(f, tir.Vectorized, "")
	s.Record(prim, []any{l}, nil, nil, nil)
	return nil
}

// Unroll marks loop l unrolled (TVM's unroll). Refused: a non-constant
// extent, a loop bound to threads.
func (s *Schedule) Unroll(l LoopRV) error {
	const prim = "unroll"
	f, err := s.FindLoop(l)
	if err != nil {
		return s.Errorf(prim, nil, &l, "no such loop in @%s", s.f.Name)
	}
	if _, ok := constInt(f.Extent); !ok {
		if s.generalize {
			return nil // a representative trace's hint: the loop stays serial
		}
		return s.loopErr(prim, l, "the extent %s is not a constant", tir.ExprString(f.Extent))
	}
	if f.Kind == tir.ThreadBinding {
		return s.loopErr(prim, l, "the loop is bound to %s", f.Thread)
	}
	s.setKind(f, tir.Unrolled, "")
	s.Record(prim, []any{l}, nil, nil, nil)
	return nil
}

// Bind binds loop l to a GPU thread axis (TVM's bind): blockIdx.x/y/z,
// threadIdx.x/y/z or vthread. Refused: an unknown tag, a loop that is not
// spatial for every block under it, a blockIdx tag already bound by an
// enclosing loop. A threadIdx loop may be nested in a loop bound to the
// same axis when its body does not use that loop's variable (TVM's merged
// binding, as in cooperative fetching: the inner loop's iterations are
// the block's threads again); run serially the outer iterations then
// repeat the same stores.
func (s *Schedule) Bind(l LoopRV, thread string) error {
	const prim = "bind"
	f, err := s.FindLoop(l)
	if err != nil {
		return s.Errorf(prim, nil, &l, "no such loop in @%s", s.f.Name)
	}
	if !tir.ThreadTags[thread] {
		return s.loopErr(prim, l, "invalid thread tag %q (want blockIdx.x/y/z, threadIdx.x/y/z or vthread)", thread)
	}
	if err := s.checkSpatial(prim, l, f); err != nil {
		return err
	}
	if thread != "vthread" {
		for _, st := range PathTo(s.f.Body, f) {
			g, ok := st.(*tir.For)
			if !ok || g == f || g.Kind != tir.ThreadBinding || g.Thread != thread {
				continue
			}
			if !strings.HasPrefix(thread, "threadIdx") {
				return s.ErrorAt(prim, nil, &l, g, "the enclosing loop %%%s is already bound to %s", g.Var.Name, thread)
			}
			if tir.StmtUsesVar(f, g.Var) {
				return s.ErrorAt(prim, nil, &l, g, "the loop uses %%%s of the enclosing loop bound to %s (a nested loop on the same axis must not depend on it)", g.Var.Name, thread)
			}
		}
	}
	s.setKind(f, tir.ThreadBinding, thread)
	s.Record(prim, []any{l}, map[string]any{"thread": thread}, nil, nil)
	return nil
}

// Annotate sets annotation key to value on a loop or block (TVM's
// annotate); target is a LoopRV or a BlockRV. An integer annotation whose
// value was sampled (SampleCategorical) is recorded as a reference to the
// sample, so a replay with another decision uses the new value.
func (s *Schedule) Annotate(target any, key string, value tir.Attr) error {
	const prim = "annotate"
	if key == "" {
		return s.Errorf(prim, nil, nil, "empty annotation key")
	}
	if value == nil {
		return s.Errorf(prim, nil, nil, "annotation %q has no value", key)
	}
	if err := s.setAnnotation(prim, target, func(a tir.Attrs) (tir.Attrs, error) {
		out := copyAttrs(a)
		if out == nil {
			out = tir.Attrs{}
		}
		out[key] = value
		return out, nil
	}); err != nil {
		return err
	}
	var v any = EncodeAttr(value)
	if n, ok := value.(tir.IntAttr); ok {
		if ref, isRef := s.ValueRefs([]int64{int64(n)})[0].(string); isRef {
			v = map[string]any{"int": ref}
		}
	}
	s.Record(prim, []any{target}, map[string]any{"key": key, "value": v}, nil, nil)
	return nil
}

// Unannotate removes annotation key from a loop or block (TVM's
// unannotate). Refused: the annotation is not there.
func (s *Schedule) Unannotate(target any, key string) error {
	const prim = "unannotate"
	if err := s.setAnnotation(prim, target, func(a tir.Attrs) (tir.Attrs, error) {
		if _, ok := a[key]; !ok {
			return nil, fmt.Errorf("has no annotation %q", key)
		}
		out := copyAttrs(a)
		delete(out, key)
		if len(out) == 0 {
			out = nil
		}
		return out, nil
	}); err != nil {
		return err
	}
	s.Record(prim, []any{target}, map[string]any{"key": key}, nil, nil)
	return nil
}

func (s *Schedule) setAnnotation(prim string, target any, edit func(tir.Attrs) (tir.Attrs, error)) error {
	switch t := target.(type) {
	case LoopRV:
		f, err := s.FindLoop(t)
		if err != nil {
			return s.Errorf(prim, nil, &t, "no such loop in @%s", s.f.Name)
		}
		a, err := edit(f.Annotations)
		if err != nil {
			return s.loopErr(prim, t, "the loop %v", err)
		}
		c := *f
		c.Annotations = a
		s.replaceStmt(f, &c)
	case BlockRV:
		r, err := s.FindBlock(t)
		if err != nil {
			return s.Errorf(prim, &t, nil, "no such block in @%s", s.f.Name)
		}
		a, err := edit(r.Block.Annotations)
		if err != nil {
			return s.Errorf(prim, &t, nil, "the block %v", err)
		}
		b := *r.Block
		b.Annotations = a
		c := *r
		c.Block = &b
		s.replaceStmt(r, &c)
	default:
		return s.Errorf(prim, nil, nil, "target %v is neither a loop nor a block", target)
	}
	return nil
}

func init() {
	for kind, fn := range map[string]func(*Schedule, LoopRV) error{
		"parallel":  (*Schedule).Parallel,
		"vectorize": (*Schedule).Vectorize,
		"unroll":    (*Schedule).Unroll,
	} {
		fn := fn
		RegisterInstruction(kind, func(s *Schedule, in []any, _ map[string]any, _ any) ([]any, error) {
			l, err := LoopInput(in, 0)
			if err != nil {
				return nil, err
			}
			return nil, fn(s, l)
		})
	}
	RegisterInstruction("bind", func(s *Schedule, in []any, attrs map[string]any, _ any) ([]any, error) {
		l, err := LoopInput(in, 0)
		if err != nil {
			return nil, err
		}
		th, err := AttrString(attrs, "thread")
		if err != nil {
			return nil, err
		}
		return nil, s.Bind(l, th)
	})
	RegisterInstruction("annotate", func(s *Schedule, in []any, attrs map[string]any, _ any) ([]any, error) {
		if len(in) != 1 {
			return nil, fmt.Errorf("want 1 input, have %d", len(in))
		}
		key, err := AttrString(attrs, "key")
		if err != nil {
			return nil, err
		}
		v, err := DecodeAttr(attrs["value"])
		if err != nil {
			return nil, err
		}
		return nil, s.Annotate(in[0], key, v)
	})
	RegisterInstruction("unannotate", func(s *Schedule, in []any, attrs map[string]any, _ any) ([]any, error) {
		if len(in) != 1 {
			return nil, fmt.Errorf("want 1 input, have %d", len(in))
		}
		key, err := AttrString(attrs, "key")
		if err != nil {
			return nil, err
		}
		return nil, s.Unannotate(in[0], key)
	})
}
