// SPDX-License-Identifier: GPL-2.0
/* The model's scheduler (see sched.h). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../sys/affinity.h"
#include "../sys/futex.h"
#include "percpu.h"
#include "sched.h"

bool sched_fifo;

static struct rq __percpu *runqueues;

struct rq *cpu_rq(int cpu)
{
	return per_cpu_ptr(runqueues, cpu);
}

/* preempt_disable_cpu() without SCHED_FIFO: one owner per CPU. */
static int __percpu *cpu_owner;
static __thread int cpu_own_depth;
static __thread int *cpu_owned;

void __cpu_own(void)
{
	int *owner;

	if (cpu_own_depth++)
		return;
	owner = per_cpu_ptr(cpu_owner, smp_processor_id());
	while (__atomic_exchange_n(owner, 1, __ATOMIC_ACQUIRE))
		sched_yield();
	cpu_owned = owner;
}

void __cpu_unown(void)
{
	if (--cpu_own_depth)
		return;
	__atomic_store_n(cpu_owned, 0, __ATOMIC_RELEASE);
}

static uint64_t clock_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static void ns_to_timespec(uint64_t ns, struct timespec *t)
{
	t->tv_sec = ns / 1000000000u;
	t->tv_nsec = ns % 1000000000u;
}

static int set_prio(int policy, int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	return pthread_setschedparam(pthread_self(), policy, &sp);
}

#ifndef KSCALE_SANITIZE
/* Can this process run SCHED_FIFO threads?  Probed on the caller. */
static bool probe_fifo(void)
{
	struct sched_param sp;
	int policy;

	if (pthread_getschedparam(pthread_self(), &policy, &sp) ||
	    set_prio(SCHED_FIFO, SCHED_PRIO_TASK))
		return false;
	return !pthread_setschedparam(pthread_self(), policy, &sp);
}
#endif

void sched_init(void)
{
	int cpu;

	/* the tick threads keep theirs: once per process */
	if (runqueues)
		return;
	runqueues = alloc_percpu(struct rq);
	cpu_owner = alloc_percpu(int);
	for_each_possible_cpu(cpu)
		per_cpu_ptr(runqueues, cpu)->cpu = cpu;
#ifdef KSCALE_SANITIZE
	/*
	 * ThreadSanitizer's runtime sleeps on its own mutexes inside every
	 * atomic: a ticket waiter asleep there would stall FIFO spinners.
	 */
	sched_fifo = false;
#else
	sched_fifo = probe_fifo();
#endif
	sched_set_slice_ns(0, 1);
}

/* A tick asleep for the old slice wakes to the new one. */
void sched_set_slice_ns(uint64_t ns, int nr_cpus)
{
	int cpu;

	WRITE_ONCE(sched_slice_ns, ns ? ns : sched_default_slice_ns(nr_cpus));
	if (runqueues)
		for_each_possible_cpu(cpu)
			futex(&cpu_rq(cpu)->nr_running, FUTEX_WAKE, 1, NULL);
}

/*
 * scheduler_tick() as an hrtick: at the end of the running task's slice,
 * if others wait on this CPU, it must reschedule.  While at most one task
 * is runnable here it sleeps sched_lone_ns at a time, or until a second
 * task arrives or the slice changes, and a task that has run alone that
 * long gets need_resched too (sched.h; the departure found with 5.3's
 * reader spinning on a free rwsem whose handoff writer sleeps, nothing
 * else runnable on the reader's CPU, rwsem_v5_3.c).
 */
static void *sched_tick(void *arg)
{
	struct rq *rq = arg;
	uint64_t start, end, slice;
	struct timespec t;
	uint32_t nr;

	for (;;) {
		nr = __atomic_load_n(&rq->nr_running, __ATOMIC_ACQUIRE);
		start = __atomic_load_n(&rq->slice_start, __ATOMIC_ACQUIRE);
		slice = nr > 1 ? READ_ONCE(sched_slice_ns) :
				 READ_ONCE(sched_lone_ns);
		if (!slice) {
			futex(&rq->nr_running, FUTEX_WAIT_BITSET, nr, NULL);
			continue;
		}
		end = start + slice;
		if (!nr || clock_ns() >= end) {
			if (nr && __atomic_load_n(&rq->slice_start,
						  __ATOMIC_ACQUIRE) == start)
				WRITE_ONCE(rq->need_resched, 1);
			end = clock_ns() + slice;
		}
		ns_to_timespec(end, &t);
		futex(&rq->nr_running, FUTEX_WAIT_BITSET, nr, &t);
	}
	return NULL;
}

