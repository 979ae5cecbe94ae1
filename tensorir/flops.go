package tensorir

// EstimateFLOPs counts the floating-point operations of one run of f:
// for every store of a float value, the arithmetic operations of its
// value times the product of the constant extents of the loops around it
// (a non-constant extent counts as 1).
func EstimateFLOPs(f *PrimFunc) float64 {
	return sumOverStores(f, func(st *BufferStore) float64 {
		if !st.Buffer.DType.IsFloat() {
			return 0
		}
		return float64(countExpr(st.Value, func(x Expr) bool {
			switch x.(type) {
			case *Binary, *Call:
				return x.DType().IsFloat()
			}
			return false
		}))
	})
}

// EstimateWork counts the scalar operations of one run of f, the
// parallelism cost rule's measure of a kernel's work: for every store,
// one for the store, one per load and one per arithmetic, comparison,
// select, cast or call node of its value, times the product of the
// constant extents of the loops around it (a non-constant extent counts
// as 1). Unlike EstimateFLOPs it counts integer and memory-bound work
// (copies, pooling, gathers).
func EstimateWork(f *PrimFunc) float64 {
	return sumOverStores(f, func(st *BufferStore) float64 {
		return float64(1 + countExpr(st.Value, func(x Expr) bool {
			switch x.(type) {
			case *BufferLoad, *Binary, *Call, *Select, *Cast, *Not:
				return true
			}
			return false
		}))
	})
}

// sumOverStores sums per(store) times the product of the constant extents
// of the loops around each store of f (a non-constant extent counts as 1).
func sumOverStores(f *PrimFunc, per func(*BufferStore) float64) float64 {
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
				total += trips * per(x)
			}
			return true
		})
	}
	walk(f.Body, 1)
	return total
}

// countExpr counts the nodes of e that match.
func countExpr(e Expr, match func(Expr) bool) int {
	n := 0
	VisitExpr(e, func(x Expr) bool {
		if match(x) {
			n++
		}
		return true
	})
	return n
}
