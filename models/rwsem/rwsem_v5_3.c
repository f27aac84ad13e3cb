// SPDX-License-Identifier: GPL-2.0
/*
 * The rwsem of Linux v5.3: kernel/locking/rwsem.c after Waiman Long's
 * "locking/rwsem: Rwsem rearchitecture part 2" (v8, 2019-05-20; patches
 * 1-16 merged for 5.3, 17-19 not), the "after" of the series' benchmark
 * (configs/validation/README), and struct rw_semaphore of 5.3's
 * include/linux/rwsem.h: x86_64, CONFIG_RWSEM_SPIN_ON_OWNER=y, without
 * CONFIG_DEBUG_RWSEMS, lockdep or lock events.
 *
 * Read in the series' mails (v8 patches 01-16, linux-kernel archive) and
 * in a later torvalds/linux rwsem.c of the same design (5.7-5.10: RD/WR
 * nonspinnable bits, reader spinning, the writer_wait_state machine),
 * with what changed after 5.3 left out: the handoff writer's spin on the
 * owner before it sleeps (91d2a812dfb9, "locking/rwsem: Make handoff
 * writer optimistically spin on owner", in the locking pull for 5.4),
 * and the DEBUG_RWSEMS/lockdep-only lines.  What it has over v5.1
 * (rwsem_v5_1.c):
 *
 * - the count of today's rwsem: RWSEM_WRITER_LOCKED, RWSEM_FLAG_WAITERS,
 *   RWSEM_FLAG_HANDOFF, the reader count from bit 8, RWSEM_FLAG_READFAIL;
 *   a writer takes the lock with a cmpxchg;
 * - writer handoff: the first waiter, a writer that has waited
 *   RWSEM_WAIT_TIMEOUT (4 ms), sets RWSEM_FLAG_HANDOFF in
 *   rwsem_try_write_lock() (wstate WRITER_HANDOFF), after which no one
 *   steals the lock; a reader at the head that waited as long sets it in
 *   rwsem_mark_wake();
 * - reader optimistic spinning: a reader whose fast path fails spins on
 *   the OSQ like a writer (rwsem_optimistic_spin(sem, false)) while a
 *   writer owner runs, and may join a reader phase
 *   (rwsem_reader_phase_trylock());
 * - time-based writer spinning on a reader-owned lock, up to
 *   rwsem_rspin_threshold(), (20 + readers) / 2 us, capped at 25 us;
 * - adaptive disabling: a writer that times out sets both
 *   RWSEM_RD_NONSPINNABLE and RWSEM_WR_NONSPINNABLE in the owner; the
 *   last reader out with waiters clears the writer's bit; a writer that
 *   saw the bits and then queued sets RWSEM_RD_NONSPINNABLE once it
 *   holds the lock, and readers woken carry the bit their slow path saw
 *   (waiter->last_rowner);
 * - rwsem_mark_wake() wakes up to MAX_READERS_WAKEUP readers from
 *   anywhere in the queue, in two passes, and clears the handoff bit once
 *   a reader is woken.
 *
 * Departures:
 * - The kernel's names are kept; this file's struct rw_semaphore and
 *   functions are private to it (v4.6's, v5.1's and today's are in the
 *   same binary), reached through rwsem_v5_3_ops on a struct
 *   rwsem_storage (rwsem_ops.h).
 * - jiffies and sched_clock() are one monotonic clock in ns
 *   (CLOCK_MONOTONIC), as in rwsem_upstream.c: RWSEM_WAIT_TIMEOUT is 4 ms
 *   without a jiffy's rounding.
 * - wake_q: rwsem_wake_q.h (an array on the waker's stack); task
 *   references are not counted (get_task_struct()).
 * - Tasks are the model scheduler's (lib/kernel/sched.h): preemption,
 *   need_resched() and owner->on_cpu are its; vcpu_is_preempted() and
 *   rt_task() are false (the modelled tasks are CFS tasks).
 * - No signals: tasks wait TASK_UNINTERRUPTIBLE; the out_nolock paths
 *   are left out, as they are never taken.
 * - wait_lock is the row's kernel's spinlock (6.18's queued spinlock's
 *   slow path for 5.3, lib/kernel/kernel_locks.c); raw_spin_lock_irq()
 *   turns preemption off, not interrupts; rcu_read_lock() is empty (task
 *   storage outlives the run, and spinning runs with preemption off).
 *
 * 5.3's own window, kept: a reader that takes its bias back before it
 * spins (rwsem_down_read_slowpath()) hides the last up_read() from the
 * waiters, and if a writer set the handoff bit and sleeps, the reader
 * spins on the free lock (no trylock passes the bit) until
 * need_resched(); only when it queues does it wake the writer.  Found
 * oversubscribed (16-32 fio threads on 2 CPUs, after v5.1's run): count
 * WAITERS|HANDOFF, owner NULL, every other task asleep.  In the kernel
 * another task wanting the CPU ends the spin; the model scheduler's tick
 * does (lib/kernel/sched.c).
 * - A reader's spin is counted as a writer's is: spin_acquired,
 *   spin_abandoned and the queueing reasons (rwsem_profile.h) are both
 *   classes'; a reader that joins a reader phase after its spin counts
 *   as spin_acquired.
 * - The cycle counter profiles both slow paths as perf's cpu-clock
 *   samples would (struct rwsem_profile): rwsem_optimistic_spin() is a
 *   function of its own in 5.3, charged whole as a callee of the slow
 *   path that called it.
 */
#include <time.h>

#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/list.h"
#include "../../lib/kernel/sched.h"
#include "../../lib/kernel/spinlock.h"
#include "../../lib/kernel/tsc.h"
#include "osq_lock.h"
#include "rwsem_ops.h"
#include "rwsem_profile.h"
#include "rwsem_wake_q.h"

typedef uint64_t u64;

#define BITS_PER_LONG		(8 * (int)sizeof(long))
#define NSEC_PER_USEC		1000UL
#define NSEC_PER_SEC		1000000000UL

/* include/linux/rwsem.h */
#define RWSEM_UNLOCKED_VALUE	0UL

struct rw_semaphore {
	atomic_long_t count;
	/*
	 * Write owner or one of the read owners as well flags regarding
	 * the current state of the rwsem. Can be used as a speculative
	 * check to see if the write owner is running on the cpu.
	 */
	atomic_long_t owner;
	struct optimistic_spin_queue osq; /* spinner MCS lock */
	spinlock_t wait_lock;		/* raw_spinlock_t */
	struct list_head wait_list;
};

/* What the kernel's helpers are in the model (see the departures above). */
#define vcpu_is_preempted(cpu)		false
#define task_cpu(p)			((p)->cpu)
#define rt_task(p)			false
#define smp_acquire__after_ctrl_dep()	smp_rmb()
#define rcu_read_lock()			do { } while (0)
#define rcu_read_unlock()		do { } while (0)

/* jiffies and sched_clock(): CLOCK_MONOTONIC, in ns */
static inline u64 rwsem_clock_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (u64)ts.tv_sec * NSEC_PER_SEC + ts.tv_nsec;
}