/* The tick's thread runs on the rq's CPU above its tasks, from first use. */
static int sched_tick_start(struct rq *rq)
{
	struct sched_param sp = { .sched_priority = SCHED_PRIO_IRQ };
	size_t size = CPU_ALLOC_SIZE(rq->cpu + 1);
	cpu_set_t *set;
	pthread_attr_t attr;
	pthread_t tick;
	int ret;

	if (__atomic_exchange_n(&rq->ticking, 1, __ATOMIC_ACQ_REL))
		return 0;
	set = CPU_ALLOC(rq->cpu + 1);
	if (!set)
		return -ENOMEM;
	CPU_ZERO_S(size, set);
	CPU_SET_S(rq->cpu, size, set);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, size, set);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	if (sched_fifo) {
		pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED);
		pthread_attr_setschedpolicy(&attr, SCHED_FIFO);
		pthread_attr_setschedparam(&attr, &sp);
	}
	ret = -pthread_create(&tick, &attr, sched_tick, rq);
	pthread_attr_destroy(&attr);
	CPU_FREE(set);
	if (ret)
		WRITE_ONCE(rq->ticking, 0);
	return ret;
}

/*
 * p got the CPU while the task switched in before it has not left it
 * (on_cpu): the host put that one to sleep, where the kernel would not
 * have switched.  Inside a preemption-disabled section, page migration
 * does it to any page (kcompactd's proactive compaction moved the lock's
 * page under both CPUs' spinners in a CI run), and so does a model's
 * malloc, page fault or syscall there: under SCHED_FIFO p would run on,
 * and spin for ever on what prev holds if it came to that.  Outside one,
 * a malloc, mmap or page fault sleeps on a host lock: prev comes back
 * from it on a CPU the model gave p, without a switch, and both run there
 * as one CPU's tasks never do; torture at 128 tasks on 2 CPUs hung when
 * such a prev spun on a lock that p, asleep in the host inside its
 * section (a page fault behind prev's mmap), held.  So p gives the CPU
 * back until prev switches out, as if the host had never taken it; a
 * sleep inside a section, a section broken, is counted.  A spinner that
 * gave the host CPU away in cpu_relax() (compiler.h) broke nothing: not
 * counted (at 64 tasks a CPU here, real_lookup's rows counted 476-865).
 */
static void give_back_to_host_sleeper(struct rq *rq, struct task_struct *p)
{
	struct task_struct *prev;
	bool counted = false;

	if (!sched_fifo)
		return;
	while ((prev = READ_ONCE(rq->curr)) && prev != p &&
	       __atomic_load_n(&prev->on_cpu, __ATOMIC_ACQUIRE)) {
		if (!counted && READ_ONCE(*prev->preempt_count) &&
		    !READ_ONCE(*prev->relax_yielding)) {
			__atomic_fetch_add(&rq->host_sleeps, 1,
					   __ATOMIC_RELAXED);
			counted = true;
		}
		sched_yield();
	}
}

unsigned long sched_host_sleeps(void)
{
	unsigned long n = 0;
	int cpu;

	if (!runqueues)
		return 0;
	for_each_possible_cpu(cpu)
		n += __atomic_load_n(&cpu_rq(cpu)->host_sleeps,
				     __ATOMIC_RELAXED);
	return n;
}

static void switched_in(struct task_struct *p)
{
	if (p->rq) {
		give_back_to_host_sleeper(p->rq, p);
		WRITE_ONCE(p->rq->curr, p);
		__atomic_store_n(&p->rq->slice_start, clock_ns(),
				 __ATOMIC_RELEASE);
	}
	__atomic_store_n(&p->on_cpu, 1, __ATOMIC_SEQ_CST);
}

/* Taken off the CPU: need_resched is for whoever runs next. */
static void switched_out(struct task_struct *p)
{
	__atomic_store_n(&p->on_cpu, 0, __ATOMIC_SEQ_CST);
	if (p->rq) {
		if (READ_ONCE(p->rq->curr) == p)
			WRITE_ONCE(p->rq->curr, NULL);
		WRITE_ONCE(p->rq->need_resched, 0);
		__atomic_fetch_add(&p->rq->nr_switches, 1, __ATOMIC_RELAXED);
	}
}

