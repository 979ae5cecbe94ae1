.datapath int8
.text
  load.inp sram=0 dram=0 y=1 x=1 stride=1 dtype=i8 pop_prev
  finish
