// Command tessera is Tessera's user CLI: compile a model from graph-dialect
// text to CPU object code, run it on .npy inputs, and time it.
//
//	tessera compile model.mlir -o model.o        # ELF object + model.h
//	tessera compile model.mlir --emit tir        # print one level and stop
//	tessera run model.mlir --input x.npy --output y.npy
//	tessera bench model.mlir
//	tessera tune model.mlir --trials 1000 --db tune.jsonl
//	tessera db plot tune.jsonl -o curves.png     # search curves (PNG or SVG)
//	tessera worker --broker nats://host:4222 --target cpu  # distributed tuning
//
// Exit status: 0 on success, 1 for bad input or a failed check (with a
// file:line:col: error: diagnostic when it concerns the model text), 2 for
// an internal error (a bug in Tessera).
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/tessera-ml/tessera/autotune"
)

func main() {
	autotune.MaybeRunWorker() // a tuning job's builder or runner process
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// exitError carries an exit status through cobra.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", e.code) }

// run executes the CLI with args and returns the exit status.
func run(args []string, stdout, stderr io.Writer) (code int) {
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "tessera: internal error: %v\nThis is a bug in Tessera; please report it with the input.\n%s", r, debug.Stack())
			code = 2
		}
	}()
	root := newRootCmd(stdout, stderr)
	root.SetArgs(args)
	err := root.Execute()
	if err == nil {
		return 0
	}
	var ee exitError
	if errors.As(err, &ee) {
		return ee.code
	}
	fmt.Fprintf(stderr, "tessera: %v\n", err)
	return 1
}

func newRootCmd(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "tessera",
		Short: "Tessera compiles ML models from graph-dialect text to CPU object code",
		Long: `Tessera compiles ML models written in its graph dialect (MLIR syntax) through
the hlo fusion level and the tensor IR to x86-64 object code, and runs them.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	(&profileFlags{}).add(root)
	root.AddCommand(newCompileCmd(stdout, stderr), newRunCmd(stdout, stderr), newBenchCmd(stdout, stderr), newImportCmd(stdout, stderr), newTuneCmd(stdout, stderr), newNPUCmd(stdout, stderr), newDBCmd(stdout, stderr), newQuantizeCmd(stdout, stderr), newWorkerCmd(stdout, stderr))
	return root
}

// fail prints err (diagnostics as they are, other errors prefixed) and
// returns the exit status 1 for cobra.
func fail(stderr io.Writer, err error) error {
	fmt.Fprintln(stderr, err.Error())
	return exitError{1}
}
