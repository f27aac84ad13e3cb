// SPDX-License-Identifier: GPL-2.0
/*
 * 2.6.32 kernel/wait.c: prepare_to_wait(), finish_wait() and the bit wait
 * queues.  bit_waitqueue() hashes into one table of BIT_WAIT_TABLE_SIZE
 * heads, where 2.6.32 hashes into the word's zone's wait_table (at most
 * 4096 heads a zone, fewer on a small one).  finish_wait() always takes
 * the queue's lock, where the kernel first checks list_empty_careful()
 * unlocked: only a task that slept pays it.
 */
#include "wait.h"

#define BIT_WAIT_TABLE_BITS	12
#define BIT_WAIT_TABLE_SIZE	(1 << BIT_WAIT_TABLE_BITS)
#define GOLDEN_RATIO_PRIME_64	0x9e37fffffffc0001UL

static wait_queue_head_t bit_wait_table[BIT_WAIT_TABLE_SIZE];

static void __attribute__((constructor)) bit_wait_table_init(void)
{
	int i;

	for (i = 0; i < BIT_WAIT_TABLE_SIZE; i++)
		init_waitqueue_head(&bit_wait_table[i]);
}

void prepare_to_wait(wait_queue_head_t *q, wait_queue_entry_t *wait,
		     int state)
{
	spin_lock(&q->lock);
	if (list_empty(&wait->entry))
		list_add(&wait->entry, &q->head);
	set_current_state(state);
	spin_unlock(&q->lock);
}

void finish_wait(wait_queue_head_t *q, wait_queue_entry_t *wait)
{
	__set_current_state(TASK_RUNNING);
	spin_lock(&q->lock);
	list_del_init(&wait->entry);
	spin_unlock(&q->lock);
}

/* hash_long(), 64-bit: the multiplication hash_64() does by shifts */
wait_queue_head_t *bit_waitqueue(void *word, int bit)
{
	unsigned long val = (unsigned long)word << 6 | bit;

	return &bit_wait_table[(val * GOLDEN_RATIO_PRIME_64) >>
			       (64 - BIT_WAIT_TABLE_BITS)];
}

int __wait_on_bit(wait_queue_head_t *wq, struct wait_bit_queue *q,
		  int (*action)(void *), unsigned int mode)
{
	int ret = 0;

	do {
		prepare_to_wait(wq, &q->wait, mode);
		if (test_bit(q->key.bit_nr, q->key.flags))
			ret = (*action)(q->key.flags);
	} while (test_bit(q->key.bit_nr, q->key.flags) && !ret);
	finish_wait(wq, &q->wait);
	return ret;
}

int out_of_line_wait_on_bit(void *word, int bit, int (*action)(void *),
			    unsigned int mode)
{
	wait_queue_head_t *wq = bit_waitqueue(word, bit);
	DEFINE_WAIT_BIT(wait, word, bit);

	return __wait_on_bit(wq, &wait, action, mode);
}

/*
 * __wake_up(wq, TASK_NORMAL, 1, &key): each waiter on this word and bit,
 * once it is clear, woken and dequeued (wake_bit_function() ->
 * autoremove_wake_function()); the others stay.
 */
void __wake_up_bit(wait_queue_head_t *wq, void *word, int bit)
{
	struct list_head *p, *n;

	if (!waitqueue_active(wq))
		return;
	spin_lock(&wq->lock);
	for (p = wq->head.next; p != &wq->head; p = n) {
		struct wait_bit_queue *q = container_of(p,
				struct wait_bit_queue, wait.entry);

		n = p->next;
		if (q->key.flags != word || q->key.bit_nr != bit ||
		    test_bit(bit, word))
			continue;
		wake_up_process(q->wait.private);
		list_del_init(p);
	}
	spin_unlock(&wq->lock);
}

void wake_up_bit(void *word, int bit)
{
	__wake_up_bit(bit_waitqueue(word, bit), word, bit);
}
