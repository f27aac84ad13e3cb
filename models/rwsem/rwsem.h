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
#include "rwsem_ops.h"
#include "rwsem_profile.h"

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

/* false: v4.6; true: the seed's patch (4.8). Set before any rwsem use. */
extern bool rwsem_reader_owned_patch;

void init_rwsem(struct rw_semaphore *sem);
void down_read(struct rw_semaphore *sem);
int down_read_trylock(struct rw_semaphore *sem);
void up_read(struct rw_semaphore *sem);
void down_write(struct rw_semaphore *sem);
int down_write_trylock(struct rw_semaphore *sem);
void up_write(struct rw_semaphore *sem);
void downgrade_write(struct rw_semaphore *sem);

#endif
