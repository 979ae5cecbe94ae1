; A complete program on the simulator: load two 1x16 input rows and a 16x16 weight (bf16,
; all zero here), multiply, add a bias from the accumulator, relu, store f32. The figures
; are ISA.md's cycle model worked by hand (64 B/cycle, 64 cycles of DMA latency):
;   load:    load.inp 0..65 (1 transfer cycle), load.wgt 65..137 (8)            busy 137
;   compute: load.uop 1..66 (waits 1 for the channel), load.acc 73..138 (waits 7),
;            gemm reset 138..144, gemm 144..150 (its token came at 137), alu 150..156, 156..162
;   store:   waits for the token until 162, store 162..228 (2 transfer cycles)
; RUN: tessera npu sim %s --report %t.json | FileCheck %s
; RUN: FileCheck %s --check-prefix=JSON < %t.json
; RUN: tessera npu asm %s -o %t.bin && tessera npu sim %t.bin | FileCheck %s

.datapath bf16
.uops
  acc=0 inp=0 wgt=0
  acc=0 inp=2 wgt=0
.text
  load.uop sram=0 dram=0 y=1 x=2 stride=2 dtype=i8
  load.inp sram=0 dram=0 y=2 x=1 stride=1 dtype=bf16
  load.wgt sram=0 dram=64 y=1 x=1 stride=1 dtype=bf16 push_next
  load.acc sram=2 dram=576 y=1 x=1 stride=1 dtype=f32
  gemm uops=0:1 iter=2,1 dst=1,0 src=0,0 wgt=0,0 reset
  gemm uops=0:1 iter=2,1 dst=1,0 src=1,0 wgt=0,0 pop_prev
  alu.add uops=1:2 iter=2,1 dst=1,0 src=0,0
  alu.max uops=0:1 iter=2,1 dst=1,0 src=0,0 imm=0 push_next
  store.acc sram=0 dram=1024 y=2 x=1 stride=1 dtype=f32 pop_prev
  finish

; CHECK: cycles: 228 (228ns at the configured clock)
; CHECK: gemm utilization: 0.9% (512 MACs; useful: 512 MACs, 0.9%)
; CHECK: dram: 656 bytes read, 128 bytes written
; CHECK: load module: busy 137, stalled on tokens 0, on DRAM 0 cycles (2 instructions)
; CHECK: compute module: busy 154, stalled on tokens 0, on DRAM 8 cycles (7 instructions)
; CHECK: store module: busy 66, stalled on tokens 162, on DRAM 0 cycles (1 instructions)

; JSON: "cycles": 228,
; JSON: "gemm_utilization":
; JSON: "dram_read_bytes": 656,
; JSON: "dram_write_bytes": 128,
; JSON: "npu_mac_fraction": 1,
; JSON: "host_ops": [],
; JSON: "kernels": [
