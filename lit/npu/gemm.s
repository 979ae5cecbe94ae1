; GEMM: a reset and an accumulation over a micro-op range inside the two-level loop.
; RUN: tessera npu asm %s -o %t.bin && tessera npu disasm %t.bin | FileCheck %s

.datapath bf16
.uops
  acc=0 inp=0 wgt=0
  acc=0 inp=1 wgt=1
.text
; CHECK: gemm uops=0:1 iter=64,16 dst=16,1 src=0,0 wgt=0,0 reset pop_next
  gemm uops=0:1 iter=64,16 dst=16,1 src=0,0 wgt=0,0 reset pop_next
; CHECK-NEXT: gemm uops=0:2 iter=64,16 dst=16,1 src=8,0 wgt=0,8 pop_prev push_prev push_next
  gemm uops=0:2 iter=64,16 dst=16,1 src=8,0 wgt=0,8 pop_prev push_next push_prev
; CHECK-NEXT: finish
  finish
