// SPDX-License-Identifier: GPL-2.0
/*
 * v4.6 kernel/locking/rwsem-xadd.c and rwsem.c: the count fast paths of
 * arch/x86/include/asm/rwsem.h and arch/x86/lib/rwsem.S (in C: the asm
 * tests only the active half of the old count where noted), optimistic
 * spinning with the OSQ, the wait list under wait_lock, and
 * __rwsem_do_wake() granting a writer alone or every reader at the head.
 * With rwsem_reader_owned_patch set, the seed (Waiman Long, merged in
 * 4.8) is applied where its diff changes the code: readers mark the
 * owner RWSEM_READER_OWNED, and spinning stops once readers own the lock.
 *
 * Departures: tasks are the model scheduler's (lib/kernel/sched.h);
 * wait_lock is v4.6's queued spinlock (lib/kernel/qspinlock.h; 4.8's,
 * for reader_owned, has the same slow path), as the rows' kernels
 * choose it (spinlock.h); the OSQ's neighbours are its own MCS nodes
 * (osq_lock.c), not a spinlock_t; task references are
 * not counted (the harness keeps every task's storage until all have
 * left the window).  The cycle counter profiles both slow paths as
 * perf's cpu-clock samples would (struct rwsem_profile).
 */
#include "rwsem.h"

__thread struct rwsem_profile rwsem_profile;
struct rwsem_grants rwsem_grants[RWSEM_GRANT_SLOTS];
bool rwsem_reader_owned_patch;

const char *const rwsem_sleep_name[RWSEM_SLEEP_NR] = {
	[RWSEM_SLEEP_WRITE_GRANTED_READER]	= "write_behind_granted_reader",
	[RWSEM_SLEEP_WRITE_READER]		= "write_behind_reader",
	[RWSEM_SLEEP_WRITE_WRITER]		= "write_behind_writer",
	[RWSEM_SLEEP_WRITE_HANDOFF]		= "write_behind_handoff",
	[RWSEM_SLEEP_WRITE_FREE]		= "write_lock_free",
	[RWSEM_SLEEP_READ_WRITER]		= "read_behind_writer",
	[RWSEM_SLEEP_READ_HANDOFF]		= "read_behind_handoff",
	[RWSEM_SLEEP_READ_WAITER_READERS]	= "read_behind_waiter_readers",
	[RWSEM_SLEEP_READ_WAITER_FREE]		= "read_behind_waiter_lock_free",
};

const char *const rwsem_queue_name[RWSEM_QUEUE_NR] = {
	[RWSEM_QUEUE_NOSPIN_NEED_RESCHED]	= "nospin_need_resched",
	[RWSEM_QUEUE_NOSPIN_OWNER_NULL_ACTIVE]	= "nospin_owner_null_active",
	[RWSEM_QUEUE_NOSPIN_READER_OWNED]	= "nospin_reader_owned",
	[RWSEM_QUEUE_NOSPIN_NONSPINNABLE]	= "nospin_nonspinnable",
	[RWSEM_QUEUE_NOSPIN_OWNER_OFF_CPU]	= "nospin_owner_off_cpu",
	[RWSEM_QUEUE_SPIN_OSQ]			= "spin_osq",
	[RWSEM_QUEUE_SPIN_NEED_RESCHED]		= "spin_need_resched",
	[RWSEM_QUEUE_SPIN_OWNER_OFF_CPU]	= "spin_owner_off_cpu",
	[RWSEM_QUEUE_SPIN_OWNER_NULL_ACTIVE]	= "spin_owner_null_active",
	[RWSEM_QUEUE_SPIN_READER_OWNED]		= "spin_reader_owned",
	[RWSEM_QUEUE_SPIN_NONSPINNABLE]		= "spin_nonspinnable",
	[RWSEM_QUEUE_SPIN_READER_TIMEOUT]	= "spin_reader_timeout",
};

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

#define rwsem_atomic_update(delta, sem) \
	__atomic_add_fetch(&(sem)->count, (delta), __ATOMIC_SEQ_CST)
