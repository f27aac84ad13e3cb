// SPDX-License-Identifier: GPL-2.0
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sched.h"

__thread struct task_struct current_task = { .state = TASK_RUNNING, .on_cpu = 1 };
int kscale_need_resched;

static void futex(uint32_t *uaddr, int op, uint32_t val)
{
	syscall(SYS_futex, uaddr, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

void sched_task_init(void)
{
	current->state = TASK_RUNNING;
	current->on_cpu = 1;
	current->slice_start = rdtsc_ordered();
}

/* Sleep until someone sets our state back to TASK_RUNNING. */
void schedule(void)
{
	uint32_t state;

	WRITE_ONCE(current->on_cpu, 0);
	while ((state = __atomic_load_n(&current->state, __ATOMIC_ACQUIRE)) !=
	       TASK_RUNNING)
		futex(&current->state, FUTEX_WAIT, state);
	WRITE_ONCE(current->on_cpu, 1);
	current->slice_start = rdtsc_ordered();
}

int wake_up_process(struct task_struct *p)
{
	if (__atomic_exchange_n(&p->state, TASK_RUNNING, __ATOMIC_SEQ_CST) ==
	    TASK_RUNNING)
		return 0;
	futex(&p->state, FUTEX_WAKE, 1);
	return 1;
}