#define jiffies			((unsigned long)rwsem_clock_ns())
#define sched_clock()		rwsem_clock_ns()
#define time_after(a, b)	((long)((b) - (a)) < 0)

#define raw_spin_lock_irq(lock)			rwsem_spin_lock(lock)
#define raw_spin_unlock_irq(lock)		spin_unlock(lock)
#define raw_spin_lock_irqsave(lock, flags)	\
	do { (void)(flags); rwsem_spin_lock(lock); } while (0)
#define raw_spin_unlock_irqrestore(lock, flags)	spin_unlock(lock)

/*
 * The least significant 3 bits of the owner value has the following
 * meanings when set.
 *  - Bit 0: RWSEM_READER_OWNED - The rwsem is owned by readers
 *  - Bit 1: RWSEM_RD_NONSPINNABLE - Readers cannot spin on this lock.
 *  - Bit 2: RWSEM_WR_NONSPINNABLE - Writers cannot spin on this lock.
 *
 * When the rwsem is either owned by an anonymous writer, or it is
 * reader-owned, but a spinning writer has timed out, both nonspinnable
 * bits will be set to disable optimistic spinning by readers and writers.
 * In the later case, the last unlocking reader should then check the
 * writer nonspinnable bit and clear it only to give writers preference
 * to acquire the lock via optimistic spinning, but not readers. Similar
 * action is also done in the reader slowpath.
 *
 * When a writer acquires a rwsem, it puts its task_struct pointer
 * into the owner field. It is cleared after an unlock.
 *
 * When a reader acquires a rwsem, it will also puts its task_struct
 * pointer into the owner field with the RWSEM_READER_OWNED bit set.
 * On unlock, the owner field will largely be left untouched. So
 * for a free or reader-owned rwsem, the owner value may contain
 * information about the last reader that acquires the rwsem.
 *
 * Therefore, any writers that had observed the setting of the writer
 * nonspinnable bit for a given rwsem after they fail to acquire the lock
 * via optimistic spinning will set the reader nonspinnable bit once they
 * acquire the write lock. Similarly, readers that observe the setting
 * of reader nonspinnable bit at slowpath entry will set the reader
 * nonspinnable bits when they acquire the read lock via the wakeup path.
 *
 * Once the reader nonspinnable bit is on, it will only be reset when
 * a writer is able to acquire the rwsem in the fast path or somehow a
 * reader or writer in the slowpath doesn't observe the nonspinable bit.
 *
 * This is to discourage reader optmistic spinning on that particular
 * rwsem and make writers more preferred. This adaptive disabling of reader
 * optimistic spinning will alleviate the negative side effect of this
 * feature.
 */
#define RWSEM_READER_OWNED	(1UL << 0)
#define RWSEM_RD_NONSPINNABLE	(1UL << 1)
#define RWSEM_WR_NONSPINNABLE	(1UL << 2)
#define RWSEM_NONSPINNABLE	(RWSEM_RD_NONSPINNABLE | RWSEM_WR_NONSPINNABLE)
#define RWSEM_OWNER_FLAGS_MASK	(RWSEM_READER_OWNED | RWSEM_NONSPINNABLE)

/*
 * On 64-bit architectures, the bit definitions of the count are:
 *
 * Bit  0    - writer locked bit
 * Bit  1    - waiters present bit
 * Bit  2    - lock handoff bit
 * Bits 3-7  - reserved
 * Bits 8-62 - 55-bit reader count
 * Bit  63   - read fail bit
 *
 * atomic_long_fetch_add() is used to obtain reader lock, whereas
 * atomic_long_cmpxchg() will be used to obtain writer lock.
 *
 * There are three places where the lock handoff bit may be set or cleared.
 * 1) rwsem_mark_wake() for readers.
 * 2) rwsem_try_write_lock() for writers.
 * 3) Error path of rwsem_down_write_slowpath().
 *
 * For all the above cases, wait_lock will be held. A writer must also
 * be the first one in the wait_list to be eligible for setting the handoff
 * bit. So concurrent setting/clearing of handoff bit is not possible.
 */
#define RWSEM_WRITER_LOCKED	(1UL << 0)
#define RWSEM_FLAG_WAITERS	(1UL << 1)
#define RWSEM_FLAG_HANDOFF	(1UL << 2)
#define RWSEM_FLAG_READFAIL	(1UL << (BITS_PER_LONG - 1))

#define RWSEM_READER_SHIFT	8
#define RWSEM_READER_BIAS	(1UL << RWSEM_READER_SHIFT)
#define RWSEM_READER_MASK	(~(RWSEM_READER_BIAS - 1))
#define RWSEM_WRITER_MASK	RWSEM_WRITER_LOCKED
#define RWSEM_LOCK_MASK		(RWSEM_WRITER_MASK|RWSEM_READER_MASK)
#define RWSEM_READ_FAILED_MASK	(RWSEM_WRITER_MASK|RWSEM_FLAG_WAITERS|\
				 RWSEM_FLAG_HANDOFF|RWSEM_FLAG_READFAIL)

/*
 * All writes to owner are protected by WRITE_ONCE() to make sure that
 * store tearing can't happen as optimistic spinners may read and use
 * the owner value concurrently without lock. Read from owner, however,
 * may not need READ_ONCE() as long as the pointer value is only used
 * for comparison and isn't being dereferenced.
 */
static inline void rwsem_set_owner(struct rw_semaphore *sem)
{
	atomic_long_set(&sem->owner, (long)current);
}

static inline void rwsem_clear_owner(struct rw_semaphore *sem)
{
	atomic_long_set(&sem->owner, 0);
}

/*
 * Test the flags in the owner field.
 */
static inline bool rwsem_test_oflags(struct rw_semaphore *sem, long flags)
{
	return atomic_long_read(&sem->owner) & flags;
}

/*
 * The task_struct pointer of the last owning reader will be left in
 * the owner field.
 *
 * Note that the owner value just indicates the task has owned the rwsem
 * previously, it may not be the real owner or one of the real owners
 * anymore when that field is examined, so take it with a grain of salt.
 *
 * The reader non-spinnable bit is preserved.
 */
static inline void __rwsem_set_reader_owned(struct rw_semaphore *sem,
					    struct task_struct *owner)
{
	unsigned long val = (unsigned long)owner | RWSEM_READER_OWNED |
		(atomic_long_read(&sem->owner) & RWSEM_RD_NONSPINNABLE);

	atomic_long_set(&sem->owner, val);
}

static inline void rwsem_set_reader_owned(struct rw_semaphore *sem)
{
	__rwsem_set_reader_owned(sem, current);
}

/* Without CONFIG_DEBUG_RWSEMS */
static inline void rwsem_clear_reader_owned(struct rw_semaphore *sem)
{
}

/*
 * Set the RWSEM_NONSPINNABLE bits if the RWSEM_READER_OWNED flag
 * remains set. Otherwise, the operation will be aborted.
 */
static inline void rwsem_set_nonspinnable(struct rw_semaphore *sem)
{
	unsigned long owner = atomic_long_read(&sem->owner);

	do {
		if (!(owner & RWSEM_READER_OWNED))
			break;
		if (owner & RWSEM_NONSPINNABLE)
			break;
	} while (!atomic_long_try_cmpxchg(&sem->owner, (long *)&owner,
					  owner | RWSEM_NONSPINNABLE));
}

