/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sim_switch(void **save, void *to): saves the callee-saved registers,
 * the SSE control word and the x87 control word on the current stack,
 * stores the stack pointer in *save and resumes the context saved at to.
 * A new context's stack is laid out by sim.c (sim_stack_init()) as if it
 * had called sim_switch() from the entry function's first instruction.
 */
	.text
	.globl	sim_switch
	.type	sim_switch, @function
sim_switch:
	pushq	%rbp
	pushq	%rbx
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
	subq	$8, %rsp
	stmxcsr	(%rsp)
	fnstcw	4(%rsp)
	movq	%rsp, (%rdi)
	movq	%rsi, %rsp
	ldmxcsr	(%rsp)
	fldcw	4(%rsp)
	addq	$8, %rsp
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%rbx
	popq	%rbp
	ret
	.size	sim_switch, .-sim_switch
	.section .note.GNU-stack,"",@progbits
