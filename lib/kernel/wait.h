/* SPDX-License-Identifier: GPL-2.0 */
/* Wait queues (include/linux/wait.h): a lock, a list of sleeping tasks. */
#ifndef KSCALE_KERNEL_WAIT_H
#define KSCALE_KERNEL_WAIT_H

#include "list.h"
#include "sched.h"
#include "spinlock.h"

typedef struct {
	spinlock_t lock;
	struct list_head head;
} wait_queue_head_t;

typedef struct {
	struct task_struct *private;
	struct list_head entry;
} wait_queue_entry_t;

#define DECLARE_WAITQUEUE(name, tsk) \
	wait_queue_entry_t name = { .private = (tsk) }

static inline void init_waitqueue_head(wait_queue_head_t *wq)
{
	spin_lock_init(&wq->lock);
	INIT_LIST_HEAD(&wq->head);
}

static inline void add_wait_queue(wait_queue_head_t *wq, wait_queue_entry_t *w)
{
	spin_lock(&wq->lock);
	list_add_tail(&w->entry, &wq->head);
	spin_unlock(&wq->lock);
}

static inline void wake_up_all(wait_queue_head_t *wq)
{
	struct list_head *p;

	spin_lock(&wq->lock);
	for (p = wq->head.next; p != &wq->head; p = p->next)
		wake_up_process(list_entry(p, wait_queue_entry_t,
					   entry)->private);
	spin_unlock(&wq->lock);
}

#endif