static inline bool rwsem_read_trylock(struct rw_semaphore *sem)
{
	long cnt = atomic_long_add_return_acquire(RWSEM_READER_BIAS, &sem->count);

	if (WARN_ON(cnt < 0))		/* WARN_ON_ONCE */
		rwsem_set_nonspinnable(sem);
	return !(cnt & RWSEM_READ_FAILED_MASK);
}

/*
 * Return the real task structure pointer of the owner and the embedded
 * flags in the owner. pflags must be non-NULL.
 */
static inline struct task_struct *
rwsem_owner_flags(struct rw_semaphore *sem, unsigned long *pflags)
{
	unsigned long owner = atomic_long_read(&sem->owner);

	*pflags = owner & RWSEM_OWNER_FLAGS_MASK;
	return (struct task_struct *)(owner & ~RWSEM_OWNER_FLAGS_MASK);
}

/*
 * Initialize an rwsem:
 */
static void init_rwsem(struct rw_semaphore *sem)
{
	atomic_long_set(&sem->count, RWSEM_UNLOCKED_VALUE);
	spin_lock_init(&sem->wait_lock);
	INIT_LIST_HEAD(&sem->wait_list);
	atomic_long_set(&sem->owner, 0L);
	osq_lock_init(&sem->osq);
	rwsem_grants_init(sem);
}

enum rwsem_waiter_type {
	RWSEM_WAITING_FOR_WRITE,
	RWSEM_WAITING_FOR_READ
};

struct rwsem_waiter {
	struct list_head list;
	struct task_struct *task;
	enum rwsem_waiter_type type;
	unsigned long timeout;
	unsigned long last_rowner;
};
#define rwsem_first_waiter(sem) \
	list_first_entry(&sem->wait_list, struct rwsem_waiter, list)

enum rwsem_wake_type {
	RWSEM_WAKE_ANY,		/* Wake whatever's at head of wait list */
	RWSEM_WAKE_READERS,	/* Wake readers only */
	RWSEM_WAKE_READ_OWNED	/* Waker thread holds the read lock */
};

enum writer_wait_state {
	WRITER_NOT_FIRST,	/* Writer is not first in wait list */
	WRITER_FIRST,		/* Writer is first in wait list     */
	WRITER_HANDOFF		/* Writer is first & handoff needed */
};

/*
 * The typical HZ value is either 250 or 1000. So set the minimum waiting
 * time to at least 4ms or 1 jiffy (if it is higher than 4ms) in the wait
 * queue before initiating the handoff protocol.
 *
 * DIV_ROUND_UP(HZ, 250) jiffies; the model's jiffies are ns.
 */
#define RWSEM_WAIT_TIMEOUT	(NSEC_PER_SEC / 250)

/*
 * Magic number to batch-wakeup waiting readers, even when writers are
 * also present in the queue. This both limits the amount of work the
 * waking thread must do and also prevents any potential counter overflow,
 * however unlikely.
 */
#define MAX_READERS_WAKEUP	0x100

/*
 * handle the lock release when processes blocked on it that can now run
 * - if we come here from up_xxxx(), then the RWSEM_FLAG_WAITERS bit must
 *   have been set.
 * - there must be someone on the queue
 * - the wait_lock must be held by the caller
 * - tasks are marked for wakeup, the caller must later invoke wake_up_q()
 *   to actually wakeup the blocked task(s) and drop the reference count,
 *   preferably when the wait_lock is released
 * - woken process blocks are discarded from the list after having task zeroed
 * - writers are only marked woken if downgrading is false
 */
static void rwsem_mark_wake(struct rw_semaphore *sem,
			    enum rwsem_wake_type wake_type,
			    struct wake_q_head *wake_q)
{
	struct rwsem_waiter *waiter, *tmp;
	long oldcount, woken = 0, adjustment = 0;
	struct list_head wlist;

	/*
	 * Take a peek at the queue head waiter such that we can determine
	 * the wakeup(s) to perform.
	 */
	waiter = rwsem_first_waiter(sem);

	if (waiter->type == RWSEM_WAITING_FOR_WRITE) {
		if (wake_type == RWSEM_WAKE_ANY) {
			/*
			 * Mark writer at the front of the queue for wakeup.
			 * Until the task is actually later awoken later by
			 * the caller, other writers are able to steal it.
			 * Readers, on the other hand, will block as they
			 * will notice the queued writer.
			 */
			wake_q_add(wake_q, waiter->task);
		}

		return;
	}

	/*
	 * No reader wakeup if there are too many of them already.
	 */
	if (unlikely(atomic_long_read(&sem->count) < 0))
		return;

	/*
	 * Writers might steal the lock before we grant it to the next reader.
	 * We prefer to do the first reader grant before counting readers
	 * so we can bail out early if a writer stole the lock.
	 */
	if (wake_type != RWSEM_WAKE_READ_OWNED) {
		struct task_struct *owner;

		adjustment = RWSEM_READER_BIAS;
		oldcount = atomic_long_fetch_add(adjustment, &sem->count);
		if (unlikely(oldcount & RWSEM_WRITER_MASK)) {
			/*
			 * When we've been waiting "too" long (for writers
			 * to give up the lock), request a HANDOFF to
			 * force the issue.
			 */
			if (!(oldcount & RWSEM_FLAG_HANDOFF) &&
			    time_after(jiffies, waiter->timeout))
				adjustment -= RWSEM_FLAG_HANDOFF;

			atomic_long_add(-adjustment, &sem->count);
			return;
		}
		/*
		 * Set it to reader-owned to give spinners an early
		 * indication that readers now have the lock.
		 * The reader nonspinnable bit seen at slowpath entry of
		 * the reader is copied over.
		 */
		owner = waiter->task;
		if (waiter->last_rowner & RWSEM_RD_NONSPINNABLE)
			owner = (void *)((unsigned long)owner |
					 RWSEM_RD_NONSPINNABLE);
		__rwsem_set_reader_owned(sem, owner);
	}

	/*
	 * Grant up to MAX_READERS_WAKEUP read locks to all the readers in the
	 * queue. We know that the woken will be at least 1 as we accounted
	 * for above. Note we increment the 'active part' of the count by the
	 * number of readers before waking any processes up.
	 *
	 * This is an adaptation of the phase-fair R/W locks where at the
	 * reader phase (first waiter is a reader), all readers are eligible
	 * to acquire the lock at the same time irrespective of their order
	 * in the queue. The writers acquire the lock according to their
	 * order in the queue.
	 *
	 * We have to do wakeup in 2 passes to prevent the possibility that
	 * the reader count may be decremented before it is incremented. It
	 * is because the to-be-woken waiter may not have slept yet. So it
	 * may see waiter->task got cleared, finish its critical section and
	 * do an unlock before the reader count increment.
	 *
	 * 1) Collect the read-waiters in a separate list, count them and
	 *    fully increment the reader count in rwsem.
	 * 2) For each waiters in the new list, clear waiter->task and
	 *    put them into wake_q to be woken up later.
	 */
	INIT_LIST_HEAD(&wlist);
	list_for_each_entry_safe(waiter, tmp, &sem->wait_list, list) {
		if (waiter->type == RWSEM_WAITING_FOR_WRITE)
			continue;

		woken++;
		list_move_tail(&waiter->list, &wlist);

		/*
		 * Limit # of readers that can be woken up per wakeup call.
		 */
		if (woken >= MAX_READERS_WAKEUP)
			break;
	}

