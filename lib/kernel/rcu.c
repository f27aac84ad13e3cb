// SPDX-License-Identifier: GPL-2.0
#include "rcu.h"
#include "sched.h"
#include "spinlock.h"

__thread struct rcu_thread *rcu_self;
unsigned long rcu_gp = 1;

static spinlock_t rcu_registry_lock = __SPIN_LOCK_UNLOCKED;
static struct rcu_thread *rcu_registry;
static struct rcu_head *rcu_orphans;

void rcu_register_thread(struct rcu_thread *self)
{
	self->pending = NULL;
	self->nr_pending = 0;
	self->raised = false;
	rcu_self = self;
	rcu_quiescent_state();
	spin_lock(&rcu_registry_lock);
	self->next = rcu_registry;
	rcu_registry = self;
	spin_unlock(&rcu_registry_lock);
}

static void splice_orphans(struct rcu_head *list)
{
	struct rcu_head *next;

	for (; list; list = next) {
		next = list->next;
		list->next = rcu_orphans;
		rcu_orphans = list;
	}
}

void rcu_unregister_thread(void)
{
	struct rcu_thread **p;

	spin_lock(&rcu_registry_lock);
	for (p = &rcu_registry; *p != rcu_self; p = &(*p)->next)
		;
	*p = rcu_self->next;
	splice_orphans(rcu_self->pending);
	spin_unlock(&rcu_registry_lock);
	rcu_self = NULL;
}

/* The oldest grace period some registered thread may still be reading in. */
static unsigned long rcu_oldest_reader(void)
{
	unsigned long min = ~0UL, qs;
	struct rcu_thread *t;

	spin_lock(&rcu_registry_lock);
	for (t = rcu_registry; t; t = t->next) {
		qs = __atomic_load_n(&t->qs, __ATOMIC_ACQUIRE);
		if (qs < min)
			min = qs;
	}
	spin_unlock(&rcu_registry_lock);
	return min;
}

/*
 * Run the callbacks retired before every reader's last quiescent state:
 * the list is newest first, so they are its tail.
 */
void rcu_do_batch(void)
{
	struct rcu_thread *self = rcu_self;
	unsigned long oldest;
	struct rcu_head **p = &self->pending, *head, *next;

	might_sleep();
	self->raised = false;
	__atomic_add_fetch(&rcu_gp, 1, __ATOMIC_ACQ_REL);
	oldest = rcu_oldest_reader();
	while (*p && (*p)->gp >= oldest)
		p = &(*p)->next;
	for (head = *p, *p = NULL; head; head = next) {
		next = head->next;
		self->nr_pending--;
		head->func(head);
	}
}

void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head))
{
	struct rcu_thread *self = rcu_self;

	head->func = func;
	smp_mb();	/* the unpublishing is seen before the stamp */
	head->gp = __atomic_load_n(&rcu_gp, __ATOMIC_ACQUIRE);
	head->next = self->pending;
	self->pending = head;
	if (++self->nr_pending % RCU_BATCH == 0)
		self->raised = true;
}

void rcu_barrier(void)
{
	struct rcu_head *head;

	spin_lock(&rcu_registry_lock);
	while ((head = rcu_orphans)) {
		rcu_orphans = head->next;
		head->func(head);
	}
	spin_unlock(&rcu_registry_lock);
}
