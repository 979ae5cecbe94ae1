package schedule

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	tir "github.com/tessera-ml/tessera/tensorir"
)

// GPURules are the rules of GPU targets (the CUDA target's; MetaSchedule's
// DefaultCUDA is the model): elementwise producers are inlined into their
// consumers; a reduction block over a perfect nest (matmul, convolution)
// gets multi-level tiling with its inputs staged in shared memory and its
// accumulators in registers (rules_gpu_tiling.go); a block that reads an
// already scheduled block's output is computed at that block's thread
// loop (epilogues); every other block is auto-bound: its outer spatial
// loops that hold no other block are fused, split by the threads per
// block and bound to blockIdx.x and threadIdx.x, its reduction loops
// serial inside the thread. Cross-thread reductions (softmax, pooling,
// normalization rows) are not built yet.
type GPURules struct {
	// ThreadsPerBlock is the default rule's block size (0: 256).
	ThreadsPerBlock int64
	// Limits are the device's limits Check enforces (zero: DefaultGPULimits).
	Limits GPULimits
}

// GPULimits are a device's launch limits (CUDA's for compute capability
// 7.0 and later: 1024 threads per block, 48 KiB of static shared memory,
// grid y and z below 65536).
type GPULimits struct {
	MaxThreadsPerBlock int64
	MaxSharedBytes     int64
	MaxGridX, MaxGridY int64
}

// DefaultGPULimits are the limits of every NVIDIA GPU since Volta.
var DefaultGPULimits = GPULimits{MaxThreadsPerBlock: 1024, MaxSharedBytes: 48 << 10, MaxGridX: 1<<31 - 1, MaxGridY: 65535}

// gpuBlockSizes are the block sizes the sampled rule draws from.
var gpuBlockSizes = []int64{32, 64, 128, 256, 512, 1024}

func (r GPURules) withDefaults() GPURules {
	if r.ThreadsPerBlock <= 0 {
		r.ThreadsPerBlock = 256
	}
	if r.Limits == (GPULimits{}) {
		r.Limits = DefaultGPULimits
	}
	return r
}

// Default inlines elementwise producers and binds every block (autoBind).
// Errors: a block the rule cannot bind, named with the reason.
func (r GPURules) Default(f *tir.PrimFunc) (*Schedule, error) {
	r = r.withDefaults()
	return r.schedule(f, func(string) int64 { return r.ThreadsPerBlock }, func(nest []nestLoop) gpuTile {
		return defaultGPUTile(nest, r.ThreadsPerBlock)
	})
}

// Sample is Default with each block's size drawn from 32 … 1024.
func (r GPURules) Sample(f *tir.PrimFunc, seed int64) (*Schedule, error) {
	r = r.withDefaults()
	rng := rand.New(rand.NewPCG(uint64(seed), 0x6a09e667))
	return r.schedule(f, func(string) int64 { return gpuBlockSizes[rng.IntN(len(gpuBlockSizes))] }, func(nest []nestLoop) gpuTile {
		return sampleGPUTile(nest, rng)
	})
}

// schedule binds every block: a block that reads a buffer an already
// bound block writes is first moved under that block's threadIdx loop
// (reverse_compute_at: an epilogue runs in the thread that computed its
// input, as TVM's auto-inline and fusion of consumers do), else bound on
// its own.
func (r GPURules) schedule(f *tir.PrimFunc, threads func(block string) int64, tile func([]nestLoop) gpuTile) (*Schedule, error) {
	s := New(f)
	autoInline(s)
	writers := map[*tir.Buffer]LoopRV{}
	for _, name := range ruleBlocks(s) {
		br := findBlock(s.Func().Body, name)
		if br == nil {
			continue
		}
		loop, attached := attachToProducer(s, br.Block, writers)
		if !attached && gpuTileable(s, name) {
			nest, _ := nestOf(s, name)
			saved := snapshot(s)
			tx, err := gpuMultiLevelTile(s, name, tile(nest))
			if err == nil && sharedBytes(tir.CompactBufferAllocation(s.Func())) <= r.Limits.MaxSharedBytes {
				loop, attached = tx, true
			} else if err := s.restore(f, saved); err != nil {
				return nil, err
			}
		}
		if !attached {
			var err error
			if loop, err = autoBind(s, name, threads(name)); err != nil {
				return nil, err
			}
		}
		for _, w := range br.Block.Writes {
			writers[w.Buffer] = loop
		}
	}
	return s, nil
}