#define rwsem_atomic_add(delta, sem) ((void)rwsem_atomic_update(delta, sem))

/* kernel/locking/rwsem.h */
static inline void rwsem_set_owner(struct rw_semaphore *sem)
{
	WRITE_ONCE(sem->owner, current);
}

static inline void rwsem_clear_owner(struct rw_semaphore *sem)
{
	WRITE_ONCE(sem->owner, NULL);
}

static inline void rwsem_set_reader_owned(struct rw_semaphore *sem)
{
	if (!rwsem_reader_owned_patch)
		return;
	/*
	 * We check the owner value first to make sure that we will only
	 * do a write to the rwsem cacheline when it is really necessary
	 * to minimize cacheline contention.
	 */
	if (READ_ONCE(sem->owner) != RWSEM_READER_OWNED)
		WRITE_ONCE(sem->owner, RWSEM_READER_OWNED);
}

static inline bool rwsem_owner_is_writer(struct task_struct *owner)
{
	return owner && owner != RWSEM_READER_OWNED;
}

static inline bool rwsem_owner_is_reader(struct task_struct *owner)
{
	return owner == RWSEM_READER_OWNED;
}

void init_rwsem(struct rw_semaphore *sem)
{
	sem->count = RWSEM_UNLOCKED_VALUE;
	spin_lock_init(&sem->wait_lock);
	INIT_LIST_HEAD(&sem->wait_list);
	sem->owner = NULL;
	osq_lock_init(&sem->osq);
	rwsem_grants_init(sem);
}

/*
 * handle the lock release when processes blocked on it that can now run
 * - if we come here from up_xxxx(), then:
 *   - the 'active part' of count (&0x0000ffff) reached 0 (but may have changed)
 *   - the 'waiting part' of count (&0xffff0000) is -ve (and will still be so)
 * - there must be someone on the queue
 * - the spinlock must be held by the caller
 * - woken process blocks are discarded from the list after having task zeroed
 * - writers are only woken if downgrading is false
 */
static struct rw_semaphore *
__rwsem_do_wake(struct rw_semaphore *sem, enum rwsem_wake_type wake_type)
{
	struct rwsem_waiter *waiter;
	struct task_struct *tsk;
	struct list_head *next;
	long oldcount, woken, loop, adjustment;

	waiter = list_entry(sem->wait_list.next, struct rwsem_waiter, list);
	if (waiter->type == RWSEM_WAITING_FOR_WRITE) {
		if (wake_type == RWSEM_WAKE_ANY)
			/* Wake writer at the front of the queue, but do not
			 * grant it the lock yet as we want other writers
			 * to be able to steal it.  Readers, on the other hand,
			 * will block as they will notice the queued writer.
			 */
			rwsem_wake_up_process(waiter->task);
		goto out;
	}

	/* Writers might steal the lock before we grant it to the next reader.
	 * We prefer to do the first reader grant before counting readers
	 * so we can bail out early if a writer stole the lock.
	 */
	adjustment = 0;
	if (wake_type != RWSEM_WAKE_READ_OWNED) {
		adjustment = RWSEM_ACTIVE_READ_BIAS;
 try_reader_grant:
		oldcount = rwsem_atomic_update(adjustment, sem) - adjustment;
		if (unlikely(oldcount < RWSEM_WAITING_BIAS)) {
			/* A writer stole the lock. Undo our reader grant. */
			if (rwsem_atomic_update(-adjustment, sem) &
						RWSEM_ACTIVE_MASK)
				goto out;
			/* Last active locker left. Retry waking readers. */
			goto try_reader_grant;
		}
		/*
		 * It is not really necessary to set it to reader-owned here,
		 * but it gives the spinners an early indication that the
		 * readers now have the lock.
		 */
		rwsem_set_reader_owned(sem);
	}

	/* Grant an infinite number of read locks to the readers at the front
	 * of the queue.  Note we increment the 'active part' of the count by
	 * the number of readers before waking any processes up.
	 */
	woken = 0;
	do {
		woken++;

		if (waiter->list.next == &sem->wait_list)
			break;

		waiter = list_entry(waiter->list.next,
					struct rwsem_waiter, list);

	} while (waiter->type != RWSEM_WAITING_FOR_WRITE);

	adjustment = woken * RWSEM_ACTIVE_READ_BIAS - adjustment;
	if (waiter->type != RWSEM_WAITING_FOR_WRITE)
		/* hit end of list above */
		adjustment -= RWSEM_WAITING_BIAS;

	if (adjustment)
		rwsem_atomic_add(adjustment, sem);
	rwsem_grants_add(sem, woken);

	next = sem->wait_list.next;
	loop = woken;
	do {
		waiter = list_entry(next, struct rwsem_waiter, list);
		next = waiter->list.next;
		tsk = waiter->task;
		/*
		 * Make sure we do not wakeup the next reader before
		 * setting the nil condition to grant the next reader;
		 * otherwise we could miss the wakeup on the other
		 * side and end up sleeping again. See the pairing
		 * in rwsem_down_read_failed().
		 */
		smp_mb();
		/*
		 * A release (4.8's __rwsem_mark_wake() has it too): the
		 * reader may return and reuse its stack as soon as it sees
		 * NULL, after our last read of *waiter.  The same store on
		 * x86; ThreadSanitizer sees no fence.
		 */
		smp_store_release(&waiter->task, NULL);
		rwsem_wake_up_process(tsk);
	} while (--loop);

	sem->wait_list.next = next;
	next->prev = &sem->wait_list;

 out:
	return sem;
}

