package main

import (
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/tessera-ml/tessera/dialects/graph/onnx"
	"github.com/tessera-ml/tessera/graphir"
)

func newImportCmd(stdout, stderr io.Writer) *cobra.Command {
	var output string
	var locations bool
	var hexLargerThan int64
	var binds, fixDims []string
	cmd := &cobra.Command{
		Use:   "import MODEL.onnx [-o OUT.mlir]",
		Short: "translate an ONNX model to graph-dialect text",
		Long: `import reads an ONNX model (default ai.onnx domain, opsets 7 to 17 and,
for the ops unchanged since, 1 to 6; static input shapes) and writes its graph-dialect module, ready for compile:

  tessera import resnet18.onnx -o resnet18.mlir
  tessera compile resnet18.mlir -o resnet18.o

Without -o the module is printed to stdout. Weights are written inline as
dense constants, always in full, so the output compiles on its own;
constants of more than 1024 elements use MLIR's exact hexadecimal form
dense<"0x..."> (little-endian element bytes), which prints and parses an
order of magnitude faster than decimals (--hex-larger-than=0: decimals). Each op
carries loc("MODEL.onnx":N:1), N the 1-based index of its ONNX node.
Unsupported ops or attribute values, symbolic input dimensions and files
that are not ONNX models are errors (exit status 1).

A model exported with dynamic axes names its symbolic dimensions
(dim_param: batch_size, seq_len, ...); pin each to a size to import it
with static shapes:

  tessera import model.onnx --fix-dim batch_size=1 -o model.mlir

Tessera compiles static shapes, so inputs that decide a shape (Reshape's
shape, Resize's scales or sizes, TopK's K, ...) must be constants. When a
model takes one as a graph input, give it a value:

  tessera import model.onnx --bind-input sizes=sizes.npy -o model.mlir

The bound input becomes a constant and leaves the model's inputs.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			bind, err := parseBindings(binds)
			if err != nil {
				return fail(stderr, err)
			}
			fix, err := parseFixDims(fixDims)
			if err != nil {
				return fail(stderr, err)
			}
			m, err := onnx.ImportWith(args[0], onnx.Options{Bind: bind, FixDims: fix})
			if err != nil {
				return fail(stderr, err)
			}
			text := graphir.PrintWith(m, graphir.PrintOptions{DebugInfo: locations, HexLargerThan: hexLargerThan})
			if output == "" {
				_, err = io.WriteString(stdout, text)
				return err
			}
			if err := os.WriteFile(output, []byte(text), 0o644); err != nil {
				return fail(stderr, err)
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "", "output file (default stdout)")
	cmd.Flags().BoolVar(&locations, "locations", true, `print each op's loc("MODEL.onnx":node:1)`)
	cmd.Flags().StringArrayVar(&binds, "bind-input", nil, "NAME=FILE.npy: the graph input NAME becomes a constant of that value (repeatable)")
	cmd.Flags().StringArrayVar(&fixDims, "fix-dim", nil, fixDimUsage)
	cmd.Flags().Int64Var(&hexLargerThan, "hex-larger-than", 1024, `print constants with more elements than this as dense<"0x..."> (0: never)`)
	return cmd
}
