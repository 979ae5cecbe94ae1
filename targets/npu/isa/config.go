package isa

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
)

// Config is one configuration of the Tessera NPU (ISA.md, "Configuration"):
// the matrix unit's shape, the scratchpad sizes, DRAM and the clock. The
// compiler and the simulator read the same Config; `--npu-config FILE`
// gives it as JSON with these field names. The zero value is not valid:
// start from DefaultConfig.
type Config struct {
	// Name labels reports and tuning keys ("default", "large").
	Name string `json:"name"`
	// Batch, BlockIn and BlockOut shape the matrix unit: each cycle it does
	// Batch×BlockIn×BlockOut multiply-accumulates (VTA's GEMM intrinsic).
	Batch    int `json:"batch"`
	BlockIn  int `json:"block_in"`
	BlockOut int `json:"block_out"`
	// Scratchpad sizes in bytes: input, weight, accumulator and micro-op
	// buffers (VTA's inp, wgt, acc and uop SRAMs).
	InpBufferBytes int `json:"inp_buffer_bytes"`
	WgtBufferBytes int `json:"wgt_buffer_bytes"`
	AccBufferBytes int `json:"acc_buffer_bytes"`
	UopBufferBytes int `json:"uop_buffer_bytes"`
	// DRAMBytesPerCycle is the DRAM channel's bandwidth (bytes per cycle,
	// shared by every DMA); DRAMLatencyCycles is added to every transfer.
	DRAMBytesPerCycle int `json:"dram_bytes_per_cycle"`
	DRAMLatencyCycles int `json:"dram_latency_cycles"`
	// GEMMLatencyCycles is the matrix unit's pipeline depth, paid once per
	// GEMM instruction; ALULatencyCycles the vector ALU's, per ALU
	// instruction; ALUCyclesPerIter its initiation interval (cycles per
	// micro-op iteration, one accumulator entry each).
	GEMMLatencyCycles int `json:"gemm_latency_cycles"`
	ALULatencyCycles  int `json:"alu_latency_cycles"`
	ALUCyclesPerIter  int `json:"alu_cycles_per_iter"`
	// ClockMHz converts cycles to seconds.
	ClockMHz float64 `json:"clock_mhz"`
}

// DefaultConfig is the default Tessera NPU (ISA.md gives the reasons):
// VTA's 1×16×16 matrix unit and scratchpads (inp 32 KiB, wgt 256 KiB,
// acc 128 KiB, uop 32 KiB), 64 bytes per cycle of DRAM bandwidth
// (64 GB/s at 1 GHz, an LPDDR5 edge part) with 64 cycles of latency.
func DefaultConfig() Config {
	return Config{
		Name: "default", Batch: 1, BlockIn: 16, BlockOut: 16,
		InpBufferBytes: 32 << 10, WgtBufferBytes: 256 << 10, AccBufferBytes: 128 << 10, UopBufferBytes: 32 << 10,
		DRAMBytesPerCycle: 64, DRAMLatencyCycles: 64,
		GEMMLatencyCycles: 4, ALULatencyCycles: 4, ALUCyclesPerIter: 1,
		ClockMHz: 1000,
	}
}

