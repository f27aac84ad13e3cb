/* SPDX-License-Identifier: GPL-2.0 */
/*
 * spinlock_t: the x86 spinlock of the kernel each model variant follows,
 * one of
 *  - the ticket spinlock of 2.6.25 to 4.1 (arch/x86/include/asm/spinlock.h,
 *    __ticket_spin_lock): FIFO, one cache line bounced between waiters;
 *  - the byte lock before it (spinlock_decb.h: `lock; decb`, 2.6.24 and
 *    older);
 *  - ia64's cmpxchg lock of 2.6.7 (spinlock_ia64.h), for the kernels the
 *    models follow as the seed's Altix ran them;
 *  - the queued spinlock of 4.2 on (qspinlock.h), as v4.6 or 6.18 have it.
 * Each lock carries its kind, set by spin_lock_init() from
 * spin_lock_init_kind: the kind of the model variant being set up, which
 * the variant's row names by its kernel (spin_lock_kind_of() in
 * kernel_locks.c, the one table of kernels and their locks;
 * lib/harness/variant.h sets it).  A static initialiser makes a ticket
 * lock; a model whose kernel spun on another initialises its static
 * locks again in its set-up.
 *
 * Departure: the kernel's spinlock_t is its one lock's word; here a byte
 * beside the word says which lock it is (so a spinlock_t is 8 bytes, not
 * 4), and spin_lock() and the rest dispatch on it, read with a plain load
 * (the simulator counts no access for it, lib/sim/instrument.h).
 *
 * spin_lock() disables preemption first, as the kernel's does: the model
 * scheduler (sched.h) never switches a holder or a waiter out.  The
 * queued lock also owns its CPU (qspin_lock()).
 */
#ifndef KSCALE_KERNEL_SPINLOCK_H
#define KSCALE_KERNEL_SPINLOCK_H

#include "atomic.h"
#include "compiler.h"
#include "lockstat.h"
#include "qspinlock.h"
#include "sched.h"
#include "spinlock_decb.h"
#include "spinlock_ia64.h"
#include "tsc.h"

enum spin_lock_kind {
	SPIN_TICKET,		/* 2.6.25-4.1; 0, a static lock's */
	SPIN_DECB,		/* up to 2.6.24 */
	SPIN_QUEUED_V4_6,	/* 4.2 on, v4.6's slow path */
	SPIN_QUEUED,		/* 6.18's */
	SPIN_IA64,		/* ia64's, 2.6.7 */
	NR_SPIN_LOCK_KINDS
};

typedef struct {
	union {
		/* NR_CPUS >= 256: 16-bit tickets, taken with one xadd */
		uint32_t head_tail;
		struct __raw_tickets {
			uint16_t head;	/* ticket now served */
			uint16_t tail;	/* next ticket to hand out */
		} tickets;
		decb_spinlock_t decb;
		ia64_spinlock_t ia64;
		arch_spinlock_t q;
	};
	uint8_t kind;		/* enum spin_lock_kind, set at init */
} spinlock_t;

#define TICKET_SHIFT		16
#define __SPIN_LOCK_UNLOCKED	{ { 0 }, SPIN_TICKET }

/* The kind spin_lock_init() gives: the variant's being set up. */
extern enum spin_lock_kind spin_lock_init_kind;

/*
 * A kernel's lock: "ticket", "decb", "qspinlock-v4.6", "qspinlock-6.18",
 * "ia64", or NULL for a kind out of range.
 */
const char *spin_lock_kind_name(enum spin_lock_kind kind);

/* The kernel version's spinlock, or -1 for a version not listed. */
int spin_lock_kind_of(const char *kernel);

void __ticket_spin_wait(spinlock_t *lock, uint16_t ticket);

/* spin_lock_account() of a kind it cannot time: one line, abort(). */
void __attribute__((noreturn)) spin_lock_account_bug(int kind);

static inline void spin_lock_init(spinlock_t *lock)
{
	lock->kind = spin_lock_init_kind;
	if (lock->kind == SPIN_DECB)
		decb_spin_lock_init(&lock->decb);
	else
		WRITE_ONCE(lock->head_tail, 0);	/* ia64's free word */
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
	switch (lock->kind) {
	case SPIN_TICKET:
		preempt_disable();
		lockstat_acquire(lock, false, __ticket_spin_lock(lock));
		break;
	case SPIN_DECB:
		decb_spin_lock(&lock->decb);
		break;
	case SPIN_IA64:
		ia64_spin_lock(&lock->ia64);
		break;
	default:
		qspin_lock(&lock->q, lock->kind == SPIN_QUEUED_V4_6);
	}
}

static inline bool spin_trylock(spinlock_t *lock)
{
	if (lock->kind == SPIN_DECB)
		return decb_spin_trylock(&lock->decb);
	if (lock->kind == SPIN_IA64)
		return ia64_spin_trylock(&lock->ia64);
	if (lock->kind != SPIN_TICKET)
		return qspin_trylock(&lock->q);
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
	switch (lock->kind) {
	case SPIN_TICKET:
		lockstat_release(lock);
		__ticket_spin_unlock(lock);
		lockstat_released();
		preempt_enable();
		break;
	case SPIN_DECB:
		decb_spin_unlock(&lock->decb);
		break;
	case SPIN_IA64:
		ia64_spin_unlock(&lock->ia64);
		break;
	default:
		qspin_unlock(&lock->q);
	}
}

static inline bool spin_is_locked(spinlock_t *lock)
{
	uint32_t v;

	if (lock->kind == SPIN_DECB)
		return decb_spin_is_locked(&lock->decb);
	if (lock->kind == SPIN_IA64)
		return ia64_spin_is_locked(&lock->ia64);
	if (lock->kind != SPIN_TICKET)
		return queued_spin_is_locked(&lock->q);
	v = READ_ONCE(lock->head_tail);
	return (uint16_t)v != (uint16_t)(v >> TICKET_SHIFT);
}

/*
 * arch_spin_value_unlocked(): whether val, lock's word read as a value
 * (a lockref's half), is a free lock of lock's kind.
 */
static inline bool spin_value_unlocked(const spinlock_t *lock, uint32_t val)
{
	switch (lock->kind) {
	case SPIN_TICKET:
		return (uint16_t)val == (uint16_t)(val >> TICKET_SHIFT);
	case SPIN_DECB:
		return (signed char)val > 0;
	default:
		return !val;
	}
}

/*
 * spin_lock() whose acquisition is to be counted (CONFIG_LOCK_STAT's
 * counts, shmem_fault's stat_lock): pass what it returns to
 * spin_unlock_account(), which counts it once the lock is released.
 * CONFIG_LOCK_STAT counts inside the section; here the holder pays
 * nothing for it, as a variant that never takes the lock pays nothing.
 * The wait is timed to the read that saw the lock free before the retry
 * that took it, which only the locks whose waiters retry have (decb,
 * ia64): a queued lock's waiter holds it when its wait ends, and taking
 * one here is a bug, said and aborted.
 */
static inline uint64_t spin_lock_account(spinlock_t *lock)
{
	if (lock->kind == SPIN_IA64)
		return ia64_spin_lock_account(&lock->ia64);
	if (lock->kind != SPIN_DECB)
		spin_lock_account_bug(lock->kind);
	return decb_spin_lock_account(&lock->decb);
}

/* spin_unlock(), then the acquisition counted into *stats. */
static inline void spin_unlock_account(spinlock_t *lock,
				       struct lock_class_stats *stats,
				       uint64_t wait)
{
	spin_unlock(lock);
	stats->acquisitions++;
	if (wait) {
		stats->contentions++;
		stats->waittime += wait;
	}
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