	adjustment = woken * RWSEM_READER_BIAS - adjustment;
	if (list_empty(&sem->wait_list)) {
		/* hit end of list above */
		adjustment -= RWSEM_FLAG_WAITERS;
	}

	/*
	 * When we've woken a reader, we no longer need to force writers
	 * to give up the lock and we can clear HANDOFF.
	 */
	if (woken && (atomic_long_read(&sem->count) & RWSEM_FLAG_HANDOFF))
		adjustment -= RWSEM_FLAG_HANDOFF;

	if (adjustment)
		atomic_long_add(adjustment, &sem->count);
	rwsem_grants_add(sem, woken);

	/* 2nd pass */
	list_for_each_entry_safe(waiter, tmp, &wlist, list) {
		struct task_struct *tsk;

		tsk = waiter->task;

		/*
		 * Ensure calling get_task_struct() before setting the reader
		 * waiter to nil such that rwsem_down_read_slowpath() cannot
		 * race with do_exit() by always holding a reference count
		 * to the task to wakeup.
		 */
		smp_store_release(&waiter->task, NULL);
		/*
		 * Ensure issuing the wakeup (either by us or someone else)
		 * after setting the reader waiter to nil.
		 */
		wake_q_add_safe(wake_q, tsk);
	}
}

/*
 * This function must be called with the sem->wait_lock held to prevent
 * race conditions between checking the rwsem wait list and setting the
 * sem->count accordingly.
 *
 * If wstate is WRITER_HANDOFF, it will make sure that either the handoff
 * bit is set or the lock is acquired with handoff bit cleared.
 */
static inline bool rwsem_try_write_lock(struct rw_semaphore *sem,
					enum writer_wait_state wstate)
{
	long count, new;

	count = atomic_long_read(&sem->count);
	do {
		bool has_handoff = !!(count & RWSEM_FLAG_HANDOFF);

		if (has_handoff && wstate == WRITER_NOT_FIRST)
			return false;

		new = count;

		if (count & RWSEM_LOCK_MASK) {
			if (has_handoff || (wstate != WRITER_HANDOFF))
				return false;

			new |= RWSEM_FLAG_HANDOFF;
		} else {
			new |= RWSEM_WRITER_LOCKED;
			new &= ~RWSEM_FLAG_HANDOFF;

			if (list_is_singular(&sem->wait_list))
				new &= ~RWSEM_FLAG_WAITERS;
		}
	} while (!atomic_long_try_cmpxchg_acquire(&sem->count, &count, new));

	/*
	 * We have either acquired the lock with handoff bit cleared or
	 * set the handoff bit.
	 */
	if (new & RWSEM_FLAG_HANDOFF)
		return false;

	rwsem_set_owner(sem);
	return true;
}

/*
 * Try to acquire read lock before the reader is put on wait queue.
 * Lock acquisition isn't allowed if the rwsem is locked or a writer handoff
 * is ongoing.
 */
static inline bool rwsem_try_read_lock_unqueued(struct rw_semaphore *sem)
{
	long count = atomic_long_read(&sem->count);

	if (count & (RWSEM_WRITER_MASK | RWSEM_FLAG_HANDOFF))
		return false;

	count = atomic_long_fetch_add_acquire(RWSEM_READER_BIAS, &sem->count);
	if (!(count & (RWSEM_WRITER_MASK | RWSEM_FLAG_HANDOFF))) {
		rwsem_set_reader_owned(sem);
		return true;
	}

	/* Back out the change */
	atomic_long_add(-RWSEM_READER_BIAS, &sem->count);
	return false;
}

/*
 * Try to acquire write lock before the writer has been put on wait queue.
 */
static inline bool rwsem_try_write_lock_unqueued(struct rw_semaphore *sem)
{
	long count = atomic_long_read(&sem->count);

	while (!(count & (RWSEM_LOCK_MASK|RWSEM_FLAG_HANDOFF))) {
		if (atomic_long_try_cmpxchg_acquire(&sem->count, &count,
					count | RWSEM_WRITER_LOCKED)) {
			rwsem_set_owner(sem);
			return true;
		}
	}
	return false;
}

static inline bool owner_on_cpu(struct task_struct *owner)
{
	/*
	 * As lock holder preemption issue, we both skip spinning if
	 * task is not on cpu or its cpu is preempted
	 */
	return READ_ONCE(owner->on_cpu) && !vcpu_is_preempted(task_cpu(owner));
}

static inline bool rwsem_can_spin_on_owner(struct rw_semaphore *sem,
					   unsigned long nonspinnable)
{
	struct task_struct *owner;
	unsigned long flags;
	bool ret = true;

	if (need_resched()) {
		rwsem_queue_why(RWSEM_QUEUE_NOSPIN_NEED_RESCHED);
		return false;
	}

	preempt_disable();
	rcu_read_lock();
	owner = rwsem_owner_flags(sem, &flags);
	/*
	 * Don't check the read-owner as the entry may be stale.
	 */
	if ((flags & nonspinnable) ||
	    (owner && !(flags & RWSEM_READER_OWNED) && !owner_on_cpu(owner))) {
		rwsem_queue_why(flags & nonspinnable ?
				RWSEM_QUEUE_NOSPIN_NONSPINNABLE :
				RWSEM_QUEUE_NOSPIN_OWNER_OFF_CPU);
		ret = false;
	}
	rcu_read_unlock();
	preempt_enable();

	return ret;
}

/*
 * The rwsem_spin_on_owner() function returns the folowing 4 values
 * depending on the lock owner state.
 *   OWNER_NULL  : owner is currently NULL
 *   OWNER_WRITER: when owner changes and is a writer
 *   OWNER_READER: when owner changes and the new owner may be a reader.
 *   OWNER_NONSPINNABLE:
 *		   when optimistic spinning has to stop because either the
 *		   owner stops running, is unknown, or its timeslice has
 *		   been used up.
 */
enum owner_state {
	OWNER_NULL		= 1 << 0,
	OWNER_WRITER		= 1 << 1,
	OWNER_READER		= 1 << 2,
	OWNER_NONSPINNABLE	= 1 << 3,
};
#define OWNER_SPINNABLE		(OWNER_NULL | OWNER_WRITER | OWNER_READER)

static inline enum owner_state
rwsem_owner_state(struct task_struct *owner, unsigned long flags,
		  unsigned long nonspinnable)
{
	if (flags & nonspinnable) {
		rwsem_queue_why(RWSEM_QUEUE_SPIN_NONSPINNABLE);
		return OWNER_NONSPINNABLE;
	}

	if (flags & RWSEM_READER_OWNED)
		return OWNER_READER;

	return owner ? OWNER_WRITER : OWNER_NULL;
}

