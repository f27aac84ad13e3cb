// SPDX-License-Identifier: GPL-2.0
/* v4.6 kernel/locking/osq_lock.c, per-thread nodes (see osq_lock.h). */
#include <stdlib.h>

#include "../../lib/kernel/sched.h"
#include "osq_lock.h"

#define OSQ_MAX_THREADS		(1 << 16)

static struct optimistic_spin_node *osq_nodes[OSQ_MAX_THREADS];
static __thread struct optimistic_spin_node *osq_node;

void osq_thread_init(struct optimistic_spin_node *node, int nr)
{
	if (nr >= OSQ_MAX_THREADS)
		abort();
	node->cpu = nr + 1;
	osq_nodes[nr] = node;
	osq_node = node;
}

/*
 * We use the value 0 to represent "no CPU", thus the encoded value
 * will be the CPU number incremented by 1.
 */
static inline struct optimistic_spin_node *decode_cpu(int encoded_cpu_val)
{
	return osq_nodes[encoded_cpu_val - 1];
}

/*
 * Get a stable @node->next pointer, either for unlock() or unqueue()
 * purposes.  Can return NULL in case we were the last queued and we
 * updated @lock->tail.
 */
static struct optimistic_spin_node *
osq_wait_next(struct optimistic_spin_queue *lock,
	      struct optimistic_spin_node *node,
	      struct optimistic_spin_node *prev)
{
	struct optimistic_spin_node *next = NULL;
	int curr = node->cpu;
	int old;

	/*
	 * If there is a prev node in queue, then the 'old' value will be
	 * the prev node's CPU #, else it's set to OSQ_UNLOCKED_VAL since if
	 * we're currently last in queue, then the queue will then become
	 * empty.
	 */
	old = prev ? prev->cpu : OSQ_UNLOCKED_VAL;

	for (;;) {
		if (atomic_read(&lock->tail) == curr &&
		    cmpxchg(&lock->tail.counter, curr, old) == curr) {
			/*
			 * We were the last queued, we moved @lock back. @prev
			 * will now observe @lock and will complete its
			 * unlock()/unqueue().
			 */
			break;
		}

		/*
		 * We must xchg() the @node->next value, because if we were to
		 * leave it in, a concurrent unlock()/unqueue() from
		 * @node->next might complete Step-A and think its @prev is
		 * still valid.
		 *
		 * If the concurrent unlock()/unqueue() wins the race, we'll
		 * wait for either @lock to point to us, through its Step-B, or
		 * wait for a new @node->next from its Step-C.
		 */
		if (READ_ONCE(node->next)) {
			next = xchg(&node->next, NULL);
			if (next)
				break;
		}

		cpu_relax();
	}

	return next;
}

bool osq_lock(struct optimistic_spin_queue *lock)
{
	struct optimistic_spin_node *node = osq_node;
	struct optimistic_spin_node *prev, *next;
	int curr = node->cpu;
	int old;

	WRITE_ONCE(node->locked, 0);
	WRITE_ONCE(node->next, NULL);

	old = atomic_xchg(&lock->tail, curr);
	if (old == OSQ_UNLOCKED_VAL)
		return true;

	prev = decode_cpu(old);
	WRITE_ONCE(node->prev, prev);
	WRITE_ONCE(prev->next, node);

	/*
	 * Normally @prev is untouchable after the above store; because at
	 * that moment unlock can proceed and wipe the node element from
	 * stack.
	 *
	 * However, since our nodes are static per-cpu storage, we're
	 * guaranteed their existence -- this allows us to apply
	 * cmpxchg in an attempt to undo our queueing.
	 */

	while (!smp_load_acquire(&node->locked)) {
		/*
		 * If we need to reschedule bail... so we can block.
		 */
		if (need_resched())
			goto unqueue;

		cpu_relax();
	}
	return true;

unqueue:
	/*
	 * Step - A  -- stabilize @prev
	 *
	 * Undo our @prev->next assignment; this will make @prev's
	 * unlock()/unqueue() wait for a next pointer since @lock points to us
	 * (or later).
	 */

	for (;;) {
		if (READ_ONCE(prev->next) == node &&
		    cmpxchg(&prev->next, node, NULL) == node)
			break;

		/*
		 * We can only fail the cmpxchg() racing against an unlock(),
		 * in which case we should observe @node->locked becomming
		 * true.
		 */
		if (smp_load_acquire(&node->locked))
			return true;

		cpu_relax();

		/*
		 * Or we race against a concurrent unqueue()'s step-B, in which
		 * case its step-C will write us a new @node->prev pointer.
		 */
		prev = READ_ONCE(node->prev);
	}

	/*
	 * Step - B -- stabilize @next
	 *
	 * Similar to unlock(), wait for @node->next or move @lock from @node
	 * back to @prev.
	 */

	next = osq_wait_next(lock, node, prev);
	if (!next)
		return false;

	/*
	 * Step - C -- unlink
	 *
	 * @prev is stable because its still waiting for a new @prev->next
	 * pointer, @next is stable because our @node->next pointer is NULL and
	 * it will wait in Step-A.
	 */

	WRITE_ONCE(next->prev, prev);
	WRITE_ONCE(prev->next, next);

	return false;
}

void osq_unlock(struct optimistic_spin_queue *lock)
{
	struct optimistic_spin_node *node = osq_node, *next;
	int curr = node->cpu;

	/*
	 * Fast path for the uncontended case.
	 */
	if (likely(cmpxchg(&lock->tail.counter, curr, OSQ_UNLOCKED_VAL) ==
		   curr))
		return;

	/*
	 * Second most likely case.
	 */
	next = xchg(&node->next, NULL);
	if (next) {
		smp_store_release(&next->locked, 1);
		return;
	}

	next = osq_wait_next(lock, node, NULL);
	if (next)
		smp_store_release(&next->locked, 1);
}
