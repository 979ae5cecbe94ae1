package tensorir

// EstimateFLOPs counts the floating-point operations of one run of f:
// for every store of a float value, the arithmetic operations of its
// value times the product of the constant extents of the loops around it
// (a non-constant extent counts as 1).
func EstimateFLOPs(f *PrimFunc) float64 {
	total := 0.0
	var walk func(s Stmt, trips float64)
	walk = func(s Stmt, trips float64) {
		VisitStmt(s, func(st Stmt) bool {
			switch x := st.(type) {
			case *For:
				t := trips
				if e, ok := x.Extent.(*IntImm); ok && e.Value > 0 {
					t *= float64(e.Value)
				}
				walk(x.Body, t)
				return false
			case *BufferStore:
				if x.Buffer.DType.IsFloat() {
					total += trips * float64(floatOps(x.Value))
				}
			}
			return true
		})
	}
	walk(f.Body, 1)
	return total
}

// floatOps counts the float-valued arithmetic nodes of e.
func floatOps(e Expr) int {
	n := 0
	VisitExpr(e, func(x Expr) bool {
		switch x.(type) {
		case *Binary, *Call:
			if x.DType().IsFloat() {
				n++
			}
		}
		return true
	})
	return n
}