// sharedBytes is the static shared memory f allocates, in bytes (a
// buffer of non-constant size counts as unbounded).
func sharedBytes(f *tir.PrimFunc) int64 {
	var n int64
	tir.VisitStmt(f.Body, func(s tir.Stmt) bool {
		if a, ok := s.(*tir.Allocate); ok && a.Buffer.Scope == tir.ScopeShared {
			b, ok := tir.BufferBytes(a.Buffer)
			if !ok {
				b = math.MaxInt32
			}
			n += b
		}
		return true
	})
	return n
}

// attachToProducer moves block b under the threadIdx loop of a bound block
// that writes one of b's inputs; false when there is none or the move is
// refused (the schedule is then unchanged).
func attachToProducer(s *Schedule, b *tir.Block, writers map[*tir.Buffer]LoopRV) (LoopRV, bool) {
	for _, rd := range b.Reads {
		l, ok := writers[rd.Buffer]
		if !ok {
			continue
		}
		if s.ReverseComputeAt(BlockRV{b.Name}, l) == nil {
			return l, true
		}
	}
	return LoopRV{}, false
}

// Fallback binds the blocks the rule can bind and leaves the others;
// Check then refuses the kernel, naming the unbound block.
func (r GPURules) Fallback(f *tir.PrimFunc) *Schedule {
	r = r.withDefaults()
	s := New(f)
	for _, name := range ruleBlocks(s) {
		saved := snapshot(s)
		if _, err := autoBind(s, name, r.ThreadsPerBlock); err != nil && s.restore(f, saved) != nil {
			return New(f)
		}
	}
	return s
}

// autoBind fuses the outer loops of block name that hold no other block
// and are spatial, splits the fused loop by threads (a guard covers the
// remainder) and binds the parts to blockIdx.x and threadIdx.x. It
// returns the threadIdx loop. A block already under a thread-bound loop
// is an error.
func autoBind(s *Schedule, name string, threads int64) (LoopRV, error) {
	b := BlockRV{name}
	loops, err := s.GetLoops(b)
	if err != nil {
		return LoopRV{}, err
	}
	var outer []LoopRV
	extent := int64(1)
	for _, l := range loops {
		f, err := s.FindLoop(l)
		if err != nil {
			return LoopRV{}, err
		}
		if f.Kind == tir.ThreadBinding {
			return LoopRV{}, fmt.Errorf("gpu rules: block %q is already under a thread-bound loop", name)
		}
		ext, ok := constInt(f.Extent)
		if !ok || len(BlocksUnder(f.Body)) != 1 || s.checkSpatial("bind", l, f) != nil {
			break
		}
		outer = append(outer, l)
		extent *= ext
	}
	if len(outer) == 0 {
		// No spatial loop (a full reduction to a scalar): one thread runs
		// the block's nest, under unit loops bound to blockIdx.x and
		// threadIdx.x (TVM's auto-bind adds them the same way).
		var target any = b
		if len(loops) > 0 && len(BlocksUnder(mustLoop(s, loops[0]).Body)) == 1 {
			target = loops[0]
		}
		tx, err := s.AddUnitLoop(target)
		if err != nil {
			return LoopRV{}, err
		}
		bx, err := s.AddUnitLoop(tx)
		if err != nil {
			return LoopRV{}, err
		}
		if err := s.Bind(bx, "blockIdx.x"); err != nil {
			return LoopRV{}, err
		}
		return tx, s.Bind(tx, "threadIdx.x")
	}
	fused := outer[0]
	if len(outer) > 1 {
		if fused, err = s.Fuse(outer...); err != nil {
			return LoopRV{}, err
		}
	}
	t := min(threads, extent)
	parts, err := s.Split(fused, []int64{-1, t})
	if err != nil {
		return LoopRV{}, err
	}
	if err := s.Bind(parts[0], "blockIdx.x"); err != nil {
		return LoopRV{}, err
	}
	return parts[1], s.Bind(parts[1], "threadIdx.x")
}

// mustLoop is the loop l of s, which the caller just got from s.
func mustLoop(s *Schedule, l LoopRV) *tir.For {
	f, _ := s.FindLoop(l)
	return f
}

// Check is VerifyGPU with the rules' limits on f as code generation sees
// it: after compact-buffer-allocation (caches shrunk to their tiles).
func (r GPURules) Check(f *tir.PrimFunc) error {
	return VerifyGPU(tir.CompactBufferAllocation(f), r.withDefaults().Limits)
}

