/* SPDX-License-Identifier: GPL-2.0 */
/*
 * RCU for models whose readers walk shared structures without locks, as
 * quiescent-state-based reclamation (liburcu's QSBR flavour):
 * rcu_read_lock() costs nothing, each thread reports a quiescent state
 * where the kernel would context-switch (between operations), and
 * call_rcu() callbacks run once every registered thread has passed one
 * since; a thread asleep in a lock delays them until it runs again.
 * Callbacks are batched per thread, so the grace period counter is
 * touched once per RCU_BATCH callbacks, standing in for the kernel's
 * per-CPU callback lists.  A full batch runs at the thread's next
 * quiescent state, never inside call_rcu()'s caller: the kernel's
 * callbacks run in softirq context and kfree() never sleeps, but the
 * host's free() may, and no model task may sleep with preemption off.
 */
#ifndef KSCALE_KERNEL_RCU_H
#define KSCALE_KERNEL_RCU_H

#include <stdbool.h>

#include "compiler.h"

#define RCU_BATCH	64

struct rcu_head {
	struct rcu_head *next;
	void (*func)(struct rcu_head *head);
	unsigned long gp;		/* grace period it was retired in */
};

/* One per thread that reads under RCU or calls call_rcu(). */
struct rcu_thread {
	unsigned long qs;		/* last grace period seen quiescent */
	struct rcu_head *pending;	/* callbacks not yet run, newest first */
	unsigned long nr_pending;
	bool raised;			/* a batch is due: RCU_SOFTIRQ */
	struct rcu_thread *next;
} ____cacheline_aligned;

extern __thread struct rcu_thread *rcu_self;
extern unsigned long rcu_gp;

#define rcu_read_lock()		barrier()
#define rcu_read_unlock()	barrier()
/* Publish a new object; dereference one (acquire: consume in the kernel). */
#define rcu_assign_pointer(p, v)	smp_store_release(&(p), (v))
#define rcu_dereference(p)		smp_load_acquire(&(p))

void rcu_do_batch(void);

/* A full barrier, as a context switch is: later reads see what was unlinked. */
static inline void rcu_quiescent_state(void)
{
	__atomic_store_n(&rcu_self->qs, __atomic_load_n(&rcu_gp,
			 __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
	smp_mb();
	if (unlikely(rcu_self->raised))
		rcu_do_batch();
}

void rcu_register_thread(struct rcu_thread *self);
/* Leaves the registry; pending callbacks move to whoever calls rcu_barrier(). */
void rcu_unregister_thread(void);
void call_rcu(struct rcu_head *head, void (*func)(struct rcu_head *head));
/* With no reader left anywhere: run every pending callback. */
void rcu_barrier(void);

#endif
