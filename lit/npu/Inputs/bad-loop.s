; A GEMM whose loop leaves the accumulator (2048 entries): --insert-deps
; names the iteration.
.datapath bf16
.uops
  acc=0 inp=0 wgt=0
.text
  load.uop sram=0 dram=0 y=1 x=1 stride=1 dtype=i8
  gemm uops=0:1 iter=2,2 dst=2047,1 src=0,0 wgt=0,0 reset
  finish
