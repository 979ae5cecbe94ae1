package npu

import (
	"fmt"
	"sync"

	"github.com/tessera-ml/tessera/schedule"
	"github.com/tessera-ml/tessera/targets/npu/isa"
	tir "github.com/tessera-ml/tessera/tensorir"
)

// The NPU's scratchpads as tensor IR storage scopes (VTA's
// local.inp_buffer, local.wgt_buffer and local.acc_buffer): a schedule
// stages a contraction's operands in them with cache_read and its output
// with cache_write, and tensorize maps the inner Batch × BlockOut ×
// BlockIn nest onto the matrix unit with the GEMM intrinsic
// (GEMMIntrinName), whose description reads only these scopes.
const (
	ScopeInp = "npu.inp" // the input buffer (isa.MemInp): Batch × BlockIn per entry
	ScopeWgt = "npu.wgt" // the weight buffer (isa.MemWgt): BlockOut × BlockIn per entry
	ScopeAcc = "npu.acc" // the accumulator (isa.MemAcc): Batch × BlockOut f32 or i32 per entry
)

func init() {
	tir.RegisterScope(ScopeInp, "the NPU's input scratchpad")
	tir.RegisterScope(ScopeWgt, "the NPU's weight scratchpad")
	tir.RegisterScope(ScopeAcc, "the NPU's accumulator scratchpad")
	if err := RegisterGEMMIntrins(isa.DefaultConfig()); err != nil {
		panic(err)
	}
}

// gemmOperands are the operand element types of the matrix unit's two
// datapaths as tensor IR writes a contraction: f32 operands into f32 (the
// bf16 datapath), and 8-bit operands widened into i32 (the int8
// datapath; either operand u8 or i8).
var gemmOperands = []struct{ x, w tir.DType }{
	{tir.DF32, tir.DF32},
	{tir.DUI8, tir.DI8}, {tir.DI8, tir.DI8}, {tir.DUI8, tir.DUI8}, {tir.DI8, tir.DUI8},
}

// GEMMIntrinName is the name of the matrix unit's tensor intrinsic for
// cfg's shape and operand types x (inputs) and w (weights):
// "npu_gemm_<Batch>x<BlockIn>x<BlockOut>_<x>_<w>", e.g.
// npu_gemm_1x16x16_f32_f32 for the default configuration's bf16
// datapath.
func GEMMIntrinName(cfg isa.Config, x, w tir.DType) string {
	return fmt.Sprintf("npu_gemm_%dx%dx%d_%s_%s", cfg.Batch, cfg.BlockIn, cfg.BlockOut, x, w)
}

var intrinMu sync.Mutex

// RegisterGEMMIntrins registers cfg's GEMM tensor intrinsics (once per
// matrix-unit shape; later calls for the same shape do nothing). The
// description is VTA's GEMM core: acc[b, o] += inp[b, i] · wgt[o, i] over
// b < Batch, o < BlockOut, i < BlockIn, with inp [Batch][BlockIn] in
// npu.inp, wgt [BlockOut][BlockIn] in npu.wgt and acc [Batch][BlockOut]
// in npu.acc. The implementation computes what the matrix unit does: in
// the bf16 datapath it rounds both operands to bf16 (round to nearest
// even) and accumulates their f32 products in i order; in the int8
// datapath it is the exact i32 sum. Errors: a shape whose description
// does not verify.
func RegisterGEMMIntrins(cfg isa.Config) error {
	intrinMu.Lock()
	defer intrinMu.Unlock()
	for _, op := range gemmOperands {
		name := GEMMIntrinName(cfg, op.x, op.w)
		if schedule.LookupTensorIntrin(name) != nil {
			continue
		}
		desc, err := tir.ParseString(name+".tir", gemmIntrinText(cfg, name+"_desc", op.x, op.w, false))
		if err != nil {
			return err
		}
		impl, err := tir.ParseString(name+".tir", gemmIntrinText(cfg, name+"_impl", op.x, op.w, true))
		if err != nil {
			return err
		}
		schedule.RegisterTensorIntrin(name, desc.Funcs[0], impl.Funcs[0])
	}
	return nil
}

// gemmIntrinText is the tensor IR of the GEMM intrinsic's description
// (rounded false) or implementation (true; the bf16 datapath's operands
// rounded to bf16).
func gemmIntrinText(cfg isa.Config, name string, x, w tir.DType, rounded bool) string {
	acc, ld := tir.DF32, "%s"
	switch {
	case x != tir.DF32:
		acc, ld = tir.DI32, "cast<i32>(%s)"
	case rounded:
		ld = "cast<f32>(cast<bf16>(%s))"
	}
	b, bi, bo := cfg.Batch, cfg.BlockIn, cfg.BlockOut
	return fmt.Sprintf(`tir.func @%[1]s(%%inp: buffer<%[2]dx%[3]dx%[5]s, %[10]q>, %%wgt: buffer<%[4]dx%[3]dx%[6]s, %[11]q>, inout %%acc: buffer<%[2]dx%[4]dx%[7]s, %[12]q>) {
  tir.for %%b = 0 to %[2]d {
    tir.for %%o = 0 to %[4]d {
      tir.for %%i = 0 to %[3]d {
        tir.block "gemm"(%%vb = spatial(0:%[2]d, %%b), %%vo = spatial(0:%[4]d, %%o), %%vi = reduce(0:%[3]d, %%i)) reads(%%acc[%%vb, %%vo], %%inp[%%vb, %%vi], %%wgt[%%vo, %%vi]) writes(%%acc[%%vb, %%vo]) annotations {tessera.accumulate} {
          %%acc[%%vb, %%vo] = %%acc[%%vb, %%vo] + %[8]s * %[9]s
        }
      }
    }
  }
}
`, name, b, bi, bo, x, w, acc, fmt.Sprintf(ld, "%inp[%vb, %vi]"), fmt.Sprintf(ld, "%wgt[%vo, %vi]"),
		ScopeInp, ScopeWgt, ScopeAcc)
}
