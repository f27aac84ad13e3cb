/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The optimistic spin queue of v4.6 kernel/locking/osq_lock.c: an MCS
 * queue of spinners that can unqueue when they must stop (need_resched).
 *
 * The kernel keeps one node per CPU, safe because a spinner has
 * preemption disabled.  Here each task has its own node and the tail
 * encodes its number: the same queue, since a spinning task is never
 * switched out (lib/kernel/sched.h).
 */
#ifndef KSCALE_OSQ_LOCK_H
#define KSCALE_OSQ_LOCK_H

#include <stdbool.h>

#include "../../lib/kernel/atomic.h"

#define OSQ_UNLOCKED_VAL	(0)

struct optimistic_spin_node {
	struct optimistic_spin_node *next, *prev;
	int locked;			/* 1 if lock acquired */
	int cpu;			/* encoded thread number */
} ____cacheline_aligned;

struct optimistic_spin_queue {
	/*
	 * Stores an encoded value of the CPU # of the tail node in the queue.
	 * If the queue is empty, then it's set to OSQ_UNLOCKED_VAL.
	 */
	atomic_t tail;
};

/* Each thread that spins takes a node and a number (from 0). */
void osq_thread_init(struct optimistic_spin_node *node, int nr);

static inline void osq_lock_init(struct optimistic_spin_queue *lock)
{
	atomic_set(&lock->tail, OSQ_UNLOCKED_VAL);
}

static inline bool osq_is_locked(struct optimistic_spin_queue *lock)
{
	return atomic_read(&lock->tail) != OSQ_UNLOCKED_VAL;
}

bool osq_lock(struct optimistic_spin_queue *lock);
void osq_unlock(struct optimistic_spin_queue *lock);

#endif
