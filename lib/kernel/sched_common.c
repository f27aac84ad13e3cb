// SPDX-License-Identifier: GPL-2.0
/*
 * What the model scheduler's two implementations share: the host's
 * (sched.c) and the simulator's (lib/sim/sched.c).  The running task and
 * its preemption count, the knobs, the BUG checks, the default slice and
 * a task's set-up.  Beneath both, it calls neither: their shared steps
 * that do are sched_task.h's.
 */
#include <stdio.h>
#include <stdlib.h>

#include "sched.h"

__thread struct task_struct current_task = {
	.state = TASK_RUNNING,
	.on_cpu = 1,
	.cpu = -1,
};
__thread int __preempt_count;
__thread int cpu_relax_yielding;
uint64_t sched_slice_ns;
bool sched_preempt_full;
uint64_t sched_lone_ns;
bool sched_wake_poll;
uint64_t sched_wake_poll_ns;

void sched_bug(const char *what)
{
	fprintf(stderr, "BUG: %s: cpu %d, preempt_count %d\n", what,
		current->cpu, __preempt_count);
	abort();
}

void __might_sleep(const char *file, int line)
{
	fprintf(stderr, "BUG: sleeping function called from invalid context "
		"at %s:%d\n", file, line);
	sched_bug("might_sleep");
}

void sched_task_init(struct rq *rq)
{
	struct task_struct *p = current;

	__preempt_count = 0;
	p->state = TASK_RUNNING;
	p->on_cpu = 0;
	p->cpu = rq->cpu;
	p->nvcsw = p->nivcsw = 0;
	p->preempt_count = &__preempt_count;
	p->relax_yielding = &cpu_relax_yielding;
	p->rq = rq;
}

void schedule_debug(void)
{
	if (unlikely(__preempt_count))
		sched_bug("scheduling while atomic");
}

/* sched_init_granularity(): 0.75 ms * (1 + ilog2(min(CPUs, 8))). */
uint64_t sched_default_slice_ns(int nr_cpus)
{
	int factor = 1, n = nr_cpus < 8 ? nr_cpus : 8;

	while (n >>= 1)
		factor++;
	return 750000ull * factor;
}
