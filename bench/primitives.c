// SPDX-License-Identifier: GPL-2.0
/*
 * The kernel primitives of lib/kernel on their own: every thread bumps one
 * logical counter through a shared atomic_t (a locked add or a cmpxchg
 * loop), a counter under a ticket spinlock, 6.18's queued spinlock,
 * x86's byte spinlock or 2.6.7's ia64 spinlock, or its own per-CPU slot.
 * After the window the counter must equal the operations counted,
 * exactly.  A lock's row also counts how often the lock changed hands.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/harness/kscale.h"
#include "../lib/kernel/atomic.h"
#include "../lib/kernel/delay.h"
#include "../lib/kernel/lockstat.h"
#include "../lib/kernel/percpu.h"
#include "../lib/kernel/qspinlock.h"
#include "../lib/kernel/spinlock.h"
#include "../lib/kernel/spinlock_decb.h"
#include "../lib/kernel/spinlock_ia64.h"

enum counter_kind {
	ATOMIC, ADD_UNLESS, SPINLOCK, QSPINLOCK, DECB_SPINLOCK, IA64_SPINLOCK,
	PERCPU
};

/* atomic_add_unless()'s u: a value the counter, counting up, never meets */
#define ADD_UNLESS_NEVER	(-1)

struct pcp_count {
	int count;
};

struct counter {
	enum counter_kind kind;
	unsigned long hold_ns, think_ns;
	atomic_t shared ____cacheline_aligned;
	spinlock_t lock ____cacheline_aligned;
	struct qspinlock qlock ____cacheline_aligned;
	union {			/* a row uses one: the count beside it */
		decb_spinlock_t decb_lock;
		ia64_spinlock_t ia64_lock;
	} ____cacheline_aligned;
	unsigned long locked_count;
	unsigned long handoffs;		/* takes that followed another's */
	int last_holder;		/* the thread that took it last, or -1 */
	struct pcp_count __percpu *pcp;
};

/*
 * Under the lock: the count, a hand-off when another thread took it last
 * (on locked_count's line, which the holder has just written), and the
 * hold.
 */
static inline void locked_bump(struct counter *c, int id)
{
	c->locked_count++;
	if (c->last_holder != id) {
		c->handoffs += c->last_holder >= 0;
		c->last_holder = id;
	}
	ndelay(c->hold_ns);
}

static void counter_loop(struct kscale_thread *t)
{
	struct counter *c = t->run->priv;

	while (kscale_running(t)) {
		switch (c->kind) {
		case ATOMIC:
			lockstat_visit(&c->shared);
			atomic_inc(&c->shared);
			break;
		case ADD_UNLESS:
			lockstat_visit(&c->shared);
			atomic_add_unless(&c->shared, 1, ADD_UNLESS_NEVER);
			break;
		case QSPINLOCK:
			qspin_lock(&c->qlock, false);
			locked_bump(c, t->id);
			qspin_unlock(&c->qlock);
			break;
		case SPINLOCK:
			spin_lock(&c->lock);
			locked_bump(c, t->id);
			spin_unlock(&c->lock);
			break;
		case DECB_SPINLOCK:
			decb_spin_lock(&c->decb_lock);
			locked_bump(c, t->id);
			decb_spin_unlock(&c->decb_lock);
			break;
		case IA64_SPINLOCK:
			ia64_spin_lock(&c->ia64_lock);
			locked_bump(c, t->id);
			ia64_spin_unlock(&c->ia64_lock);
			break;
		case PERCPU:
			lockstat_visit(this_cpu_ptr(c->pcp));
			this_cpu_inc(this_cpu_ptr(c->pcp)->count);
			break;
		}
		ndelay(c->think_ns);
		kscale_count(t);
	}
}

/*
 * For lockstat, as struct counter lays them out: the ticket or queued
 * lock's line and locked_count's, which sits on decb_lock's (ia64_lock's);
 * the others one line.
 */
static void counter_lockstat_register(struct counter *c)
{
	int cpu;

	switch (c->kind) {
	case ATOMIC:
	case ADD_UNLESS:
		lockstat_register(&c->shared, "shared", 1, LOCKSTAT_LINE);
		break;
	case SPINLOCK:
		lockstat_register(&c->lock, "lock", 2, LOCKSTAT_SPIN);
		break;
	case QSPINLOCK:
		lockstat_register(&c->qlock, "qlock", 2, LOCKSTAT_SPIN);
		break;
	case DECB_SPINLOCK:
		lockstat_register(&c->decb_lock, "decb_lock", 1,
				  LOCKSTAT_SPIN);
		break;
	case IA64_SPINLOCK:
		lockstat_register(&c->ia64_lock, "ia64_lock", 1,
				  LOCKSTAT_SPIN);
		break;
	case PERCPU:
		for_each_possible_cpu(cpu)
			lockstat_register(per_cpu_ptr(c->pcp, cpu), "pcp", 1,
					  LOCKSTAT_LINE | LOCKSTAT_PER_CPU);
		break;
	}
}

