// SPDX-License-Identifier: GPL-2.0
/*
 * What the model scheduler's two implementations share: the host's
 * (sched.c) and the simulator's (lib/sim/sched.c).  Its BUG checks, the
 * default slice, a task's set-up, and the preemption points, which each
 * implementation's preempt_switch() carries out.
 */
#include <stdio.h>
#include <stdlib.h>

#include "percpu.h"
#include "sched.h"

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

void sched_task_init(int cpu)
{
	struct task_struct *p = current;

	kscale_set_cpu(cpu);
	__preempt_count = 0;
	p->state = TASK_RUNNING;
	p->on_cpu = 0;
	p->cpu = cpu;
	p->nvcsw = p->nivcsw = 0;
	p->preempt_count = &__preempt_count;
	p->relax_yielding = &cpu_relax_yielding;
	p->rq = cpu_rq(cpu);
}

void schedule_debug(void)
{
	if (unlikely(__preempt_count))
		sched_bug("scheduling while atomic");
}

void preempt_schedule(void)
{
	preempt_switch(current);
}

void __cond_resched(void)
{
	preempt_switch(current);
}

void yield(void)
{
	preempt_switch(current);
}

/* sched_init_granularity(): 0.75 ms * (1 + ilog2(min(CPUs, 8))). */
uint64_t sched_default_slice_ns(int nr_cpus)
{
	int factor = 1, n = nr_cpus < 8 ? nr_cpus : 8;

	while (n >>= 1)
		factor++;
	return 750000ull * factor;
}
