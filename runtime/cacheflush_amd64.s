#include "textflag.h"

// func clflushRange(p unsafe.Pointer, n uintptr)
// CLFLUSH every 64-byte line of [p &^ 63, p + n), then MFENCE so the
// flushes complete before the next timed call.
TEXT ·clflushRange(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	ADDQ AX, CX
	ANDQ $~63, AX
loop:
	CMPQ AX, CX
	JAE done
	CLFLUSH (AX)
	ADDQ $64, AX
	JMP loop
done:
	MFENCE
	RET