static int counter_setup(struct kscale_run *run)
{
	struct counter *c = aligned_alloc(SMP_CACHE_BYTES, sizeof(*c));

	memset(c, 0, sizeof(*c));
	c->kind = *(const enum counter_kind *)kscale_row(run)->ops;
	c->hold_ns = kscale_knob_long(run, "hold_ns");
	c->think_ns = kscale_knob_long(run, "think_ns");
	c->last_holder = -1;
	c->pcp = alloc_percpu(struct pcp_count);
	if (c->kind == DECB_SPINLOCK)
		decb_spin_lock_init(&c->decb_lock);
	else
		ia64_spin_lock_init(&c->ia64_lock);
	counter_lockstat_register(c);
	run->priv = c;
	return 0;
}

/* A lock's row: a count under a lock, unsigned long, no wrap. */
static bool locked(enum counter_kind kind)
{
	return kind == SPINLOCK || kind == QSPINLOCK ||
	       kind == DECB_SPINLOCK || kind == IA64_SPINLOCK;
}

static unsigned long counter_value(struct counter *c)
{
	unsigned long sum = 0;
	int cpu;

	if (locked(c->kind))
		return c->locked_count;
	if (c->kind == ATOMIC || c->kind == ADD_UNLESS)
		return (unsigned int)atomic_read(&c->shared);
	for_each_possible_cpu(cpu)
		sum += (unsigned int)per_cpu(c->pcp, cpu).count;
	return sum;
}

/*
 * int counters wrap; compare modulo 2^32.  A lock's row: the share of its
 * acquisitions that another thread's preceded (1 for a FIFO lock every
 * thread waits on; near 0 where the last holder retakes it).
 */
static int counter_teardown(struct kscale_run *run)
{
	struct counter *c = run->priv;
	unsigned long ops = 0;
	int i;

	for (i = 0; i < run->nr_threads; i++)
		ops += run->threads[i].ops;
	if (counter_value(c) != (locked(c->kind) ? ops : ops & 0xffffffffUL))
		kscale_fail(run, "counter is %lu after %lu increments",
			    counter_value(c), ops);
	if (locked(c->kind))
		kscale_set_counter(run, "lock_handoffs_per_op",
				   ops ? (double)c->handoffs / ops : 0);
	free_percpu(c->pcp);
	free(c);
	return run->failed ? -1 : 0;
}

static int check_hold(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 0, 1000 * 1000, err, len);
}

static const struct kscale_workload workloads[] = {
	{
		.name = "counter",
		.doc = "every thread increments one logical counter",
		.setup = counter_setup,
		.loop = counter_loop,
		.teardown = counter_teardown,
	},
};

static const enum counter_kind kinds[] = {
	ATOMIC, ADD_UNLESS, SPINLOCK, QSPINLOCK, DECB_SPINLOCK, IA64_SPINLOCK,
	PERCPU,
};

/*
 * lib/kernel's own table: a row's ops is the counter it bumps.  The lock
 * rows take their lock's own type, not spinlock_t: each row's kernel is
 * the one that spun on it; the rows without a lock name 2.6.26, the
 * default's.
 */
KSCALE_VARIANT_TABLE(primitives_variants,
	{ "atomic", "atomic_inc() on one shared atomic_t", &kinds[ATOMIC],
	  .kernel = "2.6.26" },
	{ "atomic_add_unless", "atomic_add_unless(, 1, -1) on one shared "
			       "atomic_t: a read, then a cmpxchg loop",
	  &kinds[ADD_UNLESS], .kernel = "2.6.26" },
	{ "spinlock", "++ under one ticket spinlock_t (2.6.25-4.1 x86)",
	  &kinds[SPINLOCK], .kernel = "2.6.26" },
	{ "qspinlock", "++ under one queued spinlock (6.18 x86: pending bit, "
		       "MCS queue)", &kinds[QSPINLOCK], .kernel = "6.18" },
	{ "decb_spinlock", "++ under one byte spinlock (lock; decb, x86 before "
			   "2.6.25)", &kinds[DECB_SPINLOCK],
	  .kernel = "2.6.22" },
	{ "ia64_spinlock", "++ under one ia64 spinlock (2.6.7: cmpxchg4.acq, "
			   "then ld4 until free)", &kinds[IA64_SPINLOCK],
	  .kernel = "2.6.7" },
	{ "percpu", "this_cpu_inc() on the thread's own per-CPU slot",
	  &kinds[PERCPU], .kernel = "2.6.26" },
);

static const struct kscale_variant host_variants[] = {
};

static const struct kscale_knob knobs[] = {
	{ "hold_ns", "0", "ns of work inside the spinlock", check_hold },
	{ "think_ns", "0", "ns of work after each increment, outside any lock "
			   "(the non-critical section)", check_hold },
};

KSCALE_MODEL("primitives",
	     "lib/kernel primitives under contention",
	     NULL, &primitives_variants);
