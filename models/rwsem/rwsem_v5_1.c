// SPDX-License-Identifier: GPL-2.0
/*
 * The rwsem the "before" of Waiman Long's "locking/rwsem: Rwsem
 * rearchitecture part 2" (v8, 2019-05-20) ran: "a 5.1 based kernel", the
 * tip tree with parts 0 and 1 of the rework merged, which became Linux
 * 5.2 (its merge window opened on 5.1 a week before the series).  So
 * this follows 5.2's kernel/locking/rwsem-xadd.c, the generic fast paths
 * of its kernel/locking/rwsem.h (part 0 removed x86's asm rwsem.h and
 * rwsem.S) and its kernel/locking/rwsem.c, x86_64 with
 * CONFIG_RWSEM_SPIN_ON_OWNER=y, without CONFIG_DEBUG_RWSEMS, lockdep or
 * lock events: read in the series' own diffs against that tree (v8 02,
 * 03 and 06 remove or rewrite these lines), in a torvalds/linux
 * rwsem.h of the same count (5.0) and a rwsem-xadd.c of 4.x with the
 * 2-pass reader wake-up patched in (its diff, part 1).  What it has over
 * v4.6 (rwsem_xadd.c, the same 64-bit count and biases):
 *
 * - the generic fast paths: __down_write() succeeds only on a count that
 *   becomes exactly RWSEM_ACTIVE_WRITE_BIAS, so it never takes a free
 *   lock ahead of queued waiters as v4.6's x86 asm did (the slow path's
 *   rwsem_try_write_lock_unqueued() still may); __down_write_trylock()
 *   is one cmpxchg from RWSEM_UNLOCKED_VALUE; __up_write() calls
 *   rwsem_wake() whenever waiters are queued (count < 0);
 * - the owner holds the last reader's task with RWSEM_READER_OWNED |
 *   RWSEM_ANONYMOUSLY_OWNED (4.20), which stops spinners as the seed's
 *   RWSEM_READER_OWNED did (4.8); owner_on_cpu();
 * - wake-ups through a wake_q after wait_lock is dropped (4.10), except
 *   the readers a queueing writer wakes, under wait_lock;
 *   __rwsem_mark_wake() grants every reader at the head in two passes
 *   (the count first, then each waiter) and marks the first woken the
 *   owner;
 * - a reader finding the queue empty and no writer returns at once
 *   (its bias already counted), and readers wait with a timeout-free
 *   loop; no handoff: writers steal the lock whenever it is free.
 *
 * Departures:
 * - The kernel's names are kept; this file's struct rw_semaphore and
 *   functions are private to it (v4.6's, v5.3's and today's are in the
 *   same binary), reached through rwsem_v5_1_ops on a struct
 *   rwsem_storage (rwsem_ops.h).
 * - wake_q: rwsem_wake_q.h; task references are not counted
 *   (get_task_struct()): callers keep a task's storage until it has left
 *   every lock.
 * - Tasks are the model scheduler's (lib/kernel/sched.h): preemption,
 *   need_resched() and owner->on_cpu are its; vcpu_is_preempted() and
 *   rt_task() are false (the modelled tasks are CFS tasks).
 * - No signals: tasks wait TASK_UNINTERRUPTIBLE; the out_nolock paths are
 *   left out, as they are never taken.
 * - wait_lock is the row's kernel's spinlock (qspinlock-v4.6 for 5.1,
 *   lib/kernel/kernel_locks.c); raw_spin_lock_irq() turns preemption off,
 *   not interrupts; rcu_read_lock() is empty.
 * - A reader's wait loop reads waiter.task with an acquire (the kernel's
 *   plain load is ordered by set_current_state()'s barrier on x86;
 *   ThreadSanitizer sees no fence).  Likewise, in ThreadSanitizer's build
 *   only, the empty-queue exit of the read slow path loads the count with
 *   an acquire: 5.2 has none there (5.3-rc added smp_acquire__after_ctrl_dep(),
 *   "locking/rwsem: Add missing ACQUIRE to read_slowpath exit when queue
 *   is empty"); x86's TSO orders the reader's section after its load.
 * - The cycle counter profiles both slow paths as perf's cpu-clock
 *   samples would (struct rwsem_profile), rwsem_optimistic_spin()
 *   inlined into rwsem_down_write_failed() as in rwsem_xadd.c.
 */
