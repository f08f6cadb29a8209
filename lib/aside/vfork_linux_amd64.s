#include "textflag.h"

// func vfork() (pid, errno uintptr)
//
// clone(CLONE_VM|CLONE_VFORK) as syscall's rawVforkSyscall makes it: the child runs on this
// goroutine's stack while the parent's thread waits, so the return address is kept in a
// register across the call and pushed again by each of them. No exit signal: the parent
// reaps the child itself (wait4 with __WALL), and Go's handler need not run for a SIGCHLD.
TEXT ·vfork(SB),NOSPLIT|NOFRAME,$0-16
	MOVQ	$0x4100, DI	// CLONE_VM|CLONE_VFORK
	MOVQ	$0, SI
	MOVQ	$0, DX
	MOVQ	$0, R10
	MOVQ	$0, R8
	MOVQ	$0, R9
	MOVQ	$56, AX	// SYS_clone
	POPQ	R12
	SYSCALL
	PUSHQ	R12
	CMPQ	AX, $0xfffffffffffff001
	JLS	ok
	MOVQ	$-1, pid+0(FP)
	NEGQ	AX
	MOVQ	AX, errno+8(FP)
	RET
ok:
	MOVQ	AX, pid+0(FP)
	MOVQ	$0, errno+8(FP)
	RET
