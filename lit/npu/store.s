; STORE from the accumulator in each element type of the int8 datapath.
; RUN: tessera npu asm %s -o %t.bin && tessera npu disasm %t.bin | FileCheck %s

.datapath int8
.text
; CHECK: store.acc sram=0 dram=0 y=8 x=2 stride=4 dtype=i8 pop_prev
  store.acc sram=0 dram=0 y=8 x=2 stride=4 dtype=i8 pop_prev
; CHECK-NEXT: store.acc sram=16 dram=1024 y=1 x=16 stride=16 dtype=i32 pop_prev push_prev
  store.acc sram=16 dram=1024 y=1 x=16 stride=16 dtype=i32 push_prev pop_prev
; CHECK-NEXT: store.acc sram=32 dram=2048 y=2 x=3 stride=5 dtype=u8
  store.acc sram=32 dram=2048 y=2 x=3 stride=5 dtype=u8
; CHECK-NEXT: finish
  finish
