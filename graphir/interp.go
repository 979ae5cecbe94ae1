package graphir

import "fmt"

// Interpret runs f's body with the reference evaluators of its ops and
// returns the tensors passed to func.return. args must match f's inputs.
// Errors: argument count or type mismatch, an op without an evaluator, and
// any evaluator error, each located at the offending op.
func Interpret(f *Func, args []*Tensor) ([]*Tensor, error) {
	return InterpretObserved(f, args, nil)
}

// InterpretObserved is Interpret calling observe with every op result of
// f's body as it is computed (calibration collects activation ranges this
// way; nil observes nothing). observe must not change the tensor.
//
// A function with symbolic dimensions runs on a clone specialized to the
// arguments' shapes (BindingOf, BindFunc); observe still sees f's values.
func InterpretObserved(f *Func, args []*Tensor, observe func(*Value, *Tensor)) ([]*Tensor, error) {
	if len(args) != len(f.Type.Inputs) {
		return nil, Errorf(f.Loc, "@%s expects %d arguments, got %d", f.Name, len(f.Type.Inputs), len(args))
	}
	if len(FuncSymbols(f)) > 0 {
		return interpretSymbolic(f, args, observe)
	}
	b := f.Entry()
	env := make(map[*Value]*Tensor, b.Len()+len(args))
	for i, a := range b.Args {
		if !args[i].Type.Equal(f.Type.Inputs[i]) {
			return nil, Errorf(f.Loc, "@%s argument #%d: expected %s, got %s", f.Name, i, f.Type.Inputs[i], args[i].Type)
		}
		env[a] = args[i]
		if observe != nil {
			observe(a, args[i])
		}
	}
	return evalOpsObserved(b, env, observe)
}

// EvalBlock evaluates the ops of b with its arguments bound to args and
// returns the operands of its terminator. Region-holding ops use it to
// evaluate their bodies.
func EvalBlock(b *Block, args []*Tensor) ([]*Tensor, error) {
	env := make(map[*Value]*Tensor, b.Len()+len(args))
	for i, a := range b.Args {
		env[a] = args[i]
	}
	return evalOps(b, env)
}

func evalOps(b *Block, env map[*Value]*Tensor) ([]*Tensor, error) {
	return evalOpsObserved(b, env, nil)
}

func evalOpsObserved(b *Block, env map[*Value]*Tensor, observe func(*Value, *Tensor)) ([]*Tensor, error) {
	for op := b.First(); op != nil; op = op.Next() {
		ins := make([]*Tensor, op.NumOperands())
		for i, v := range op.Operands() {
			t, ok := env[v]
			if !ok {
				return nil, op.Errorf("operand #%d has no value during evaluation", i)
			}
			ins[i] = t
		}
		if op.HasTrait(Terminator) {
			return ins, nil
		}
		if op.Def == nil || op.Def.Eval == nil {
			return nil, op.Errorf("has no reference evaluator")
		}
		outs, err := op.Def.Eval(op, ins)
		if err != nil {
			if d, ok := err.(*Diagnostic); ok {
				return nil, d
			}
			return nil, op.Errorf("%v", err)
		}
		if len(outs) != len(op.Results) {
			return nil, op.Errorf("evaluator returned %d results, want %d", len(outs), len(op.Results))
		}
		for i, r := range op.Results {
			env[r] = outs[i]
			if observe != nil {
				observe(r, outs[i])
			}
		}
	}
	return nil, fmt.Errorf("block has no terminator")
}

// interpretSymbolic binds f's symbols from args' shapes and interprets a
// specialized clone.
func interpretSymbolic(f *Func, args []*Tensor, observe func(*Value, *Tensor)) ([]*Tensor, error) {
	shapes := make([][]int64, len(args))
	for i, a := range args {
		shapes[i] = a.Type.Shape
	}
	bind, err := BindingOf(f, shapes, nil)
	if err != nil {
		return nil, Errorf(f.Loc, "%v", err)
	}
	c, mapping := cloneFunc(f)
	if err := BindFunc(c, bind); err != nil {
		return nil, err
	}
	if observe == nil {
		return InterpretObserved(c, args, nil)
	}
	orig := make(map[*Value]*Value, len(mapping))
	for k, v := range mapping {
		orig[v] = k
	}
	return InterpretObserved(c, args, func(v *Value, t *Tensor) { observe(orig[v], t) })
}