/*
 * What holds the lock as a waiter goes to sleep (rwsem_profile.h), from
 * the count: with waiters queued, readers add their active bias to
 * RWSEM_WAITING_BIAS, a writer takes the count below it.
 */
static enum rwsem_sleep_reason rwsem_read_sleep_reason(struct rw_semaphore *sem)
{
	long count = READ_ONCE(sem->count);

	if (count < RWSEM_WAITING_BIAS)
		return RWSEM_SLEEP_READ_WRITER;
	if (count & RWSEM_ACTIVE_MASK)
		return RWSEM_SLEEP_READ_WAITER_READERS;
	return RWSEM_SLEEP_READ_WAITER_FREE;
}

static enum rwsem_sleep_reason
rwsem_write_sleep_reason(struct rw_semaphore *sem)
{
	long count = READ_ONCE(sem->count);

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
static struct rw_semaphore *rwsem_down_read_failed(struct rw_semaphore *sem)
{
	long count, adjustment = -RWSEM_ACTIVE_READ_BIAS;
	struct rwsem_waiter waiter;
	struct task_struct *tsk = current;
	struct rwsem_slowpath sp;

	rwsem_slowpath_enter(&sp);
	/* set up my own style of waitqueue */
	waiter.task = tsk;
	waiter.type = RWSEM_WAITING_FOR_READ;

	rwsem_spin_lock(&sem->wait_lock);
	if (list_empty(&sem->wait_list))
		adjustment += RWSEM_WAITING_BIAS;
	list_add_tail(&waiter.list, &sem->wait_list);

	/* we're now waiting on the lock, but no longer actively locking */
	count = rwsem_atomic_update(adjustment, sem);

	/* If there are no active locks, wake the front queued process(es).
	 *
	 * If there are no writers and we are first in the queue,
	 * wake our own waiter to join the existing active readers !
	 */
	if (count == RWSEM_WAITING_BIAS ||
	    (count > RWSEM_WAITING_BIAS &&
	     adjustment != -RWSEM_ACTIVE_READ_BIAS))
		sem = __rwsem_do_wake(sem, RWSEM_WAKE_ANY);

	spin_unlock(&sem->wait_lock);

	/* wait to be given the lock */
	while (true) {
		set_current_state(TASK_UNINTERRUPTIBLE);
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

static inline bool rwsem_try_write_lock(long count, struct rw_semaphore *sem)
{
	/*
	 * Try acquiring the write lock. Check count first in order
	 * to reduce unnecessary expensive cmpxchg() operations.
	 */
	if (count == RWSEM_WAITING_BIAS &&
	    cmpxchg(&sem->count, RWSEM_WAITING_BIAS,
		    RWSEM_ACTIVE_WRITE_BIAS) == RWSEM_WAITING_BIAS) {
		if (sem->wait_list.next->next != &sem->wait_list)
			rwsem_atomic_update(RWSEM_WAITING_BIAS, sem);
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
	long old, count = READ_ONCE(sem->count);

	while (true) {
		if (!(count == 0 || count == RWSEM_WAITING_BIAS))
			return false;

		old = cmpxchg(&sem->count, count, count + RWSEM_ACTIVE_WRITE_BIAS);
		if (old == count) {
			rwsem_set_owner(sem);
			return true;
		}

		count = old;
	}
}

static inline bool rwsem_can_spin_on_owner(struct rw_semaphore *sem)
{
	struct task_struct *owner;
	bool ret = true;

	if (need_resched()) {
		rwsem_queue_why(RWSEM_QUEUE_NOSPIN_NEED_RESCHED);
		return false;
	}

	owner = READ_ONCE(sem->owner);
	if (rwsem_reader_owned_patch) {
		if (!rwsem_owner_is_writer(owner)) {
			/*
			 * Don't spin if the rwsem is readers owned.
			 */
			ret = !rwsem_owner_is_reader(owner);
			rwsem_queue_why(RWSEM_QUEUE_NOSPIN_READER_OWNED);
			goto done;
		}
	} else if (!owner) {
		long count = READ_ONCE(sem->count);
		/*
		 * If sem->owner is not set, yet we have just recently entered the
		 * slowpath with the lock being active, then there is a possibility
		 * reader(s) may have the lock. To be safe, bail spinning in these
		 * situations.
		 */
		if (count & RWSEM_ACTIVE_MASK)
			ret = false;
		rwsem_queue_why(RWSEM_QUEUE_NOSPIN_OWNER_NULL_ACTIVE);
		goto done;
	}

	ret = READ_ONCE(owner->on_cpu);
	rwsem_queue_why(RWSEM_QUEUE_NOSPIN_OWNER_OFF_CPU);
done:
	return ret;
}

static bool rwsem_spin_on_owner(struct rw_semaphore *sem,
				struct task_struct *owner)
{
	long count;

	while (READ_ONCE(sem->owner) == owner) {
		/*
		 * Ensure we emit the owner->on_cpu, dereference _after_
		 * checking sem->owner still matches owner.
		 */
		barrier();

		/* abort spinning when need_resched or owner is not running */
		if (!READ_ONCE(owner->on_cpu) || need_resched()) {
			rwsem_queue_why(need_resched() ?
					RWSEM_QUEUE_SPIN_NEED_RESCHED :
					RWSEM_QUEUE_SPIN_OWNER_OFF_CPU);
			return false;
		}

		cpu_relax();
	}

	if (rwsem_reader_owned_patch) {
		rwsem_queue_why(RWSEM_QUEUE_SPIN_READER_OWNED);
		/*
		 * If there is a new owner or the owner is not set, we continue
		 * spinning.
		 */
		return !rwsem_owner_is_reader(READ_ONCE(sem->owner));
	}

	if (READ_ONCE(sem->owner))
		return true; /* new owner, continue spinning */

	/*
	 * When the owner is not set, the lock could be free or
	 * held by readers. Check the counter to verify the
	 * state.
	 */
	count = READ_ONCE(sem->count);
	rwsem_queue_why(RWSEM_QUEUE_SPIN_OWNER_NULL_ACTIVE);
	return (count == 0 || count == RWSEM_WAITING_BIAS);
}

static bool rwsem_spin_on_owner_profiled(struct rw_semaphore *sem,
					 struct task_struct *owner)
{
	uint64_t t0 = rdtsc_ordered(), dt;
	bool ret = rwsem_spin_on_owner(sem, owner);

	dt = rdtsc_ordered() - t0;
	rwsem_profile.spin_on_owner += dt;
	rwsem_profile.callees += dt;
	return ret;
}

/* Whether the spin loop must stop, before and after the seed. */
static bool rwsem_stop_spinning(struct rw_semaphore *sem,
				struct task_struct *owner)
{
	if (!rwsem_reader_owned_patch)
		return owner && !rwsem_spin_on_owner_profiled(sem, owner);
	rwsem_queue_why(RWSEM_QUEUE_SPIN_READER_OWNED);
	/*
	 * Don't spin if
	 * 1) the owner is a reader as we we can't determine if the
	 *    reader is actively running or not.
	 * 2) The rwsem_spin_on_owner() returns false which means
	 *    the owner isn't running.
	 */
	return rwsem_owner_is_reader(owner) ||
	       (rwsem_owner_is_writer(owner) &&
		!rwsem_spin_on_owner_profiled(sem, owner));
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
	struct task_struct *owner;
	bool taken = false;

	preempt_disable();

	/* sem->wait_lock should not be held when doing optimistic spinning */
	if (!rwsem_can_spin_on_owner(sem))
		goto done;

	if (!rwsem_osq_lock(sem)) {
		rwsem_queue_why(RWSEM_QUEUE_SPIN_OSQ);
		goto done;
	}

	while (true) {
		owner = READ_ONCE(sem->owner);
		if (rwsem_stop_spinning(sem, owner))
			break;

		/* wait_lock will be acquired if write_lock is obtained */
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
		if (!owner && need_resched()) {
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

/* The writer's wait: queue, then sleep until no one is active. */
static void rwsem_down_write_wait(struct rw_semaphore *sem, long count)
{
	bool waiting = true; /* any queued threads before us */
	struct rwsem_waiter waiter;

	waiter.task = current;
	waiter.type = RWSEM_WAITING_FOR_WRITE;

	rwsem_spin_lock(&sem->wait_lock);

	/* account for this before adding a new element to the list */
	if (list_empty(&sem->wait_list))
		waiting = false;

	list_add_tail(&waiter.list, &sem->wait_list);

	/* we're now waiting on the lock, but no longer actively locking */
	if (waiting) {
		count = READ_ONCE(sem->count);

		/*
		 * If there were already threads queued before us and there are
		 * no active writers, the lock must be read owned; so we try to
		 * wake any read locks that were queued ahead of us.
		 */
		if (count > RWSEM_WAITING_BIAS)
			sem = __rwsem_do_wake(sem, RWSEM_WAKE_READERS);

	} else
		count = rwsem_atomic_update(RWSEM_WAITING_BIAS, sem);

	/* wait until we successfully acquire the lock */
	set_current_state(TASK_UNINTERRUPTIBLE);
	while (true) {
		if (rwsem_try_write_lock(count, sem))
			break;
		spin_unlock(&sem->wait_lock);

		/* Block until there are no active lockers. */
		do {
			rwsem_sleep_why(rwsem_write_sleep_reason(sem));
			rwsem_schedule();
			set_current_state(TASK_UNINTERRUPTIBLE);
		} while ((count = READ_ONCE(sem->count)) & RWSEM_ACTIVE_MASK);

		rwsem_spin_lock(&sem->wait_lock);
	}
	__set_current_state(TASK_RUNNING);

	list_del_init(&waiter.list);
	spin_unlock(&sem->wait_lock);
}

/*
 * Wait until we successfully acquire the write lock
 */
static struct rw_semaphore *rwsem_down_write_failed(struct rw_semaphore *sem)
{
	struct rwsem_slowpath sp;
	long count;

	rwsem_slowpath_enter(&sp);
	/* undo write bias from down_write operation, stop active locking */
	count = rwsem_atomic_update(-RWSEM_ACTIVE_WRITE_BIAS, sem);

	/* do optimistic spinning and steal lock if possible */
	if (rwsem_optimistic_spin(sem)) {
		rwsem_profile.spin_acquired++;
	} else {
		/*
		 * Optimistic spinning failed, proceed to the slowpath
		 * and block until we can acquire the sem.
		 */
		rwsem_spin_abandoned();
		rwsem_down_write_wait(sem, count);
	}
	rwsem_slowpath_exit(&sp, &rwsem_profile.write_failed,
			    &rwsem_profile.write_failed_callees);
	return sem;
}

/*
 * handle waking up a waiter on the semaphore
 * - up_read/up_write has decremented the active part of count if we come here
 */
static struct rw_semaphore *rwsem_wake(struct rw_semaphore *sem)
{
	/*
	 * If a spinner is present, it is not necessary to do the wakeup.
	 * Try to do wakeup only if the trylock succeeds to minimize
	 * spinlock contention which may introduce too much delay in the
	 * unlock operation.  Even when the spinning writer is just going
	 * to break out of the waiting loop, it will still do a trylock in
	 * rwsem_down_write_failed() before sleeping.
	 */
	if (rwsem_has_spinner(sem)) {
		/*
		 * The smp_rmb() here is to make sure that the spinner
		 * state is consulted before reading the wait_lock.
		 */
		smp_rmb();
		if (!spin_trylock(&sem->wait_lock))
			return sem;
		goto locked;
	}
	rwsem_spin_lock(&sem->wait_lock);
locked:

	/* do nothing if list empty */
	if (!list_empty(&sem->wait_list))
		sem = __rwsem_do_wake(sem, RWSEM_WAKE_ANY);

	spin_unlock(&sem->wait_lock);

	return sem;
}

/*
 * downgrade a write lock into a read lock
 * - caller incremented waiting part of count and discovered it still negative
 * - just wake up any readers at the front of the queue
 */
static struct rw_semaphore *rwsem_downgrade_wake(struct rw_semaphore *sem)
{
	rwsem_spin_lock(&sem->wait_lock);

	/* do nothing if list empty */
	if (!list_empty(&sem->wait_list))
		sem = __rwsem_do_wake(sem, RWSEM_WAKE_READ_OWNED);

	spin_unlock(&sem->wait_lock);

	return sem;
}

/* arch/x86/include/asm/rwsem.h */
static inline void __down_read(struct rw_semaphore *sem)
{
	/* lock inc; jns: a writer or waiters make the count negative */
	if (unlikely(rwsem_atomic_update(RWSEM_ACTIVE_READ_BIAS, sem) < 0))
		rwsem_down_read_failed(sem);
}

static inline int __down_read_trylock(struct rw_semaphore *sem)
{
	long tmp;

	while ((tmp = READ_ONCE(sem->count)) >= 0) {
		if (tmp == cmpxchg(&sem->count, tmp,
				   tmp + RWSEM_ACTIVE_READ_BIAS))
			return 1;
	}
	return 0;
}

static inline void __down_write(struct rw_semaphore *sem)
{
	long tmp;

	/*
	 * xadd; test %k1: only the active half of the old count, so a free
	 * lock with waiters queued is taken here, ahead of them.
	 */
	tmp = rwsem_atomic_update(RWSEM_ACTIVE_WRITE_BIAS, sem) -
	      RWSEM_ACTIVE_WRITE_BIAS;
	if (unlikely(tmp & RWSEM_ACTIVE_MASK))
		rwsem_down_write_failed(sem);
}

/* A cmpxchg loop on the active half only: ahead of queued waiters too. */
static inline int __down_write_trylock(struct rw_semaphore *sem)
{
	long tmp = READ_ONCE(sem->count), old;

	while (!(tmp & RWSEM_ACTIVE_MASK)) {
		old = cmpxchg(&sem->count, tmp, tmp + RWSEM_ACTIVE_WRITE_BIAS);
		if (old == tmp)
			return 1;
		tmp = old;
	}
	return 0;
}

static inline void __up_read(struct rw_semaphore *sem)
{
	long tmp;

	/* jns, then call_rwsem_wake: wake only once no one is active */
	tmp = rwsem_atomic_update(-RWSEM_ACTIVE_READ_BIAS, sem);
	if (unlikely(tmp < 0 && (tmp & RWSEM_ACTIVE_MASK) == 0))
		rwsem_wake(sem);
}

static inline void __up_write(struct rw_semaphore *sem)
{
	long tmp = rwsem_atomic_update(-RWSEM_ACTIVE_WRITE_BIAS, sem);

	/*
	 * call_rwsem_wake decrements the active half of the old count and
	 * wakes only at 0: not while a reader's fast-path increment is in.
	 */
	if (unlikely(tmp < 0 && (tmp & RWSEM_ACTIVE_MASK) == 0))
		rwsem_wake(sem);
}

static inline void __downgrade_write(struct rw_semaphore *sem)
{
	long tmp;

	/*
	 * When downgrading from exclusive to shared ownership,
	 * anything inside the write-locked region cannot share
	 * the rwsem cacheline.
	 */
	tmp = rwsem_atomic_update(-RWSEM_WAITING_BIAS, sem);
	if (tmp < 0)
		rwsem_downgrade_wake(sem);
}

/* kernel/locking/rwsem.c */
void down_read(struct rw_semaphore *sem)
{
	__down_read(sem);
	rwsem_set_reader_owned(sem);
}

int down_read_trylock(struct rw_semaphore *sem)
{
	int ret = __down_read_trylock(sem);

	if (ret == 1)
		rwsem_set_reader_owned(sem);
	return ret;
}

void down_write(struct rw_semaphore *sem)
{
	__down_write(sem);
	rwsem_set_owner(sem);
}

int down_write_trylock(struct rw_semaphore *sem)
{
	int ret = __down_write_trylock(sem);

	if (ret == 1)
		rwsem_set_owner(sem);
	return ret;
}

void up_read(struct rw_semaphore *sem)
{
	__up_read(sem);
}

void up_write(struct rw_semaphore *sem)
{
	rwsem_clear_owner(sem);
	__up_write(sem);
}

void downgrade_write(struct rw_semaphore *sem)
{
	if (rwsem_reader_owned_patch)
		rwsem_set_reader_owned(sem);
	else
		rwsem_clear_owner(sem);
	__downgrade_write(sem);
}

/* v4.6 behind struct rwsem_ops, beside today's rwsem (rwsem_ops.h). */
DEFINE_RWSEM_OPS(rwsem_v4_6_ops, "v4.6");

void rwsem_v4_6_state(struct rwsem_storage *s, struct rwsem_state *st)
{
	struct rw_semaphore *sem = (struct rw_semaphore *)s;
	struct rwsem_waiter *waiter;
	struct task_struct *owner;
	struct list_head *pos;

	spin_lock(&sem->wait_lock);
	st->count = READ_ONCE(sem->count);
	st->owner = (unsigned long)READ_ONCE(sem->owner);
	st->nr_waiters = st->nr_write_waiters = 0;
	for (pos = sem->wait_list.next; pos != &sem->wait_list;
	     pos = pos->next) {
		waiter = list_entry(pos, struct rwsem_waiter, list);
		st->nr_waiters++;
		st->nr_write_waiters += waiter->type == RWSEM_WAITING_FOR_WRITE;
	}
	spin_unlock(&sem->wait_lock);

	owner = (struct task_struct *)st->owner;
	st->owner_task = rwsem_owner_is_writer(owner) ? owner : NULL;
	st->active = st->count & RWSEM_ACTIVE_MASK;
	st->unlocked = st->count == RWSEM_UNLOCKED_VALUE;
	st->writer_locked = st->owner_task != NULL;
	st->reader_owned = rwsem_owner_is_reader(owner);
	st->nonspinnable = false;
	st->flag_waiters = st->nr_waiters > 0;
	st->flag_handoff = false;
	st->osq_locked = osq_is_locked(&sem->osq);
}
