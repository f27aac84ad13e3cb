/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct rw_semaphore of v4.6 (include/linux/rwsem.h, the 64-bit count of
 * include/asm-generic/rwsem.h, kernel/locking/rwsem.h and rwsem.c), with
 * the seed's reader-owned state (4.8) switched on per run.
 */
#ifndef KSCALE_RWSEM_H
#define KSCALE_RWSEM_H

#include <stdbool.h>
#include <stdint.h>

#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/list.h"
#include "../../lib/kernel/sched.h"
#include "../../lib/kernel/spinlock.h"
#include "osq_lock.h"

#define RWSEM_UNLOCKED_VALUE		0x00000000L
#define RWSEM_ACTIVE_BIAS		0x00000001L
#define RWSEM_ACTIVE_MASK		0xffffffffL
#define RWSEM_WAITING_BIAS		(-RWSEM_ACTIVE_MASK - 1)
#define RWSEM_ACTIVE_READ_BIAS		RWSEM_ACTIVE_BIAS
#define RWSEM_ACTIVE_WRITE_BIAS		(RWSEM_WAITING_BIAS + RWSEM_ACTIVE_BIAS)

/* The seed: the owner field says when readers own the lock. */
#define RWSEM_READER_OWNED	((struct task_struct *)1UL)

struct rw_semaphore {
	long count;
	struct list_head wait_list;
	spinlock_t wait_lock;		/* raw_spinlock_t */
	struct optimistic_spin_queue osq; /* spinner MCS lock */
	/*
	 * Write owner. Used as a speculative check to see
	 * if the owner is running on the cpu.
	 */
	struct task_struct *owner;
};

/*
 * Where the slow paths spend a task's cycles, as perf's cpu-clock samples
 * would charge them: on-CPU time only (a task asleep in schedule() is
 * not sampled), `children` with callees and `self` without.  The callees
 * that are functions of their own in v4.6: rwsem_spin_on_owner()
 * (noinline), osq_lock(), the wait_lock's _raw_spin_lock() and the
 * wake-ups (wake_up_process()).
 */
struct rwsem_profile {
	uint64_t write_failed;		/* rwsem_down_write_failed(), children */
	uint64_t write_failed_callees;	/* of which in its callees */
	uint64_t read_failed;		/* rwsem_down_read_failed(), children */
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
/* false: v4.6; true: the seed's patch (4.8). Set before any rwsem use. */
extern bool rwsem_reader_owned_patch;

void init_rwsem(struct rw_semaphore *sem);
void down_read(struct rw_semaphore *sem);
int down_read_trylock(struct rw_semaphore *sem);
void up_read(struct rw_semaphore *sem);
void down_write(struct rw_semaphore *sem);
void up_write(struct rw_semaphore *sem);
void downgrade_write(struct rw_semaphore *sem);

#endif
