/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tasks that really sleep and are really woken (futex on the task's
 * state word), with the kernel's names.  on_cpu is false only while a
 * task sleeps in schedule(): userspace cannot see a preempted thread, so
 * a descheduled owner still looks as if it runs.  need_resched() is true
 * only when the run has more threads than CPUs, and then once the task
 * has run a time slice (SCHED_SLICE_NS) since it last slept, standing in
 * for the scheduler tick that would set it.
 */
#ifndef KSCALE_KERNEL_SCHED_H
#define KSCALE_KERNEL_SCHED_H

#include <stdint.h>

#include "compiler.h"
#include "tsc.h"

#define TASK_RUNNING		0
#define TASK_UNINTERRUPTIBLE	2

#define SCHED_SLICE_NS		3000000	/* 6 ms latency, 2 tasks a CPU */

struct task_struct {
	uint32_t state;			/* the futex word */
	int on_cpu;
	uint64_t slice_start;		/* cycle counter when last woken */
};

extern __thread struct task_struct current_task;
extern int kscale_need_resched;

#define current			(&current_task)

static inline int need_resched(void)
{
	return unlikely(READ_ONCE(kscale_need_resched)) &&
	       rdtsc_ordered() - current->slice_start >
	       SCHED_SLICE_NS * tsc_per_ns;
}

static inline void set_current_state(uint32_t state)
{
	__atomic_store_n(&current->state, state, __ATOMIC_SEQ_CST);
}

#define __set_current_state(s)	WRITE_ONCE(current->state, (s))

void schedule(void);
int wake_up_process(struct task_struct *p);
void sched_task_init(void);

#endif
