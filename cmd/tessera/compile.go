package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/tessera-ml/tessera/graphir"
	"github.com/tessera-ml/tessera/targets/cpu"
	"github.com/tessera-ml/tessera/tensorir"
)

var emitKinds = []string{"hlo", "tir", "llvm", "asm", "obj", "so"}

func addCompileFlags(cmd *cobra.Command, o *compileOptions, stderr io.Writer) {
	o.log = stderr
	cmd.Flags().StringVar(&o.tuningDB, "tuning-db", "", "tuning database (JSON lines, written by 'tessera tune'): kernels with a record use its best schedule, the others the default rules")
	cmd.Flags().StringVar(&o.target, "target", "cpu", "code generation target (cpu)")
	cmd.Flags().StringVar(&o.mcpu, "mcpu", "native", "CPU for llc-16 -mcpu (native, x86-64-v4, znver4, ...)")
	cmd.Flags().BoolVar(&o.strictFP, "strict-fp", false, "no fused multiply-add contraction: f32 results bit-identical to the interpreter's (default: llc-16 -fp-contract=fast)")
	cmd.Flags().BoolVar(&o.keepLayouts, "keep-layouts", false, "keep constant kernel operands (weights) row-major instead of storing each in the order its schedule reads it (the rewrite-layout pass)")
	cmd.Flags().StringArrayVar(&o.traces, "trace", nil, "schedule trace (JSON, schedule/README.md) to replay on the kernel it names instead of the default schedule (repeatable)")
}

func newCompileCmd(stdout, stderr io.Writer) *cobra.Command {
	var o compileOptions
	var output, emit string
	var stats bool
	cmd := &cobra.Command{
		Use:   "compile MODEL.mlir [-o OUT] [--emit hlo|tir|llvm|asm|obj|so]",
		Short: "compile a graph-dialect model to CPU object code (or stop at any level)",
		Long: `compile lowers MODEL.mlir through legalization to hlo, fusion, tensor IR
and LLVM 16 to x86-64 code.

  tessera compile lenet5.mlir -o lenet5.o    # ELF object, plus lenet5.h declaring lenet5_main
  tessera compile lenet5.mlir -o lenet5.so   # shared object
  tessera compile lenet5.mlir --emit tir     # print the tensor IR (hlo, tir, llvm, asm)

--emit defaults to obj, or so when -o ends in .so. hlo, tir, llvm and asm are
printed to stdout unless -o is given. With an object or shared object, the
header OUT.h is written beside it. The entry point is <name>_main, where
<name> is --name or the output file's base name.

--trace T.json replays a schedule trace on the kernel named by its "func"
field (the kernels are what 'tessera-opt MODEL.mlir --legalize-to-hlo --fuse
--lower-to-tir --inline-elementwise' prints); that kernel skips the default
schedule.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if emit == "" {
				emit = "obj"
				if strings.HasSuffix(output, ".so") {
					emit = "so"
				}
			}
			if !contains(emitKinds, emit) {
				return fail(stderr, fmt.Errorf("--emit must be one of %s, got %q", strings.Join(emitKinds, ", "), emit))
			}
			if (emit == "obj" || emit == "so") && output == "" {
				return fail(stderr, fmt.Errorf("--emit %s needs -o OUT", emit))
			}
			if o.name == "" {
				o.name = prefixFor("", firstNonEmpty(output, args[0]))
			}
			if err := compileTo(args[0], o, emit, output, stats, stdout, stderr); err != nil {
				return fail(stderr, err)
			}
			return nil
		},
	}
	addCompileFlags(cmd, &o, stderr)
	cmd.Flags().StringVarP(&output, "output", "o", "", "output file")
	cmd.Flags().StringVar(&emit, "emit", "", "what to produce: "+strings.Join(emitKinds, ", "))
	cmd.Flags().StringVar(&o.name, "name", "", "prefix of the exported symbol (default: the output file's base name)")
	cmd.Flags().BoolVar(&stats, "stats", false, "print memory planning statistics (arena peak bytes) and how each kernel was scheduled to stderr")
	cmd.Flags().IntVar(&o.threads, "threads", 0, "with --tuning-db: use the records measured with this many threads (default: TESSERA_NUM_THREADS, OMP_NUM_THREADS or all cores)")
	return cmd
}

func compileTo(model string, o compileOptions, emit, output string, stats bool, stdout, stderr io.Writer) error {
	stop := stageLLVM
	switch emit {
	case "hlo":
		stop = stageHLO
	case "tir":
		stop = stageTIR
	}
	c, err := compileModel(model, o, stop)
	if err != nil {
		return err
	}
	if stats && c.tir != nil {
		fmt.Fprintf(stderr, "memory plan: arena %d bytes (peak), %d bytes without reuse, %d intermediate buffers\n", c.plan.ArenaBytes, c.plan.NaiveBytes, c.plan.Buffers)
		st := c.sched
		fmt.Fprintf(stderr, "schedules: %d kernels: %d default rules, %d tuned, %d traced, %d simple (refused by the default rules)\n",
			st.Kernels, st.Kernels-st.Tuned-st.Traced-st.Fallback, st.Tuned, st.Traced, st.Fallback)
		fmt.Fprintf(stderr, "layouts: %d constant kernel operands stored in the order their loop nests read them (%d constants transposed)\n", st.Layout.Params, st.Layout.Constants)
	}
	switch emit {
	case "hlo":
		return writeText(output, stdout, graphir.PrintWith(c.graph, graphir.PrintOptions{ElideLargerThan: graphir.DefaultElideThreshold}))
	case "tir":
		return writeText(output, stdout, tensorir.Print(c.tir))
	case "llvm":
		return writeText(output, stdout, c.cpu.LLVM())
	case "asm":
		if output == "" {
			return printAsm(c.cpu, stdout)
		}
		return c.cpu.WriteAsm(output)
	case "obj":
		if err := c.cpu.WriteObject(output); err != nil {
			return err
		}
	case "so":
		if err := c.cpu.WriteShared(output); err != nil {
			return err
		}
	}
	return writeHeader(c, o.name, output)
}

func writeText(output string, stdout io.Writer, text string) error {
	if output == "" {
		_, err := io.WriteString(stdout, text)
		return err
	}
	return os.WriteFile(output, []byte(text), 0o644)
}

func printAsm(r *cpu.Result, stdout io.Writer) error {
	dir, err := os.MkdirTemp("", "tessera-asm-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "model.s")
	if err := r.WriteAsm(p); err != nil {
		return err
	}
	data, err := os.ReadFile(p)
	if err != nil {
		return err
	}
	_, err = stdout.Write(data)
	return err
}

// writeHeader writes OUT.h (lenet5.o → lenet5.h) declaring the entry point.
func writeHeader(c *compiled, prefix, output string) error {
	hdr := strings.TrimSuffix(output, filepath.Ext(output)) + ".h"
	f, err := os.Create(hdr)
	if err != nil {
		return err
	}
	if err := cpu.WriteHeader(f, prefix, cpu.SignatureOf(c.entry, c.cpu.UsesParallel)); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

func firstNonEmpty(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}
