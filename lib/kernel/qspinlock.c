// SPDX-License-Identifier: GPL-2.0
/*
 * The queued spinlock's slow paths, native, at v4.6 and v6.18
 * (kernel/locking/qspinlock.c, mcs_spinlock.h, and 6.18's qspinlock.h):
 * qspinlock.h says what the versions change and what departs.
 *
 * (queue tail, pending bit, lock value)
 *
 *              fast     :    slow                                  :    unlock
 *                       :                                          :
 * uncontended  (0,0,0) -:--> (0,0,1) ------------------------------:--> (*,*,0)
 *                       :       | ^--------.------.             /  :
 *                       :       v           \      \            |  :
 * pending               :    (0,1,1) +--> (0,1,0)   \           |  :
 *                       :       | ^--'              |           |  :
 *                       :       v                   |           |  :
 * uncontended           :    (n,x,y) +--> (n,0,0) --'           |  :
 *   queue               :       | ^--'                          |  :
 *                       :       v                               |  :
 * contended             :    (*,x,y) +--> (*,0,0) ---> (*,0,1) -'  :
 *   queue               :         ^--'                             :
 */
#include <stdlib.h>

#include "percpu.h"
#include "qspinlock.h"

/* kernel/locking/mcs_spinlock.h */
struct mcs_spinlock {
	struct mcs_spinlock *next;
	int locked; /* 1 if lock acquired */
	int count;  /* nesting count, see qspinlock.c */
};

/*
 * Using smp_cond_load_acquire() provides the acquire semantics required
 * so that subsequent operations happen after the lock is acquired.
 */
#define arch_mcs_spin_lock_contended(l)	smp_cond_load_acquire(l, VAL)

/*
 * smp_store_release() provides a memory barrier to ensure all
 * operations in the critical section has been completed before
 * unlocking.
 */
#define arch_mcs_spin_unlock_contended(l)	smp_store_release((l), 1)

/* Native: no PV fields, four 16-byte nodes to a 64-byte line. */
struct qnode {
	struct mcs_spinlock mcs;
};

/*
 * Per-CPU queue node structures; we can never have more than 4 nested
 * contexts: task, softirq, hardirq, nmi.  Each CPU's on a pair of lines
 * of its own (qspinlock.h).
 */
static struct {
	struct qnode nodes[_Q_MAX_NODES];
} __attribute__((aligned(2 * SMP_CACHE_BYTES))) qnodes[CONFIG_NR_CPUS];

/* this_cpu_ptr(&qnodes[0].mcs) */
static inline struct mcs_spinlock *this_cpu_qnode(void)
{
	int cpu = smp_processor_id();

	if (unlikely(cpu >= CONFIG_NR_CPUS))
		abort();
	return &qnodes[cpu].nodes[0].mcs;
}

static inline struct mcs_spinlock *decode_tail(uint32_t tail)
{
	return &qnodes[decode_tail_cpu(tail)].nodes[decode_tail_idx(tail)].mcs;
}

static inline struct mcs_spinlock *grab_mcs_node(struct mcs_spinlock *base,
						 int idx)
{
	return &((struct qnode *)base + idx)->mcs;
}

#if _Q_PENDING_BITS == 8
/*
 * clear_pending - clear the pending bit.
 *
 * *,1,* -> *,0,*
 */
static inline void clear_pending(struct qspinlock *lock)
{
	WRITE_ONCE(lock->pending, 0);
}

/*
 * clear_pending_set_locked - take ownership and clear the pending bit.
 *
 * *,1,0 -> *,0,1
 *
 * Lock stealing is not allowed if this function is used.
 */
static inline void clear_pending_set_locked(struct qspinlock *lock)
{
	WRITE_ONCE(lock->locked_pending, _Q_LOCKED_VAL);
}

/*
 * xchg_tail - Put in the new queue tail code word & retrieve previous one
 *
 * xchg(lock, tail), which heads an address dependency
 *
 * p,*,* -> n,*,* ; prev = xchg(lock, node)
 */
static inline uint32_t xchg_tail(struct qspinlock *lock, uint32_t tail)
{
	/*
	 * We can use relaxed semantics since the caller ensures that the
	 * MCS node is properly initialized before updating the tail.
	 */
	return (uint32_t)__atomic_exchange_n(&lock->tail,
					     (uint16_t)(tail >> _Q_TAIL_OFFSET),
					     __ATOMIC_RELAXED) << _Q_TAIL_OFFSET;
}

#else /* _Q_PENDING_BITS == 8 */

static inline void clear_pending(struct qspinlock *lock)
{
	__atomic_fetch_and(&lock->val.counter, ~(int)_Q_PENDING_VAL,
			   __ATOMIC_RELAXED);
}

static inline void clear_pending_set_locked(struct qspinlock *lock)
{
	atomic_add(-(int)_Q_PENDING_VAL + (int)_Q_LOCKED_VAL, &lock->val);
}

