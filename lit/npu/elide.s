; Load elision (--elide-loads, isa.ElideLoads): four output tiles through two input,
; weight and accumulator halves, all multiplying the same weight block (a weight-stationary
; order). Tiles 2 and 3 find the weights where tiles 0 and 1 left them in their halves, so
; their load.wgt are dropped; the tokens are inserted after (the GEMMs of tiles 2 and 3 wait
; only for their input loads). Same results, 1024 fewer DRAM bytes read.
; RUN: tessera npu asm %s --elide-loads | FileCheck %s
; RUN: seq 1 3000 | tr -d '\n' | head -c 4608 > %t.img
; RUN: tessera npu sim %s --insert-deps --dram %t.img --dram-out %t.all | FileCheck %s --check-prefix=ALL
; RUN: tessera npu sim %s --elide-loads --dram %t.img --dram-out %t.elided | FileCheck %s --check-prefix=ELIDED
; RUN: cmp %t.all %t.elided
; ALL: dram: 4128 bytes read, 4096 bytes written
; ELIDED: dram: 3104 bytes read, 4096 bytes written

.datapath bf16
.uops
  acc=0 inp=0 wgt=0        ; 0: half 0
  acc=1024 inp=512 wgt=256 ; 1: half 1
  acc=0 inp=0 wgt=0        ; 2: reset half 0
  acc=1024 inp=0 wgt=0     ; 3: reset half 1
.text
  load.uop sram=0 dram=0 y=1 x=4 stride=4 dtype=i8
; CHECK:      load.inp sram=0 dram=0 y=16 x=1 stride=1 dtype=bf16{{$}}
; CHECK-NEXT: load.wgt sram=0 dram=4096 y=1 x=1 stride=1 dtype=bf16 push_next{{$}}
; CHECK:      load.inp sram=512 dram=512 y=16 x=1 stride=1 dtype=bf16{{$}}
; CHECK-NEXT: load.wgt sram=256 dram=4096 y=1 x=1 stride=1 dtype=bf16 push_next{{$}}
; CHECK:      load.inp sram=0 dram=1024 y=16 x=1 stride=1 dtype=bf16 pop_next push_next{{$}}
; CHECK-NEXT: gemm uops=0:1 iter=16,1 dst=1,0 src=1,0 wgt=0,0 pop_prev push_next{{$}}
; CHECK:      load.inp sram=512 dram=1536 y=16 x=1 stride=1 dtype=bf16 pop_next push_next{{$}}
; CHECK-NEXT: gemm uops=1:2 iter=16,1 dst=1,0 src=1,0 wgt=0,0 pop_prev push_next{{$}}
; CHECK-NOT:  load.wgt
; CHECK:      finish
  gemm uops=2:3 iter=16,1 dst=1,0 src=0,0 wgt=0,0 reset
  load.inp sram=0 dram=0 y=16 x=1 stride=1 dtype=bf16
  load.wgt sram=0 dram=4096 y=1 x=1 stride=1 dtype=bf16
  gemm uops=0:1 iter=16,1 dst=1,0 src=1,0 wgt=0,0
  store.acc sram=0 dram=8192 y=16 x=1 stride=1 dtype=f32
  gemm uops=3:4 iter=16,1 dst=1,0 src=0,0 wgt=0,0 reset
  load.inp sram=512 dram=512 y=16 x=1 stride=1 dtype=bf16
  load.wgt sram=256 dram=4096 y=1 x=1 stride=1 dtype=bf16
  gemm uops=1:2 iter=16,1 dst=1,0 src=1,0 wgt=0,0
  store.acc sram=1024 dram=9216 y=16 x=1 stride=1 dtype=f32
  gemm uops=2:3 iter=16,1 dst=1,0 src=0,0 wgt=0,0 reset
  load.inp sram=0 dram=1024 y=16 x=1 stride=1 dtype=bf16
  load.wgt sram=0 dram=4096 y=1 x=1 stride=1 dtype=bf16
  gemm uops=0:1 iter=16,1 dst=1,0 src=1,0 wgt=0,0
  store.acc sram=0 dram=10240 y=16 x=1 stride=1 dtype=f32
  gemm uops=3:4 iter=16,1 dst=1,0 src=0,0 wgt=0,0 reset
  load.inp sram=512 dram=1536 y=16 x=1 stride=1 dtype=bf16
  load.wgt sram=256 dram=4096 y=1 x=1 stride=1 dtype=bf16
  gemm uops=1:2 iter=16,1 dst=1,0 src=1,0 wgt=0,0
  store.acc sram=1024 dram=11264 y=16 x=1 stride=1 dtype=f32
  finish
