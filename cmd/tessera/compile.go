package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/pipeline"
	"github.com/tessera-ml/tessera/targets"
	"github.com/tessera-ml/tessera/tensorir"
)

func newCompileCmd(stdout, stderr io.Writer) *cobra.Command {
	var o compileOptions
	var output, emit string
	var stats, printPipeline bool
	cmd := &cobra.Command{
		Use:   "compile MODEL.mlir [-o OUT] [--emit hlo|tir|obj|so|llvm|asm|npu-asm|npu-bin|partition|npu-tir|ptx|cuda]",
		Short: "compile a graph-dialect model for a target (or stop at any level)",
		Long: `compile runs the compilation pipeline on MODEL.mlir: graph passes,
legalization to hlo, fusion, tensor IR, scheduling and the target's code
generation (cpu: x86-64 through LLVM 16; npu: Tessera NPU programs, with
the kernels the NPU cannot run compiled for the CPU; cuda: PTX through
LLVM 16's NVPTX backend).

  tessera compile lenet5.mlir -o lenet5.o    # ELF object, plus lenet5.h declaring lenet5_main
  tessera compile lenet5.mlir -o lenet5.so   # shared object
  tessera compile lenet5.mlir --emit tir     # print the tensor IR (hlo, tir, llvm, asm)
  tessera compile lenet5.mlir --print-pipeline   # the steps, as tessera-opt --pass-pipeline takes them
  tessera compile lenet5.mlir --target npu --emit partition   # which kernel runs where on the NPU target
  tessera compile lenet5.mlir --target npu --emit npu-tir     # the NPU kernels' schedules in tensor IR, with traces
  tessera compile lenet5.mlir --target cuda -o lenet5.cuda  # CUDA model file: tessera run/bench load it
  tessera compile lenet5.mlir --target cuda -o lenet5.o     # object calling the CUDA driver (-lcuda), plus lenet5.h

--emit defaults to the kind the -o file's extension names (-o X.o: obj,
X.so: so, X.cuda: cuda, X.ptx: ptx), else the target's first kind (cpu:
obj; npu: npu-asm; cuda: ptx). hlo, tir and the target's
text kinds are printed to stdout unless -o is given. With an object or
shared object, the header OUT.h is written beside it. The entry point is
<name>_main, where <name> is --name or the output file's base name; the
CUDA target's object also exports <name>_main_device (device pointers
and a CUstream).

--trace T.json replays a schedule trace on the kernel named by its "func"
field (the kernels are what 'tessera compile MODEL.mlir --emit tir
--print-ir-after inline-elementwise' shows after that step); that kernel
skips the default schedule. --print-ir-after NAME and --timing observe
every step.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.name == "" {
				o.name = prefixFor("", firstNonEmpty(output, args[0]))
			}
			if printPipeline {
				return printTable(o, stdout, stderr)
			}
			if err := compileTo(args[0], o, emit, output, stats, stdout, stderr); err != nil {
				return fail(stderr, err)
			}
			return nil
		},
	}
	addCompileFlags(cmd, &o, stderr)
	cmd.Flags().StringVarP(&output, "output", "o", "", "output file")
	cmd.Flags().StringVar(&emit, "emit", "", "what to produce: hlo, tir or one of the target's kinds (cpu: obj, so, llvm, asm; npu: npu-asm, npu-bin, partition, npu-tir, so; cuda: ptx, llvm, cuda)")
	cmd.Flags().StringVar(&o.name, "name", "", "prefix of the exported symbol (default: the output file's base name)")
	cmd.Flags().BoolVar(&stats, "stats", false, "print memory planning statistics (arena peak bytes) and how each kernel was scheduled to stderr")
	cmd.Flags().BoolVar(&printPipeline, "print-pipeline", false, "print the pipeline's steps with their options (tessera-opt --pass-pipeline text) and exit")
	cmd.Flags().IntVar(&o.threads, "threads", 0, "with --tuning-db: use the records measured with this many threads (default: TESSERA_NUM_THREADS, OMP_NUM_THREADS or all cores)")
	return cmd
}

// printTable prints the pipeline text of the flags' compilation.
func printTable(o compileOptions, stdout, stderr io.Writer) error {
	t, err := o.newTarget()
	if err != nil {
		return fail(stderr, err)
	}
	cfg, err := o.config(t)
	if err != nil {
		return fail(stderr, err)
	}
	_, err = fmt.Fprintln(stdout, pipeline.Text(pipeline.Table(cfg)))
	return err
}

// emitStop is the level --emit needs and whether the kind is printable;
// errors name the kinds the target emits.
func emitStop(t targets.Target, emit string) (pipeline.Level, bool, error) {
	switch emit {
	case "hlo":
		return pipeline.Graph, true, nil
	case "tir":
		return pipeline.TIR, true, nil
	}
	if slices.Contains(t.Emits(), emit) {
		return pipeline.Artifact, slices.Contains(t.TextEmits(), emit), nil
	}
	return 0, false, fmt.Errorf("--emit must be hlo, tir or one of the %s target's kinds (%s), got %q", t.Name(), strings.Join(t.Emits(), ", "), emit)
}

func compileTo(model string, o compileOptions, emit, output string, stats bool, stdout, stderr io.Writer) error {
	t, err := o.newTarget()
	if err != nil {
		return err
	}
	if emit == "" {
		emit = t.Emits()[0]
		ext := strings.TrimPrefix(filepath.Ext(output), ".")
		if ext == "o" {
			ext = "obj"
		}
		if slices.Contains(t.Emits(), ext) {
			emit = ext // -o X.o, X.so, X.cuda, X.ptx: that kind
		}
	}
	stop, text, err := emitStop(t, emit)
	if err != nil {
		return err
	}
	if !text && output == "" {
		return fmt.Errorf("--emit %s needs -o OUT", emit)
	}
	if output != "" {
		if fi, err := os.Stat(filepath.Dir(output)); err != nil || !fi.IsDir() {
			return fmt.Errorf("-o %s: the folder %s does not exist", output, filepath.Dir(output))
		}
	}
	c, err := compileModel(model, o, t, stop)
	if err != nil {
		return err
	}
	defer c.release()
	if stats && stop >= pipeline.TIR {
		writeStats(stderr, c.runner)
	}
	switch emit {
	case "hlo", "tir":
		o.writeTiming(c.runner)
	}
	switch emit {
	case "hlo", "tir":
		o.writeTiming(c.runner)
	}
	switch emit {
	case "hlo":
		return writeText(output, stdout, graphir.PrintWith(c.ir.Graph, graphir.PrintOptions{ElideLargerThan: graphir.DefaultElideThreshold}))
	case "tir":
		return writeText(output, stdout, tensorir.Print(c.ir.TIR))
	}
	var data []byte
	err = c.runner.Time("emit "+emit, func() (err error) { data, err = c.ir.Artifact.Emit(emit, output); return err })
	o.writeTiming(c.runner)
	if err != nil || output != "" {
		return err
	}
	_, err = stdout.Write(data)
	return err
}

// writeStats prints the memory plan, how the kernels were scheduled and
// the weights given their loop-nest layout, from the steps' statistics.
func writeStats(w io.Writer, r *pipeline.Runner) {
	st := func(step, name string) int64 { return r.Statistic(step, name) }
	fmt.Fprintf(w, "memory plan: arena %d bytes (peak), %d bytes without reuse, %d intermediate buffers\n",
		st(pipeline.LowerToTIRName, "arena-bytes"), st(pipeline.LowerToTIRName, "naive-bytes"), st(pipeline.LowerToTIRName, "buffers"))
	traced, tuned := st("apply-trace", "kernels"), st("apply-tuning-records", "kernels")
	def, fallback := st("default-schedule", "kernels"), st("default-schedule", "fallback")
	fmt.Fprintf(w, "schedules: %d kernels: %d default rules, %d tuned, %d traced, %d fallback (refused by the default rules)\n",
		traced+tuned+def+fallback, def, tuned, traced, fallback)
	fmt.Fprintf(w, "layouts: %d constant kernel operands stored in the order their loop nests read them (%d constants transposed)\n",
		st("rewrite-layout", "params"), st("rewrite-layout", "constants"))
}

func writeText(output string, stdout io.Writer, text string) error {
	if output == "" {
		_, err := io.WriteString(stdout, text)
		return err
	}
	return os.WriteFile(output, []byte(text), 0o644)
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}