// VerifyGPU refuses a kernel the GPU cannot run as scheduled (TVM's
// VerifyGPUCode): more threads per block than the limit (the product of
// the threadIdx extents), a grid extent beyond the limit, a block not
// under both a blockIdx- and a threadIdx-bound loop (it would run in one
// thread), a thread axis bound twice on one path, a parallel or
// vectorized loop of more than 4 lanes in a kernel, static shared memory
// beyond the limit, or a block reading a local or global buffer written
// under another threadIdx loop (other threads' results: local memory is
// private, and global memory would need a grid-wide barrier; shared
// buffers get their barriers from the thread-sync pass). Errors are
// schedule errors naming the block or loop and the limit.
func VerifyGPU(f *tir.PrimFunc, lim GPULimits) error {
	v := &gpuVerifier{lim: lim, bound: map[string]*tir.For{}, ext: map[string]int64{}, writer: map[*tir.Buffer]*tir.For{}}
	v.stmt(f.Body)
	if v.err != nil {
		return v.err
	}
	threads := v.ext["threadIdx.x"] * max(v.ext["threadIdx.y"], 1) * max(v.ext["threadIdx.z"], 1)
	if threads > lim.MaxThreadsPerBlock {
		return fmt.Errorf("gpu verification: @%s launches %d threads per block (threadIdx extents x %d, y %d, z %d), above the limit %d",
			f.Name, threads, v.ext["threadIdx.x"], max(v.ext["threadIdx.y"], 1), max(v.ext["threadIdx.z"], 1), lim.MaxThreadsPerBlock)
	}
	if n := v.ext["blockIdx.x"]; n > lim.MaxGridX {
		return fmt.Errorf("gpu verification: @%s launches %d blocks along x, above the limit %d", f.Name, n, lim.MaxGridX)
	}
	for _, tag := range []string{"blockIdx.y", "blockIdx.z"} {
		if n := v.ext[tag]; n > lim.MaxGridY {
			return fmt.Errorf("gpu verification: @%s launches %d blocks along %s, above the limit %d", f.Name, n, tag[len(tag)-1:], lim.MaxGridY)
		}
	}
	return nil
}

type gpuVerifier struct {
	lim   GPULimits
	bound map[string]*tir.For // the enclosing loop bound to each axis
	ext   map[string]int64
	err   error
	// thread is the innermost enclosing threadIdx-bound loop; writer the
	// one under which each buffer was written.
	thread *tir.For
	writer map[*tir.Buffer]*tir.For
	shared int64
}

func (v *gpuVerifier) fail(format string, args ...any) {
	if v.err == nil {
		v.err = fmt.Errorf("gpu verification: "+format, args...)
	}
}

func (v *gpuVerifier) stmt(s tir.Stmt) {
	tir.VisitStmt(s, func(st tir.Stmt) bool {
		if v.err != nil {
			return false
		}
		switch x := st.(type) {
		case *tir.For:
			v.loop(x)
			return false
		case *tir.Allocate:
			if x.Buffer.Scope == tir.ScopeShared {
				v.sharedAlloc(x.Buffer)
			}
		case *tir.BlockRealize:
			v.block(x)
		}
		return true
	})
}

// sharedAlloc adds a shared buffer's bytes to the kernel's static shared
// memory and refuses the kernel beyond the limit.
func (v *gpuVerifier) sharedAlloc(b *tir.Buffer) {
	n, ok := tir.BufferBytes(b)
	if !ok {
		v.fail("shared buffer %%%s has a non-constant size (dynamic shared memory is not supported yet)", b.Name)
		return
	}
	v.shared += n
	if v.shared > v.lim.MaxSharedBytes {
		v.fail("shared buffer %%%s brings the kernel's static shared memory to %d bytes, above the limit %d", b.Name, v.shared, v.lim.MaxSharedBytes)
	}
}

