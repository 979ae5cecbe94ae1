; Bad programs get located diagnostics and exit status 1.
; RUN: not tessera npu asm %S/Inputs/bad-key.s 2>&1 | FileCheck %s --check-prefix=KEY
; KEY: bad-key.s:4:26: error: unknown key "strides" for load.inp
; RUN: not tessera npu asm %S/Inputs/bad-rule.s 2>&1 | FileCheck %s --check-prefix=RULE
; RUN: not tessera npu sim %S/Inputs/race.s 2>&1 | FileCheck %s --check-prefix=RACE
; RULE: bad-rule.s: error: instruction 0 (load.inp): the load module has no previous module (pop_prev/push_prev)
; RACE: race.s: error: instruction 3 (gemm): reads inp entry 0, written by the other instruction with no dependency token ordering the two (a missing dependency) [instruction 1 (load.inp)]
; RUN: not tessera npu sim %S/Inputs/race.s --dram-size -5 2>&1 | FileCheck %s --check-prefix=SIZE
; SIZE: --dram-size -5: must not be negative
; RUN: not tessera npu disasm %s 2>&1 | FileCheck %s --check-prefix=DIS
; DIS: invalid.s:{{[0-9]+}}:{{[0-9]+}}: error:
; RUN: echo '{"block_in": 0}' > %t.json && not tessera npu asm %S/Inputs/race.s --npu-config %t.json 2>&1 | FileCheck %s --check-prefix=CFG
; CFG: npu config: block_in must be positive, got 0
; Token insertion refuses what it cannot enumerate, naming the iteration.
; RUN: not tessera npu asm %S/Inputs/bad-loop.s --insert-deps 2>&1 | FileCheck %s --check-prefix=LOOP
; LOOP: bad-loop.s: error: instruction 1 (gemm): iteration (i0 1, i1 1, micro-op 0) addresses acc 2048, inp 0, wgt 0: beyond the buffers
