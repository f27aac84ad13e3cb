// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>

#include "blkdev.h"
#include "lockstat.h"
#include "sched.h"

struct blk_waiter {
	struct list_head list;
	struct task_struct *task;
	bool granted;			/* a completion handed us its slot */
};

void blk_queue_init(struct request_queue *q, unsigned int depth)
{
	spin_lock_init(&q->queue_lock);
	q->depth = depth ? depth : 1;
	q->in_flight = 0;
	INIT_LIST_HEAD(&q->queued);
	q->nr_reads = q->nr_queued = 0;
	/* the queue's counts and list head share the lock's line */
	lockstat_register(&q->queue_lock, "queue_lock", 1, LOCKSTAT_SPIN);
}

/* queue_lock held: sleep until a completion grants us a slot. */
static void wait_for_slot(struct request_queue *q)
{
	struct blk_waiter w = { .task = current };

	list_add_tail(&w.list, &q->queued);
	q->nr_queued++;
	for (;;) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		if (w.granted)
			break;
		spin_unlock(&q->queue_lock);
		schedule();
		spin_lock(&q->queue_lock);
	}
	__set_current_state(TASK_RUNNING);
}

/* The completion: the slot goes to the oldest queued read, if any. */
static void blk_complete(struct request_queue *q)
{
	struct blk_waiter *w;

	spin_lock(&q->queue_lock);
	if (list_empty(&q->queued)) {
		q->in_flight--;
	} else {
		w = list_entry(q->queued.next, struct blk_waiter, list);
		list_del_init(&w->list);
		w->granted = true;
		wake_up_process(w->task);
	}
	spin_unlock(&q->queue_lock);
}

void blk_read_sync(struct request_queue *q, uint64_t service_ns)
{
	spin_lock(&q->queue_lock);
	q->nr_reads++;
	if (q->in_flight < q->depth)
		q->in_flight++;
	else
		wait_for_slot(q);
	spin_unlock(&q->queue_lock);
	schedule_timeout_ns(service_ns);
	blk_complete(q);
}
