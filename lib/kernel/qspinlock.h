/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Queued spinlocks, x86 native (CONFIG_PARAVIRT_SPINLOCKS off, or on bare
 * metal: virt_spin_lock() false), as v4.6 and v6.18 have them:
 * include/asm-generic/qspinlock_types.h (the word), asm-generic/qspinlock.h
 * and arch/x86/include/asm/qspinlock.h (fast paths, unlock),
 * kernel/locking/qspinlock.c and, in 6.18, kernel/locking/qspinlock.h
 * (slow path; here qspinlock.c).  x86 has spun on them since 4.2.
 *
 * One 32-bit word: the locked byte, the pending byte (one bit used) and
 * a 16-bit tail, (CPU + 1, nesting index) of the last of an MCS queue of
 * per-CPU nodes, each waiter spinning on its own node's line.  The first
 * contender sets pending and spins on the locked byte itself; the queue's
 * head spins on the word until locked and pending clear, takes the lock,
 * and hands the head on through its successor's node (a store-release).
 *
 * The two versions' differences that matter, both followed (the caller
 * names the version, queued_spin_lock()'s v4_6):
 *  - the pending bit: v4.6 takes it with a cmpxchg loop, 0,0,1 -> 0,1,1
 *    (or 0,0,0 -> 0,0,1, a trylock), queueing on any other value; 6.18
 *    sets it unconditionally (x86: `lock btsl`, so every contender writes
 *    the line), and clears it again if it found contention;
 *  - the wait for a pending->locked hand-over (0,1,0): v4.6 spins until
 *    it ends; 6.18 at most _Q_PENDING_LOOPS reads (x86: 512), then queues;
 *  - 6.18 spins on the locked byte alone in the pending wait (v4.6: the
 *    word; the same line), takes the lock as the queue's head with one
 *    try_cmpxchg, then set_locked() (v4.6: a cmpxchg loop, the same
 *    transitions), and falls back to a trylock loop past four nested
 *    contexts (v4.6: none);
 *  - v4.6 publishes the tail with xchg_release(), 6.18 with smp_wmb() and
 *    xchg_relaxed(): on x86 both are one xchg.
 * The word, the tail's encoding, the fast paths and the unlock (a byte
 * store-release) are the same in both.
 *
 * Departures: the per-CPU nodes are one static array, each CPU's four
 * on their own pair of lines as percpu.h's slots are (the kernel's
 * per-CPU area puts them on one line beside other per-CPU data), indexed
 * by smp_processor_id(); a CPU id past CONFIG_NR_CPUS aborts.  The nodes'
 * initialisation is WRITE_ONCE() (the kernel's plain stores: the same
 * movs), so that the simulator sees the line it dirties.  The model has
 * no interrupts: a task spinning here never nests, so only node 0 of a
 * CPU is used, as in the kernel's task context.  No qstat/lockevent
 * counters, no tracepoints.
 */
#ifndef KSCALE_KERNEL_QSPINLOCK_H
#define KSCALE_KERNEL_QSPINLOCK_H

#include <stdint.h>

#include "atomic.h"
#include "compiler.h"
#include "lockstat.h"
#include "sched.h"

/*
 * CONFIG_NR_CPUS: every CPU id the tail must encode.  From 16K on the
 * kernel shrinks pending to one bit for a wider tail (qspinlock_types.h);
 * a build may define it so.
 */
#ifndef CONFIG_NR_CPUS
#define CONFIG_NR_CPUS		8192
#endif

typedef struct qspinlock {
	union {
		atomic_t val;
		/* little-endian x86: the locked byte is the lowest */
		struct {
			uint8_t locked;
			uint8_t pending;
		};
		struct {
			uint16_t locked_pending;
			uint16_t tail;
		};
	};
} arch_spinlock_t;

#define __ARCH_SPIN_LOCK_UNLOCKED	{ { .val = ATOMIC_INIT(0) } }

/*
 * Bitfields in the atomic value:
 *
 * When NR_CPUS < 16K
 *  0- 7: locked byte
 *     8: pending
 *  9-15: not used
 * 16-17: tail index
 * 18-31: tail cpu (+1)
 *
 * When NR_CPUS >= 16K
 *  0- 7: locked byte
 *     8: pending
 *  9-10: tail index
 * 11-31: tail cpu (+1)
 */
#define _Q_SET_MASK(type)	(((1U << _Q_ ## type ## _BITS) - 1)\
				      << _Q_ ## type ## _OFFSET)
#define _Q_LOCKED_OFFSET	0
#define _Q_LOCKED_BITS		8
#define _Q_LOCKED_MASK		_Q_SET_MASK(LOCKED)

#define _Q_PENDING_OFFSET	(_Q_LOCKED_OFFSET + _Q_LOCKED_BITS)
#if CONFIG_NR_CPUS < (1U << 14)
#define _Q_PENDING_BITS		8
#else
#define _Q_PENDING_BITS		1
#endif
#define _Q_PENDING_MASK		_Q_SET_MASK(PENDING)

