/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the rwsem slow paths spend a task's cycles, shared by every rwsem
 * version of the model (rwsem_xadd.c, rwsem_upstream.c), so one bench
 * reads the same counters whichever version ran.
 */
#ifndef KSCALE_RWSEM_PROFILE_H
#define KSCALE_RWSEM_PROFILE_H

#include <stdint.h>

#include "../../lib/kernel/compiler.h"
#include "../../lib/kernel/sched.h"
#include "../../lib/kernel/spinlock.h"
#include "../../lib/kernel/tsc.h"

/*
 * As perf's cpu-clock samples would charge them: on-CPU time only (a
 * task asleep in schedule() is not sampled), `children` with callees and
 * `self` without.  The callees that are functions of their own, each
 * charged to itself: rwsem_spin_on_owner() (noinline), osq_lock(), the
 * wait_lock's _raw_spin_lock() and the wake-ups (wake_up_process());
 * in today's rwsem also rwsem_optimistic_spin() (no longer inlined into
 * the write slow path), whose own callees it then holds.  The write slow
 * path is rwsem_down_write_failed() in v4.6, rwsem_down_write_slowpath()
 * today; the read one rwsem_down_read_failed(), rwsem_down_read_slowpath().
 */
struct rwsem_profile {
	uint64_t write_failed;		/* write slow path, children */
	uint64_t write_failed_callees;	/* of which in its callees */
	uint64_t read_failed;		/* read slow path, children */
	uint64_t read_failed_callees;
	uint64_t spin_on_owner;		/* rwsem_spin_on_owner() */
	uint64_t osq;			/* osq_lock() */
	uint64_t asleep;		/* off CPU in schedule(), all slow paths */
	uint64_t callees;		/* in the callees above, all slow paths */
	unsigned long spin_acquired;	/* optimistic spinning took the lock */
	unsigned long spin_abandoned;	/* spinning gave up: queued instead */
	unsigned long sleeps;		/* schedule() calls, readers and writers */
} ____cacheline_aligned;

extern __thread struct rwsem_profile rwsem_profile;

/* schedule(), its time off CPU left out of the profile. */
static inline void rwsem_schedule(void)
{
	uint64_t t0 = rdtsc_ordered();

	schedule();
	rwsem_profile.asleep += rdtsc_ordered() - t0;
	rwsem_profile.sleeps++;
}

/* The callees with a symbol of their own, each charged to itself. */
static inline void rwsem_wake_up_process(struct task_struct *tsk)
{
	uint64_t t0 = rdtsc_ordered();

	wake_up_process(tsk);
	rwsem_profile.callees += rdtsc_ordered() - t0;
}

/* _raw_spin_lock() (and _irq, _irqsave) of wait_lock */
static inline void rwsem_spin_lock(spinlock_t *lock)
{
	uint64_t t0 = rdtsc_ordered();

	spin_lock(lock);
	rwsem_profile.callees += rdtsc_ordered() - t0;
}

/* A slow path's on-CPU cycles since t0, and those of its callees. */
struct rwsem_slowpath {
	uint64_t t0, asleep, callees;
};

static inline void rwsem_slowpath_enter(struct rwsem_slowpath *sp)
{
	sp->t0 = rdtsc_ordered();
	sp->asleep = rwsem_profile.asleep;
	sp->callees = rwsem_profile.callees;
}

static inline void rwsem_slowpath_exit(struct rwsem_slowpath *sp,
				       uint64_t *children, uint64_t *callees)
{
	*children += rdtsc_ordered() - sp->t0 -
		     (rwsem_profile.asleep - sp->asleep);
	*callees += rwsem_profile.callees - sp->callees;
}

#endif