#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/list.h"
#include "../../lib/kernel/sched.h"
#include "../../lib/kernel/spinlock.h"
#include "../../lib/kernel/tsc.h"
#include "osq_lock.h"
#include "rwsem_ops.h"
#include "rwsem_profile.h"
#include "rwsem_wake_q.h"

/* include/linux/rwsem.h */
#define RWSEM_UNLOCKED_VALUE		0L

struct rw_semaphore {
	atomic_long_t count;
	struct list_head wait_list;
	spinlock_t wait_lock;		/* raw_spinlock_t */
	struct optimistic_spin_queue osq; /* spinner MCS lock */
	/*
	 * Write owner. Used as a speculative check to see
	 * if the owner is running on the cpu.
	 */
	struct task_struct *owner;
};

/* What the kernel's helpers are in the model (see the departures above). */
#define vcpu_is_preempted(cpu)		false
#define task_cpu(p)			((p)->cpu)
#define rt_task(p)			false
#define rcu_read_lock()			do { } while (0)
#define rcu_read_unlock()		do { } while (0)

#define raw_spin_lock_irq(lock)			rwsem_spin_lock(lock)
#define raw_spin_unlock_irq(lock)		spin_unlock(lock)
#define raw_spin_lock_irqsave(lock, flags)	\
	do { (void)(flags); rwsem_spin_lock(lock); } while (0)
#define raw_spin_trylock_irqsave(lock, flags)	\
	((void)(flags), spin_trylock(lock))
#define raw_spin_unlock_irqrestore(lock, flags)	spin_unlock(lock)

/*
 * kernel/locking/rwsem.h
 *
 * The least significant 2 bits of the owner value has the following
 * meanings when set.
 *  - RWSEM_READER_OWNED (bit 0): The rwsem is owned by readers
 *  - RWSEM_ANONYMOUSLY_OWNED (bit 1): The rwsem is anonymously owned,
 *    i.e. the owner(s) cannot be readily determined. It can be reader
 *    owned or the owning writer is indeterminate.
 *
 * When a writer acquires a rwsem, it puts its task_struct pointer
 * into the owner field. It is cleared after an unlock.
 *
 * When a reader acquires a rwsem, it will also puts its task_struct
 * pointer into the owner field with both the RWSEM_READER_OWNED and
 * RWSEM_ANONYMOUSLY_OWNED bits set. On unlock, the owner field will
 * largely be left untouched. So for a free or reader-owned rwsem,
 * the owner value may contain information about the last reader that
 * acquires the rwsem. The anonymous bit is set because that particular
 * reader may or may not still own the lock.
 */
#define RWSEM_READER_OWNED	(1UL << 0)
#define RWSEM_ANONYMOUSLY_OWNED	(1UL << 1)

/*
 * the semaphore definition
 */
#define RWSEM_ACTIVE_MASK		0xffffffffL
#define RWSEM_ACTIVE_BIAS		0x00000001L
#define RWSEM_WAITING_BIAS		(-RWSEM_ACTIVE_MASK-1)
#define RWSEM_ACTIVE_READ_BIAS		RWSEM_ACTIVE_BIAS
#define RWSEM_ACTIVE_WRITE_BIAS		(RWSEM_WAITING_BIAS + RWSEM_ACTIVE_BIAS)

/*
 * All writes to owner are protected by WRITE_ONCE() to make sure that
 * store tearing can't happen as optimistic spinners may read and use
 * the owner value concurrently without lock. Read from owner, however,
 * may not need READ_ONCE() as long as the pointer value is only used
 * for comparison and isn't being dereferenced.
 */
static inline void rwsem_set_owner(struct rw_semaphore *sem)
{
	WRITE_ONCE(sem->owner, current);
}

static inline void rwsem_clear_owner(struct rw_semaphore *sem)
{
	WRITE_ONCE(sem->owner, NULL);
}

