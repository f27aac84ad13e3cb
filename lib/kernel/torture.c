// SPDX-License-Identifier: GPL-2.0
/*
 * Delays inside critical sections, as locktorture's
 * torture_*_write_delay(): mostly none, a short one now and then, a long
 * one rarely, so that waiters pile up behind a holder.  Sleeping holds
 * model the kernel's might_sleep() sections: a mutex or rwsem holder
 * preempted, sleeping on I/O or moved to another CPU.
 */
#include "delay.h"
#include "lockstat.h"
#include "sched.h"
#include "torture.h"

/* One in ..., per release (locktorture: one in nrealwriters * 2000 long). */
#define SHORT_DELAY_ONE_IN	16
#define LONG_DELAY_ONE_IN	2000
#define SHORT_SPIN_NS		2000	/* locktorture's shortdelay_us = 2 */
#define LONG_SPIN_NS		50000	/* in atomic context: spins only */
#define LONG_SLEEP_NS		2000000	/* a sleeping section: 2 ms asleep */
/* An interrupt just after a spinlock's release, one in ... */
#define IRQ_ONE_IN		64
#define IRQ_SPIN_NS		2000
/* In a sleeper's window (lockstat_sleep_window()), one in ... */
#define SLEEP_WINDOW_ONE_IN	8
#define SLEEP_WINDOW_SPIN_NS	5000

__thread struct torture_lock_stats torture_lock_stats;
__thread uint64_t torture_rand = 1;
const int *torture_cpus;
int torture_nr_cpus;

bool torture_migrate(void)
{
	return torture_nr_cpus > 1 &&
	       !sched_migrate_task(torture_cpus[torture_random() %
						torture_nr_cpus]);
}

void torture_lock_acquired(uint64_t start)
{
	struct torture_lock_stats *s = &torture_lock_stats;

	s->acquisitions++;
	if (start) {
		uint64_t wait = rdtsc_ordered() - start;

		if (wait > s->max_wait)
			s->max_wait = wait;
	}
}

/* In a section that may sleep: one of the kernel's ways to lose the CPU. */
static void torture_sleeping_hold(struct torture_lock_stats *s)
{
	switch (torture_random() % 4) {
	case 0:
		s->sleeps++;
		schedule_timeout_ns(torture_random() % LONG_SLEEP_NS);
		break;
	case 1:
		if (current->rq && torture_migrate())
			s->migrations++;
		break;
	default:
		s->preempts++;
		yield();
		break;
	}
}

void torture_lock_release(void)
{
	struct torture_lock_stats *s = &torture_lock_stats;
	uint32_t r = torture_random();

	if (r % LONG_DELAY_ONE_IN == 0) {
		if (preempt_count() || !current->rq) {
			s->spins++;
			ndelay(LONG_SPIN_NS);
		} else {
			torture_sleeping_hold(s);
		}
	} else if (r % SHORT_DELAY_ONE_IN == 0) {
		s->spins++;
		ndelay(torture_random() % SHORT_SPIN_NS);
	}
}

/*
 * Just after a spinlock's release: an interrupt, as one can arrive there
 * in the kernel.  It spins only: the releaser may still have preemption
 * disabled.
 */
void torture_lock_released(void)
{
	if (torture_random() % IRQ_ONE_IN == 0)
		ndelay(torture_random() % IRQ_SPIN_NS);
}

/*
 * A sleeper's window: it spins only, as it may still hold a spinlock
 * (a state set under wait_lock); long enough for a waker on another CPU
 * to drop its lock, wake us and go.  A sleep costs microseconds anyway.
 */
void torture_sleep_window(void)
{
	if (torture_random() % SLEEP_WINDOW_ONE_IN == 0)
		ndelay(torture_random() % SLEEP_WINDOW_SPIN_NS);
}
