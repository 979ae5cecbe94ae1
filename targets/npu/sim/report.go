package sim

import (
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/tessera-ml/tessera/targets/npu/isa"
)

// Figures are one run's (or one kernel's) derived figures, as reports
// print them (JSON keys as SCALE-Sim-style COMPUTE/BANDWIDTH reports).
type Figures struct {
	Cycles int64 `json:"cycles"`
	// Seconds is Cycles at the configured clock.
	Seconds float64 `json:"seconds"`
	// GEMMUtilization is MACs / (Cycles × peak MACs per cycle).
	GEMMUtilization float64 `json:"gemm_utilization"`
	// MACs are the matrix unit's, padding included; UsefulMACs those of
	// the model (a compiled kernel's M·N·K; a bare program's MACs), and
	// UsefulUtilization is UsefulMACs / (Cycles × peak).
	MACs              int64   `json:"macs"`
	UsefulMACs        int64   `json:"useful_macs"`
	UsefulUtilization float64 `json:"useful_utilization"`
	DRAMReadBytes     int64   `json:"dram_read_bytes"`
	DRAMWriteBytes    int64   `json:"dram_write_bytes"`
	// Modules are the load, compute and store modules' cycles.
	Modules map[string]ModuleStats `json:"modules"`
}

// FiguresOf derives the figures of s on cfg.
func FiguresOf(cfg isa.Config, s *Stats) Figures {
	f := Figures{Cycles: s.Cycles, Seconds: cfg.Seconds(s.Cycles), GEMMUtilization: s.Utilization(cfg), MACs: s.MACs,
		DRAMReadBytes: s.DRAMReadBytes, DRAMWriteBytes: s.DRAMWriteBytes, Modules: map[string]ModuleStats{}}
	for m, ms := range s.Modules {
		f.Modules[isa.Module(m).String()] = ms
	}
	f.SetUseful(cfg, s.MACs)
	return f
}

// SetUseful sets the useful MACs and their utilization.
func (f *Figures) SetUseful(cfg isa.Config, macs int64) {
	f.UsefulMACs = macs
	f.UsefulUtilization = 0
	if f.Cycles > 0 {
		f.UsefulUtilization = float64(macs) / (float64(f.Cycles) * float64(cfg.PeakMACsPerCycle()))
	}
}

// KernelFigures are one kernel's figures over all its calls.
type KernelFigures struct {
	Name  string `json:"name"`
	Calls int    `json:"calls"`
	Figures
}

// Report is what `--report FILE` writes: the whole run's figures, the
// share of the model's MACs executed on the NPU (1 for a bare program),
// the ops that ran on the host, and one row per NPU kernel.
type Report struct {
	Config string `json:"config"`
	Figures
	NPUMACFraction float64  `json:"npu_mac_fraction"`
	HostOps        []string `json:"host_ops"`
	// HostSeconds is the measured time of the kernels that ran on the
	// host (not part of Cycles).
	HostSeconds float64         `json:"host_seconds"`
	Kernels     []KernelFigures `json:"kernels"`
}

// WriteJSON writes r, indented.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Summary writes the figures people read first, one line each:
// cycles and time, utilization, DRAM traffic, and the modules' busy and
// stall cycles.
func (f *Figures) Summary(w io.Writer) {
	fmt.Fprintf(w, "cycles: %d (%v at the configured clock)\n", f.Cycles, time.Duration(f.Seconds*1e9))
	fmt.Fprintf(w, "gemm utilization: %.1f%% (%d MACs; useful: %d MACs, %.1f%%)\n", 100*f.GEMMUtilization, f.MACs, f.UsefulMACs, 100*f.UsefulUtilization)
	fmt.Fprintf(w, "dram: %d bytes read, %d bytes written\n", f.DRAMReadBytes, f.DRAMWriteBytes)
	for m := isa.Module(0); m < isa.NumModules; m++ {
		ms := f.Modules[m.String()]
		fmt.Fprintf(w, "%-7s module: busy %d, stalled on tokens %d, on DRAM %d cycles (%d instructions)\n", m, ms.Busy, ms.StallToken, ms.StallDRAM, ms.Insts)
	}
}

// KernelTable writes one line per kernel: calls, cycles, share of the
// total, utilization and DRAM bytes.
func (r *Report) KernelTable(w io.Writer) {
	for _, k := range r.Kernels {
		share := 0.0
		if r.Cycles > 0 {
			share = 100 * float64(k.Cycles) / float64(r.Cycles)
		}
		fmt.Fprintf(w, "  @%s: %d calls, %d cycles (%.1f%%), utilization %.1f%% (useful %.1f%%), dram %d read, %d written\n",
			k.Name, k.Calls, k.Cycles, share, 100*k.GEMMUtilization, 100*k.UsefulUtilization, k.DRAMReadBytes, k.DRAMWriteBytes)
	}
}
