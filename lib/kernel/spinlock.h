/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spinlock_t as the x86 ticket spinlock of 2.6.25 to 4.1
 * (arch/x86/include/asm/spinlock.h, __ticket_spin_lock): the lock of the
 * r/o bind mount series (merged in 2.6.26).  FIFO, one cache line
 * bounced between waiters.
 *
 * Userspace cannot disable preemption: a holder may be descheduled while
 * waiters spin.  As a stand-in, a waiter that has spun SPIN_YIELD_LOOPS
 * times calls sched_yield() so an oversubscribed CPU lets the holder run.
 * With one pinned thread per CPU the yield is never reached in practice.
 */
#ifndef KSCALE_KERNEL_SPINLOCK_H
#define KSCALE_KERNEL_SPINLOCK_H

#include "compiler.h"

typedef struct {
	uint16_t head;		/* ticket now served */
	uint16_t tail;		/* next ticket to hand out */
} spinlock_t;

#define __SPIN_LOCK_UNLOCKED	{ 0, 0 }
#define SPIN_YIELD_LOOPS	(1u << 14)

void __ticket_spin_wait(spinlock_t *lock, uint16_t ticket);

static inline void spin_lock_init(spinlock_t *lock)
{
	WRITE_ONCE(lock->head, 0);
	WRITE_ONCE(lock->tail, 0);
}

static inline void spin_lock(spinlock_t *lock)
{
	uint16_t ticket = __atomic_fetch_add(&lock->tail, 1, __ATOMIC_ACQUIRE);

	if (likely(__atomic_load_n(&lock->head, __ATOMIC_ACQUIRE) == ticket))
		return;
	__ticket_spin_wait(lock, ticket);
}

static inline bool spin_trylock(spinlock_t *lock)
{
	uint16_t head = __atomic_load_n(&lock->head, __ATOMIC_RELAXED);
	uint16_t tail = head;

	if (__atomic_load_n(&lock->tail, __ATOMIC_RELAXED) != head)
		return false;
	return __atomic_compare_exchange_n(&lock->tail, &tail,
					   (uint16_t)(head + 1), false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline void spin_unlock(spinlock_t *lock)
{
	uint16_t head = __atomic_load_n(&lock->head, __ATOMIC_RELAXED);

	__atomic_store_n(&lock->head, (uint16_t)(head + 1), __ATOMIC_RELEASE);
}

static inline bool spin_is_locked(spinlock_t *lock)
{
	return READ_ONCE(lock->head) != READ_ONCE(lock->tail);
}

#endif
