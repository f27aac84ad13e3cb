/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The x86 spinlock before tickets (2.6.7 include/asm-i386/spinlock.h,
 * spin_lock_string): one byte, 1 when free.  `lock; decb` takes it; a
 * waiter spins reading the byte (`rep; nop; cmpb $0`) until it is
 * positive again, then retries the decb.  Unlock stores 1.  Not FIFO:
 * whichever waiter's decb lands first after the store wins.  The
 * kernels before 2.6.25 on x86 spun on it (kernel_locks.c).
 *
 * Like spin_lock(), it disables preemption first.
 */
#ifndef KSCALE_KERNEL_SPINLOCK_DECB_H
#define KSCALE_KERNEL_SPINLOCK_DECB_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"
#include "lockstat.h"
#include "sched.h"
#include "tsc.h"

typedef struct {
	union {
		unsigned int lock;	/* the kernel's field */
		signed char slock;	/* decb works on its low byte */
	};
} decb_spinlock_t;

#define __DECB_SPIN_LOCK_UNLOCKED	{ { 1 } }

static inline void decb_spin_lock_init(decb_spinlock_t *lock)
{
	WRITE_ONCE(lock->lock, 1);
}

/*
 * `lock; decb` then `js`: taken unless the byte went negative.  Like the
 * kernel's, it breaks past 128 waiters, when the byte wraps.
 */
static inline bool __decb_try(decb_spinlock_t *lock)
{
	return __atomic_sub_fetch(&lock->slock, 1, __ATOMIC_ACQUIRE) >= 0;
}

/* The out-of-line LOCK_SECTION: spin reading, then retry. */
static inline void __decb_spin_wait(decb_spinlock_t *lock)
{
	do {
		while (__atomic_load_n(&lock->slock, __ATOMIC_RELAXED) <= 0)
			cpu_relax();
	} while (!__decb_try(lock));
}

/*
 * The slow path timed: from the failed decb to the read that saw the
 * byte free before the decb that took it, so that no rdtsc runs with
 * the lock held.  Returns the cycles waited, 0 if the first decb took it.
 */
static inline uint64_t __decb_spin_lock_timed(decb_spinlock_t *lock)
{
	uint64_t t0, t1;

	if (likely(__decb_try(lock)))
		return 0;
	t0 = rdtsc_ordered();
	do {
		while (__atomic_load_n(&lock->slock, __ATOMIC_RELAXED) <= 0)
			cpu_relax();
		t1 = rdtsc_ordered();
	} while (!__decb_try(lock));
	return t1 > t0 ? t1 - t0 : 1;
}

/* decb_spin_lock() whose acquisition is counted: spinlock.h's account. */
static inline uint64_t decb_spin_lock_account(decb_spinlock_t *lock)
{
	uint64_t wait;

	preempt_disable();
	lockstat_acquire(lock, false, wait = __decb_spin_lock_timed(lock));
	return wait;
}

static inline void __decb_spin_lock(decb_spinlock_t *lock)
{
	if (unlikely(!__decb_try(lock)))
		__decb_spin_wait(lock);
}

static inline void decb_spin_lock(decb_spinlock_t *lock)
{
	preempt_disable();
	lockstat_acquire(lock, false, __decb_spin_lock(lock));
}

/* spin_trylock_string: xchgb 0, took it if the old byte was positive. */
static inline bool decb_spin_trylock(decb_spinlock_t *lock)
{
	preempt_disable();
	if (__atomic_exchange_n(&lock->slock, 0, __ATOMIC_ACQUIRE) > 0) {
		lockstat_trylock(lock, false, true);
		return true;
	}
	preempt_enable();
	return false;
}

/* spin_unlock_string: movb $1. */
static inline void decb_spin_unlock(decb_spinlock_t *lock)
{
	lockstat_release(lock);
	__atomic_store_n(&lock->slock, 1, __ATOMIC_RELEASE);
	lockstat_released();
	preempt_enable();
}

static inline bool decb_spin_is_locked(decb_spinlock_t *lock)
{
	return __atomic_load_n(&lock->slock, __ATOMIC_RELAXED) <= 0;
}

#endif
