package graphir

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// FuncSymbols returns the symbolic dimension names of f's inputs, sorted,
// each once. Shape inference derives every other value's dimensions from
// them, so they are all of f's symbols.
func FuncSymbols(f *Func) []string { return TypesSymbols(f.Type.Inputs...) }

// TypesSymbols returns the symbols the tensor types among ts use, sorted,
// each once.
func TypesSymbols(ts ...Type) []string {
	var es []*SymExpr
	for _, t := range ts {
		if tt := AsTensor(t); tt != nil {
			es = append(es, tt.Sym...)
		}
	}
	return SymbolsOf(es)
}

// NotSymbolicYet is the refusal of an op (or an importer's node) that
// does not take symbolic dimensions, naming syms and the flags that pin
// them.
func NotSymbolicYet(syms []string) string {
	return fmt.Sprintf("does not take symbolic dimensions yet ('%s'); pin them with %s", strings.Join(syms, "', '"), FixDimHint(syms))
}

// BindFunc specializes f in place: every symbolic dimension of its
// signature, block arguments and op results (nested regions included)
// takes its value under bind, and f is verified again, so that a binding
// under which the shapes disagree (a dimension below 0, a reshape whose
// element counts differ) is refused. Symbols bind does not name stay
// symbolic. Errors: a located diagnostic; f is then partly specialized,
// so callers bind a clone (CloneFunc) when they keep the original.
func BindFunc(f *Func, bind map[string]int64) error {
	var err error
	sub := func(t Type) Type {
		tt := AsTensor(t)
		if tt == nil || tt.IsStatic() || err != nil {
			return t
		}
		var b *TensorType
		if b, err = tt.Bind(bind); err != nil {
			err = Errorf(f.Loc, "@%s: %v", f.Name, err)
		}
		return b
	}
	for i, t := range f.Type.Inputs {
		f.Type.Inputs[i] = sub(t)
	}
	for i, t := range f.Type.Results {
		f.Type.Results[i] = sub(t)
	}
	bindRegion(f.Body, sub)
	if err != nil {
		return err
	}
	return VerifyFunc(f)
}

func bindRegion(r *Region, sub func(Type) Type) {
	for _, b := range r.Blocks {
		for _, a := range b.Args {
			a.Type = sub(a.Type)
		}
		for op := b.First(); op != nil; op = op.Next() {
			for _, v := range op.Results {
				v.Type = sub(v.Type)
			}
			for _, nr := range op.Regions {
				bindRegion(nr, sub)
			}
		}
	}
}

// CloneFunc deep-copies f (its ops, regions and types; attributes are
// shared, as Op.Clone shares them) into a function of no module.
func CloneFunc(f *Func) *Func {
	c, _ := cloneFunc(f)
	return c
}

// cloneFunc is CloneFunc returning the mapping of f's values (block
// arguments and op results) to the clone's.
func cloneFunc(f *Func) (*Func, map[*Value]*Value) {
	ty := &FunctionType{Inputs: slices.Clone(f.Type.Inputs), Results: slices.Clone(f.Type.Results)}
	c := &Func{Name: f.Name, Type: ty, Private: f.Private, Attrs: f.Attrs, Loc: f.Loc, Body: NewRegion()}
	mapping := map[*Value]*Value{}
	for _, b := range f.Body.Blocks {
		nb := NewBlock()
		for _, a := range b.Args {
			mapping[a] = nb.AddArg(a.Type, a.Loc)
		}
		c.Body.AddBlock(nb)
	}
	for bi, b := range f.Body.Blocks {
		for op := b.First(); op != nil; op = op.Next() {
			c.Body.Blocks[bi].Append(op.Clone(mapping))
		}
	}
	return c, mapping
}

