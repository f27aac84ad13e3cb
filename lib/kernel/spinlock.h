/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spinlock_t as the x86 ticket spinlock of 2.6.25 to 4.1
 * (arch/x86/include/asm/spinlock.h, __ticket_spin_lock): the lock of the
 * r/o bind mount series (merged in 2.6.26).  FIFO, one cache line
 * bounced between waiters.
 *
 * spin_lock() disables preemption first, as the kernel's does: the model
 * scheduler (sched.h) never switches a holder or a waiter out.
 */
#ifndef KSCALE_KERNEL_SPINLOCK_H
#define KSCALE_KERNEL_SPINLOCK_H

#include "atomic.h"
#include "compiler.h"
#include "lockstat.h"
#include "sched.h"
#include "tsc.h"

/* NR_CPUS >= 256 layout: 16-bit tickets, taken with one 32-bit xadd. */
typedef struct {
	union {
		uint32_t head_tail;
		struct __raw_tickets {
			uint16_t head;	/* ticket now served */
			uint16_t tail;	/* next ticket to hand out */
		} tickets;
	};
} spinlock_t;

#define TICKET_SHIFT		16
#define __SPIN_LOCK_UNLOCKED	{ { 0 } }

void __ticket_spin_wait(spinlock_t *lock, uint16_t ticket);

static inline void spin_lock_init(spinlock_t *lock)
{
	WRITE_ONCE(lock->head_tail, 0);
}

static inline void __ticket_spin_lock(spinlock_t *lock)
{
	uint32_t inc;
	uint16_t ticket;

	inc = __atomic_fetch_add(&lock->head_tail, 1u << TICKET_SHIFT,
				 __ATOMIC_ACQUIRE);
	ticket = inc >> TICKET_SHIFT;

	if (likely((uint16_t)inc == ticket))
		return;
	__ticket_spin_wait(lock, ticket);
}

static inline bool __ticket_spin_trylock(spinlock_t *lock)
{
	uint32_t old = READ_ONCE(lock->head_tail);

	return (uint16_t)old == (uint16_t)(old >> TICKET_SHIFT) &&
	       __atomic_compare_exchange_n(&lock->head_tail, &old,
					   old + (1u << TICKET_SHIFT), false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* The kernel's unlock is a plain (non-locked) increment of the head. */
static inline void __ticket_spin_unlock(spinlock_t *lock)
{
	uint16_t head = __atomic_load_n(&lock->tickets.head, __ATOMIC_RELAXED);

	__atomic_store_n(&lock->tickets.head, (uint16_t)(head + 1),
			 __ATOMIC_RELEASE);
}

static inline void spin_lock(spinlock_t *lock)
{
	preempt_disable();
	lockstat_acquire(lock, false, __ticket_spin_lock(lock));
}

static inline bool spin_trylock(spinlock_t *lock)
{
	preempt_disable();
	if (__ticket_spin_trylock(lock)) {
		lockstat_trylock(lock, false, true);
		return true;
	}
	preempt_enable();
	return false;
}

static inline void spin_unlock(spinlock_t *lock)
{
	lockstat_release(lock);
	__ticket_spin_unlock(lock);
	lockstat_released();
	preempt_enable();
}

static inline bool spin_is_locked(spinlock_t *lock)
{
	uint32_t v = READ_ONCE(lock->head_tail);

	return (uint16_t)v != (uint16_t)(v >> TICKET_SHIFT);
}

/*
 * lib/dec_and_lock.c: decrement, and if that reaches 0 return 1 with the
 * lock held; the lock is only taken for the last reference.
 */
static inline int atomic_dec_and_lock(atomic_t *atomic, spinlock_t *lock)
{
	if (atomic_add_unless(atomic, -1, 1))
		return 0;
	spin_lock(lock);
	if (atomic_add_return(-1, atomic) == 0)
		return 1;
	spin_unlock(lock);
	return 0;
}

#endif