/*
 * The task_struct pointer of the last owning reader will be left in
 * the owner field.
 *
 * Note that the owner value just indicates the task has owned the rwsem
 * previously, it may not be the real owner or one of the real owners
 * anymore when that field is examined, so take it with a grain of salt.
 */
static inline void __rwsem_set_reader_owned(struct rw_semaphore *sem,
					    struct task_struct *owner)
{
	unsigned long val = (unsigned long)owner | RWSEM_READER_OWNED
						 | RWSEM_ANONYMOUSLY_OWNED;

	WRITE_ONCE(sem->owner, (struct task_struct *)val);
}

static inline void rwsem_set_reader_owned(struct rw_semaphore *sem)
{
	__rwsem_set_reader_owned(sem, current);
}

/*
 * Return true if the a rwsem waiter can spin on the rwsem's owner
 * and steal the lock, i.e. the lock is not anonymously owned.
 * N.B. !owner is considered spinnable.
 */
static inline bool is_rwsem_owner_spinnable(struct task_struct *owner)
{
	return !((unsigned long)owner & RWSEM_ANONYMOUSLY_OWNED);
}

/* Without CONFIG_DEBUG_RWSEMS */
static inline void rwsem_clear_reader_owned(struct rw_semaphore *sem)
{
}

/* kernel/locking/rwsem-xadd.c */

/*
 * Initialize an rwsem:
 */
static void init_rwsem(struct rw_semaphore *sem)
{
	atomic_long_set(&sem->count, RWSEM_UNLOCKED_VALUE);
	spin_lock_init(&sem->wait_lock);
	INIT_LIST_HEAD(&sem->wait_list);
	sem->owner = NULL;
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
};

enum rwsem_wake_type {
	RWSEM_WAKE_ANY,		/* Wake whatever's at head of wait list */
	RWSEM_WAKE_READERS,	/* Wake readers only */
	RWSEM_WAKE_READ_OWNED	/* Waker thread holds the read lock */
};

/*
 * handle the lock release when processes blocked on it that can now run
 * - if we come here from up_xxxx(), then:
 *   - the 'active part' of count (&0x0000ffff) reached 0 (but may have changed)
 *   - the 'waiting part' of count (&0xffff0000) is -ve (and will still be so)
 * - there must be someone on the queue
 * - the wait_lock must be held by the caller
 * - tasks are marked for wakeup, the caller must later invoke wake_up_q()
 *   to actually wakeup the blocked task(s) and drop the reference count,
 *   preferably when the wait_lock is released
 * - woken process blocks are discarded from the list after having task zeroed
 * - writers are only marked woken if downgrading is false
 */