// BindingOf returns the values of f's symbols that the shapes of its
// arguments give: input i has shape shapes[i], and each symbolic
// dimension that is a symbol alone takes the size found there. Errors
// (no located position: the caller names its files): a rank that differs
// from the input's, a static dimension that differs, two inputs that give
// one symbol different sizes (naming the symbol and both inputs, labelled
// by names[i] when given), a symbol only expressions use.
func BindingOf(f *Func, shapes [][]int64, names []string) (map[string]int64, error) {
	if len(shapes) != len(f.Type.Inputs) {
		return nil, fmt.Errorf("@%s takes %d inputs, got %d", f.Name, len(f.Type.Inputs), len(shapes))
	}
	label := func(i int) string {
		if i < len(names) && names[i] != "" {
			return fmt.Sprintf("input #%d (%s)", i, names[i])
		}
		return fmt.Sprintf("input #%d", i)
	}
	bind := map[string]int64{}
	from := map[string]int{}
	for i, t := range f.Type.Inputs {
		tt := AsTensor(t)
		if tt == nil {
			continue
		}
		if len(shapes[i]) != tt.Rank() {
			return nil, fmt.Errorf("%s has shape %v, but @%s's input is %s", label(i), shapes[i], f.Name, tt)
		}
		for d, e := range tt.Dims() {
			v := shapes[i][d]
			if c, ok := e.Const(); ok {
				if c != v {
					return nil, fmt.Errorf("%s has shape %v, but @%s's input is %s", label(i), shapes[i], f.Name, tt)
				}
				continue
			}
			syms := e.Symbols()
			if len(syms) != 1 || !e.Equal(Sym(syms[0])) {
				continue
			}
			s := syms[0]
			if j, seen := from[s]; seen && bind[s] != v {
				return nil, fmt.Errorf("inconsistent inputs: symbolic dimension '%s' is %d in %s but %d in %s", s, bind[s], label(j), v, label(i))
			}
			bind[s], from[s] = v, i
		}
	}
	var missing []string
	for _, s := range FuncSymbols(f) {
		if _, ok := bind[s]; !ok {
			missing = append(missing, s)
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("@%s: symbolic dimensions '%s' appear in no input dimension of their own", f.Name, strings.Join(missing, "', '"))
	}
	return bind, nil
}

// FixDimHint is the flags that pin syms (`--fix-dim NAME=N` for each, as
// every command that loads a model takes), for diagnostics that refuse a
// symbolic dimension.
func FixDimHint(syms []string) string {
	pins := make([]string, len(syms))
	for i, s := range syms {
		pins[i] = "--fix-dim " + s + "=N"
	}
	return strings.Join(pins, " ")
}

// FixDimsPassName is the pass that binds symbolic dimensions to sizes
// (BindFunc on every function), tessera-opt's counterpart of --fix-dim.
const FixDimsPassName = "fix-dims"

func init() {
	RegisterPass(&PassInfo{
		Name:    FixDimsPassName,
		Summary: "bind symbolic dimensions to sizes in every function (the specialization --fix-dim makes) and verify again",
		Options: map[string]string{"dims": "the sizes, NAME:N[,NAME:N...] (N ≥ 0)"},
		New: func(opts map[string]string) (Pass, error) {
			bind, err := ParseDimsOption(opts["dims"])
			if err != nil {
				return nil, err
			}
			return &FuncPass{PassName: FixDimsPassName, Fn: func(f *Func) error { return BindFunc(f, bind) }}, nil
		},
	})
}

// FormatDims prints sizes as ParseDimsOption reads them, by name.
func FormatDims(sizes map[string]int64) string {
	names := make([]string, 0, len(sizes))
	for n := range sizes {
		names = append(names, n)
	}
	sort.Strings(names)
	for i, n := range names {
		names[i] = n + ":" + strconv.FormatInt(sizes[n], 10)
	}
	return strings.Join(names, ",")
}

// ParseDimsOption parses a list of symbol sizes, NAME:N[,NAME:N...] (the
// fix-dims pass's dims option, the default-schedule step's bind-dims).
// Errors: a malformed item, a symbol named twice.
func ParseDimsOption(s string) (map[string]int64, error) {
	bind := map[string]int64{}
	for _, item := range strings.Split(s, ",") {
		name, size, ok := strings.Cut(strings.TrimSpace(item), ":")
		n, err := strconv.ParseInt(size, 10, 64)
		if !ok || !ValidSymbol(name) || err != nil || n < 0 {
			return nil, fmt.Errorf("option dims: expected NAME:N[,NAME:N...], got %q", s)
		}
		if _, dup := bind[name]; dup {
			return nil, fmt.Errorf("option dims: '%s' is given twice", name)
		}
		bind[name] = n
	}
	return bind, nil
}
