package graph

// SetLegalizesSymbolic sets whether graph op name's legalization takes
// symbolic dimensions (Conversions.Symbolic) for a test of the
// legalization's gate, returning what restores it.
func SetLegalizesSymbolic(name string, v bool) (restore func()) {
	old := symbolicLegalizations[name]
	symbolicLegalizations[name] = v
	return func() { symbolicLegalizations[name] = old }
}
