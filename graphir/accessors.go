package graphir

// Attribute accessors for verifiers, evaluators, legalizations and
// lowerings. Each returns the attribute when op has it, else the Default
// of op's schema entry (AttrSpec.Default), else the zero value; the schema
// is the one place a default is written. They report a present attribute
// of the wrong kind (or, for arrays, a length other than the schema's
// Len) as a diagnostic at op, because Infer may run (through Build) on
// ops the generic schema check has not seen.

// attrOrDefault returns op's attribute name, or its schema default (nil
// when there is neither).
func (op *Op) attrOrDefault(name string) Attribute {
	if a := op.Attr(name); a != nil {
		return a
	}
	return op.Def.Default(name)
}

func (op *Op) wrongKind(name, want string, a Attribute) *Diagnostic {
	return op.Errorf("attribute '%s' must be %s, got %s", name, want, FormatAttr(a))
}

// Int returns integer attribute name. Errors: not an integer.
func (op *Op) Int(name string) (int64, error) {
	switch a := op.attrOrDefault(name).(type) {
	case nil:
		return 0, nil
	case *IntegerAttr:
		return a.Value, nil
	default:
		return 0, op.wrongKind(name, "an integer", a)
	}
}

// Float returns float attribute name (an integer attribute is accepted).
// Errors: neither a float nor an integer.
func (op *Op) Float(name string) (float64, error) {
	switch a := op.attrOrDefault(name).(type) {
	case nil:
		return 0, nil
	case *FloatAttr:
		return a.Value, nil
	case *IntegerAttr:
		return float64(a.Value), nil
	default:
		return 0, op.wrongKind(name, "a float", a)
	}
}

// Bool returns bool attribute name. Errors: not a bool.
func (op *Op) Bool(name string) (bool, error) {
	switch a := op.attrOrDefault(name).(type) {
	case nil:
		return false, nil
	case BoolAttr:
		return bool(a), nil
	default:
		return false, op.wrongKind(name, "a bool", a)
	}
}

// Str returns string attribute name. Errors: not a string.
func (op *Op) Str(name string) (string, error) {
	switch a := op.attrOrDefault(name).(type) {
	case nil:
		return "", nil
	case StringAttr:
		return string(a), nil
	default:
		return "", op.wrongKind(name, "a string", a)
	}
}

// Ints returns integer-array attribute name (nil when absent without a
// default). Errors: not an array of integers, or not of the schema's Len.
func (op *Op) Ints(name string) ([]int64, error) {
	a := op.attrOrDefault(name)
	if a == nil {
		return nil, nil
	}
	arr, ok := a.(ArrayAttr)
	if !ok {
		return nil, op.wrongKind(name, "an integer array", a)
	}
	out := make([]int64, len(arr))
	for i, e := range arr {
		ia, ok := e.(*IntegerAttr)
		if !ok {
			return nil, op.wrongKind(name, "an integer array", a)
		}
		out[i] = ia.Value
	}
	return out, op.checkLen(name, len(out))
}

// Floats returns float-array attribute name (integers accepted; nil when
// absent without a default). Errors: not an array of numbers, or not of
// the schema's Len.
func (op *Op) Floats(name string) ([]float64, error) {
	a := op.attrOrDefault(name)
	if a == nil {
		return nil, nil
	}
	arr, ok := a.(ArrayAttr)
	if !ok {
		return nil, op.wrongKind(name, "a float array", a)
	}
	out := make([]float64, len(arr))
	for i, e := range arr {
		switch x := e.(type) {
		case *FloatAttr:
			out[i] = x.Value
		case *IntegerAttr:
			out[i] = float64(x.Value)
		default:
			return nil, op.wrongKind(name, "a float array", a)
		}
	}
	return out, op.checkLen(name, len(out))
}

// IntsLen is Ints for an array whose length n depends on the operands,
// one entry per what ("dimension", "spatial dimension"): absent without a
// default, it is n copies of fill. Errors: as Ints, or a length other than
// n.
func (op *Op) IntsLen(name string, n int, what string, fill int64) ([]int64, error) {
	vs, err := op.Ints(name)
	if err != nil {
		return nil, err
	}
	if vs == nil && op.attrOrDefault(name) == nil {
		vs = make([]int64, n)
		for i := range vs {
			vs[i] = fill
		}
	}
	if len(vs) != n {
		return nil, op.Errorf("attribute '%s' must have %d elements (one per %s), got %d", name, n, what, len(vs))
	}
	return vs, nil
}

// checkLen compares an array attribute's length with the schema's Len.
func (op *Op) checkLen(name string, n int) error {
	if op.Def == nil {
		return nil
	}
	if s := op.Def.Spec(name); s != nil && s.Len > 0 && n != s.Len {
		return op.Errorf("attribute '%s' must have %d elements, got %d", name, s.Len, n)
	}
	return nil
}
