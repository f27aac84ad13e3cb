// SPDX-License-Identifier: GPL-2.0
/*
 * The model scheduler (lib/kernel/sched.h) on the simulator's virtual CPUs,
 * replacing lib/kernel/sched.c in the -DKSCALE_SIM build.
 *
 * The same interface and states: a task runs until it sleeps in
 * schedule() or reaches a preemption point with need_resched() set, and is
 * never switched out while preempt_count() is non-zero.  What the host's
 * futexes, SCHED_FIFO and tick threads do there is done here by the
 * engine (sim.c) in virtual time: a wake-up makes the task runnable on its
 * CPU the machine's wake_ns later (at once behind a running task, which
 * gets need_resched), a switch costs ctxsw_ns, the tick sets need_resched
 * once the running task has had its slice with others waiting, or
 * sched_lone_ns alone (set before sched_set_slice_ns()), and a timed
 * sleep is a timer event.  Every word a spinner may watch (state,
 * on_cpu, need_resched) is written through the coherence model, so a
 * spin on it looks again when it changes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "../kernel/percpu.h"
#include "../kernel/sched.h"
#include "sim.h"

bool sched_fifo = true;		/* the guarantee holds: nothing else runs */

static struct rq __percpu *runqueues;

struct task_struct *sim_current(void)
{
	struct sim_task *t = sim_task_current();

	return t ? sim_task_struct(t) : &current_task;
}

struct rq *cpu_rq(int cpu)
{
	return per_cpu_ptr(runqueues, cpu);
}

/* Not called: sched_fifo holds (sched.h) */
void __cpu_own(void)
{
}

void __cpu_unown(void)
{
}

/* A word a spinner may watch, written where the coherence model sees it. */
static void sched_write(int *word, int v)
{
	*word = v;
	sim_host_write(word);
}

static void sched_tick(int cpu)
{
	sched_write(&cpu_rq(cpu)->need_resched, 1);
}

void sched_init(void)
{
	int cpu;

	if (runqueues)
		return;
	runqueues = alloc_percpu(struct rq);
	for_each_possible_cpu(cpu)
		per_cpu_ptr(runqueues, cpu)->cpu = cpu;
	sched_set_slice_ns(0, 1);
}

void sched_set_slice_ns(uint64_t ns, int nr_cpus)
{
	sched_slice_ns = ns ? ns : sched_default_slice_ns(nr_cpus);
	sim_set_tick(sched_slice_ns, sched_lone_ns, sched_tick);
}

unsigned long sched_host_sleeps(void)
{
	return 0;
}

static void switched_in(struct task_struct *p)
{
	if (p->rq)
		p->rq->curr = p;
	sched_write(&p->on_cpu, 1);
}

static void switched_out(struct task_struct *p)
{
	sched_write(&p->on_cpu, 0);
	if (p->rq) {
		if (p->rq->curr == p)
			p->rq->curr = NULL;
		sched_write(&p->rq->need_resched, 0);
		p->rq->nr_switches++;
	}
}

/* enqueue_task() + check_preempt_curr() */
static void activate_task(struct rq *rq)
{
	if (rq->nr_running++ > 0)
		sched_write(&rq->need_resched, 1);
}

static void deactivate_task(struct rq *rq)
{
	rq->nr_running--;
}

void preempt_switch(struct task_struct *p)
{
	schedule_debug();
	p->nivcsw++;
	switched_out(p);
	sim_yield_cpu();
	switched_in(p);
}

/* As lib/kernel/sched.c's: false if a wake-up came first. */
static bool try_to_sleep(struct task_struct *p)
{
	lockstat_sleep_window();
	sim_access(&p->state, sizeof(p->state), SIM_RMW);
	if (p->state == TASK_RUNNING)
		return false;
	p->state |= TASK_ASLEEP;
	p->nvcsw++;
	switched_out(p);
	if (p->rq)
		deactivate_task(p->rq);
	return true;
}

int wake_up_process(struct task_struct *p)
{
	uint32_t old;

	sim_access(&p->state, sizeof(p->state), SIM_RMW);
	old = p->state;
	if (old == TASK_RUNNING)
		return 0;
	p->state = TASK_RUNNING;
	sim_host_write(&p->state);
	if (!(old & TASK_ASLEEP))
		return 1;
	if (p->rq)
		activate_task(p->rq);
	sim_wake(sim_task_of(p));
	return 1;
}

void schedule(void)
{
	struct task_struct *p = current;

	schedule_debug();
	if (!try_to_sleep(p)) {
		cond_resched();
		return;
	}
	sim_sleep(0);
	switched_in(p);
}

void schedule_timeout_ns(uint64_t ns)
{
	struct task_struct *p = current;

	schedule_debug();
	set_current_state(TASK_UNINTERRUPTIBLE);
	if (try_to_sleep(p)) {
		sim_sleep(ns ? ns : 1);
		/* the timer woke it: try_to_wake_up()'s part */
		if (p->state & TASK_ASLEEP) {
			p->state = TASK_RUNNING;
			if (p->rq)
				activate_task(p->rq);
		}
		switched_in(p);
	}
	__set_current_state(TASK_RUNNING);
}

int sched_task_start(int cpu)
{
	struct task_struct *p = current;

	if (!sim_task_current() || sim_task_cpu(sim_task_current()) != cpu)
		return -EINVAL;
	kscale_set_cpu(cpu);
	sched_task_init(cpu_rq(cpu));
	activate_task(p->rq);
	return 0;
}

/* Off its rq for good: a spinner may still read on_cpu. */
static void task_left(struct task_struct *p)
{
	sched_write(&p->on_cpu, 1);
}

#include "../kernel/sched_task.h"

int sched_migrate_task(int cpu)
{
	struct task_struct *p = current;

	schedule_debug();
	if (!sim_task_current()) {
		kscale_set_cpu(cpu);	/* the host: set-up's first touch */
		return 0;
	}
	if (!p->rq) {
		sim_migrate(cpu);
		kscale_set_cpu(cpu);
		return 0;
	}
	switched_out(p);
	deactivate_task(p->rq);
	p->rq = cpu_rq(cpu);
	p->cpu = cpu;
	activate_task(p->rq);
	sim_migrate(cpu);
	kscale_set_cpu(cpu);
	switched_in(p);
	return 0;
}
