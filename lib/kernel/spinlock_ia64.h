/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The ia64 spinlock of 2.6.7, the seed's Altix kernel
 * (include/asm-ia64/spinlock.h, _raw_spin_lock_flags(), and
 * ia64_spinlock_contention in arch/ia64/kernel/head.S; git's first tree,
 * 2.6.12-rc2, has them as 2.6.6-rc2's did, the only change between the
 * two being interrupts re-enabled while a spin_lock_irqsave() waits):
 *
 *	_raw_spin_lock:	cmpxchg4.acq 0 -> 1 on a 32-bit word; failing,
 *	ia64_spinlock_contention:
 *		.wait:	hint @pause; ld4 the word; until it reads 0
 *			cmpxchg4.acq 0 -> 1; on failure back to .wait
 *	_raw_spin_unlock: barrier(); lock = 0, a volatile store (st4.rel)
 *	_raw_spin_trylock: cmpxchg_acq(&lock, 0, 1) == 0
 *
 * A test-and-test-and-set lock, as x86's byte lock (spinlock_decb.h)
 * hands over: no order among the waiters, whichever retry lands first
 * after the store of 0 wins.  Unlike decb it has no count to wrap: a
 * failed cmpxchg writes nothing, so any number of CPUs may wait (the
 * byte lock lets a second holder in past 128 failed decbs between two
 * releases).
 *
 * Departures: x86's `lock cmpxchg` for cmpxchg4.acq (the same exclusive
 * request for the line, taken whether it succeeds or not), a pause for
 * `hint @pause`; the model has no interrupts, so a waiter never re-enables
 * them (a spin_lock_irqsave() is a spin_lock() here); no CONFIG_PREEMPT
 * break_lock.  Like spin_lock(), it disables preemption first.
 */
#ifndef KSCALE_KERNEL_SPINLOCK_IA64_H
#define KSCALE_KERNEL_SPINLOCK_IA64_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"
#include "lockstat.h"
#include "sched.h"
#include "tsc.h"

typedef struct {
	unsigned int lock;	/* 0 free, 1 held */
} ia64_spinlock_t;

#define __IA64_SPIN_LOCK_UNLOCKED	{ 0 }

static inline void ia64_spin_lock_init(ia64_spinlock_t *lock)
{
	WRITE_ONCE(lock->lock, 0);
}

/* cmpxchg4.acq r30 = [r31], 1, ar.ccv (0): taken if the word was 0. */
static inline bool __ia64_cmpxchg_acq(ia64_spinlock_t *lock)
{
	unsigned int old = 0;

	return __atomic_compare_exchange_n(&lock->lock, &old, 1, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* ia64_spinlock_contention's .wait2: hint @pause, ld4, until 0. */
static inline void __ia64_spin_wait(ia64_spinlock_t *lock)
{
	do {
		cpu_relax();
	} while (__atomic_load_n(&lock->lock, __ATOMIC_RELAXED));
}

/* _raw_spin_lock(): the cmpxchg, then the out-of-line contention loop. */
static inline void __ia64_spin_lock(ia64_spinlock_t *lock)
{
	if (likely(__ia64_cmpxchg_acq(lock)))
		return;
	do {
		__ia64_spin_wait(lock);
	} while (!__ia64_cmpxchg_acq(lock));
}

/*
 * The slow path timed, as decb's (spinlock_decb.h): from the failed
 * cmpxchg to the ld4 that saw the word 0 before the cmpxchg that took
 * it, so that no rdtsc runs with the lock held.  Returns the cycles
 * waited, 0 if the first cmpxchg took it.
 */
static inline uint64_t __ia64_spin_lock_timed(ia64_spinlock_t *lock)
{
	uint64_t t0, t1;

	if (likely(__ia64_cmpxchg_acq(lock)))
		return 0;
	t0 = rdtsc_ordered();
	do {
		__ia64_spin_wait(lock);
		t1 = rdtsc_ordered();
	} while (!__ia64_cmpxchg_acq(lock));
	return t1 > t0 ? t1 - t0 : 1;
}

/* ia64_spin_lock() whose acquisition is counted: spinlock.h's account. */
static inline uint64_t ia64_spin_lock_account(ia64_spinlock_t *lock)
{
	uint64_t wait;

	preempt_disable();
	lockstat_acquire(lock, false, wait = __ia64_spin_lock_timed(lock));
	return wait;
}

static inline void ia64_spin_lock(ia64_spinlock_t *lock)
{
	preempt_disable();
	lockstat_acquire(lock, false, __ia64_spin_lock(lock));
}

static inline bool ia64_spin_trylock(ia64_spinlock_t *lock)
{
	preempt_disable();
	if (__ia64_cmpxchg_acq(lock)) {
		lockstat_trylock(lock, false, true);
		return true;
	}
	preempt_enable();
	return false;
}

/* _raw_spin_unlock(): the volatile store of 0, st4.rel on ia64. */
static inline void ia64_spin_unlock(ia64_spinlock_t *lock)
{
	lockstat_release(lock);
	__atomic_store_n(&lock->lock, 0, __ATOMIC_RELEASE);
	lockstat_released();
	preempt_enable();
}

static inline bool ia64_spin_is_locked(ia64_spinlock_t *lock)
{
	return __atomic_load_n(&lock->lock, __ATOMIC_RELAXED) != 0;
}

#endif
