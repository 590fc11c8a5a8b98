#include "textflag.h"

// func Prefetch(p uintptr)
TEXT ·Prefetch(SB), NOSPLIT|NOFRAME, $0-8
	MOVQ	p+0(FP), AX
	PREFETCHT0	(AX)
	RET

// func PrefetchLines(p uintptr, lines int)
TEXT ·PrefetchLines(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ	p+0(FP), AX
	MOVQ	lines+8(FP), CX
	TESTQ	CX, CX
	JLE	done
loop:
	PREFETCHT0	(AX)
	ADDQ	$64, AX
	DECQ	CX
	JNZ	loop
done:
	RET


// func Prefetch2(a, b uintptr)
TEXT ·Prefetch2(SB), NOSPLIT|NOFRAME, $0-16
	MOVQ	a+0(FP), AX
	MOVQ	b+8(FP), BX
	PREFETCHT0	(AX)
	PREFETCHT0	(BX)
	RET

// func Prefetch3(a, b, c uintptr)
TEXT ·Prefetch3(SB), NOSPLIT|NOFRAME, $0-24
	MOVQ	a+0(FP), AX
	MOVQ	b+8(FP), BX
	MOVQ	c+16(FP), CX
	PREFETCHT0	(AX)
	PREFETCHT0	(BX)
	PREFETCHT0	(CX)
	RET
