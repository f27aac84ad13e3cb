// SPDX-License-Identifier: GPL-2.0
/* The slow paths of 2.6.32 kernel/mutex.c (see mutex.h). */
#include "mutex.h"

struct mutex_waiter {
	struct list_head list;
	struct task_struct *task;
};

void mutex_init(struct mutex *lock)
{
	atomic_set(&lock->count, 1);
	spin_lock_init(&lock->wait_lock);
	INIT_LIST_HEAD(&lock->wait_list);
	lock->owner = NULL;
}

/*
 * Look out! "owner" is an entirely speculative pointer access and not
 * reliable.  (Here it stays valid: tasks outlive every run's locks.)
 */
static int mutex_spin_on_owner(struct mutex *lock, struct task_struct *owner)
{
	for (;;) {
		/* Owner changed, break to re-assess state. */
		if (READ_ONCE(lock->owner) != owner)
			break;
		/* Is that owner really running on that cpu? */
		if (!READ_ONCE(owner->on_cpu) || need_resched())
			return 0;
		cpu_relax();
	}
	return 1;
}

/* Spin while the owner runs; true if we took the lock. */
static bool mutex_optimistic_spin(struct mutex *lock)
{
	struct task_struct *owner;

	for (;;) {
		owner = READ_ONCE(lock->owner);
		if (owner && !mutex_spin_on_owner(lock, owner))
			return false;
		if (cmpxchg(&lock->count.counter, 1, 0) == 1)
			return true;
		if (!owner && need_resched())
			return false;
		cpu_relax();
	}
}

void __mutex_lock_slowpath(struct mutex *lock)
{
	struct mutex_waiter waiter;

	preempt_disable();
	if (mutex_optimistic_spin(lock)) {
		preempt_enable();
		return;
	}

	spin_lock(&lock->wait_lock);
	list_add_tail(&waiter.list, &lock->wait_list);
	waiter.task = current;

	while (atomic_xchg(&lock->count, -1) != 1) {
		__set_current_state(TASK_UNINTERRUPTIBLE);
		spin_unlock(&lock->wait_lock);
		preempt_enable_no_resched();
		schedule();
		preempt_disable();
		spin_lock(&lock->wait_lock);
	}
	list_del_init(&waiter.list);
	/* set it to 0 if there are no waiters left: */
	if (likely(list_empty(&lock->wait_list)))
		atomic_set(&lock->count, 0);
	spin_unlock(&lock->wait_lock);
	preempt_enable();
}

void __mutex_unlock_slowpath(struct mutex *lock)
{
	struct mutex_waiter *waiter;

	spin_lock(&lock->wait_lock);
	atomic_set(&lock->count, 1);
	if (!list_empty(&lock->wait_list)) {
		/* get the first entry from the wait-list: */
		waiter = list_first_entry(&lock->wait_list,
					  struct mutex_waiter, list);
		wake_up_process(waiter->task);
	}
	spin_unlock(&lock->wait_lock);
}