static void __rwsem_mark_wake(struct rw_semaphore *sem,
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
	waiter = list_first_entry(&sem->wait_list, struct rwsem_waiter, list);

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
	 * Writers might steal the lock before we grant it to the next reader.
	 * We prefer to do the first reader grant before counting readers
	 * so we can bail out early if a writer stole the lock.
	 */
	if (wake_type != RWSEM_WAKE_READ_OWNED) {
		adjustment = RWSEM_ACTIVE_READ_BIAS;
 try_reader_grant:
		oldcount = atomic_long_fetch_add(adjustment, &sem->count);
		if (unlikely(oldcount < RWSEM_WAITING_BIAS)) {
			/*
			 * If the count is still less than RWSEM_WAITING_BIAS
			 * after removing the adjustment, it is assumed that
			 * a writer has stolen the lock. We have to undo our
			 * reader grant.
			 */
			if (atomic_long_add_return(-adjustment, &sem->count) <
			    RWSEM_WAITING_BIAS)
				return;

			/* Last active locker left. Retry waking readers. */
			goto try_reader_grant;
		}
		/*
		 * Set it to reader-owned to give spinners an early
		 * indication that readers now have the lock.
		 */
		__rwsem_set_reader_owned(sem, waiter->task);
	}

	/*
	 * Grant an infinite number of read locks to the readers at the front
	 * of the queue. We know that woken will be at least 1 as we accounted
	 * for above. Note we increment the 'active part' of the count by the
	 * number of readers before waking any processes up.
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
	list_for_each_entry(waiter, &sem->wait_list, list) {
		if (waiter->type == RWSEM_WAITING_FOR_WRITE)
			break;

		woken++;
	}
	list_cut_before(&wlist, &sem->wait_list, &waiter->list);

	adjustment = woken * RWSEM_ACTIVE_READ_BIAS - adjustment;
	if (list_empty(&sem->wait_list)) {
		/* hit end of list above */
		adjustment -= RWSEM_WAITING_BIAS;
	}

	if (adjustment)
		atomic_long_add(adjustment, &sem->count);
	rwsem_grants_add(sem, woken);

	/* 2nd pass */
	list_for_each_entry_safe(waiter, tmp, &wlist, list) {
		struct task_struct *tsk;

		tsk = waiter->task;

		/*
		 * Ensure calling get_task_struct() before setting the reader
		 * waiter to nil such that rwsem_down_read_failed() cannot
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
 * What holds the lock as a waiter goes to sleep (rwsem_profile.h), from
 * the count: with waiters queued, readers add their active bias to
 * RWSEM_WAITING_BIAS, a writer takes the count below it.
 */
static enum rwsem_sleep_reason rwsem_read_sleep_reason(struct rw_semaphore *sem)
{
	long count = atomic_long_read(&sem->count);

	if (count < RWSEM_WAITING_BIAS)
		return RWSEM_SLEEP_READ_WRITER;
	if (count & RWSEM_ACTIVE_MASK)
		return RWSEM_SLEEP_READ_WAITER_READERS;
	return RWSEM_SLEEP_READ_WAITER_FREE;
}

static enum rwsem_sleep_reason
rwsem_write_sleep_reason(struct rw_semaphore *sem)
{
	long count = atomic_long_read(&sem->count);

	if (!(count & RWSEM_ACTIVE_MASK))
		return RWSEM_SLEEP_WRITE_FREE;
	if (count < RWSEM_WAITING_BIAS)
		return RWSEM_SLEEP_WRITE_WRITER;
	if (rwsem_granted_waiting(sem))
		return RWSEM_SLEEP_WRITE_GRANTED_READER;
	return RWSEM_SLEEP_WRITE_READER;
}

/*
 * Wait for the read lock to be granted
 */
static struct rw_semaphore *
__rwsem_down_read_failed_common(struct rw_semaphore *sem, int state)
{
	long count, adjustment = -RWSEM_ACTIVE_READ_BIAS;
	struct rwsem_waiter waiter;
	struct rwsem_slowpath sp;
	DEFINE_WAKE_Q(wake_q);

	rwsem_slowpath_enter(&sp);
	waiter.task = current;
	waiter.type = RWSEM_WAITING_FOR_READ;

	raw_spin_lock_irq(&sem->wait_lock);
	if (list_empty(&sem->wait_list)) {
		/*
		 * In case the wait queue is empty and the lock isn't owned
		 * by a writer, this reader can exit the slowpath and return
		 * immediately as its RWSEM_ACTIVE_READ_BIAS has already
		 * been set in the count.
		 */
		if (atomic_long_read(&sem->count) >= 0) {
#ifdef KSCALE_SANITIZE
			/* the acquire x86's TSO gives (departures) */
			(void)__atomic_load_n(&sem->count.counter,
					      __ATOMIC_ACQUIRE);
#endif
			raw_spin_unlock_irq(&sem->wait_lock);
			rwsem_set_reader_owned(sem);
			rwsem_slowpath_exit(&sp, &rwsem_profile.read_failed,
					    &rwsem_profile.read_failed_callees);
			return sem;
		}
		adjustment += RWSEM_WAITING_BIAS;
	}
	list_add_tail(&waiter.list, &sem->wait_list);

	/* we're now waiting on the lock, but no longer actively locking */
	count = atomic_long_add_return(adjustment, &sem->count);

	/*
	 * If there are no active locks, wake the front queued process(es).
	 *
	 * If there are no writers and we are first in the queue,
	 * wake our own waiter to join the existing active readers !
	 */
	if (count == RWSEM_WAITING_BIAS ||
	    (count > RWSEM_WAITING_BIAS &&
	     adjustment != -RWSEM_ACTIVE_READ_BIAS))
		__rwsem_mark_wake(sem, RWSEM_WAKE_ANY, &wake_q);

	raw_spin_unlock_irq(&sem->wait_lock);
	wake_up_q(&wake_q);

	/* wait to be given the lock */
	while (true) {
		set_current_state(state);
		if (!smp_load_acquire(&waiter.task))
			break;
		rwsem_sleep_why(rwsem_read_sleep_reason(sem));
		rwsem_schedule();
	}
	rwsem_grant_taken(sem);

	__set_current_state(TASK_RUNNING);
	rwsem_slowpath_exit(&sp, &rwsem_profile.read_failed,
			    &rwsem_profile.read_failed_callees);
	return sem;
}

static struct rw_semaphore *rwsem_down_read_failed(struct rw_semaphore *sem)
{
	return __rwsem_down_read_failed_common(sem, TASK_UNINTERRUPTIBLE);
}

/*
 * This function must be called with the sem->wait_lock held to prevent
 * race conditions between checking the rwsem wait list and setting the
 * sem->count accordingly.
 */
static inline bool rwsem_try_write_lock(long count, struct rw_semaphore *sem)
{
	/*
	 * Avoid trying to acquire write lock if count isn't RWSEM_WAITING_BIAS.
	 */
	if (count != RWSEM_WAITING_BIAS)
		return false;

	/*
	 * Acquire the lock by trying to set it to ACTIVE_WRITE_BIAS. If there
	 * are other tasks on the wait list, we need to add on WAITING_BIAS.
	 */
	count = list_is_singular(&sem->wait_list) ?
			RWSEM_ACTIVE_WRITE_BIAS :
			RWSEM_ACTIVE_WRITE_BIAS + RWSEM_WAITING_BIAS;

	if (atomic_long_cmpxchg(&sem->count, RWSEM_WAITING_BIAS, count)
							== RWSEM_WAITING_BIAS) {
		rwsem_set_owner(sem);
		return true;
	}

	return false;
}

/*
 * Try to acquire write lock before the writer has been put on wait queue.
 */
static inline bool rwsem_try_write_lock_unqueued(struct rw_semaphore *sem)
{
	long count = atomic_long_read(&sem->count);

	while (!count || count == RWSEM_WAITING_BIAS) {
		if (atomic_long_try_cmpxchg_acquire(&sem->count, &count,
					count + RWSEM_ACTIVE_WRITE_BIAS)) {
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

static inline bool rwsem_can_spin_on_owner(struct rw_semaphore *sem)
{
	struct task_struct *owner;
	bool ret = true;

	if (need_resched()) {
		rwsem_queue_why(RWSEM_QUEUE_NOSPIN_NEED_RESCHED);
		return false;
	}

	rcu_read_lock();
	owner = READ_ONCE(sem->owner);
	if (owner) {
		ret = is_rwsem_owner_spinnable(owner) &&
		      owner_on_cpu(owner);
		rwsem_queue_why(is_rwsem_owner_spinnable(owner) ?
				RWSEM_QUEUE_NOSPIN_OWNER_OFF_CPU :
				RWSEM_QUEUE_NOSPIN_READER_OWNED);
	}
	rcu_read_unlock();
	return ret;
}

/*
 * Return true only if we can still spin on the owner field of the rwsem.
 */
static __attribute__((noinline)) bool
rwsem_spin_on_owner(struct rw_semaphore *sem)
{
	struct task_struct *owner = READ_ONCE(sem->owner);

	if (!is_rwsem_owner_spinnable(owner)) {
		rwsem_queue_why(RWSEM_QUEUE_SPIN_READER_OWNED);
		return false;
	}

	rcu_read_lock();
	while (owner && (READ_ONCE(sem->owner) == owner)) {
		/*
		 * Ensure we emit the owner->on_cpu, dereference _after_
		 * checking sem->owner still matches owner, if that fails,
		 * owner might point to free()d memory, if it still matches,
		 * the rcu_read_lock() ensures the memory stays valid.
		 */
		barrier();

		/*
		 * abort spinning when need_resched or owner is not running or
		 * owner's cpu is preempted.
		 */
		if (need_resched() || !owner_on_cpu(owner)) {
			rwsem_queue_why(need_resched() ?
					RWSEM_QUEUE_SPIN_NEED_RESCHED :
					RWSEM_QUEUE_SPIN_OWNER_OFF_CPU);
			rcu_read_unlock();
			return false;
		}

		cpu_relax();
	}
	rcu_read_unlock();

	/*
	 * If there is a new owner or the owner is not set, we continue
	 * spinning.
	 */
	rwsem_queue_why(RWSEM_QUEUE_SPIN_READER_OWNED);
	return is_rwsem_owner_spinnable(READ_ONCE(sem->owner));
}

static bool rwsem_spin_on_owner_profiled(struct rw_semaphore *sem)
{
	uint64_t t0 = rdtsc_ordered(), dt;
	bool ret = rwsem_spin_on_owner(sem);

	dt = rdtsc_ordered() - t0;
	rwsem_profile.spin_on_owner += dt;
	rwsem_profile.callees += dt;
	return ret;
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

static bool rwsem_optimistic_spin(struct rw_semaphore *sem)
{
	bool taken = false;

	preempt_disable();

	/* sem->wait_lock should not be held when doing optimistic spinning */
	if (!rwsem_can_spin_on_owner(sem))
		goto done;

	if (!rwsem_osq_lock(sem)) {
		rwsem_queue_why(RWSEM_QUEUE_SPIN_OSQ);
		goto done;
	}

	/*
	 * Optimistically spin on the owner field and attempt to acquire the
	 * lock whenever the owner changes. Spinning will be stopped when:
	 *  1) the owning writer isn't running; or
	 *  2) readers own the lock as we can't determine if they are
	 *     actively running or not.
	 */
	while (rwsem_spin_on_owner_profiled(sem)) {
		/*
		 * Try to acquire the lock
		 */
		if (rwsem_try_write_lock_unqueued(sem)) {
			taken = true;
			break;
		}

		/*
		 * When there's no owner, we might have preempted between the
		 * owner acquiring the lock and setting the owner field. If
		 * we're an RT task that will live-lock because we won't let
		 * the owner complete.
		 */
		if (!READ_ONCE(sem->owner) &&
		    (need_resched() || rt_task(current))) {
			rwsem_queue_why(RWSEM_QUEUE_SPIN_NEED_RESCHED);
			break;
		}

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
 * Return true if the rwsem has active spinner
 */
static inline bool rwsem_has_spinner(struct rw_semaphore *sem)
{
	return osq_is_locked(&sem->osq);
}

/*
 * Wait until we successfully acquire the write lock
 */
static inline struct rw_semaphore *
__rwsem_down_write_failed_common(struct rw_semaphore *sem, int state)
{
	long count;
	bool waiting = true; /* any queued threads before us */
	struct rwsem_waiter waiter;
	struct rw_semaphore *ret = sem;
	struct rwsem_slowpath sp;
	DEFINE_WAKE_Q(wake_q);

	rwsem_slowpath_enter(&sp);

	/* undo write bias from down_write operation, stop active locking */
	count = atomic_long_add_return(-RWSEM_ACTIVE_WRITE_BIAS, &sem->count);

	/* do optimistic spinning and steal lock if possible */
	if (rwsem_optimistic_spin(sem)) {
		rwsem_profile.spin_acquired++;
		goto out;
	}
	rwsem_spin_abandoned();

	/*
	 * Optimistic spinning failed, proceed to the slowpath
	 * and block until we can acquire the sem.
	 */
	waiter.task = current;
	waiter.type = RWSEM_WAITING_FOR_WRITE;

	raw_spin_lock_irq(&sem->wait_lock);

	/* account for this before adding a new element to the list */
	if (list_empty(&sem->wait_list))
		waiting = false;

	list_add_tail(&waiter.list, &sem->wait_list);

	/* we're now waiting on the lock, but no longer actively locking */
	if (waiting) {
		count = atomic_long_read(&sem->count);

		/*
		 * If there were already threads queued before us and there are
		 * no active writers, the lock must be read owned; so we try to
		 * wake any read locks that were queued ahead of us.
		 */
		if (count > RWSEM_WAITING_BIAS) {
			__rwsem_mark_wake(sem, RWSEM_WAKE_READERS, &wake_q);
			/*
			 * The wakeup is normally called _after_ the wait_lock
			 * is released, but given that we are proactively waking
			 * readers we can deal with the wake_q overhead as it is
			 * similar to releasing and taking the wait_lock again
			 * for attempting rwsem_try_write_lock().
			 */
			wake_up_q(&wake_q);

			/*
			 * Reinitialize wake_q after use.
			 */
			wake_q_init(&wake_q);
		}

	} else
		count = atomic_long_add_return(RWSEM_WAITING_BIAS, &sem->count);

	/* wait until we successfully acquire the lock */
	set_current_state(state);
	while (true) {
		if (rwsem_try_write_lock(count, sem))
			break;
		raw_spin_unlock_irq(&sem->wait_lock);

		/* Block until there are no active lockers. */
		do {
			rwsem_sleep_why(rwsem_write_sleep_reason(sem));
			rwsem_schedule();
			set_current_state(state);
		} while ((count = atomic_long_read(&sem->count)) & RWSEM_ACTIVE_MASK);

		raw_spin_lock_irq(&sem->wait_lock);
	}
	__set_current_state(TASK_RUNNING);
	list_del(&waiter.list);
	raw_spin_unlock_irq(&sem->wait_lock);
out:
	rwsem_slowpath_exit(&sp, &rwsem_profile.write_failed,
			    &rwsem_profile.write_failed_callees);
	return ret;
}

static struct rw_semaphore *rwsem_down_write_failed(struct rw_semaphore *sem)
{
	return __rwsem_down_write_failed_common(sem, TASK_UNINTERRUPTIBLE);
}

/*
 * handle waking up a waiter on the semaphore
 * - up_read/up_write has decremented the active part of count if we come here
 */
static struct rw_semaphore *rwsem_wake(struct rw_semaphore *sem)
{
	unsigned long flags = 0;
	DEFINE_WAKE_Q(wake_q);

	/*
	 * __rwsem_down_write_failed_common(sem)
	 *   rwsem_optimistic_spin(sem)
	 *     osq_unlock(sem->osq)
	 *   ...
	 *   atomic_long_add_return(&sem->count)
	 *
	 *      - VS -
	 *
	 *              __up_write()
	 *                if (atomic_long_sub_return_release(&sem->count) < 0)
	 *                  rwsem_wake(sem)
	 *                    osq_is_locked(&sem->osq)
	 *
	 * And __up_write() must observe !osq_is_locked() when it observes the
	 * atomic_long_add_return() in order to not miss a wakeup.
	 */
	smp_rmb();

	/*
	 * If a spinner is present, it is not necessary to do the wakeup.
	 * Try to do wakeup only if the trylock succeeds to minimize
	 * spinlock contention which may introduce too much delay in the
	 * unlock operation.
	 *
	 *    spinning writer		up_write/up_read caller
	 *    ---------------		-----------------------
	 * [S]   osq_unlock()		[L]   osq
	 *	 MB			      RMB
	 * [RmW] rwsem_try_write_lock() [RmW] spin_trylock(wait_lock)
	 *
	 * Here, it is important to make sure that there won't be a missed
	 * wakeup while the rwsem is free and the only spinning writer goes
	 * to sleep without taking the rwsem. Even when the spinning writer
	 * is just going to break out of the waiting loop, it will still do
	 * a trylock in rwsem_down_write_failed() before sleeping. IOW, if
	 * rwsem_has_spinner() is true, it will guarantee at least one
	 * trylock attempt on the rwsem later on.
	 */
	if (rwsem_has_spinner(sem)) {
		/*
		 * The smp_rmb() here is to make sure that the spinner
		 * state is consulted before reading the wait_lock.
		 */
		smp_rmb();
		if (!raw_spin_trylock_irqsave(&sem->wait_lock, flags))
			return sem;
		goto locked;
	}
	raw_spin_lock_irqsave(&sem->wait_lock, flags);
locked:

	if (!list_empty(&sem->wait_list))
		__rwsem_mark_wake(sem, RWSEM_WAKE_ANY, &wake_q);

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
		__rwsem_mark_wake(sem, RWSEM_WAKE_READ_OWNED, &wake_q);

	raw_spin_unlock_irqrestore(&sem->wait_lock, flags);
	wake_up_q(&wake_q);

	return sem;
}

/* kernel/locking/rwsem.h: the generic fast paths */

/*
 * lock for reading
 */
static inline void __down_read(struct rw_semaphore *sem)
{
	if (unlikely(atomic_long_add_return_acquire(RWSEM_ACTIVE_READ_BIAS,
						    &sem->count) <= 0))
		rwsem_down_read_failed(sem);
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
					tmp + RWSEM_ACTIVE_READ_BIAS)) {
			rwsem_set_reader_owned(sem);
			return 1;
		}
	} while (tmp >= 0);
	return 0;
}

/*
 * lock for writing
 */
static inline void __down_write(struct rw_semaphore *sem)
{
	long tmp;

	tmp = atomic_long_add_return_acquire(RWSEM_ACTIVE_WRITE_BIAS,
					     &sem->count);
	if (unlikely(tmp != RWSEM_ACTIVE_WRITE_BIAS))
		rwsem_down_write_failed(sem);
	rwsem_set_owner(sem);
}

static inline int __down_write_trylock(struct rw_semaphore *sem)
{
	long tmp;

	tmp = atomic_long_cmpxchg(&sem->count, RWSEM_UNLOCKED_VALUE,
				  RWSEM_ACTIVE_WRITE_BIAS);
	if (tmp == RWSEM_UNLOCKED_VALUE) {
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
	tmp = atomic_long_add_return_release(-RWSEM_ACTIVE_READ_BIAS,
					     &sem->count);
	if (unlikely(tmp < -1 && (tmp & RWSEM_ACTIVE_MASK) == 0))
		rwsem_wake(sem);
}

/*
 * unlock after writing
 */
static inline void __up_write(struct rw_semaphore *sem)
{
	rwsem_clear_owner(sem);
	if (unlikely(atomic_long_add_return_release(-RWSEM_ACTIVE_WRITE_BIAS,
						    &sem->count) < 0))
		rwsem_wake(sem);
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
	tmp = atomic_long_add_return_release(-RWSEM_WAITING_BIAS, &sem->count);
	rwsem_set_reader_owned(sem);
	if (tmp < 0)
		rwsem_downgrade_wake(sem);
}

/* kernel/locking/rwsem.c */
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

DEFINE_RWSEM_OPS(rwsem_v5_1_ops, "v5.1");

void rwsem_v5_1_state(struct rwsem_storage *s, struct rwsem_state *st)
{
	struct rw_semaphore *sem = (struct rw_semaphore *)s;
	struct rwsem_waiter *waiter;
	unsigned long owner;

	spin_lock(&sem->wait_lock);
	st->count = atomic_long_read(&sem->count);
	st->owner = (unsigned long)READ_ONCE(sem->owner);
	st->nr_waiters = st->nr_write_waiters = 0;
	list_for_each_entry(waiter, &sem->wait_list, list) {
		st->nr_waiters++;
		if (waiter->type == RWSEM_WAITING_FOR_WRITE)
			st->nr_write_waiters++;
	}
	spin_unlock(&sem->wait_lock);

	owner = st->owner;
	st->owner_task = (struct task_struct *)
		(owner & ~(RWSEM_READER_OWNED | RWSEM_ANONYMOUSLY_OWNED));
	st->active = st->count & RWSEM_ACTIVE_MASK;
	st->unlocked = st->count == RWSEM_UNLOCKED_VALUE;
	st->reader_owned = owner & RWSEM_READER_OWNED;
	st->writer_locked = owner && !st->reader_owned;
	st->nonspinnable = false;
	st->flag_waiters = st->nr_waiters > 0;
	st->flag_handoff = false;
	st->osq_locked = osq_is_locked(&sem->osq);
}
