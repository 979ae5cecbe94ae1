; a misspelled key
.datapath int8
.text
  load.inp sram=0 dram=0 strides=4 y=1 x=1 dtype=i8
  finish