static __attribute__((noinline)) enum owner_state
rwsem_spin_on_owner(struct rw_semaphore *sem, unsigned long nonspinnable)
{
	struct task_struct *new, *owner;
	unsigned long flags, new_flags;
	enum owner_state state;

	owner = rwsem_owner_flags(sem, &flags);
	state = rwsem_owner_state(owner, flags, nonspinnable);
	if (state != OWNER_WRITER)
		return state;

	rcu_read_lock();
	for (;;) {
		/*
		 * When a waiting writer set the handoff flag, it may spin
		 * on the owner as well. Once that writer acquires the lock,
		 * we can spin on it. So we don't need to quit even when the
		 * handoff bit is set.
		 */
		new = rwsem_owner_flags(sem, &new_flags);
		if ((new != owner) || (new_flags != flags)) {
			state = rwsem_owner_state(new, new_flags, nonspinnable);
			break;
		}

		/*
		 * Ensure we emit the owner->on_cpu, dereference _after_
		 * checking sem->owner still matches owner, if that fails,
		 * owner might point to free()d memory, if it still matches,
		 * the rcu_read_lock() ensures the memory stays valid.
		 */
		barrier();

		if (need_resched() || !owner_on_cpu(owner)) {
			rwsem_queue_why(need_resched() ?
					RWSEM_QUEUE_SPIN_NEED_RESCHED :
					RWSEM_QUEUE_SPIN_OWNER_OFF_CPU);
			state = OWNER_NONSPINNABLE;
			break;
		}

		cpu_relax();
	}
	rcu_read_unlock();

	return state;
}

/* rwsem_spin_on_owner() is noinline: perf charges it to itself. */
static enum owner_state
rwsem_spin_on_owner_profiled(struct rw_semaphore *sem,
			     unsigned long nonspinnable)
{
	uint64_t t0 = rdtsc_ordered(), dt;
	enum owner_state state = rwsem_spin_on_owner(sem, nonspinnable);

	dt = rdtsc_ordered() - t0;
	rwsem_profile.spin_on_owner += dt;
	rwsem_profile.callees += dt;
	return state;
}

static bool rwsem_osq_lock(struct rw_semaphore *sem)
{
	uint64_t t0 = rdtsc_ordered(), dt;
	bool locked = osq_lock(&sem->osq);

	dt = rdtsc_ordered() - t0;
	rwsem_profile.osq += dt;
	rwsem_profile.callees += dt;
	return locked;
}

/*
 * Calculate reader-owned rwsem spinning threshold for writer
 *
 * The more readers own the rwsem, the longer it will take for them to
 * wind down and free the rwsem. So the empirical formula used to
 * determine the actual spinning time limit here is:
 *
 *   Spinning threshold = (10 + nr_readers/2)us
 *
 * The limit is capped to a maximum of 25us (30 readers). This is just
 * a heuristic and is subjected to change in the future.
 */
static inline u64 rwsem_rspin_threshold(struct rw_semaphore *sem)
{
	long count = atomic_long_read(&sem->count);
	int readers = count >> RWSEM_READER_SHIFT;
	u64 delta;

	if (readers > 30)
		readers = 30;
	delta = (20 + readers) * NSEC_PER_USEC / 2;

	return sched_clock() + delta;
}

static bool rwsem_optimistic_spin(struct rw_semaphore *sem, bool wlock)
{
	bool taken = false;
	int prev_owner_state = OWNER_NULL;
	int loop = 0;
	u64 rspin_threshold = 0;
	unsigned long nonspinnable = wlock ? RWSEM_WR_NONSPINNABLE
					   : RWSEM_RD_NONSPINNABLE;

	preempt_disable();

	/* sem->wait_lock should not be held when doing optimistic spinning */
	if (!rwsem_osq_lock(sem)) {
		rwsem_queue_why(RWSEM_QUEUE_SPIN_OSQ);
		goto done;
	}

	/*
	 * Optimistically spin on the owner field and attempt to acquire the
	 * lock whenever the owner changes. Spinning will be stopped when:
	 *  1) the owning writer isn't running; or
	 *  2) readers own the lock and spinning time has exceeded limit.
	 */
	for (;;) {
		enum owner_state owner_state;

		owner_state = rwsem_spin_on_owner_profiled(sem, nonspinnable);
		if (!(owner_state & OWNER_SPINNABLE))
			break;

		/*
		 * Try to acquire the lock
		 */
		taken = wlock ? rwsem_try_write_lock_unqueued(sem)
			      : rwsem_try_read_lock_unqueued(sem);

		if (taken)
			break;

		/*
		 * Time-based reader-owned rwsem optimistic spinning
		 */
		if (wlock && (owner_state == OWNER_READER)) {
			/*
			 * Re-initialize rspin_threshold every time when
			 * the owner state changes from non-reader to reader.
			 * This allows a writer to steal the lock in between
			 * 2 reader phases and have the threshold reset at
			 * the beginning of the 2nd reader phase.
			 */
			if (prev_owner_state != OWNER_READER) {
				if (rwsem_test_oflags(sem, nonspinnable)) {
					rwsem_queue_why(RWSEM_QUEUE_SPIN_NONSPINNABLE);
					break;
				}
				rspin_threshold = rwsem_rspin_threshold(sem);
				loop = 0;
			}

			/*
			 * Check time threshold once every 16 iterations to
			 * avoid calling sched_clock() too frequently so
			 * as to reduce the average latency between the times
			 * when the lock becomes free and when the spinner
			 * is ready to do a trylock.
			 */
			else if (!(++loop & 0xf) && (sched_clock() > rspin_threshold)) {
				rwsem_set_nonspinnable(sem);
				rwsem_queue_why(RWSEM_QUEUE_SPIN_READER_TIMEOUT);
				break;
			}
		}

		/*
		 * An RT task cannot do optimistic spinning if it cannot
		 * be sure the lock holder is running or live-lock may
		 * happen if the current task and the lock holder happen
		 * to run in the same CPU. However, aborting optimistic
		 * spinning while a NULL owner is detected may miss some
		 * opportunity where spinning can continue without causing
		 * problem.
		 *
		 * There are 2 possible cases where an RT task may be able
		 * to continue spinning.
		 *
		 * 1) The lock owner is in the process of releasing the
		 *    lock, sem->owner is cleared but the lock has not
		 *    been released yet.
		 * 2) The lock was free and owner cleared, but another
		 *    task just comes in and acquire the lock before
		 *    we try to get it. The new owner may be a spinnable
		 *    writer.
		 *
		 * To take advantage of two scenarios listed agove, the RT
		 * task is made to retry one more time to see if it can
		 * acquire the lock or continue spinning on the new owning
		 * writer. Of course, if the time lag is long enough or the
		 * new owner is not a writer or spinnable, the RT task will
		 * quit spinning.
		 *
		 * If the owner is a writer, the need_resched() check is
		 * done inside rwsem_spin_on_owner(). If the owner is not
		 * a writer, need_resched() check needs to be done here.
		 */
		if (owner_state != OWNER_WRITER) {
			if (need_resched()) {
				rwsem_queue_why(RWSEM_QUEUE_SPIN_NEED_RESCHED);
				break;
			}
			if (rt_task(current) &&
			   (prev_owner_state != OWNER_WRITER))
				break;
		}
		prev_owner_state = owner_state;

		/*
		 * The cpu_relax() call is a compiler barrier which forces
		 * everything in this loop to be re-loaded. We don't need
		 * memory barriers as we'll eventually observe the right
		 * values at the cost of a few extra spins.
		 */
		cpu_relax();
	}
	osq_unlock(&sem->osq);
done:
	preempt_enable();
	return taken;
}