/* enqueue_task() + check_preempt_curr(): a task became runnable on rq. */
static void activate_task(struct rq *rq)
{
	uint32_t nr = __atomic_fetch_add(&rq->nr_running, 1, __ATOMIC_SEQ_CST);

	if (nr > 0)
		WRITE_ONCE(rq->need_resched, 1);
	if (nr == 1)
		futex(&rq->nr_running, FUTEX_WAKE, 1, NULL);
}

static void deactivate_task(struct rq *rq)
{
	__atomic_fetch_sub(&rq->nr_running, 1, __ATOMIC_SEQ_CST);
}

/* A preemption: back of the CPU's queue, still runnable. */
void preempt_switch(struct task_struct *p)
{
	schedule_debug();
	p->nivcsw++;
	switched_out(p);
	sched_yield();
	switched_in(p);
}

/*
 * state -> state|TASK_ASLEEP: off the run queue, unless a wake-up came
 * first (then it stays TASK_RUNNING and we do not sleep).  Off the CPU
 * (on_cpu 0) before off the rq: a timer's wake-up that finds the rq empty
 * runs at once, ahead of this thread's last steps into its futex, and a
 * spinner must not wait for an owner that is no longer running.
 */
static bool try_to_sleep(struct task_struct *p, bool poll)
{
	uint32_t state = __atomic_load_n(&p->state, __ATOMIC_SEQ_CST);
	uint32_t asleep = TASK_ASLEEP | (poll ? TASK_POLLING : 0);

	lockstat_sleep_window();
	if (state == TASK_RUNNING ||
	    !__atomic_compare_exchange_n(&p->state, &state, state | asleep,
					 false, __ATOMIC_SEQ_CST,
					 __ATOMIC_SEQ_CST))
		return false;
	p->nvcsw++;
	switched_out(p);
	if (p->rq)
		deactivate_task(p->rq);
	return true;
}

/* Sleeps until TASK_RUNNING; false if deadline passed first. */
static bool sleep_until_woken(struct task_struct *p,
			      const struct timespec *deadline)
{
	uint32_t state;

	while ((state = __atomic_load_n(&p->state, __ATOMIC_ACQUIRE)) !=
	       TASK_RUNNING)
		if (futex(&p->state, FUTEX_WAIT_BITSET, state, deadline) &&
		    errno == ETIMEDOUT)
			return false;
	return true;
}

/* A poller's wait: the CPU to the model tasks runnable there but self. */
static void poll_relax(struct task_struct *p, uint32_t self)
{
	if (p->rq && __atomic_load_n(&p->rq->nr_running, __ATOMIC_RELAXED) >
		     self)
		sched_yield();
	else
		cpu_relax();
}

/*
 * sleep_until_woken() by polling (sched_wake_poll): off its rq meanwhile,
 * as asleep; then queued by its waker, it runs sched_wake_poll_ns after.
 */
static void poll_until_woken(struct task_struct *p)
{
	uint64_t until;

	while (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) != TASK_RUNNING)
		poll_relax(p, 0);
	if (!READ_ONCE(sched_wake_poll_ns))
		return;
	until = READ_ONCE(p->woken_ns) + READ_ONCE(sched_wake_poll_ns);
	while (clock_ns() < until)
		poll_relax(p, 1);
}

/*
 * try_to_wake_up(): 1 if p was not running.  A sleeper is queued on its
 * rq before it can see TASK_RUNNING (TASK_WAKING meanwhile), so it cannot
 * run, leave the window and drop its rq while the waker still uses them.
 * The smp_mb() is try_to_wake_up()'s smp_mb__after_spinlock(): the
 * caller's CONDITION=1 before the load of p->state, pairing with
 * set_current_state()'s; without it a release store and this load pass
 * each other on x86, and a sleeper that missed CONDITION is seen running.
 */
