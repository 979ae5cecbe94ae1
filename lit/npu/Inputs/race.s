; the input load pushes no token: the GEMM may read the entry before it arrives
.datapath int8
.uops
  acc=0 inp=0 wgt=0
.text
  load.uop sram=0 dram=0 y=1 x=1 stride=1 dtype=i8
  load.inp sram=0 dram=0 y=1 x=1 stride=1 dtype=i8
  gemm uops=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0 reset
  gemm uops=0:1 iter=1,1 dst=0,0 src=0,0 wgt=0,0
  finish
