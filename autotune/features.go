package autotune

import (
	"math"
	"sort"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Feature extraction for the cost model, after Ansor (Zheng et al., "Ansor:
// Generating High-Performance Tensor Programs for Deep Learning", OSDI
// 2020, §5.2) and MetaSchedule's PerStoreFeature: every BufferStore of a
// scheduled kernel is described by what it computes (float and integer
// operation counts times its trip count), how its loops are annotated
// (vectorized, unrolled, parallel extents) and how it touches memory (per
// buffer: size, stride along the innermost loop, footprint within the
// innermost loop levels, reuse), and the stores are aggregated into one
// fixed-length vector.
//
// Layout of the vector (NumFeatures = 2*storeFeatures + globalFeatures):
//
//	[0, storeFeatures)                  the store with the most flops
//	[storeFeatures, 2*storeFeatures)    the element-wise sum over all stores
//	[2*storeFeatures, NumFeatures)      whole-function features
//
// Every count is scaled by log2(1+x); flags are 0 or 1 (summed flags are
// counts, scaled too).

// Per-store feature indices.
const (
	fAddSub      = iota // float add/sub × trip count
	fMul                // float mul × trip
	fDiv                // float div × trip
	fMath               // float math calls (exp, log, sqrt, ...) × trip
	fCmpSel             // compare, select, min, max × trip
	fIntOps             // integer (index) arithmetic × trip
	fFlops              // float operations × trip
	fTrip               // trip count: product of enclosing loop extents
	fNumLoops           // number of enclosing loops
	fVecInner           // extent of the innermost vectorized loop
	fVecProd            // product of vectorized extents
	fVecIsInner         // 1 when the innermost loop is vectorized
	fVecCount           // number of vectorized loops
	fUnrollProd         // product of unrolled extents
	fUnrollCount        // number of unrolled loops
	fAutoUnroll         // largest pragma_auto_unroll_max_step in scope
	fParProd            // product of parallel extents
	fParOuter           // 1 when the outermost loop is parallel
	fParCount           // number of parallel loops
	fGuards             // block predicates and tir.if conditions in scope
	fInnerExtent        // extent of the innermost loop
	fOuterExtent        // extent of the outermost loop
	fIsReduce           // 1 when the stored buffer is also read (accumulation)
	fIsInit             // 1 for a store of a block's init
	fIntensity          // flops / bytes touched by the whole nest
	fLocalAlloc         // bytes of local/shared buffers allocated in scope
	fBufferBase         // first buffer feature group
)

// Per-buffer feature offsets (a group of bufFeatures per accessed buffer:
// the written buffer first, then up to maxReadBuffers read buffers, the
// largest footprint first).
const (
	bBytes      = iota // bytes of the whole buffer
	bAccesses          // accesses × trip count
	bStride            // |element stride| w.r.t. the innermost loop of extent > 1 (unknown: the buffer's element count)
	bReuse             // stride 0: the innermost loop reuses the element
	bContig            // stride 1: contiguous
	bStrided           // stride > 1 (or unknown)
	bVecStride         // |element stride| w.r.t. the innermost vectorized loop
	bFootprint1        // bytes touched within the innermost loop level
	bFootprintK = bFootprint1 + footprintLevels - 1
	bReuseRatio = bFootprintK + 1 // accesses / distinct elements over the whole nest
	bIsLocal    = bReuseRatio + 1 // buffer scope is local or shared
	bufFeatures = bIsLocal + 1
)

const (
	// footprintLevels is K: footprints are measured within the innermost
	// 1..K loop levels.
	footprintLevels = 4
	// maxReadBuffers read buffers are described per store.
	maxReadBuffers = 3
	// storeFeatures is the length of one store's feature group.
	storeFeatures = fBufferBase + (1+maxReadBuffers)*bufFeatures
)

// Whole-function feature indices (offsets in the last group).
const (
	gStores        = iota // number of BufferStores
	gBlocks               // number of blocks
	gLoops                // number of loops
	gMaxDepth             // deepest loop nesting
	gAllocBytes           // bytes of every Allocate / block-allocated buffer
	gFlops                // total float operations
	gBytes                // total bytes touched (sum of nest footprints)
	gParams               // number of buffer parameters
	globalFeatures        // count
)

// NumFeatures is the length of every feature vector returned by
// ExtractFeatures.
const NumFeatures = 2*storeFeatures + globalFeatures

// unknownExtent is the extent assumed for a loop or buffer dimension whose
// extent is not a constant (a symbolic size).
const unknownExtent = 1

// featLoop is one enclosing loop of the walk.
type featLoop struct {
	v      *tir.Var
	min    int64
	extent float64 // ≥ 0; unknownExtent when symbolic
	kind   tir.ForKind
	auto   float64 // pragma_auto_unroll_max_step of the loop, 0 when absent
}

// featCtx is what the walk knows at a statement.
type featCtx struct {
	loops      []featLoop
	sub        map[*tir.Var]tir.Expr // block iter / let vars → loop-var expressions
	guards     int
	localBytes float64
	// init: the store belongs to a block's init; reduceOnly are the loop
	// vars bound only to that block's reduce iteration variables.
	init       bool
	reduceOnly map[*tir.Var]bool
	// unrollBudget is the tir.PragmaAutoUnrollMaxStep in force.
	unrollBudget int64
}

// featAccess is one buffer access of a store, indices in loop variables.
type featAccess struct {
	buf     *tir.Buffer
	indices []tir.Expr
	count   int
}

type featExtractor struct {
	stores [][]float64 // raw (unscaled) per-store features
	flops  []float64
	blocks int
	loops  int
	depth  int
	alloc  float64
	bytes  float64
}

// ExtractFeatures returns the feature vector (length NumFeatures, every
// entry finite and ≥ 0) of a scheduled kernel: a tensor-IR PrimFunc after
// schedule primitives, with loops of kind serial, parallel, vectorized or
// unrolled, blocks binding iteration variables, buffer stores and loads,
// allocations of cache buffers and guards (block predicates, tir.if) from
// non-dividing splits. A nil function or body gives the zero vector.
// Non-constant loop extents and buffer dimensions count as 1. It never
// panics.
func ExtractFeatures(f *tir.PrimFunc) (out []float64) {
	out = make([]float64, NumFeatures)
	if f == nil || f.Body == nil {
		return out
	}
	defer func() {
		// The walk checks what it indexes; this guards the analyses it
		// borrows (bound analysis) against IR no verifier has seen.
		if recover() != nil {
			out = make([]float64, NumFeatures)
		}
	}()
	x := &featExtractor{}
	x.walk(f.Body, &featCtx{sub: map[*tir.Var]tir.Expr{}})

	if len(x.stores) > 0 {
		best := 0
		for i := range x.stores {
			if x.flops[i] > x.flops[best] {
				best = i
			}
		}
		for j, v := range x.stores[best] {
			out[j] = v
		}
		for _, s := range x.stores {
			for j, v := range s {
				out[storeFeatures+j] += v
			}
		}
	}
	g := out[2*storeFeatures:]
	g[gStores] = float64(len(x.stores))
	g[gBlocks] = float64(x.blocks)
	g[gLoops] = float64(x.loops)
	g[gMaxDepth] = float64(x.depth)
	g[gAllocBytes] = x.alloc
	for _, v := range x.flops {
		g[gFlops] += v
	}
	g[gBytes] = x.bytes
	for _, p := range f.Params {
		if p != nil && p.Buffer != nil {
			g[gParams]++
		}
	}
	for i, v := range out {
		out[i] = featScale(v)
	}
	return out
}

// featScale is log2(1+x) for finite x ≥ 0; negative, NaN and infinite inputs
// map to 0 and a large finite value.
func featScale(v float64) float64 {
	switch {
	case math.IsNaN(v) || v <= 0:
		return 0
	case math.IsInf(v, 1) || v > math.MaxFloat64/2:
		return 1024
	}
	return math.Log2(1 + v)
}

func (x *featExtractor) walk(s tir.Stmt, c *featCtx) {
	switch st := s.(type) {
	case nil:
	case *tir.SeqStmt:
		for _, k := range st.Stmts {
			x.walk(k, c)
		}
	case *tir.For:
		if st.Var == nil {
			x.walk(st.Body, c)
			return
		}
		fr := featLoop{v: st.Var, extent: unknownExtent, kind: st.Kind}
		if e, ok := featConst(st.Extent); ok {
			fr.extent = math.Max(float64(e), 0)
		}
		if m, ok := featConst(st.Min); ok {
			fr.min = m
		}
		budget := c.unrollBudget
		if b, ok := tir.AutoUnrollBudget(st); ok {
			budget = b
			fr.auto = float64(b)
		}
		if tir.AutoUnrolls(st, budget) {
			fr.kind = tir.Unrolled // as code generation will emit it
		}
		x.loops++
		nc := *c
		nc.unrollBudget = budget
		nc.loops = append(append([]featLoop(nil), c.loops...), fr)
		x.depth = max(x.depth, len(nc.loops))
		x.walk(st.Body, &nc)
	case *tir.BlockRealize:
		b := st.Block
		if b == nil {
			return
		}
		x.blocks++
		nc := *c
		nc.sub = make(map[*tir.Var]tir.Expr, len(c.sub)+len(b.IterVars))
		for k, v := range c.sub {
			nc.sub[k] = v
		}
		spatialUse := map[*tir.Var]bool{}
		reduceUse := map[*tir.Var]bool{}
		for i, iv := range b.IterVars {
			if iv == nil || iv.Var == nil || i >= len(st.Values) || st.Values[i] == nil {
				continue
			}
			val := tir.Substitute(st.Values[i], c.sub)
			nc.sub[iv.Var] = val
			used := spatialUse
			if iv.Kind == tir.Reduce {
				used = reduceUse
			}
			for v := range featVars(val) {
				used[v] = true
			}
		}
		if st.Predicate != nil && !featIsTrue(st.Predicate) {
			nc.guards++
		}
		for _, a := range b.Allocs {
			bytes := featBufferBytes(a)
			x.alloc += bytes
			if a != nil && a.Scope != tir.ScopeGlobal {
				nc.localBytes += bytes
			}
		}
		if b.Init != nil {
			ic := nc
			ic.init = true
			ic.reduceOnly = map[*tir.Var]bool{}
			for v := range reduceUse {
				if !spatialUse[v] {
					ic.reduceOnly[v] = true
				}
			}
			x.walk(b.Init, &ic)
		}
		x.walk(b.Body, &nc)
	case *tir.Block:
		// A block outside a realize (not valid IR): walk its statements
		// with its iteration variables unbound.
		x.walk(st.Init, c)
		x.walk(st.Body, c)
	case *tir.BufferStore:
		x.store(st, c)
	case *tir.Allocate:
		nc := *c
		bytes := featBufferBytes(st.Buffer)
		x.alloc += bytes
		if st.Buffer != nil && st.Buffer.Scope != tir.ScopeGlobal {
			nc.localBytes += bytes
		}
		x.walk(st.Body, &nc)
	case *tir.IfThenElse:
		nc := *c
		nc.guards++
		x.walk(st.Then, &nc)
		x.walk(st.Else, &nc)
	case *tir.LetStmt:
		nc := *c
		if st.Var != nil && st.Value != nil {
			nc.sub = make(map[*tir.Var]tir.Expr, len(c.sub)+1)
			for k, v := range c.sub {
				nc.sub[k] = v
			}
			nc.sub[st.Var] = tir.Substitute(st.Value, c.sub)
		}
		x.walk(st.Body, &nc)
	case *tir.AllocateConst:
		x.walk(st.Body, c)
	case *tir.ArenaAlloc:
		x.walk(st.Body, c)
	}
}

// featOps are the operation counts of one evaluation of an expression.
type featOps struct {
	addSub, mul, div, math, cmpSel, intOps float64
}

func (o *featOps) flops() float64 { return o.addSub + o.mul + o.div + o.math + o.cmpSel }

func featCountOps(e tir.Expr, o *featOps) {
	tir.VisitExpr(e, func(n tir.Expr) bool {
		switch y := n.(type) {
		case *tir.Binary:
			t := featDType(y.A)
			lanes := float64(max(t.Lanes, 1))
			if !t.IsFloat() {
				o.intOps += lanes
				return true
			}
			switch {
			case y.Op == tir.OpAdd || y.Op == tir.OpSub:
				o.addSub += lanes
			case y.Op == tir.OpMul:
				o.mul += lanes
			case y.Op == tir.OpDiv || y.Op == tir.OpFloorDiv || y.Op == tir.OpFloorMod:
				o.div += lanes
			default: // min, max, comparisons, logic
				o.cmpSel += lanes
			}
		case *tir.Select:
			o.cmpSel += float64(max(featDType(y.T).Lanes, 1))
		case *tir.Not:
			o.intOps++
		case *tir.Call:
			lanes := float64(max(y.DType().Lanes, 1))
			switch {
			case y.Name == "fma":
				o.addSub += lanes
				o.mul += lanes
			case y.DType().IsFloat():
				o.math += lanes
			default:
				o.intOps += lanes
			}
		}
		return true
	})
}

func featDType(e tir.Expr) tir.DType {
	if e == nil {
		return tir.DType{}
	}
	return e.DType()
}

func (x *featExtractor) store(st *tir.BufferStore, c *featCtx) {
	feat := make([]float64, storeFeatures)
	loops := c.loops
	trip := 1.0
	for _, l := range loops {
		if c.init && c.reduceOnly[l.v] {
			continue
		}
		trip *= l.extent
	}

	var ops featOps
	featCountOps(st.Value, &ops)
	for _, ix := range st.Indices {
		featCountOps(ix, &ops)
	}
	feat[fAddSub] = ops.addSub * trip
	feat[fMul] = ops.mul * trip
	feat[fDiv] = ops.div * trip
	feat[fMath] = ops.math * trip
	feat[fCmpSel] = ops.cmpSel * trip
	feat[fIntOps] = ops.intOps * trip
	flops := ops.flops() * trip
	feat[fFlops] = flops
	feat[fTrip] = trip
	feat[fNumLoops] = float64(len(loops))

	innerVec := -1
	vecProd, unrollProd, parProd := 1.0, 1.0, 1.0
	for i, l := range loops {
		switch l.kind {
		case tir.Vectorized:
			innerVec = i
			vecProd *= l.extent
			feat[fVecCount]++
		case tir.Unrolled:
			unrollProd *= l.extent
			feat[fUnrollCount]++
		case tir.Parallel:
			parProd *= l.extent
			feat[fParCount]++
		}
		feat[fAutoUnroll] = math.Max(feat[fAutoUnroll], l.auto)
	}
	if innerVec >= 0 {
		feat[fVecInner] = loops[innerVec].extent
		feat[fVecProd] = vecProd
		if innerVec == len(loops)-1 {
			feat[fVecIsInner] = 1
		}
	}
	if feat[fUnrollCount] > 0 {
		feat[fUnrollProd] = unrollProd
	}
	if feat[fParCount] > 0 {
		feat[fParProd] = parProd
	}
	if len(loops) > 0 {
		if loops[0].kind == tir.Parallel {
			feat[fParOuter] = 1
		}
		feat[fOuterExtent] = loops[0].extent
		feat[fInnerExtent] = loops[len(loops)-1].extent
	}
	feat[fGuards] = float64(c.guards)
	feat[fLocalAlloc] = c.localBytes
	if c.init {
		feat[fIsInit] = 1
	}

	// Accesses, indices rewritten in loop variables.
	subst := func(es []tir.Expr) []tir.Expr {
		out := make([]tir.Expr, len(es))
		for i, e := range es {
			if e != nil {
				out[i] = tir.Substitute(e, c.sub)
			}
		}
		return out
	}
	write := &featAccess{buf: st.Buffer, indices: subst(st.Indices), count: 1}
	var reads []*featAccess
	byBuf := map[*tir.Buffer]*featAccess{}
	tir.VisitExpr(st.Value, func(n tir.Expr) bool {
		ld, ok := n.(*tir.BufferLoad)
		if !ok || ld.Buffer == nil {
			return true
		}
		if ld.Buffer == st.Buffer {
			feat[fIsReduce] = 1
			return true
		}
		if a := byBuf[ld.Buffer]; a != nil {
			a.count++
			return true
		}
		a := &featAccess{buf: ld.Buffer, indices: subst(ld.Indices), count: 1}
		byBuf[ld.Buffer] = a
		reads = append(reads, a)
		return true
	})

	env := newFeatIndexEnv(loops)
	var nestBytes float64
	writeFeat := feat[fBufferBase : fBufferBase+bufFeatures]
	nestBytes += env.describe(write, trip, loops, writeFeat)
	type readFeat struct {
		f     []float64
		bytes float64
		name  string
	}
	rf := make([]readFeat, len(reads))
	for i, a := range reads {
		rf[i].f = make([]float64, bufFeatures)
		rf[i].bytes = env.describe(a, trip, loops, rf[i].f)
		rf[i].name = a.buf.Name
		nestBytes += rf[i].bytes
	}
	sort.SliceStable(rf, func(i, j int) bool {
		if rf[i].bytes != rf[j].bytes {
			return rf[i].bytes > rf[j].bytes
		}
		return rf[i].name < rf[j].name
	})
	for i := 0; i < len(rf) && i < maxReadBuffers; i++ {
		base := fBufferBase + (1+i)*bufFeatures
		copy(feat[base:base+bufFeatures], rf[i].f)
	}
	if nestBytes > 0 {
		feat[fIntensity] = flops / nestBytes
	}
	x.bytes += nestBytes
	x.stores = append(x.stores, feat)
	x.flops = append(x.flops, flops)
}

// featIndexEnv evaluates index expressions over the enclosing loops.
type featIndexEnv struct {
	base map[*tir.Var]int64 // every loop variable at its minimum
}

func newFeatIndexEnv(loops []featLoop) *featIndexEnv {
	e := &featIndexEnv{base: make(map[*tir.Var]int64, len(loops))}
	for _, l := range loops {
		e.base[l.v] = l.min
	}
	return e
}

// describe fills f (bufFeatures long) for access a of a store executed
// trip times under loops, and returns the bytes the whole nest touches.
func (e *featIndexEnv) describe(a *featAccess, trip float64, loops []featLoop, f []float64) float64 {
	if a.buf == nil {
		return 0
	}
	elem := float64(tir.ElemBytes(a.buf.DType))
	shape, strides := featBufferLayout(a.buf)
	total := 1.0
	for _, d := range shape {
		total *= d
	}
	f[bBytes] = total * elem
	accesses := float64(a.count) * trip
	f[bAccesses] = accesses
	if a.buf.Scope == tir.ScopeLocal || a.buf.Scope == tir.ScopeShared {
		f[bIsLocal] = 1
	}

	// Stride along the innermost loop of extent > 1.
	inner := -1
	for i := len(loops) - 1; i >= 0; i-- {
		if loops[i].extent > 1 {
			inner = i
			break
		}
	}
	if inner >= 0 {
		s, ok := e.stride(a, loops[inner], strides)
		switch {
		case !ok:
			f[bStride] = total
			f[bStrided] = 1
		case s == 0:
			f[bReuse] = 1
		case s == 1:
			f[bStride] = 1
			f[bContig] = 1
		default:
			f[bStride] = s
			f[bStrided] = 1
		}
	}
	for i := len(loops) - 1; i >= 0; i-- {
		if loops[i].kind == tir.Vectorized {
			if s, ok := e.stride(a, loops[i], strides); ok {
				f[bVecStride] = s
			} else {
				f[bVecStride] = total
			}
			break
		}
	}

	// Footprints within the innermost 1..K levels and over the whole nest.
	for k := 1; k <= footprintLevels; k++ {
		f[bFootprint1+k-1] = e.distinct(a, loops, k, shape, total) * elem
	}
	whole := e.distinct(a, loops, len(loops), shape, total)
	if whole > 0 {
		f[bReuseRatio] = accesses / whole
	}
	return whole * elem
}

// stride is the absolute element-offset change of access a when loop l
// advances by one from the nest's base point; ok is false when an index
// cannot be evaluated (a load in an index, a symbolic variable is fine:
// it is held at 0).
func (e *featIndexEnv) stride(a *featAccess, l featLoop, strides []float64) (float64, bool) {
	if len(a.indices) != len(strides) {
		return 0, false
	}
	next := make(map[*tir.Var]int64, len(e.base))
	for k, v := range e.base {
		next[k] = v
	}
	next[l.v] = l.min + 1
	var d float64
	for i, ix := range a.indices {
		v0, ok0 := featEvalIndex(ix, e.base)
		v1, ok1 := featEvalIndex(ix, next)
		if !ok0 || !ok1 {
			return 0, false
		}
		d += float64(v1-v0) * strides[i]
	}
	return math.Abs(d), true
}

// distinct estimates the number of distinct elements access a touches
// while the innermost k loops run (the outer ones held at their base):
// the smaller of the index bounding box (clipped to the buffer's shape)
// and the product of the extents of those loops that the indices use.
func (e *featIndexEnv) distinct(a *featAccess, loops []featLoop, k int, shape []float64, total float64) float64 {
	k = min(k, len(loops))
	inner := loops[len(loops)-k:]
	used := map[*tir.Var]bool{}
	for _, ix := range a.indices {
		for v := range featVars(ix) {
			used[v] = true
		}
	}
	prod := 1.0
	env := tir.BoundEnv{}
	for _, l := range loops {
		env[l.v] = tir.Point(l.min)
	}
	for _, l := range inner {
		if used[l.v] {
			prod *= l.extent
		}
		if l.extent >= 1 && l.extent < math.MaxInt64/4 {
			env[l.v] = tir.Interval{Lo: l.min, Hi: l.min + int64(l.extent) - 1}
		}
	}
	box := 1.0
	if len(a.indices) == len(shape) {
		for i, ix := range a.indices {
			span := shape[i]
			if ix != nil {
				for v := range featVars(ix) {
					if _, ok := env[v]; !ok {
						env[v] = tir.Point(0) // symbolic parameters
					}
				}
				if iv := featBound(ix, env); !iv.IsFull() {
					span = math.Min(span, float64(iv.Hi)-float64(iv.Lo)+1)
				}
			}
			box *= math.Max(span, 1)
		}
	} else {
		box = total
	}
	return math.Max(math.Min(math.Min(box, prod), math.Max(total, 1)), 1)
}

// featBound is tir.Bound for integer scalar expressions, Full otherwise.
func featBound(e tir.Expr, env tir.BoundEnv) tir.Interval {
	t := e.DType()
	if !t.IsInt() || !t.IsScalar() {
		return tir.Full
	}
	return tir.Bound(e, env)
}

// featBufferLayout returns the buffer's shape and element strides (from
// Strides when every stride is a constant, else row-major). Symbolic or
// negative dimensions count as unknownExtent and 0.
func featBufferLayout(b *tir.Buffer) (shape, strides []float64) {
	shape = make([]float64, len(b.Shape))
	for i, d := range b.Shape {
		shape[i] = unknownExtent
		if v, ok := featConst(d); ok {
			shape[i] = math.Max(float64(v), 0)
		}
	}
	strides = make([]float64, len(shape))
	given := len(b.Strides) == len(shape)
	for i, s := range b.Strides {
		v, ok := featConst(s)
		if !ok || i >= len(strides) {
			given = false
			break
		}
		strides[i] = float64(v)
	}
	if !given {
		acc := 1.0
		for i := len(shape) - 1; i >= 0; i-- {
			strides[i] = acc
			acc *= math.Max(shape[i], 1)
		}
	}
	return shape, strides
}

func featBufferBytes(b *tir.Buffer) float64 {
	if b == nil {
		return 0
	}
	shape, _ := featBufferLayout(b)
	n := float64(tir.ElemBytes(b.DType))
	for _, d := range shape {
		n *= d
	}
	return n
}

func featConst(e tir.Expr) (int64, bool) {
	if c, ok := e.(*tir.IntImm); ok {
		return c.Value, true
	}
	return 0, false
}

func featIsTrue(e tir.Expr) bool {
	c, ok := e.(*tir.IntImm)
	return ok && c.Value != 0
}

// featVars is the set of variables e uses.
func featVars(e tir.Expr) map[*tir.Var]bool {
	out := map[*tir.Var]bool{}
	tir.VisitExpr(e, func(n tir.Expr) bool {
		if v, ok := n.(*tir.Var); ok {
			out[v] = true
		}
		return true
	})
	return out
}

// featEvalIndex evaluates an integer index expression with variables taken
// from vals (absent ones are 0); ok is false for loads, floats, division
// by zero and unknown nodes.
func featEvalIndex(e tir.Expr, vals map[*tir.Var]int64) (int64, bool) {
	return tir.EvalInt(e, func(v *tir.Var) (int64, bool) { return vals[v], true })
}
