/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Wait queues (include/linux/wait.h): a lock, a list of sleeping tasks;
 * and 2.6.32's bit wait queues (kernel/wait.c), a table of wait queue
 * heads hashed by word and bit, for waiters on a flag of an object that
 * has no wait queue of its own (an inode's I_LOCK).  The table's queues
 * hold only bit waiters, so the wake-up matches their key itself where
 * the kernel calls each entry's wake function (wake_bit_function()).
 */
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

struct wait_bit_key {
	void *flags;
	int bit_nr;
};

struct wait_bit_queue {
	struct wait_bit_key key;
	wait_queue_entry_t wait;
};

#define DEFINE_WAIT_BIT(name, word, bit)				\
	struct wait_bit_queue name = {					\
		.key = { .flags = (word), .bit_nr = (bit) },		\
		.wait = { .private = current,				\
			  .entry = LIST_HEAD_INIT((name).wait.entry) },	\
	}

/* An acquire: what the bit's clearer wrote before clearing it is seen. */
static inline bool test_bit(int nr, const unsigned long *addr)
{
	return __atomic_load_n(addr, __ATOMIC_ACQUIRE) & (1UL << nr);
}

static inline bool waitqueue_active(wait_queue_head_t *q)
{
	return !list_empty(&q->head);
}

void prepare_to_wait(wait_queue_head_t *q, wait_queue_entry_t *wait,
		     int state);
void finish_wait(wait_queue_head_t *q, wait_queue_entry_t *wait);
wait_queue_head_t *bit_waitqueue(void *word, int bit);
int __wait_on_bit(wait_queue_head_t *wq, struct wait_bit_queue *q,
		  int (*action)(void *), unsigned int mode);
int out_of_line_wait_on_bit(void *word, int bit, int (*action)(void *),
			    unsigned int mode);
void __wake_up_bit(wait_queue_head_t *wq, void *word, int bit);
/* After clearing the bit and a full barrier, as waitqueue_active() needs. */
void wake_up_bit(void *word, int bit);

static inline int wait_on_bit(void *word, int bit, int (*action)(void *),
			      unsigned int mode)
{
	if (!test_bit(bit, word))
		return 0;
	return out_of_line_wait_on_bit(word, bit, action, mode);
}

#endif