int wake_up_process(struct task_struct *p)
{
	uint32_t old;
	struct rq *rq;

	smp_mb();
	old = __atomic_load_n(&p->state, __ATOMIC_SEQ_CST);
	do {
		if (old == TASK_RUNNING || old == TASK_WAKING)
			return 0;
	} while (!__atomic_compare_exchange_n(&p->state, &old,
					      old & TASK_ASLEEP ? TASK_WAKING :
								  TASK_RUNNING,
					      false, __ATOMIC_SEQ_CST,
					      __ATOMIC_SEQ_CST));
	if (!(old & TASK_ASLEEP))
		return 1;
	rq = READ_ONCE(p->rq);
	if (rq)
		activate_task(rq);
	if ((old & TASK_POLLING) && READ_ONCE(sched_wake_poll_ns))
		WRITE_ONCE(p->woken_ns, clock_ns());
	__atomic_store_n(&p->state, TASK_RUNNING, __ATOMIC_SEQ_CST);
	if (!(old & TASK_POLLING))
		futex(&p->state, FUTEX_WAKE, 1, NULL);
	return 1;
}

void schedule(void)
{
	struct task_struct *p = current;

	bool poll = READ_ONCE(sched_wake_poll);

	schedule_debug();
	if (!try_to_sleep(p, poll)) {
		cond_resched();
		return;
	}
	if (poll)
		poll_until_woken(p);
	else
		sleep_until_woken(p, NULL);
	switched_in(p);
}

/*
 * The timer's interrupt wakes the task: it sleeps raised above the other
 * tasks, so on expiry (or a wake-up) it takes the CPU at once, as the
 * hrtimer callback would, and enqueues itself (try_to_wake_up()).  Back at
 * the tasks' priority the host puts it at the head of their queue, ahead of
 * whatever it interrupted.  If another task of the model is runnable here,
 * that one has the CPU: the wake-up set its need_resched and we queue
 * behind it (sched_yield()) until it reaches a preemption point.  If none
 * is, the CPU was idle in the model, and the kernel runs the woken task
 * straight away: yielding then would hand the CPU to whatever other host
 * thread shares it at the tasks' priority (another process's model task
 * alone on its CPU never yields: its tick never fires), for as long as
 * that thread likes, a whole measurement window if need be.
 */
void schedule_timeout_ns(uint64_t ns)
{
	struct task_struct *p = current;
	bool irq = p->rq && sched_fifo;
	struct timespec t;

	schedule_debug();
	ns_to_timespec(clock_ns() + ns, &t);
	set_current_state(TASK_UNINTERRUPTIBLE);
	if (irq)
		set_prio(SCHED_FIFO, SCHED_PRIO_IRQ);
	/*
	 * Expired: the timer wakes us, unless another's wake-up is under way
	 * (TASK_WAKING); then we are runnable once it has queued us.
	 */
	if (try_to_sleep(p, false) && !sleep_until_woken(p, &t) &&
	    !wake_up_process(p))
		sleep_until_woken(p, NULL);
	__set_current_state(TASK_RUNNING);
	if (irq) {
		set_prio(SCHED_FIFO, SCHED_PRIO_TASK);
		/* we are counted: the waker queued us before TASK_RUNNING */
		if (__atomic_load_n(&p->rq->nr_running, __ATOMIC_ACQUIRE) > 1)
			sched_yield();
	}
	switched_in(p);
}

int sched_task_start(int cpu)
{
	struct task_struct *p = current;
	int ret = affinity_pin(cpu);

	if (!ret)
		ret = sched_tick_start(cpu_rq(cpu));
	if (ret)
		return ret;
	kscale_set_cpu(cpu);
	sched_task_init(cpu_rq(cpu));
	activate_task(p->rq);
	if (sched_fifo)
		set_prio(SCHED_FIFO, SCHED_PRIO_TASK);
	return 0;
}

/* Off its rq for good: back to the host's class. */
static void task_left(struct task_struct *p)
{
	/* an optimistic spinner may be reading it, as in switched_out() */
	WRITE_ONCE(p->on_cpu, 1);
	if (sched_fifo)
		set_prio(SCHED_OTHER, 0);
}

#include "sched_task.h"

/* The task is queued on the new CPU until the one running there yields. */
int sched_migrate_task(int cpu)
{
	struct task_struct *p = current;
	int ret;

	schedule_debug();
	if (!p->rq) {
		ret = affinity_pin(cpu);
		kscale_set_cpu(cpu);
		return ret;
	}
	switched_out(p);
	deactivate_task(p->rq);
	p->rq = cpu_rq(cpu);
	p->cpu = cpu;
	activate_task(p->rq);
	ret = affinity_pin(cpu) ?: sched_tick_start(p->rq);
	kscale_set_cpu(cpu);
	switched_in(p);
	return ret;
}