/*
 * rwsem_optimistic_spin() is a function of its own: charged whole to
 * itself, a callee of the slow path.  Its own callees (osq_lock(),
 * rwsem_spin_on_owner()) are inside it, so they are not added to the
 * callees a second time.
 */
static bool rwsem_optimistic_spin_profiled(struct rw_semaphore *sem,
					   bool wlock)
{
	uint64_t t0 = rdtsc_ordered(), callees = rwsem_profile.callees;
	bool taken = rwsem_optimistic_spin(sem, wlock);

	rwsem_profile.callees = callees + (rdtsc_ordered() - t0);
	return taken;
}

/*
 * Clear the owner's RWSEM_WR_NONSPINNABLE bit if it is set. This should
 * only be called when the reader count reaches 0.
 *
 * This give writers better chance to acquire the rwsem first before
 * readers when the rwsem was being held by readers for a relatively long
 * period of time. Race can happen that an optimistic spinner may have
 * just stolen the rwsem and set the owner, but just clearing the
 * RWSEM_WR_NONSPINNABLE bit will do no harm anyway.
 */
static inline void clear_wr_nonspinnable(struct rw_semaphore *sem)
{
	if (rwsem_test_oflags(sem, RWSEM_WR_NONSPINNABLE))
		atomic_long_andnot(RWSEM_WR_NONSPINNABLE, &sem->owner);
}

/*
 * This function is called when the reader fails to acquire the lock via
 * optimistic spinning. In this case we will still attempt to do a trylock
 * when comparing the rwsem state right now with the state when entering
 * the slowpath indicates that the reader is still in a valid reader phase.
 * This happens when the following conditions are true:
 *
 * 1) The lock is currently reader owned, and
 * 2) The lock is previously not reader-owned or the last read owner changes.
 *
 * In the former case, we have transitioned from a writer phase to a
 * reader-phase while spinning. In the latter case, it means the reader
 * phase hasn't ended when we entered the optimistic spinning loop. In
 * both cases, the reader is eligible to acquire the lock. This is the
 * secondary path where a read lock is acquired optimistically.
 *
 * The reader non-spinnable bit wasn't set at time of entry or it will
 * not be here at all.
 */
static inline bool rwsem_reader_phase_trylock(struct rw_semaphore *sem,
					      unsigned long last_rowner)
{
	unsigned long owner = atomic_long_read(&sem->owner);

	if (!(owner & RWSEM_READER_OWNED))
		return false;

	if (((owner ^ last_rowner) & ~RWSEM_OWNER_FLAGS_MASK) &&
	    rwsem_try_read_lock_unqueued(sem))
		return true;
	return false;
}

/*
 * What holds the lock as a waiter goes to sleep (rwsem_profile.h); a
 * queued reader's bias is out of the count.
 */
static enum rwsem_sleep_reason rwsem_read_sleep_reason(struct rw_semaphore *sem)
{
	long count = atomic_long_read(&sem->count);

	if (count & RWSEM_WRITER_LOCKED)
		return RWSEM_SLEEP_READ_WRITER;
	if (count & RWSEM_FLAG_HANDOFF)
		return RWSEM_SLEEP_READ_HANDOFF;
	if (count & RWSEM_READER_MASK)
		return RWSEM_SLEEP_READ_WAITER_READERS;
	return RWSEM_SLEEP_READ_WAITER_FREE;
}

static enum rwsem_sleep_reason
rwsem_write_sleep_reason(struct rw_semaphore *sem)
{
	long count = atomic_long_read(&sem->count);

	if (count & RWSEM_WRITER_LOCKED)
		return RWSEM_SLEEP_WRITE_WRITER;
	if (count & RWSEM_READER_MASK)
		return rwsem_granted_waiting(sem) ?
		       RWSEM_SLEEP_WRITE_GRANTED_READER :
		       RWSEM_SLEEP_WRITE_READER;
	if (count & RWSEM_FLAG_HANDOFF)
		return RWSEM_SLEEP_WRITE_HANDOFF;
	return RWSEM_SLEEP_WRITE_FREE;
}

/* The read slow path's profile, at each of its returns. */
static void rwsem_read_slowpath_exit(struct rwsem_slowpath *sp)
{
	rwsem_slowpath_exit(sp, &rwsem_profile.read_failed,
			    &rwsem_profile.read_failed_callees);
}

/*
 * Wait for the read lock to be granted
 */
static struct rw_semaphore *
rwsem_down_read_slowpath(struct rw_semaphore *sem, int state)
{
	long count, adjustment = -RWSEM_READER_BIAS;
	struct rwsem_waiter waiter;
	struct rwsem_slowpath sp;
	DEFINE_WAKE_Q(wake_q);
	bool wake = false;

	rwsem_slowpath_enter(&sp);

	/*
	 * Save the current read-owner of rwsem, if available, and the
	 * reader nonspinnable bit.
	 */
	waiter.last_rowner = atomic_long_read(&sem->owner);
	if (!(waiter.last_rowner & RWSEM_READER_OWNED))
		waiter.last_rowner &= RWSEM_RD_NONSPINNABLE;

	if (!rwsem_can_spin_on_owner(sem, RWSEM_RD_NONSPINNABLE)) {
		rwsem_spin_abandoned();
		goto queue;
	}

	/*
	 * Undo read bias from down_read() and do optimistic spinning.
	 */
	atomic_long_add(-RWSEM_READER_BIAS, &sem->count);
	adjustment = 0;
	if (rwsem_optimistic_spin_profiled(sem, false)) {
		/*
		 * Wake up other readers in the wait list if the front
		 * waiter is a reader.
		 */
		if ((atomic_long_read(&sem->count) & RWSEM_FLAG_WAITERS)) {
			raw_spin_lock_irq(&sem->wait_lock);
			if (!list_empty(&sem->wait_list))
				rwsem_mark_wake(sem, RWSEM_WAKE_READ_OWNED,
						&wake_q);
			raw_spin_unlock_irq(&sem->wait_lock);
			wake_up_q(&wake_q);
		}
		rwsem_profile.spin_acquired++;
		rwsem_read_slowpath_exit(&sp);
		return sem;
	} else if (rwsem_reader_phase_trylock(sem, waiter.last_rowner)) {
		rwsem_profile.spin_acquired++;
		rwsem_read_slowpath_exit(&sp);
		return sem;
	}
	rwsem_spin_abandoned();

queue:
	waiter.task = current;
	waiter.type = RWSEM_WAITING_FOR_READ;
	waiter.timeout = jiffies + RWSEM_WAIT_TIMEOUT;

	raw_spin_lock_irq(&sem->wait_lock);
	if (list_empty(&sem->wait_list)) {
		/*
		 * In case the wait queue is empty and the lock isn't owned
		 * by a writer or has the handoff bit set, this reader can
		 * exit the slowpath and return immediately as its
		 * RWSEM_READER_BIAS has already been set in the count.
		 */
		if (adjustment && !(atomic_long_read(&sem->count) &
		     (RWSEM_WRITER_MASK | RWSEM_FLAG_HANDOFF))) {
			/* Provide lock ACQUIRE */
			smp_acquire__after_ctrl_dep();
#ifdef KSCALE_SANITIZE
			/* the fence as ThreadSanitizer sees one */
			(void)__atomic_load_n(&sem->count.counter,
					      __ATOMIC_ACQUIRE);
#endif
			raw_spin_unlock_irq(&sem->wait_lock);
			rwsem_set_reader_owned(sem);
			rwsem_read_slowpath_exit(&sp);
			return sem;
		}
		adjustment += RWSEM_FLAG_WAITERS;
	}
	list_add_tail(&waiter.list, &sem->wait_list);

	/* we're now waiting on the lock, but no longer actively locking */
	if (adjustment)
		count = atomic_long_add_return(adjustment, &sem->count);
	else
		count = atomic_long_read(&sem->count);

	/*
	 * If there are no active locks, wake the front queued process(es).
	 *
	 * If there are no writers and we are first in the queue,
	 * wake our own waiter to join the existing active readers !
	 */
	if (!(count & RWSEM_LOCK_MASK)) {
		clear_wr_nonspinnable(sem);
		wake = true;
	}
	if (wake || (!(count & RWSEM_WRITER_MASK) &&
		    (adjustment & RWSEM_FLAG_WAITERS)))
		rwsem_mark_wake(sem, RWSEM_WAKE_ANY, &wake_q);

	raw_spin_unlock_irq(&sem->wait_lock);
	wake_up_q(&wake_q);

	/* wait to be given the lock */
	for (;;) {
		set_current_state(state);
		if (!smp_load_acquire(&waiter.task)) {
			/* Orders against rwsem_mark_wake()'s smp_store_release() */
			break;
		}
		rwsem_sleep_why(rwsem_read_sleep_reason(sem));
		rwsem_schedule();
	}
	rwsem_grant_taken(sem);

	__set_current_state(TASK_RUNNING);
	rwsem_read_slowpath_exit(&sp);
	return sem;
}

