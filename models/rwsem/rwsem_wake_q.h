/* SPDX-License-Identifier: GPL-2.0 */
/*
 * include/linux/sched/wake_q.h, kernel/sched/core.c: the tasks an rwsem
 * wakes once its wait_lock is dropped, for the versions that collect
 * them (4.10 on: v5.1's rwsem-xadd, v5.3's and today's rwsem.c).  An
 * array on the waker's stack rather than a list through task_struct;
 * left uninitialised but for its count, as the kernel's head is two
 * words.  WAKE_Q_MAX bounds it: since 5.3 a wake-up collects at most
 * MAX_READERS_WAKEUP (0x100) readers; v5.1 grants every reader at the
 * head of the queue, fewer than the tasks of any run here.  The file
 * including this one provides rwsem_wake_up_process() (rwsem_profile.h).
 */
#ifndef KSCALE_RWSEM_WAKE_Q_H
#define KSCALE_RWSEM_WAKE_Q_H

#include <stdbool.h>

#include "../../lib/kernel/compiler.h"
#include "../../lib/kernel/sched.h"
#include "rwsem_profile.h"

#define WAKE_Q_MAX	0x100

struct wake_q_head {
	unsigned int count;
	struct task_struct *tasks[WAKE_Q_MAX];
};

static inline void wake_q_init(struct wake_q_head *head)
{
	head->count = 0;
}

#define DEFINE_WAKE_Q(name)	struct wake_q_head name; wake_q_init(&name)

static inline bool wake_q_empty(struct wake_q_head *head)
{
	return !head->count;
}

/*
 * The kernel's wake_q_add() skips a task already queued on another
 * wake_q (its waker will wake it); here it may be woken twice, which
 * wake_up_process() makes harmless.  Task references are not counted.
 */
static inline void wake_q_add(struct wake_q_head *head,
			      struct task_struct *task)
{
	if (WARN_ON(head->count >= WAKE_Q_MAX))
		return;
	head->tasks[head->count++] = task;
}

#define wake_q_add_safe(head, task)	wake_q_add(head, task)

static inline void wake_up_q(struct wake_q_head *head)
{
	unsigned int i;

	for (i = 0; i < head->count; i++)
		rwsem_wake_up_process(head->tasks[i]);
}

#endif