#define _Q_TAIL_IDX_OFFSET	(_Q_PENDING_OFFSET + _Q_PENDING_BITS)
#define _Q_TAIL_IDX_BITS	2
#define _Q_TAIL_IDX_MASK	_Q_SET_MASK(TAIL_IDX)

#define _Q_TAIL_CPU_OFFSET	(_Q_TAIL_IDX_OFFSET + _Q_TAIL_IDX_BITS)
#define _Q_TAIL_CPU_BITS	(32 - _Q_TAIL_CPU_OFFSET)
#define _Q_TAIL_CPU_MASK	_Q_SET_MASK(TAIL_CPU)

#define _Q_TAIL_OFFSET		_Q_TAIL_IDX_OFFSET
#define _Q_TAIL_MASK		(_Q_TAIL_IDX_MASK | _Q_TAIL_CPU_MASK)

#define _Q_LOCKED_VAL		(1U << _Q_LOCKED_OFFSET)
#define _Q_PENDING_VAL		(1U << _Q_PENDING_OFFSET)

#define _Q_LOCKED_PENDING_MASK	(_Q_LOCKED_MASK | _Q_PENDING_MASK)

/* 6.18 arch/x86/include/asm/qspinlock.h; the generic default is 1. */
#define _Q_PENDING_LOOPS	(1 << 9)

/* task, softirq, hardirq, nmi */
#define _Q_MAX_NODES		4

_Static_assert(CONFIG_NR_CPUS < (1U << _Q_TAIL_CPU_BITS),
	       "the tail cannot encode every CPU");

/*
 * We must be able to distinguish between no-tail and the tail at 0:0,
 * therefore increment the cpu number by one.
 */
static inline uint32_t encode_tail(int cpu, int idx)
{
	uint32_t tail;

	tail  = (uint32_t)(cpu + 1) << _Q_TAIL_CPU_OFFSET;
	tail |= (uint32_t)idx << _Q_TAIL_IDX_OFFSET; /* assume < 4 */

	return tail;
}

/* decode_tail()'s two halves; the node itself is qspinlock.c's. */
static inline int decode_tail_cpu(uint32_t tail)
{
	return (int)(tail >> _Q_TAIL_CPU_OFFSET) - 1;
}

static inline int decode_tail_idx(uint32_t tail)
{
	return (tail & _Q_TAIL_IDX_MASK) >> _Q_TAIL_IDX_OFFSET;
}

/* The slow paths, by version (qspinlock.c). */
void queued_spin_lock_slowpath(struct qspinlock *lock, uint32_t val);
void queued_spin_lock_slowpath_v4_6(struct qspinlock *lock, uint32_t val);

static inline int queued_spin_is_locked(struct qspinlock *lock)
{
	return atomic_read(&lock->val);
}

/*
 * queued_spin_trylock: a read first (6.18; v4.6 `!atomic_read() &&
 * cmpxchg`), then the cmpxchg: the same.
 */
static inline int queued_spin_trylock(struct qspinlock *lock)
{
	int val = atomic_read(&lock->val);

	if (unlikely(val))
		return 0;

	return likely(__atomic_compare_exchange_n(&lock->val.counter, &val,
						  _Q_LOCKED_VAL, false,
						  __ATOMIC_ACQUIRE,
						  __ATOMIC_RELAXED));
}

/*
 * queued_spin_lock: one cmpxchg 0,0,0 -> 0,0,1; on failure the slow path
 * of the lock's version, with the value found.
 */
static inline void queued_spin_lock(struct qspinlock *lock, bool v4_6)
{
	int val = 0;

	if (likely(__atomic_compare_exchange_n(&lock->val.counter, &val,
					       _Q_LOCKED_VAL, false,
					       __ATOMIC_ACQUIRE,
					       __ATOMIC_RELAXED)))
		return;

	if (v4_6)
		queued_spin_lock_slowpath_v4_6(lock, val);
	else
		queued_spin_lock_slowpath(lock, val);
}

/* x86 native_queued_spin_unlock(): a byte store-release. */
static inline void queued_spin_unlock(struct qspinlock *lock)
{
	smp_store_release(&lock->locked, 0);
}

/*
 * As spin_lock() on the queued spinlock of 6.18, or of v4.6 (v4_6):
 * preemption off first, the lockstat and torture hooks.  The CPU is owned
 * too (preempt_disable_cpu()): its MCS nodes are per CPU, and where the
 * host may run two of one CPU's tasks at once (sanitizer builds, no
 * SCHED_FIFO) two waiters of one CPU would share a node, which the
 * kernel's CPU, running one task with preemption off, never does.
 */
static inline void qspin_lock(struct qspinlock *lock, bool v4_6)
{
	preempt_disable_cpu();
	lockstat_acquire(lock, false, queued_spin_lock(lock, v4_6));
}

static inline bool qspin_trylock(struct qspinlock *lock)
{
	preempt_disable_cpu();
	if (queued_spin_trylock(lock)) {
		lockstat_trylock(lock, false, true);
		return true;
	}
	preempt_enable_cpu();
	return false;
}

static inline void qspin_unlock(struct qspinlock *lock)
{
	lockstat_release(lock);
	queued_spin_unlock(lock);
	lockstat_released();
	preempt_enable_cpu();
}
#endif
