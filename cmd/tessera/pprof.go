package main

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/cobra"
)

// profileFlags are the root command's --cpuprofile and --memprofile: Go
// pprof profiles of Tessera itself (the compiler's time and memory, not
// the model's: that is run/bench --profile), read with `go tool pprof`.
type profileFlags struct {
	cpu, mem string
	cpuFile  *os.File
}

// add registers the flags on root and starts and stops the profiles
// around every subcommand.
func (p *profileFlags) add(root *cobra.Command) {
	root.PersistentFlags().StringVar(&p.cpu, "cpuprofile", "", "write a Go CPU profile of this tessera command to `FILE` (go tool pprof)")
	root.PersistentFlags().StringVar(&p.mem, "memprofile", "", "write a Go heap profile (allocations) of this tessera command to `FILE` when it ends")
	root.PersistentPreRunE = func(*cobra.Command, []string) error { return p.start() }
	root.PersistentPostRunE = func(*cobra.Command, []string) error { return p.stop() }
}

func (p *profileFlags) start() error {
	if p.mem != "" {
		runtime.MemProfileRate = 64 << 10
	}
	if p.cpu == "" {
		return nil
	}
	f, err := os.Create(p.cpu)
	if err != nil {
		return fmt.Errorf("--cpuprofile: %v", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return fmt.Errorf("--cpuprofile: %v", err)
	}
	p.cpuFile = f
	return nil
}

func (p *profileFlags) stop() error {
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		if err := p.cpuFile.Close(); err != nil {
			return fmt.Errorf("--cpuprofile: %v", err)
		}
		p.cpuFile = nil
	}
	if p.mem == "" {
		return nil
	}
	f, err := os.Create(p.mem)
	if err != nil {
		return fmt.Errorf("--memprofile: %v", err)
	}
	if err := pprof.Lookup("allocs").WriteTo(f, 0); err != nil {
		f.Close()
		return fmt.Errorf("--memprofile: %v", err)
	}
	return f.Close()
}
