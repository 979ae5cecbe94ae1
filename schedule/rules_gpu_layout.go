package schedule

import (
	"strconv"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// Shared-memory tile layouts of the GPU multi-level tiling. The threads of
// a warp read a staged tile once per reduction step and register-tile
// element, so the tile's layout decides the shared-memory bank conflicts
// and whether the reads are 128-bit (ld.shared.v4), as in the classic
// SGEMM kernels (Volkov and Demmel 2008; CUTLASS's "SIMT" tiles): the
// tile's axes indexed only by reduction variables go outermost (a GEMM's
// A tile, [m][k] in global memory, is stored [k][m], so a thread's
// register-tile rows are consecutive words), and an innermost axis that a
// thread reads 8 or more consecutive elements of is interleaved in runs
// of 4 across the threads (element t·R + 4h + l of a thread tile of R is
// stored at 4T·h + 4t + l, T threads): each 4-wide read of a warp then
// covers consecutive words, free of bank conflicts.

// threadTile is the tiling of one spatial loop: its register tile
// (elements per thread, consecutive), the threads on it and the block's
// tile width (their product when the other levels are 1).
type threadTile struct {
	reg, threads, width int64
	plain               bool // only the thread and register levels split it
}

// threadTiles are the tiles of nest's spatial loops under t, by the
// block's iteration variable, with the reduce variables mapped to nil.
func threadTiles(nest []nestLoop, t gpuTile) map[*tir.Var]*threadTile {
	out := map[*tir.Var]*threadTile{}
	for i, l := range nest {
		if l.iv.Kind == tir.Reduce {
			out[l.iv.Var] = nil
			continue
		}
		f := t.factors[i]
		out[l.iv.Var] = &threadTile{reg: f[4], threads: f[2], width: f[1] * f[2] * f[3] * f[4], plain: f[1] == 1 && f[3] == 1}
	}
	return out
}

// sharedTileLayout is the index map the shared copy of buf, read by
// block b, gets (see above), or nil to keep the operand's layout. tiles
// are b's variables (threadTiles).
func sharedTileLayout(b *tir.Block, buf *tir.Buffer, tiles map[*tir.Var]*threadTile) *IndexMap {
	idx := loadIndices(b.Body, buf)
	n := len(idx)
	shape, ok := buf.ConstShape()
	if !ok || n == 0 || n != len(shape) {
		return nil
	}
	var reduceAxes, otherAxes []int
	for d, e := range idx {
		if reduceOnly(e, tiles) {
			reduceAxes = append(reduceAxes, d)
		} else {
			otherAxes = append(otherAxes, d)
		}
	}
	perm := append(reduceAxes, otherAxes...)
	m := IndexMap{}
	for d := 0; d < n; d++ {
		m.Params = append(m.Params, tir.NewVar("i"+strconv.Itoa(d), tir.DIndex))
	}
	identity := true
	for d, a := range perm {
		identity = identity && a == d
		m.Results = append(m.Results, m.Params[a])
	}
	last := perm[n-1]
	tt := interleavedTile(idx[last], tiles)
	if tt != nil && shape[last]%tt.width == 0 {
		m.Results[n-1] = interleave(m.Params[last], tt.reg, tt.threads)
	} else if identity {
		return nil
	}
	return &m
}

// loadIndices are the indices of the first load of buf in body (nil if
// none).
func loadIndices(body tir.Stmt, buf *tir.Buffer) []tir.Expr {
	var idx []tir.Expr
	tir.VisitStmt(body, func(st tir.Stmt) bool {
		for _, e := range nodeExprs(st) {
			tir.VisitExpr(e, func(x tir.Expr) bool {
				if l, ok := x.(*tir.BufferLoad); ok && l.Buffer == buf && idx == nil {
					idx = l.Indices
				}
				return idx == nil
			})
		}
		return idx == nil
	})
	return idx
}

// reduceOnly reports whether index e uses reduce variables and no
// spatial one.
func reduceOnly(e tir.Expr, tiles map[*tir.Var]*threadTile) bool {
	uses, spatial := false, false
	tir.VisitExpr(e, func(x tir.Expr) bool {
		if v, ok := x.(*tir.Var); ok {
			if t, known := tiles[v]; known {
				uses = true
				spatial = spatial || t != nil
			}
		}
		return true
	})
	return uses && !spatial
}

// interleavedTile is the tile of the spatial variable index e is, when
// its threads read runs of 8 or more consecutive elements (a register
// tile of a multiple of 4 above 4, on a loop split only into threads and
// registers).
func interleavedTile(e tir.Expr, tiles map[*tir.Var]*threadTile) *threadTile {
	v, ok := e.(*tir.Var)
	if !ok {
		return nil
	}
	t := tiles[v]
	if t == nil || !t.plain || t.threads < 2 || t.reg <= 4 || t.reg%4 != 0 {
		return nil
	}
	return t
}

// interleave maps x (tile of threads×reg elements, a thread's reg
// consecutive) to floor(x/W)·W + 4T·⌊(x mod R)/4⌋ + 4·⌊(x mod W)/R⌋ +
// x mod 4 with W = T·R: runs of 4 of consecutive threads side by side.
func interleave(x *tir.Var, reg, threads int64) tir.Expr {
	w := reg * threads
	k := func(c int64) tir.Expr { return tir.Int(c) }
	return tir.Add(tir.Add(tir.Add(
		tir.Mul(tir.FloorDiv(x, k(w)), k(w)),
		tir.Mul(tir.FloorDiv(tir.FloorMod(x, k(reg)), k(4)), k(4*threads))),
		tir.Mul(tir.FloorDiv(tir.FloorMod(x, k(w)), k(reg)), k(4))),
		tir.FloorMod(x, k(4)))
}
