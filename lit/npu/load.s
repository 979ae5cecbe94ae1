; LOAD of every scratchpad, round trip through the binary form: asm → npu-bin → disasm.
; RUN: tessera npu asm %s -o %t.bin && tessera npu disasm %t.bin | FileCheck %s
; RUN: tessera npu asm %s | FileCheck %s
; The int8 datapath: u8 (zero-extended) and i8 (sign-extended) in place of bf16 and f32.
; RUN: sed -e 's/datapath bf16/datapath int8/' -e 's/dtype=bf16/dtype=u8/' -e '/load.acc/s/dtype=f32/dtype=u8/' -e 's/dtype=f32/dtype=i8/' %s | tessera npu asm /dev/stdin | FileCheck %s --check-prefix=INT8

.datapath bf16
.uops
  acc=0 inp=0 wgt=0
.text
; CHECK: .datapath bf16
; CHECK: load.uop sram=0 dram=0 y=1 x=1 stride=1 dtype=i8
  load.uop sram=0 dram=0 y=1 x=1 stride=1 dtype=i8
; CHECK-NEXT: load.inp sram=3 dram=4096 y=16 x=4 stride=32 dtype=bf16 pad=1,1,2,0 push_next
  load.inp  sram=3 dram=0x1000 y=16 x=4 stride=32 dtype=bf16 pad=1,1,2,0 push_next
; CHECK-NEXT: load.inp sram=512 dram=0 y=2 x=2 stride=2 dtype=f32 pop_next
  load.inp sram=512 dram=0 y=2 x=2 stride=2 dtype=f32 pop_next
; CHECK-NEXT: load.wgt sram=0 dram=65536 y=4 x=8 stride=64 dtype=bf16 push_next
  load.wgt sram=0 dram=65536 y=4 x=8 stride=64 dtype=bf16 push_next
; CHECK-NEXT: load.acc sram=100 dram=128 y=1 x=16 stride=16 dtype=f32 pop_prev
  load.acc sram=100 dram=128 y=1 x=16 stride=16 dtype=f32 pop_prev
; CHECK-NEXT: finish
  finish

; INT8: .datapath int8
; INT8: load.uop sram=0 dram=0 y=1 x=1 stride=1 dtype=i8
; INT8-NEXT: load.inp sram=3 dram=4096 y=16 x=4 stride=32 dtype=u8 pad=1,1,2,0 push_next
; INT8-NEXT: load.inp sram=512 dram=0 y=2 x=2 stride=2 dtype=i8 pop_next
; INT8-NEXT: load.wgt sram=0 dram=65536 y=4 x=8 stride=64 dtype=u8 push_next
; INT8-NEXT: load.acc sram=100 dram=128 y=1 x=16 stride=16 dtype=u8 pop_prev
; INT8-NEXT: finish