// LoadConfig reads a JSON configuration (fields absent from the file keep
// DefaultConfig's values). Errors: the file's, unknown fields, malformed
// JSON, or a configuration Validate refuses, prefixed with path.
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, err
	}
	c, err := ParseConfig(data)
	if err != nil {
		return Config{}, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// ParseConfig decodes a JSON configuration over DefaultConfig and
// validates it. Errors: as LoadConfig's.
func ParseConfig(data []byte) (Config, error) {
	c := DefaultConfig()
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil {
		return Config{}, fmt.Errorf("npu config: %v", err)
	}
	if dec.More() {
		return Config{}, fmt.Errorf("npu config: data after the JSON object")
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// maxBufferBytes bounds each scratchpad (256 MiB): the simulator holds
// them in memory.
const maxBufferBytes = 256 << 20

// Validate checks that every size is positive, that no scratchpad exceeds
// 256 MiB, and that every scratchpad's depth, in both datapaths, fits the
// instruction fields that address it.
func (c Config) Validate() error {
	pos := []struct {
		name string
		v    int
	}{
		{"batch", c.Batch}, {"block_in", c.BlockIn}, {"block_out", c.BlockOut},
		{"inp_buffer_bytes", c.InpBufferBytes}, {"wgt_buffer_bytes", c.WgtBufferBytes},
		{"acc_buffer_bytes", c.AccBufferBytes}, {"uop_buffer_bytes", c.UopBufferBytes},
		{"dram_bytes_per_cycle", c.DRAMBytesPerCycle}, {"alu_cycles_per_iter", c.ALUCyclesPerIter},
	}
	for _, p := range pos {
		if p.v <= 0 {
			return fmt.Errorf("npu config: %s must be positive, got %d", p.name, p.v)
		}
	}
	if c.DRAMLatencyCycles < 0 || c.GEMMLatencyCycles < 0 || c.ALULatencyCycles < 0 {
		return fmt.Errorf("npu config: latencies must not be negative")
	}
	if !(c.ClockMHz > 0) {
		return fmt.Errorf("npu config: clock_mhz must be positive, got %g", c.ClockMHz)
	}
	if c.Batch*c.BlockIn*c.BlockOut > 1<<16 {
		return fmt.Errorf("npu config: a %d×%d×%d matrix unit is larger than 65536 MACs", c.Batch, c.BlockIn, c.BlockOut)
	}
	for _, m := range []Memory{MemUop, MemInp, MemWgt, MemAcc} {
		if c.bufferBytes(m) > maxBufferBytes {
			return fmt.Errorf("npu config: the %s buffer's %d bytes are more than the %d a buffer may have", m, c.bufferBytes(m), maxBufferBytes)
		}
	}
	for _, dp := range []Datapath{DPInt8, DPBF16} {
		for _, m := range []Memory{MemUop, MemInp, MemWgt, MemAcc} {
			d := c.Depth(m, dp)
			if d < 1 {
				return fmt.Errorf("npu config: the %s buffer holds no %s entry of %d bytes", m, dp, c.EntryBytes(m, dp))
			}
			if max := m.maxDepth(); d > max {
				return fmt.Errorf("npu config: the %s buffer has %d %s entries, more than the %d its address fields reach", m, d, dp, max)
			}
		}
	}
	return nil
}

// EntryBytes is the size of one entry of scratchpad m in datapath dp:
// an input entry is Batch×BlockIn values, a weight entry BlockOut×BlockIn
// values (one byte each for int8, two for bf16), an accumulator entry
// Batch×BlockOut 32-bit values (int32 or f32), a micro-op 8 bytes.
func (c Config) EntryBytes(m Memory, dp Datapath) int {
	return c.EntryValues(m) * m.valueBytes(dp)
}

// EntryValues is the number of values in one entry of scratchpad m (1 for
// the micro-op buffer).
func (c Config) EntryValues(m Memory) int {
	switch m {
	case MemInp:
		return c.Batch * c.BlockIn
	case MemWgt:
		return c.BlockOut * c.BlockIn
	case MemAcc:
		return c.Batch * c.BlockOut
	}
	return 1
}

// Depth is the number of entries scratchpad m holds in datapath dp.
func (c Config) Depth(m Memory, dp Datapath) int {
	return c.bufferBytes(m) / c.EntryBytes(m, dp)
}

func (c Config) bufferBytes(m Memory) int {
	switch m {
	case MemInp:
		return c.InpBufferBytes
	case MemWgt:
		return c.WgtBufferBytes
	case MemAcc:
		return c.AccBufferBytes
	}
	return c.UopBufferBytes
}

// PeakMACsPerCycle is Batch×BlockIn×BlockOut.
func (c Config) PeakMACsPerCycle() int { return c.Batch * c.BlockIn * c.BlockOut }

// Seconds converts cycles to seconds at ClockMHz.
func (c Config) Seconds(cycles int64) float64 { return float64(cycles) / (c.ClockMHz * 1e6) }
