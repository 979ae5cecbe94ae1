package lowering

import (
	"strconv"

	"github.com/tessera-ml/tessera/dialects/hlo"
	"github.com/tessera-ml/tessera/graphir"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// LowerToTIRPassName is the name of the hlo → tensor IR conversion on the
// tessera-opt command line (--lower-to-tir). It is not a graphir pass: its
// output is a tensorir.Module, and the tool runs later flags on that.
const LowerToTIRPassName = "lower-to-tir"

// LowerToTIR converts a module produced by the `fuse` pass (functions
// whose top level holds only hlo.constant, hlo.fusion and func.return) to
// tensor IR:
//   - each hlo.fusion becomes a kernel PrimFunc (attribute
//     tessera.kernel) named fused_N, with one input buffer per fusion
//     operand (in0, in1, ...) and one output buffer per result (out0,
//     ...); its body has one block per hlo op of the region, named after
//     the op ("convolution", "add_1"), each writing its own local
//     intermediate buffer (tir.allocate) over a full loop nest, the op
//     producing a result writing the output buffer; splat constants are
//     immediates; reductions are reduce blocks with an init;
//   - each graphir function becomes a host PrimFunc of the same name
//     (attribute tessera.host) whose parameters are the function's
//     arguments (arg0, ...) and results (out0, ..., role out), holding
//     the weights as tir.constant buffers (w0, ...), the tensors passed
//     between kernels in one tir.arena planned by PlanMemory (t0, ...),
//     and the tir.call statements in program order. The kernel producing
//     a result writes straight into the result parameter; a result that
//     is an argument, a constant or a value already returned gets a copy
//     kernel (copy_N).
//
// The module is verified first; problems are located diagnostics at the
// offending op (an op outside a fusion, an op without a lowering, an
// element type without a tensor IR dtype).
func LowerToTIR(m *graphir.Module) (*tir.Module, error) {
	out, _, err := LowerToTIRWithStats(m)
	return out, err
}

// AttrHost marks the host functions LowerToTIR makes (tensorir.AttrHost).
const AttrHost = tir.AttrHost

// LowerToTIRWithStats is LowerToTIR that also returns the memory plan
// statistics, summed over the module's host functions (for a one-function
// model, those of its function).
func LowerToTIRWithStats(m *graphir.Module) (*tir.Module, tir.PlanStats, error) {
	if err := graphir.Verify(m); err != nil {
		return nil, tir.PlanStats{}, err
	}
	l := &tirLowering{
		out:   &tir.Module{},
		taken: map[string]bool{},
	}
	for _, f := range m.Funcs {
		l.taken[f.Name] = true
	}
	for _, f := range m.Funcs {
		if err := l.function(f); err != nil {
			return nil, tir.PlanStats{}, err
		}
	}
	if err := tir.Verify(l.out); err != nil {
		return nil, tir.PlanStats{}, graphir.Errorf(graphir.Location{}, "lower-to-tir: internal error: the generated module does not verify: %v", err)
	}
	return l.out, l.stats, nil
}

type tirLowering struct {
	out   *tir.Module
	taken map[string]bool // function names in use
	next  map[string]int
	stats tir.PlanStats
}

func (l *tirLowering) fresh(base string) string {
	if l.next == nil {
		l.next = map[string]int{}
	}
	for {
		n := l.next[base]
		l.next[base] = n + 1
		name := base + "_" + strconv.Itoa(n)
		if !l.taken[name] {
			l.taken[name] = true
			return name
		}
	}
}

// copyKernel makes a kernel copying in0 to out0 of the given type.
func (l *tirLowering) copyKernel(t *graphir.TensorType, dt tir.DType, loc graphir.Location) *tir.PrimFunc {
	name := l.fresh("copy")
	k := &kernel{
		f:     &tir.PrimFunc{Name: name, Attrs: tir.Attrs{tir.AttrKernel: tir.UnitAttr{}}, Loc: loc},
		names: map[string]int{}, bufs: map[string]int{}, loc: loc,
	}
	in := bufferFor("in0", t, dt)
	out := bufferFor("out0", t, dt)
	k.f.Params = []*tir.Param{{Buffer: in, Role: tir.RoleIn, Loc: loc}, {Buffer: out, Role: tir.RoleOut, Loc: loc}}
	k.copyBlock(&tir.Operand{Buffer: in, Shape: t.Shape, DType: dt}, out, loc)
	k.f.Body = k.assemble()
	return k.f
}

type hostValue struct {
	buf   *tir.Buffer
	arena int // index into arena buffers, or -1
}

func (l *tirLowering) function(f *graphir.Func) error {
	loc := f.Loc
	host := &tir.PrimFunc{Name: f.Name, Attrs: tir.Attrs{tir.AttrHost: tir.UnitAttr{}}, Loc: loc}
	vals := map[*graphir.Value]*hostValue{}
	syms := newSymScope()
	syms.valueSymbols(f.Entry())
	host.Params = syms.params(loc)
	for i, a := range f.Args() {
		t, ok := a.Type.(*graphir.TensorType)
		dt, ok2 := hlo.TIRDType(elemOf(t))
		if !ok || !ok2 {
			return graphir.Errorf(f.Loc, "lower-to-tir: argument #%d of @%s must be a tensor with a tensor IR element type, got %s", i, f.Name, a.Type)
		}
		b := syms.buffer("arg"+strconv.Itoa(i), t, dt)
		b.Loc = loc
		host.Params = append(host.Params, &tir.Param{Buffer: b, Role: tir.RoleIn, Loc: loc})
		vals[a] = &hostValue{buf: b, arena: -1}
	}
	entry := f.Entry()
	ret := entry.Last()
	if ret == nil || ret.Name != "func.return" {
		return graphir.Errorf(f.Loc, "lower-to-tir: @%s must end with func.return", f.Name)
	}
	// Result parameters, and which fusion result writes each directly.
	var outs []*tir.Buffer
	direct := map[*graphir.Value]*tir.Buffer{}
	for i, v := range ret.Operands() {
		t, dt, err := tensorOf(ret, v)
		if err != nil {
			return err
		}
		b := syms.buffer("out"+strconv.Itoa(i), t, dt)
		b.Loc = loc
		host.Params = append(host.Params, &tir.Param{Buffer: b, Role: tir.RoleOut, Loc: loc})
		outs = append(outs, b)
		if _, done := direct[v]; !done && v.Def != nil && v.Def.Name == hlo.FusionOp {
			direct[v] = b
		}
	}
	var consts []*tir.AllocateConst
	var calls []tir.Stmt
	var arena []SymPlanBuffer
	var arenaBufs []*tir.Buffer
	var fusionIdx []*graphir.Op
	for op := entry.First(); op != nil && op != ret; op = op.Next() {
		switch op.Name {
		case hlo.ConstantOp:
			if op.IsUnused() {
				continue
			}
			d, ok := op.Attr("value").(*graphir.DenseElementsAttr)
			if !ok {
				return op.Errorf("lower-to-tir: constant without a dense value")
			}
			t, dt, err := tensorOf(op, op.Results[0])
			if err != nil {
				return err
			}
			c, err := constStmt(op, "w"+strconv.Itoa(len(consts)), t, dt, d)
			if err != nil {
				return err
			}
			consts = append(consts, c)
			vals[op.Results[0]] = &hostValue{buf: c.Buffer, arena: -1}
		case hlo.FusionOp:
			name := l.fresh("fused")
			kern, err := lowerFusion(op, name)
			if err != nil {
				return err
			}
			l.out.Funcs = append(l.out.Funcs, kern)
			idx := len(calls)
			call := &tir.CallKernel{Callee: name, Scalars: syms.argsFor(kern), Loc: op.Loc}
			for i, v := range op.Operands() {
				hv, ok := vals[v]
				if !ok {
					return op.Errorf("lower-to-tir: operand #%d has no buffer", i)
				}
				if hv.arena >= 0 {
					arena[hv.arena].Live.Last = idx
				}
				call.Args = append(call.Args, hv.buf)
			}
			for _, r := range op.Results {
				if b := direct[r]; b != nil {
					vals[r] = &hostValue{buf: b, arena: -1}
					call.Args = append(call.Args, b)
					continue
				}
				t, dt, err := tensorOf(op, r)
				if err != nil {
					return err
				}
				b := syms.buffer("t"+strconv.Itoa(len(arena)), t, dt)
				b.Loc = op.Loc
				vals[r] = &hostValue{buf: b, arena: len(arena)}
				arena = append(arena, SymPlanBuffer{Name: b.Name, Bytes: byteSize(t, dt), Live: tir.Lifetime{First: idx, Last: idx}})
				arenaBufs = append(arenaBufs, b)
				call.Args = append(call.Args, b)
			}
			calls = append(calls, call)
			fusionIdx = append(fusionIdx, op)
		default:
			return op.Errorf("lower-to-tir: expects the output of the fuse pass (only hlo.constant, hlo.fusion and func.return at the top level), found '%s'", op.Name)
		}
	}
	// Results not written directly by their producer are copied.
	for i, v := range ret.Operands() {
		if direct[v] == outs[i] {
			continue
		}
		hv, ok := vals[v]
		if !ok {
			return ret.Errorf("lower-to-tir: returned value #%d has no buffer", i)
		}
		t, dt, err := tensorOf(ret, v)
		if err != nil {
			return err
		}
		ck := l.copyKernel(t, dt, ret.Loc)
		l.out.Funcs = append(l.out.Funcs, ck)
		calls = append(calls, &tir.CallKernel{Callee: ck.Name, Args: []*tir.Buffer{hv.buf, outs[i]}, Scalars: syms.argsFor(ck), Loc: ret.Loc})
	}
	body := tir.Seq(calls...)
	if len(calls) == 0 {
		body = &tir.SeqStmt{Loc: loc}
	}
	if len(arenaBufs) > 0 {
		size, offsets, stats := planArena(arena, syms)
		l.stats.Add(stats)
		body = &tir.ArenaAlloc{Size: size, Buffers: arenaBufs, Offsets: offsets, Body: body, Loc: loc}
	}
	for i := len(consts) - 1; i >= 0; i-- {
		consts[i].Body = body
		body = consts[i]
	}
	host.Body = body
	l.out.Funcs = append(l.out.Funcs, host)
	return nil
}

func elemOf(t *graphir.TensorType) graphir.DType {
	if t == nil {
		return 0
	}
	return t.Elem
}