/*
 * This function is called by the a write lock owner. So the owner value
 * won't get changed by others.
 */
static inline void rwsem_disable_reader_optspin(struct rw_semaphore *sem,
						bool disable)
{
	if (unlikely(disable))
		atomic_long_or(RWSEM_RD_NONSPINNABLE, &sem->owner);
}

/* The write slow path's profile, at each of its returns. */
static void rwsem_write_slowpath_exit(struct rwsem_slowpath *sp)
{
	rwsem_slowpath_exit(sp, &rwsem_profile.write_failed,
			    &rwsem_profile.write_failed_callees);
}

/*
 * Wait until we successfully acquire the write lock
 */
static struct rw_semaphore *
rwsem_down_write_slowpath(struct rw_semaphore *sem, int state)
{
	long count;
	bool disable_rspin;
	enum writer_wait_state wstate;
	struct rwsem_waiter waiter;
	struct rw_semaphore *ret = sem;
	struct rwsem_slowpath sp;
	DEFINE_WAKE_Q(wake_q);

	rwsem_slowpath_enter(&sp);

	/* do optimistic spinning and steal lock if possible */
	if (rwsem_can_spin_on_owner(sem, RWSEM_WR_NONSPINNABLE) &&
	    rwsem_optimistic_spin_profiled(sem, true)) {
		rwsem_profile.spin_acquired++;
		rwsem_write_slowpath_exit(&sp);
		return sem;
	}
	rwsem_spin_abandoned();

	/*
	 * Disable reader optimistic spinning for this rwsem after
	 * acquiring the write lock when the setting of the nonspinnable
	 * bits are observed.
	 */
	disable_rspin = atomic_long_read(&sem->owner) & RWSEM_NONSPINNABLE;

	/*
	 * Optimistic spinning failed, proceed to the slowpath
	 * and block until we can acquire the sem.
	 */
	waiter.task = current;
	waiter.type = RWSEM_WAITING_FOR_WRITE;
	waiter.timeout = jiffies + RWSEM_WAIT_TIMEOUT;

	raw_spin_lock_irq(&sem->wait_lock);

	/* account for this before adding a new element to the list */
	wstate = list_empty(&sem->wait_list) ? WRITER_FIRST : WRITER_NOT_FIRST;

	list_add_tail(&waiter.list, &sem->wait_list);

	/* we're now waiting on the lock */
	if (wstate == WRITER_NOT_FIRST) {
		count = atomic_long_read(&sem->count);

		/*
		 * If there were already threads queued before us and:
		 *  1) there are no no active locks, wake the front
		 *     queued process(es) as the handoff bit might be set.
		 *  2) there are no active writers and some readers, the lock
		 *     must be read owned; so we try to wake any read lock
		 *     waiters that were queued ahead of us.
		 */
		if (count & RWSEM_WRITER_MASK)
			goto wait;

		rwsem_mark_wake(sem, (count & RWSEM_READER_MASK)
					? RWSEM_WAKE_READERS
					: RWSEM_WAKE_ANY, &wake_q);

		if (!wake_q_empty(&wake_q)) {
			/*
			 * We want to minimize wait_lock hold time especially
			 * when a large number of readers are to be woken up.
			 */
			raw_spin_unlock_irq(&sem->wait_lock);
			wake_up_q(&wake_q);
			wake_q_init(&wake_q);	/* Used again, reinit */
			raw_spin_lock_irq(&sem->wait_lock);
		}
	} else {
		atomic_long_or(RWSEM_FLAG_WAITERS, &sem->count);
	}

wait:
	/* wait until we successfully acquire the lock */
	set_current_state(state);
	for (;;) {
		if (rwsem_try_write_lock(sem, wstate))
			break;

		raw_spin_unlock_irq(&sem->wait_lock);

		/* Block until there are no active lockers. */
		for (;;) {
			rwsem_sleep_why(rwsem_write_sleep_reason(sem));
			rwsem_schedule();
			set_current_state(state);
			/*
			 * If HANDOFF bit is set, unconditionally do
			 * a trylock.
			 */
			if (wstate == WRITER_HANDOFF)
				break;

			/* the head read without wait_lock, as 5.3 reads it */
			if ((wstate == WRITER_NOT_FIRST) &&
			    (READ_ONCE(sem->wait_list.next) == &waiter.list))
				wstate = WRITER_FIRST;

			count = atomic_long_read(&sem->count);
			if (!(count & RWSEM_LOCK_MASK))
				break;

			/*
			 * The setting of the handoff bit is deferred
			 * until rwsem_try_write_lock() is called.
			 */
			if ((wstate == WRITER_FIRST) && (rt_task(current) ||
			    time_after(jiffies, waiter.timeout))) {
				wstate = WRITER_HANDOFF;
				break;
			}
		}

		raw_spin_lock_irq(&sem->wait_lock);
	}
	__set_current_state(TASK_RUNNING);
	list_del(&waiter.list);
	rwsem_disable_reader_optspin(sem, disable_rspin);
	raw_spin_unlock_irq(&sem->wait_lock);
	rwsem_write_slowpath_exit(&sp);

	return ret;
}

