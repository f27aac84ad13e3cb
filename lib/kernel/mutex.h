/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct mutex as in 2.6.32 kernel/mutex.c: the x86 fast paths (one
 * atomic decrement, one atomic increment), optimistic spinning while the
 * owner runs (adaptive mutexes, 2.6.30), then a FIFO wait list under
 * wait_lock with waiters that sleep, preemption disabled as there.
 */
#ifndef KSCALE_KERNEL_MUTEX_H
#define KSCALE_KERNEL_MUTEX_H

#include "atomic.h"
#include "list.h"
#include "lockstat.h"
#include "sched.h"
#include "spinlock.h"

struct mutex {
	/* 1: unlocked, 0: locked, negative: locked, possible waiters */
	atomic_t count;
	spinlock_t wait_lock;
	struct list_head wait_list;
	struct task_struct *owner;
};

void mutex_init(struct mutex *lock);
void __mutex_lock_slowpath(struct mutex *lock);
void __mutex_unlock_slowpath(struct mutex *lock);

static inline void mutex_set_owner(struct mutex *lock)
{
	WRITE_ONCE(lock->owner, current);
}

static inline void mutex_clear_owner(struct mutex *lock)
{
	WRITE_ONCE(lock->owner, NULL);
}

/* The x86 fast path; the slow path's cycles go to *wait, if given. */
static inline void __mutex_fastpath_lock(struct mutex *lock, uint64_t *wait)
{
	uint64_t t0 = 0;

	if (likely(atomic_add_return(-1, &lock->count) >= 0))
		return;
	if (wait)
		t0 = rdtsc_ordered();
	__mutex_lock_slowpath(lock);
	if (wait)
		*wait += rdtsc_ordered() - t0;
}

/* mutex_lock() that adds the cycles of its slow path to *wait. */
static inline void mutex_lock_account(struct mutex *lock, uint64_t *wait)
{
	lockstat_acquire(lock, false, __mutex_fastpath_lock(lock, wait));
	mutex_set_owner(lock);
}

static inline void mutex_lock(struct mutex *lock)
{
	mutex_lock_account(lock, NULL);
}

static inline void mutex_unlock(struct mutex *lock)
{
	lockstat_release(lock);
	mutex_clear_owner(lock);
	if (unlikely(atomic_add_return(1, &lock->count) <= 0))
		__mutex_unlock_slowpath(lock);
}

#endif
