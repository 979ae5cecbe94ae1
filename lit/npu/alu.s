; ALU: every operation of the int8 datapath, with an immediate and with an accumulator source.
; RUN: tessera npu asm %s -o %t.bin && tessera npu disasm %t.bin | FileCheck %s
; The bf16 datapath prints its immediates as values.
; RUN: sed -e 's/datapath int8/datapath bf16/' -e '/shr\|mulhi\|mulq/d' %s | tessera npu asm /dev/stdin | FileCheck %s --check-prefix=BF16

.datapath int8
.uops
  acc=0 inp=1 wgt=0
.text
; CHECK: alu.min uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=127
  alu.min uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=127
; CHECK-NEXT: alu.max uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=0
  alu.max uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=0
; CHECK-NEXT: alu.add uops=0:1 iter=1,16 dst=1,0 src=1,0{{$}}
  alu.add uops=0:1 iter=1,16 dst=1,0 src=1,0
; CHECK-NEXT: alu.sub uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=-3
  alu.sub uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=-3
; CHECK-NEXT: alu.mul uops=0:1 iter=2,8 dst=8,1 src=0,0 imm=1234
  alu.mul uops=0:1 iter=2,8 dst=8,1 src=0,0 imm=1234
; CHECK-NEXT: alu.shr uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=7
  alu.shr uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=7
; CHECK-NEXT: alu.clip uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=127
  alu.clip uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=127
; CHECK-NEXT: alu.mov uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=-32768
  alu.mov uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=0x8000
; CHECK-NEXT: alu.mulhi uops=0:1 iter=1,16 dst=1,0 src=1,0 push_next
  alu.mulhi uops=0:1 iter=1,16 dst=1,0 src=1,0 push_next
; CHECK-NEXT: alu.mulq uops=0:1 iter=1,16 dst=1,0 src=1,0 pop_prev{{$}}
  alu.mulq uops=0:1 iter=1,16 dst=1,0 src=1,0 pop_prev
; CHECK-NEXT: alu.mulq uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=-2
  alu.mulq uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=0xfffe
; CHECK-NEXT: finish
  finish

; BF16: alu.min uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=127
; BF16: alu.sub uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=-3
; BF16: alu.mul uops=0:1 iter=2,8 dst=8,1 src=0,0 imm=1232
; BF16: alu.mov uops=0:1 iter=1,16 dst=1,0 src=1,0 imm=-0
