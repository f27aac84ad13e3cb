/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Where the rwsem slow paths spend a task's cycles, shared by every rwsem
 * version of the model (rwsem_xadd.c, rwsem_upstream.c), so one bench
 * reads the same counters whichever version ran.
 */
#ifndef KSCALE_RWSEM_PROFILE_H
#define KSCALE_RWSEM_PROFILE_H

#include <stdbool.h>
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
/*
 * Why a task slept: each schedule() of a slow path that took the task
 * off its CPU counts once, by what held the lock when it went to sleep,
 * read from the count (and the owner) just before schedule().  A writer
 * in its wait loop (v4.6 rwsem_down_write_wait(), today's
 * rwsem_down_write_slowpath()) sleeps behind:
 */
enum rwsem_sleep_reason {
	/* readers __rwsem_do_wake()/rwsem_mark_wake() granted the lock
	 * while they waited, and not all of them out of their wait loop */
	RWSEM_SLEEP_WRITE_GRANTED_READER,
	RWSEM_SLEEP_WRITE_READER,	/* readers, every one running */
	RWSEM_SLEEP_WRITE_WRITER,	/* a writer */
	RWSEM_SLEEP_WRITE_HANDOFF,	/* no one: RWSEM_FLAG_HANDOFF */
	RWSEM_SLEEP_WRITE_FREE,		/* no one: released since the trylock */
	/* a reader in rwsem_down_read_failed()/_slowpath()'s wait loop: */
	RWSEM_SLEEP_READ_WRITER,	/* a writer holds it */
	RWSEM_SLEEP_READ_HANDOFF,	/* RWSEM_FLAG_HANDOFF, no writer */
	RWSEM_SLEEP_READ_WAITER_READERS, /* readers hold it, waiters ahead */
	RWSEM_SLEEP_READ_WAITER_FREE,	/* free, a writer queued ahead */
	RWSEM_SLEEP_NR
};

/*
 * Why a writer's slow path queued instead of taking the lock spinning:
 * rwsem_can_spin_on_owner() said no (nospin_), or rwsem_optimistic_spin()
 * stopped (spin_), and at which test.
 */
enum rwsem_queue_reason {
	RWSEM_QUEUE_NOSPIN_NEED_RESCHED,	/* need_resched() */
	RWSEM_QUEUE_NOSPIN_OWNER_NULL_ACTIVE,	/* v4.6: no owner, count active */
	RWSEM_QUEUE_NOSPIN_READER_OWNED,	/* the seed: RWSEM_READER_OWNED */
	RWSEM_QUEUE_NOSPIN_NONSPINNABLE,	/* today: RWSEM_NONSPINNABLE */
	RWSEM_QUEUE_NOSPIN_OWNER_OFF_CPU,	/* a writer owner not running */
	RWSEM_QUEUE_SPIN_OSQ,			/* osq_lock() gave up */
	RWSEM_QUEUE_SPIN_NEED_RESCHED,		/* need_resched() */
	RWSEM_QUEUE_SPIN_OWNER_OFF_CPU,		/* the writer owner left its CPU */
	/* v4.6 rwsem_spin_on_owner(): the owner left, the count active */
	RWSEM_QUEUE_SPIN_OWNER_NULL_ACTIVE,
	RWSEM_QUEUE_SPIN_READER_OWNED,		/* the seed: the reader mark */
	RWSEM_QUEUE_SPIN_NONSPINNABLE,		/* today: RWSEM_NONSPINNABLE */
	RWSEM_QUEUE_SPIN_READER_TIMEOUT,	/* today: rwsem_rspin_threshold() */
	RWSEM_QUEUE_NR
};

/* The counters' names: sleeps_<name>_per_io, queued_<name>_per_io. */
extern const char *const rwsem_sleep_name[RWSEM_SLEEP_NR];
extern const char *const rwsem_queue_name[RWSEM_QUEUE_NR];

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
	unsigned long slept[RWSEM_SLEEP_NR];	/* schedule()s that slept */
	unsigned long queued[RWSEM_QUEUE_NR];	/* spin_abandoned, by why */
	enum rwsem_sleep_reason sleep_why;	/* of the next schedule() */
	enum rwsem_queue_reason queue_why;	/* of the last spin's end */
} ____cacheline_aligned;

extern __thread struct rwsem_profile rwsem_profile;

/*
 * Readers granted the lock in their sleep that have not yet left their
 * wait loop, per lock (struct rw_semaphore has no room): a slot by the
 * lock's address, claimed by init_rwsem(); a lock whose slot another
 * took since counts none (its writers' sleeps then read as behind
 * running readers).  Only the slow paths touch it: a grant adds, the
 * granted reader takes one away as it leaves the wait loop.
 */
struct rwsem_grants {
	const void *sem;
	long nr;
} ____cacheline_aligned;

#define RWSEM_GRANT_SLOTS	16

extern struct rwsem_grants rwsem_grants[RWSEM_GRANT_SLOTS];

static inline struct rwsem_grants *rwsem_grants_slot(const void *sem)
{
	return &rwsem_grants[(uintptr_t)sem / 8 % RWSEM_GRANT_SLOTS];
}

static inline void rwsem_grants_init(const void *sem)
{
	struct rwsem_grants *g = rwsem_grants_slot(sem);

	__atomic_store_n(&g->sem, sem, __ATOMIC_RELAXED);
	__atomic_store_n(&g->nr, 0, __ATOMIC_RELAXED);
}

static inline void rwsem_grants_add(const void *sem, long nr)
{
	struct rwsem_grants *g = rwsem_grants_slot(sem);

	if (__atomic_load_n(&g->sem, __ATOMIC_RELAXED) == sem)
		__atomic_fetch_add(&g->nr, nr, __ATOMIC_RELAXED);
}

/* A granted reader left its wait loop: it runs. */
static inline void rwsem_grant_taken(const void *sem)
{
	rwsem_grants_add(sem, -1);
}

static inline bool rwsem_granted_waiting(const void *sem)
{
	struct rwsem_grants *g = rwsem_grants_slot(sem);

	return __atomic_load_n(&g->sem, __ATOMIC_RELAXED) == sem &&
	       __atomic_load_n(&g->nr, __ATOMIC_RELAXED) > 0;
}

/* Why the next schedule() sleeps, if it does. */
static inline void rwsem_sleep_why(enum rwsem_sleep_reason why)
{
	rwsem_profile.sleep_why = why;
}

/* Where the spin ended, if the writer queues. */
static inline void rwsem_queue_why(enum rwsem_queue_reason why)
{
	rwsem_profile.queue_why = why;
}

/* The spin did not take the lock: the writer queues. */
static inline void rwsem_spin_abandoned(void)
{
	rwsem_profile.spin_abandoned++;
	rwsem_profile.queued[rwsem_profile.queue_why]++;
}

/* schedule(), its time off CPU left out of the profile. */
static inline void rwsem_schedule(void)
{
	unsigned long nvcsw = current->nvcsw;
	uint64_t t0 = rdtsc_ordered();

	schedule();
	rwsem_profile.asleep += rdtsc_ordered() - t0;
	rwsem_profile.sleeps++;
	if (current->nvcsw != nvcsw)
		rwsem_profile.slept[rwsem_profile.sleep_why]++;
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