static inline uint32_t xchg_tail(struct qspinlock *lock, uint32_t tail)
{
	int new, val = atomic_read(&lock->val);

	for (;;) {
		new = (val & _Q_LOCKED_PENDING_MASK) | tail;
		/*
		 * We can use relaxed semantics since the caller ensures that
		 * the MCS node is properly initialized before updating the
		 * tail.
		 */
		if (__atomic_compare_exchange_n(&lock->val.counter, &val, new,
						false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	return val;
}
#endif /* _Q_PENDING_BITS == 8 */

/*
 * 6.18 x86: `lock btsl` sets pending and yields its old bit; the rest of
 * the word is read after it.  That read is an acquire here, a plain load
 * on x86: where it finds the owner gone that the btsl saw (the caller then
 * skips its acquire wait on the locked byte), x86's ordering makes the
 * owner's release store visible to it, and C11 (and ThreadSanitizer, which
 * caught the plain read's race on the section's data) needs the acquire
 * for the same.
 *
 * *,*,* -> *,1,*
 */
static inline uint32_t queued_fetch_set_pending_acquire(struct qspinlock *lock)
{
	uint32_t val;

	val = __atomic_fetch_or(&lock->val.counter, _Q_PENDING_VAL,
				__ATOMIC_ACQUIRE) & _Q_PENDING_VAL;
	val |= smp_load_acquire(&lock->val.counter) & ~_Q_PENDING_MASK;
	return val;
}

/*
 * set_locked - Set the lock bit and own the lock
 *
 * *,*,0 -> *,0,1
 */
static inline void set_locked(struct qspinlock *lock)
{
	WRITE_ONCE(lock->locked, _Q_LOCKED_VAL);
}

/*
 * The MCS queue, both versions' (6.18's form; v4.6 claims the lock in a
 * cmpxchg loop with the same transitions, and has no nesting fallback).
 */
static void queued_spin_lock_queue(struct qspinlock *lock)
{
	struct mcs_spinlock *prev, *next, *node, *node0;
	uint32_t old, tail;
	int idx, val;

	node0 = this_cpu_qnode();
	idx = node0->count++;
	tail = encode_tail(smp_processor_id(), idx);

	/*
	 * 4 nodes are allocated based on the assumption that there will
	 * not be nested NMIs taking spinlocks.  When that happens, we fall
	 * back to spinning on the lock directly without using any MCS node.
	 */
	if (unlikely(idx >= _Q_MAX_NODES)) {
		while (!queued_spin_trylock(lock))
			cpu_relax();
		goto release;
	}

	node = grab_mcs_node(node0, idx);

	/*
	 * Ensure that we increment the head node->count before initialising
	 * the actual node. If the compiler is kind enough to reorder these
	 * stores, then an IRQ could overwrite our assignments.
	 */
	barrier();

	WRITE_ONCE(node->locked, 0);
	WRITE_ONCE(node->next, NULL);

	/*
	 * We touched a (possibly) cold cacheline in the per-cpu queue node;
	 * attempt the trylock once more in the hope someone let go while we
	 * weren't watching.
	 */
	if (queued_spin_trylock(lock))
		goto release;

	/*
	 * Ensure that the initialisation of @node is complete before we
	 * publish the updated tail via xchg_tail() and potentially link
	 * @node into the waitqueue via WRITE_ONCE(prev->next, node) below.
	 */
	smp_wmb();

	/*
	 * Publish the updated tail.
	 * We have already touched the queueing cacheline; don't bother with
	 * pending stuff.
	 *
	 * p,*,* -> n,*,*
	 */
	old = xchg_tail(lock, tail);
	next = NULL;

	/*
	 * if there was a previous node; link it and wait until reaching the
	 * head of the waitqueue.
	 */
	if (old & _Q_TAIL_MASK) {
		prev = decode_tail(old);

		/* Link @node into the waitqueue. */
		WRITE_ONCE(prev->next, node);

		arch_mcs_spin_lock_contended(&node->locked);

		/*
		 * While waiting for the MCS lock, the next pointer may have
		 * been set by another lock waiter. We optimistically load
		 * the next pointer & prefetch the cacheline for writing
		 * to reduce latency in the upcoming MCS unlock operation.
		 */
		next = READ_ONCE(node->next);
		if (next)
			__builtin_prefetch(next, 1);
	}

	/*
	 * we're at the head of the waitqueue, wait for the owner & pending to
	 * go away.
	 *
	 * *,x,y -> *,0,0
	 *
	 * this wait loop must use a load-acquire such that we match the
	 * store-release that clears the locked bit and create lock
	 * sequentiality; this is because the set_locked() function below
	 * does not imply a full barrier.
	 */
	val = atomic_cond_read_acquire(&lock->val,
				       !(VAL & _Q_LOCKED_PENDING_MASK));

	/*
	 * claim the lock:
	 *
	 * n,0,0 -> 0,0,1 : lock, uncontended
	 * *,*,0 -> *,*,1 : lock, contended
	 *
	 * If the queue head is the only one in the queue (lock value == tail)
	 * and nobody is pending, clear the tail code and grab the lock.
	 * Otherwise, we only need to grab the lock.
	 *
	 * Note: at this point: (val & _Q_PENDING_MASK) == 0, because of the
	 *       above wait condition, therefore any concurrent setting of
	 *       PENDING will make the uncontended transition fail.
	 */
	if ((val & _Q_TAIL_MASK) == tail) {
		if (__atomic_compare_exchange_n(&lock->val.counter, &val,
						_Q_LOCKED_VAL, false,
						__ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			goto release; /* No contention */
	}

	/*
	 * Either somebody is queued behind us or _Q_PENDING_VAL got set
	 * which will then detect the remaining tail and queue behind us
	 * ensuring we'll see a @next.
	 */
	set_locked(lock);

	/*
	 * contended path; wait for next if not observed yet, release.
	 */
	if (!next)
		next = smp_cond_load_relaxed(&node->next, (VAL));

	arch_mcs_spin_unlock_contended(&next->locked);

release:
	/*
	 * release the node
	 */
	node0->count--;
}

/* v6.18 queued_spin_lock_slowpath(), native. */
void queued_spin_lock_slowpath(struct qspinlock *lock, uint32_t val)
{
	/*
	 * Wait for in-progress pending->locked hand-overs with a bounded
	 * number of spins so that we guarantee forward progress.
	 *
	 * 0,1,0 -> 0,0,1
	 */
	if (val == _Q_PENDING_VAL) {
		int cnt = _Q_PENDING_LOOPS;

		val = atomic_cond_read_relaxed(&lock->val,
					       (VAL != _Q_PENDING_VAL) ||
					       !cnt--);
	}

	/*
	 * If we observe any contention; queue.
	 */
	if (val & ~_Q_LOCKED_MASK)
		goto queue;

	/*
	 * trylock || pending
	 *
	 * 0,0,* -> 0,1,* -> 0,0,1 pending, trylock
	 */
	val = queued_fetch_set_pending_acquire(lock);

	/*
	 * If we observe contention, there is a concurrent locker.
	 *
	 * Undo and queue; our setting of PENDING might have made the
	 * n,0,0 -> 0,0,0 transition fail and it will now be waiting
	 * on @next to become !NULL.
	 */
	if (unlikely(val & ~_Q_LOCKED_MASK)) {

		/* Undo PENDING if we set it. */
		if (!(val & _Q_PENDING_MASK))
			clear_pending(lock);

		goto queue;
	}

	/*
	 * We're pending, wait for the owner to go away.
	 *
	 * 0,1,1 -> *,1,0
	 *
	 * this wait loop must be a load-acquire such that we match the
	 * store-release that clears the locked bit and create lock
	 * sequentiality; this is because not all
	 * clear_pending_set_locked() implementations imply full
	 * barriers.
	 */
	if (val & _Q_LOCKED_MASK)
		smp_cond_load_acquire(&lock->locked, !VAL);

	/*
	 * take ownership and clear the pending bit.
	 *
	 * 0,1,0 -> 0,0,1
	 */
	clear_pending_set_locked(lock);
	return;

	/*
	 * End of pending bit optimistic spinning and beginning of MCS
	 * queuing.
	 */
queue:
	queued_spin_lock_queue(lock);
}

/* v4.6 queued_spin_lock_slowpath(), native. */
void queued_spin_lock_slowpath_v4_6(struct qspinlock *lock, uint32_t val)
{
	int new, old;

	/*
	 * wait for in-progress pending->locked hand-overs
	 *
	 * 0,1,0 -> 0,0,1
	 */
	if (val == _Q_PENDING_VAL) {
		while ((val = atomic_read(&lock->val)) == _Q_PENDING_VAL)
			cpu_relax();
	}

	/*
	 * trylock || pending
	 *
	 * 0,0,0 -> 0,0,1 ; trylock
	 * 0,0,1 -> 0,1,1 ; pending
	 */
	for (;;) {
		/*
		 * If we observe any contention; queue.
		 */
		if (val & ~_Q_LOCKED_MASK)
			goto queue;

		new = _Q_LOCKED_VAL;
		if (val == (uint32_t)new)
			new |= _Q_PENDING_VAL;

		old = val;
		if (__atomic_compare_exchange_n(&lock->val.counter, &old, new,
						false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			break;

		val = old;
	}

	/*
	 * we won the trylock
	 */
	if (new == _Q_LOCKED_VAL)
		return;

	/*
	 * we're pending, wait for the owner to go away.
	 *
	 * *,1,1 -> *,1,0
	 *
	 * this wait loop must be a load-acquire such that we match the
	 * store-release that clears the locked bit and create lock
	 * sequentiality; this is because not all clear_pending_set_locked()
	 * implementations imply full barriers.
	 */
	atomic_cond_read_acquire(&lock->val, !(VAL & _Q_LOCKED_MASK));

	/*
	 * take ownership and clear the pending bit.
	 *
	 * *,1,0 -> *,0,1
	 */
	clear_pending_set_locked(lock);
	return;

	/*
	 * End of pending bit optimistic spinning and beginning of MCS
	 * queuing.
	 */
queue:
	queued_spin_lock_queue(lock);
}
