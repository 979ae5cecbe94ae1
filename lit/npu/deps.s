; Dependency tokens inserted by --insert-deps (isa.InsertDeps): a double-buffered GEMM
; written without tokens. Two output tiles (accumulator halves at 0 and 1024), three
; reduction steps each through alternating input and weight halves (0 and 512; 0 and 256). The pass
; finds VTA's pattern: each load.wgt pushes to its GEMM; a load into a half waits for
; the GEMM that last read it (two steps back); each store waits for its tile's last
; GEMM (a third tile's reset would wait for the first store). Without tokens the first
; store runs before anything wrote its accumulator entries.
; RUN: not tessera npu sim %s 2>&1 | FileCheck %s --check-prefix=RACE
; RACE: deps.s: error: instruction 11 (store.acc): reads acc entry 0, which no instruction has written
; RUN: tessera npu asm %s --insert-deps | FileCheck %s
; RUN: tessera npu asm %s --insert-deps -o %t.bin && tessera npu sim %t.bin | FileCheck %s --check-prefix=SIM
; RUN: tessera npu sim %s --insert-deps | FileCheck %s --check-prefix=SIM
; The hand-tokened sim.s, its tokens dropped, gets them back: the same cycles.
; RUN: sed -e 's/ pop_prev//; s/ push_next//' %S/sim.s | tessera npu sim /dev/stdin --insert-deps | FileCheck %S/sim.s

.datapath bf16
.uops
  acc=0 inp=0 wgt=0      ; 0: tile 0, half 0
  acc=0 inp=512 wgt=256  ; 1: tile 0, half 1
  acc=1024 inp=0 wgt=0   ; 2: tile 1, half 0
  acc=1024 inp=512 wgt=256 ; 3: tile 1, half 1
  acc=0 inp=0 wgt=0      ; 4: reset tile 0
  acc=1024 inp=0 wgt=0   ; 5: reset tile 1
.text
; CHECK:      load.uop sram=0 dram=0 y=1 x=6 stride=6 dtype=i8{{$}}
  load.uop sram=0 dram=0 y=1 x=6 stride=6 dtype=i8
; CHECK-NEXT: gemm uops=4:5 iter=16,1 dst=1,0 src=0,0 wgt=0,0 reset{{$}}
  gemm uops=4:5 iter=16,1 dst=1,0 src=0,0 wgt=0,0 reset
; CHECK-NEXT: load.inp sram=0 dram=0 y=16 x=1 stride=3 dtype=bf16{{$}}
  load.inp sram=0 dram=0 y=16 x=1 stride=3 dtype=bf16
; CHECK-NEXT: load.wgt sram=0 dram=4096 y=1 x=1 stride=1 dtype=bf16 push_next{{$}}
  load.wgt sram=0 dram=4096 y=1 x=1 stride=1 dtype=bf16
; CHECK-NEXT: gemm uops=0:1 iter=16,1 dst=1,0 src=1,0 wgt=0,0 pop_prev push_prev{{$}}
  gemm uops=0:1 iter=16,1 dst=1,0 src=1,0 wgt=0,0
; CHECK-NEXT: load.inp sram=512 dram=32 y=16 x=1 stride=3 dtype=bf16{{$}}
  load.inp sram=512 dram=32 y=16 x=1 stride=3 dtype=bf16
; CHECK-NEXT: load.wgt sram=256 dram=4608 y=1 x=1 stride=1 dtype=bf16 push_next{{$}}
  load.wgt sram=256 dram=4608 y=1 x=1 stride=1 dtype=bf16
; CHECK-NEXT: gemm uops=1:2 iter=16,1 dst=1,0 src=1,0 wgt=0,0 pop_prev push_prev{{$}}
  gemm uops=1:2 iter=16,1 dst=1,0 src=1,0 wgt=0,0
; CHECK-NEXT: load.inp sram=0 dram=64 y=16 x=1 stride=3 dtype=bf16 pop_next{{$}}
  load.inp sram=0 dram=64 y=16 x=1 stride=3 dtype=bf16
; CHECK-NEXT: load.wgt sram=0 dram=5120 y=1 x=1 stride=1 dtype=bf16 push_next{{$}}
  load.wgt sram=0 dram=5120 y=1 x=1 stride=1 dtype=bf16
; CHECK-NEXT: gemm uops=0:1 iter=16,1 dst=1,0 src=1,0 wgt=0,0 pop_prev push_prev push_next{{$}}
  gemm uops=0:1 iter=16,1 dst=1,0 src=1,0 wgt=0,0
; CHECK-NEXT: store.acc sram=0 dram=8192 y=16 x=1 stride=1 dtype=f32 pop_prev{{$}}
  store.acc sram=0 dram=8192 y=16 x=1 stride=1 dtype=f32
; CHECK-NEXT: gemm uops=5:6 iter=16,1 dst=1,0 src=0,0 wgt=0,0 reset{{$}}
  gemm uops=5:6 iter=16,1 dst=1,0 src=0,0 wgt=0,0 reset
; CHECK-NEXT: load.inp sram=512 dram=0 y=16 x=1 stride=3 dtype=bf16 pop_next{{$}}
  load.inp sram=512 dram=0 y=16 x=1 stride=3 dtype=bf16
; CHECK-NEXT: load.wgt sram=256 dram=5632 y=1 x=1 stride=1 dtype=bf16 push_next{{$}}
  load.wgt sram=256 dram=5632 y=1 x=1 stride=1 dtype=bf16
; CHECK-NEXT: gemm uops=3:4 iter=16,1 dst=1,0 src=1,0 wgt=0,0 pop_prev push_prev{{$}}
  gemm uops=3:4 iter=16,1 dst=1,0 src=1,0 wgt=0,0
; CHECK-NEXT: load.inp sram=0 dram=32 y=16 x=1 stride=3 dtype=bf16 pop_next{{$}}
  load.inp sram=0 dram=32 y=16 x=1 stride=3 dtype=bf16
; CHECK-NEXT: load.wgt sram=0 dram=6144 y=1 x=1 stride=1 dtype=bf16 push_next{{$}}
  load.wgt sram=0 dram=6144 y=1 x=1 stride=1 dtype=bf16
; CHECK-NEXT: gemm uops=2:3 iter=16,1 dst=1,0 src=1,0 wgt=0,0 pop_prev{{$}}
  gemm uops=2:3 iter=16,1 dst=1,0 src=1,0 wgt=0,0
; CHECK-NEXT: load.inp sram=512 dram=64 y=16 x=1 stride=3 dtype=bf16 pop_next{{$}}
  load.inp sram=512 dram=64 y=16 x=1 stride=3 dtype=bf16
; CHECK-NEXT: load.wgt sram=256 dram=6656 y=1 x=1 stride=1 dtype=bf16 push_next{{$}}
  load.wgt sram=256 dram=6656 y=1 x=1 stride=1 dtype=bf16
; CHECK-NEXT: gemm uops=3:4 iter=16,1 dst=1,0 src=1,0 wgt=0,0 pop_prev push_next{{$}}
  gemm uops=3:4 iter=16,1 dst=1,0 src=1,0 wgt=0,0
; CHECK-NEXT: store.acc sram=1024 dram=9216 y=16 x=1 stride=1 dtype=f32 pop_prev{{$}}
  store.acc sram=1024 dram=9216 y=16 x=1 stride=1 dtype=f32
; CHECK-NEXT: finish
  finish

; SIM: cycles:
; SIM: store module: busy {{[0-9]+}}, stalled on tokens {{[0-9]+}}, on DRAM {{[0-9]+}} cycles (2 instructions)
