// Command not runs a command and inverts its exit status, like LLVM's
// `not` used in lit tests: it exits 0 when the command exits with a
// non-zero status, and 1 when the command succeeds. A command killed by a
// signal (a crash) counts as a failure of `not` too, unless --crash is
// given, in which case only a crash makes `not` succeed.
//
//	// RUN: not tessera-opt %s 2>&1 | FileCheck %s
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"syscall"
)

func main() {
	os.Exit(invert(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// invert runs args and returns the exit status `not` should have.
func invert(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	crash := false
	if len(args) > 0 && args[0] == "--crash" {
		crash = true
		args = args[1:]
	}
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: not [--crash] command [args...]")
		return 2
	}
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout, stderr
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 1
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			if crash {
				return 0
			}
			fmt.Fprintf(stderr, "not: %s was killed by signal %v\n", args[0], ws.Signal())
			return 1
		}
		if crash {
			fmt.Fprintf(stderr, "not --crash: %s exited with status %d instead of crashing\n", args[0], ee.ExitCode())
			return 1
		}
		return 0
	default:
		fmt.Fprintf(stderr, "not: cannot run %s: %v\n", args[0], err)
		return 1
	}
}