/*
 * handle waking up a waiter on the semaphore
 * - up_read/up_write has decremented the active part of count if we come here
 */
static struct rw_semaphore *rwsem_wake(struct rw_semaphore *sem, long count)
{
	unsigned long flags = 0;
	DEFINE_WAKE_Q(wake_q);

	raw_spin_lock_irqsave(&sem->wait_lock, flags);

	if (!list_empty(&sem->wait_list))
		rwsem_mark_wake(sem, RWSEM_WAKE_ANY, &wake_q);

	raw_spin_unlock_irqrestore(&sem->wait_lock, flags);
	wake_up_q(&wake_q);

	return sem;
}

/*
 * downgrade a write lock into a read lock
 * - caller incremented waiting part of count and discovered it still negative
 * - just wake up any readers at the front of the queue
 */
static struct rw_semaphore *rwsem_downgrade_wake(struct rw_semaphore *sem)
{
	unsigned long flags = 0;
	DEFINE_WAKE_Q(wake_q);

	raw_spin_lock_irqsave(&sem->wait_lock, flags);

	if (!list_empty(&sem->wait_list))
		rwsem_mark_wake(sem, RWSEM_WAKE_READ_OWNED, &wake_q);

	raw_spin_unlock_irqrestore(&sem->wait_lock, flags);
	wake_up_q(&wake_q);

	return sem;
}

/*
 * lock for reading
 */
static inline void __down_read(struct rw_semaphore *sem)
{
	if (!rwsem_read_trylock(sem))
		rwsem_down_read_slowpath(sem, TASK_UNINTERRUPTIBLE);
	else
		rwsem_set_reader_owned(sem);
}

static inline int __down_read_trylock(struct rw_semaphore *sem)
{
	/*
	 * Optimize for the case when the rwsem is not locked at all.
	 */
	long tmp = RWSEM_UNLOCKED_VALUE;

	do {
		if (atomic_long_try_cmpxchg_acquire(&sem->count, &tmp,
					tmp + RWSEM_READER_BIAS)) {
			rwsem_set_reader_owned(sem);
			return 1;
		}
	} while (!(tmp & RWSEM_READ_FAILED_MASK));
	return 0;
}

/*
 * lock for writing
 */
static inline void __down_write(struct rw_semaphore *sem)
{
	long tmp = RWSEM_UNLOCKED_VALUE;

	if (unlikely(!atomic_long_try_cmpxchg_acquire(&sem->count, &tmp,
						      RWSEM_WRITER_LOCKED)))
		rwsem_down_write_slowpath(sem, TASK_UNINTERRUPTIBLE);
	else
		rwsem_set_owner(sem);
}

static inline int __down_write_trylock(struct rw_semaphore *sem)
{
	long tmp = RWSEM_UNLOCKED_VALUE;

	if (atomic_long_try_cmpxchg_acquire(&sem->count, &tmp,
					    RWSEM_WRITER_LOCKED)) {
		rwsem_set_owner(sem);
		return true;
	}
	return false;
}

/*
 * unlock after reading
 */
static inline void __up_read(struct rw_semaphore *sem)
{
	long tmp;

	rwsem_clear_reader_owned(sem);
	tmp = atomic_long_add_return_release(-RWSEM_READER_BIAS, &sem->count);
	if (unlikely((tmp & (RWSEM_LOCK_MASK|RWSEM_FLAG_WAITERS)) ==
		      RWSEM_FLAG_WAITERS)) {
		clear_wr_nonspinnable(sem);
		rwsem_wake(sem, tmp);
	}
}

/*
 * unlock after writing
 */
static inline void __up_write(struct rw_semaphore *sem)
{
	long tmp;

	rwsem_clear_owner(sem);
	tmp = atomic_long_fetch_add_release(-RWSEM_WRITER_LOCKED, &sem->count);
	if (unlikely(tmp & RWSEM_FLAG_WAITERS))
		rwsem_wake(sem, tmp);
}

/*
 * downgrade write lock to read lock
 */
static inline void __downgrade_write(struct rw_semaphore *sem)
{
	long tmp;

	/*
	 * When downgrading from exclusive to shared ownership,
	 * anything inside the write-locked region cannot leak
	 * into the read side. In contrast, anything in the
	 * read-locked region is ok to be re-ordered into the
	 * write side. As such, rely on RELEASE semantics.
	 */
	tmp = atomic_long_fetch_add_release(
		-RWSEM_WRITER_LOCKED+RWSEM_READER_BIAS, &sem->count);
	rwsem_set_reader_owned(sem);
	if (tmp & RWSEM_FLAG_WAITERS)
		rwsem_downgrade_wake(sem);
}

static void down_read(struct rw_semaphore *sem)
{
	might_sleep();
	__down_read(sem);
}

static int down_read_trylock(struct rw_semaphore *sem)
{
	return __down_read_trylock(sem);
}

static void down_write(struct rw_semaphore *sem)
{
	might_sleep();
	__down_write(sem);
}

static int down_write_trylock(struct rw_semaphore *sem)
{
	return __down_write_trylock(sem);
}

static void up_read(struct rw_semaphore *sem)
{
	__up_read(sem);
}

static void up_write(struct rw_semaphore *sem)
{
	__up_write(sem);
}

static void downgrade_write(struct rw_semaphore *sem)
{
	__downgrade_write(sem);
}

DEFINE_RWSEM_OPS(rwsem_v5_3_ops, "v5.3");

void rwsem_v5_3_state(struct rwsem_storage *s, struct rwsem_state *st)
{
	struct rw_semaphore *sem = (struct rw_semaphore *)s;
	struct rwsem_waiter *waiter;
	unsigned long flags;

	spin_lock(&sem->wait_lock);
	st->count = atomic_long_read(&sem->count);
	st->owner = atomic_long_read(&sem->owner);
	st->nr_waiters = st->nr_write_waiters = 0;
	list_for_each_entry(waiter, &sem->wait_list, list) {
		st->nr_waiters++;
		if (waiter->type == RWSEM_WAITING_FOR_WRITE)
			st->nr_write_waiters++;
	}
	spin_unlock(&sem->wait_lock);

	flags = st->owner & RWSEM_OWNER_FLAGS_MASK;
	st->owner_task = (struct task_struct *)
			 (st->owner & ~RWSEM_OWNER_FLAGS_MASK);
	st->writer_locked = st->count & RWSEM_WRITER_LOCKED;
	st->active = (long)((unsigned long)st->count & RWSEM_READER_MASK &
			    ~RWSEM_FLAG_READFAIL) >> RWSEM_READER_SHIFT;
	st->active += st->writer_locked;
	st->unlocked = st->count == (long)RWSEM_UNLOCKED_VALUE;
	st->reader_owned = flags & RWSEM_READER_OWNED;
	st->nonspinnable = flags & RWSEM_WR_NONSPINNABLE;
	st->flag_waiters = st->count & RWSEM_FLAG_WAITERS;
	st->flag_handoff = st->count & RWSEM_FLAG_HANDOFF;
	st->osq_locked = osq_is_locked(&sem->osq);
}
