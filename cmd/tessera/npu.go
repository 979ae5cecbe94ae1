package main

import (
	"bytes"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/tessera-ml/tessera/targets/npu/isa"
	"github.com/tessera-ml/tessera/targets/npu/sim"
)

// newNPUCmd is `tessera npu`: the Tessera NPU's program tools for
// hardware and compiler engineers (targets/npu/ISA.md): assemble,
// disassemble and simulate a bare program.
func newNPUCmd(stdout, stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "npu",
		Short: "assemble, disassemble and simulate Tessera NPU programs (targets/npu/ISA.md)",
	}
	var configPath string
	cmd.PersistentFlags().StringVar(&configPath, "npu-config", "", "NPU configuration JSON (default: the built-in default NPU)")
	cmd.AddCommand(newNPUAsmCmd(stdout, stderr, &configPath), newNPUDisasmCmd(stdout, stderr), newNPUSimCmd(stdout, stderr, &configPath))
	return cmd
}

func newNPUAsmCmd(stdout, stderr io.Writer, configPath *string) *cobra.Command {
	var out string
	var passes npuPasses
	cmd := &cobra.Command{
		Use:   "asm PROGRAM.s [-o PROGRAM.bin] [--insert-deps] [--elide-loads]",
		Short: "assemble and validate a program; without -o, print its canonical text",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			p, cfg, err := readNPUProgram(args[0], *configPath, passes)
			if err != nil {
				return fail(stderr, err)
			}
			if err := p.Validate(cfg); err != nil {
				return fail(stderr, fmt.Errorf("%s: error: %v", args[0], err))
			}
			if out == "" {
				_, err := io.WriteString(stdout, p.String())
				return err
			}
			bin, err := p.MarshalBinary()
			if err != nil {
				return fail(stderr, err)
			}
			return os.WriteFile(out, bin, 0o644)
		},
	}
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the binary program (npu-bin) here")
	passes.flags(cmd)
	return cmd
}

func newNPUDisasmCmd(stdout, stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use:   "disasm PROGRAM.bin",
		Short: "print a binary program's text form",
		Args:  cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			p, _, err := readNPUProgram(args[0], "", npuPasses{})
			if err != nil {
				return fail(stderr, err)
			}
			_, err = io.WriteString(stdout, p.String())
			return err
		},
	}
}

func newNPUSimCmd(stdout, stderr io.Writer, configPath *string) *cobra.Command {
	var dramIn, dramOut, report string
	var dramSize int
	var passes npuPasses
	cmd := &cobra.Command{
		Use:   "sim PROGRAM.(s|bin) [--dram IMAGE] [--dram-size BYTES] [--dram-out IMAGE] [--report R.json] [--insert-deps] [--elide-loads]",
		Short: "run a program on the simulator and print its cycles, utilization and DRAM traffic",
		Long: `Runs a bare program on the cycle-level simulator. DRAM starts as the --dram
image (raw bytes), zero-extended to --dram-size; --dram-out writes it after
the run. The figures are printed, and written as JSON with --report.`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			p, cfg, err := readNPUProgram(args[0], *configPath, passes)
			if err != nil {
				return fail(stderr, err)
			}
			dram, err := readDRAM(dramIn, dramSize)
			if err != nil {
				return fail(stderr, err)
			}
			st, err := sim.Run(cfg, p, dram)
			if err != nil {
				return fail(stderr, fmt.Errorf("%s: error: %v", args[0], err))
			}
			r := &sim.Report{Config: cfg.Name, Figures: sim.FiguresOf(cfg, st), NPUMACFraction: 1, HostOps: []string{}}
			r.Kernels = []sim.KernelFigures{{Name: args[0], Calls: 1, Figures: r.Figures}}
			r.Summary(stdout)
			if err := writeReport(report, r); err != nil {
				return fail(stderr, err)
			}
			if dramOut != "" {
				return os.WriteFile(dramOut, dram, 0o644)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dramIn, "dram", "", "initial DRAM image (raw bytes)")
	cmd.Flags().IntVar(&dramSize, "dram-size", 1<<20, "DRAM size in bytes (at least the image's)")
	cmd.Flags().StringVar(&dramOut, "dram-out", "", "write the DRAM image after the run here")
	cmd.Flags().StringVar(&report, "report", "", "write the figures as JSON here")
	passes.flags(cmd)
	return cmd
}

// npuPasses are the program passes an npu command runs before its work.
type npuPasses struct{ insert, elide bool }

// flags adds --insert-deps and --elide-loads to an npu command.
func (p *npuPasses) flags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&p.insert, "insert-deps", false, "replace the program's dependency tokens with the fewest that order its modules' conflicting accesses (isa.InsertDeps; ISA.md, \"Dependency rules\")")
	cmd.Flags().BoolVar(&p.elide, "elide-loads", false, "drop the LOADs that copy what their scratchpad entries already hold, then insert the tokens (isa.ElideLoads; ISA.md, \"Load elision\")")
}

// readNPUProgram reads a program in either form (binary when the file
// starts with the "TNPU" magic, else assembly) and the configuration,
// and runs the passes: ElideLoads, then InsertDeps (which elision needs,
// having cleared the tokens).
func readNPUProgram(path, configPath string, passes npuPasses) (*isa.Program, isa.Config, error) {
	p, cfg, err := readNPUFile(path, configPath)
	if err != nil {
		return p, cfg, err
	}
	if passes.elide {
		_, err = isa.ElideLoads(cfg, p)
	}
	if err == nil && (passes.insert || passes.elide) {
		err = isa.InsertDeps(cfg, p)
	}
	if err != nil {
		err = fmt.Errorf("%s: error: %v", path, err)
	}
	return p, cfg, err
}

// readNPUFile reads a program in either form and the configuration.
func readNPUFile(path, configPath string) (*isa.Program, isa.Config, error) {
	cfg := isa.DefaultConfig()
	if configPath != "" {
		var err error
		if cfg, err = isa.LoadConfig(configPath); err != nil {
			return nil, cfg, err
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, cfg, err
	}
	if bytes.HasPrefix(data, []byte("TNPU")) {
		p := &isa.Program{}
		if err := p.UnmarshalBinary(data); err != nil {
			return nil, cfg, fmt.Errorf("%s: error: %v", path, err)
		}
		return p, cfg, nil
	}
	p, err := isa.Assemble(path, data)
	return p, cfg, err
}

func readDRAM(path string, size int) ([]byte, error) {
	var img []byte
	if path != "" {
		var err error
		if img, err = os.ReadFile(path); err != nil {
			return nil, err
		}
	}
	if size < 0 {
		return nil, fmt.Errorf("--dram-size %d: must not be negative", size)
	}
	if size < len(img) {
		size = len(img)
	}
	if size > 1<<32 {
		return nil, fmt.Errorf("--dram-size %d: DRAM addresses are 32-bit (at most 4 GiB)", size)
	}
	dram := make([]byte, size)
	copy(dram, img)
	return dram, nil
}

// writeReport writes r as JSON to path ("" writes nothing).
func writeReport(path string, r *sim.Report) error {
	if path == "" {
		return nil
	}
	var b bytes.Buffer
	if err := r.WriteJSON(&b); err != nil {
		return err
	}
	return os.WriteFile(path, b.Bytes(), 0o644)
}