func (v *gpuVerifier) loop(x *tir.For) {
	switch x.Kind {
	case tir.ThreadBinding:
		if x.Thread == "vthread" {
			break
		}
		if outer := v.bound[x.Thread]; outer != nil {
			if !strings.HasPrefix(x.Thread, "threadIdx") || tir.StmtUsesVar(x, outer.Var) {
				v.fail("loop %%%s is bound to %s inside loop %%%s bound to the same axis and depends on it", x.Var.Name, x.Thread, outer.Var.Name)
				return
			}
		}
		c, ok := x.Extent.(*tir.IntImm)
		if !ok {
			v.fail("loop %%%s bound to %s has a non-constant extent", x.Var.Name, x.Thread)
			return
		}
		v.ext[x.Thread] = max(v.ext[x.Thread], c.Value)
		saved := v.bound[x.Thread]
		v.bound[x.Thread] = x
		defer func() { v.bound[x.Thread] = saved }()
		if strings.HasPrefix(x.Thread, "threadIdx") {
			saved := v.thread
			v.thread = x
			defer func() { v.thread = saved }()
		}
	case tir.Parallel:
		v.fail("loop %%%s is parallel: a GPU kernel's parallelism is its thread bindings", x.Var.Name)
		return
	case tir.Vectorized:
		if c, ok := x.Extent.(*tir.IntImm); !ok || c.Value > 4 {
			v.fail("loop %%%s is vectorized by %s lanes: GPU vector accesses take at most 4", x.Var.Name, tir.ExprString(x.Extent))
			return
		}
	}
	v.stmt(x.Body)
}

func (v *gpuVerifier) block(x *tir.BlockRealize) {
	var missing []string
	if v.bound["blockIdx.x"] == nil && v.bound["blockIdx.y"] == nil && v.bound["blockIdx.z"] == nil {
		missing = append(missing, "blockIdx")
	}
	if v.bound["threadIdx.x"] == nil && v.bound["threadIdx.y"] == nil && v.bound["threadIdx.z"] == nil {
		missing = append(missing, "threadIdx")
	}
	if len(missing) > 0 {
		v.fail("block %q is not under a loop bound to %s: it would run in one thread", x.Block.Name, strings.Join(missing, " or "))
		return
	}
	for _, rd := range x.Block.Reads {
		if rd.Buffer.Scope == tir.ScopeShared {
			continue
		}
		if w, ok := v.writer[rd.Buffer]; ok && w != v.thread && !(rd.Buffer.Scope == tir.ScopeLocal && sameThreads(w, v.thread)) {
			v.fail("block %q reads %%%s, written under another threadIdx loop (%%%s): other threads' results need a barrier, which is not inserted yet (compute the consumer at the producer's thread loop)", x.Block.Name, rd.Buffer.Name, w.Var.Name)
			return
		}
	}
	for _, wr := range x.Block.Writes {
		v.writer[wr.Buffer] = v.thread
	}
}

// sameThreads reports whether threadIdx loops a and b give each thread
// the same iteration (same axis, minimum and extent): a local buffer a
// thread writes under one and reads under the other is its own (a
// register prefetch's fetch and store, prefetch-shared).
func sameThreads(a, b *tir.For) bool {
	if a == nil || b == nil || a.Thread != b.Thread {
		return false
	}
	return tir.Equal(a.Min, b.Min) && tir.Equal(a.Extent, b.Extent)
}

// Recurrence schedules a recurrence kernel (an RNN's scan, a scatter:
// lower-to-tir scheduled it for the CPU, ScheduleRecurrence) for the GPU:
// its loops made serial and its body run by one thread, under unit loops
// bound to blockIdx.x and threadIdx.x. The time steps are serial by
// nature; one thread computes every step's gates in turn, correct but
// slow (a persistent-block RNN schedule, with the hidden units over the
// block's threads and a barrier per step, is not built). Errors: the
// verifier's.
func (r GPURules) Recurrence(f *tir.PrimFunc) (*tir.PrimFunc, error) {
	body := serialLoops(f.Body)
	for _, tag := range []string{"threadIdx.x", "blockIdx.x"} {
		v := tir.NewVar(strings.SplitN(tag, ".", 2)[0]+"_unit", tir.DIndex)
		body = &tir.For{Var: v, Min: tir.IntOf(tir.DIndex, 0), Extent: tir.IntOf(tir.DIndex, 1), Kind: tir.ThreadBinding, Thread: tag, Body: body, Loc: f.Loc}
	}
	out := *f
	out.Body = body
	if err := tir.VerifyFunc(&out); err != nil {
		return nil, err
	}
	return &out, nil
}

// serialLoops is s with every vectorized, parallel or unrolled loop made
// serial (a GPU thread runs them one iteration at a time).
func serialLoops(s tir.Stmt) tir.Stmt {
	return tir.Mutate(s, func(x tir.Stmt) (tir.Stmt, bool) {
		l, ok := x.(*tir.For)
		if !ok || l.Kind == tir.Serial || l.Kind == tir.ThreadBinding {
			return nil, false
		}
		c := *l
		c.Kind, c.Annotations, c.Body = tir.Serial, nil, serialLoops(l.Body)
		return &c, true
	})
}
