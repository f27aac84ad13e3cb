// SPDX-License-Identifier: GPL-2.0
/*
 * The primitives of lib/kernel under torture, after locktorture's
 * spin_lock, mutex_lock and rcu torture types: mutual exclusion through
 * an owner word and a count only the holder updates (non-atomically, so
 * a broken lock loses updates), atomic and per-CPU counts summing to
 * what the tasks added, and RCU readers that never see a retired object
 * freed.  The ticket spinlock's 16-bit wrap is exercised by volume; the
 * queued spinlock runs at v4.6 and at 6.18.
 */
#include <stdio.h>
#include <stdlib.h>

#include "../lib/kernel/atomic.h"
#include "../lib/kernel/delay.h"
#include "../lib/kernel/mutex.h"
#include "../lib/kernel/percpu.h"
#include "../lib/kernel/rcu.h"
#include "../lib/kernel/spinlock.h"
#include "torture.h"

#define RCU_LIVE	0x4c495645u
#define RCU_DEAD	0xdeadbeefu

enum prim {
	SPINLOCK, QSPINLOCK, QSPINLOCK_V4_6, DECB_SPINLOCK, IA64_SPINLOCK,
	MUTEX, ATOMIC, PERCPU, RCU, NR_PRIMS
};

struct rcu_obj {
	struct rcu_head rcu;
	unsigned int magic;
};

static struct {
	enum prim prim;
	spinlock_t spin;		/* of the row's kernel's kind */
	struct mutex mutex;
	int owner;			/* task id holding the lock, -1: none */
	unsigned long count;		/* under the lock: plain updates */
	atomic_t atomic;
	int __percpu *percpu;
	struct rcu_obj *rcu_ptr;
	unsigned long retired, freed;
	long *mine;			/* [task]: what each added */
	struct rcu_thread *rcu_threads;	/* [task] */
	unsigned long trylock_fails;
} p;

static const enum prim prims[NR_PRIMS] = {
	SPINLOCK, QSPINLOCK, QSPINLOCK_V4_6, DECB_SPINLOCK, IA64_SPINLOCK,
	MUTEX, ATOMIC, PERCPU, RCU,
};

/* The five spinlocks: spinlock_t, its kind its row's kernel's. */
static const struct kscale_variant prim_rows[] = {
	{ "spinlock", "the ticket spinlock_t", &prims[SPINLOCK],
	  .kernel = "2.6.26" },
	{ "qspinlock", "6.18's queued spinlock", &prims[QSPINLOCK],
	  .kernel = "6.18" },
	{ "qspinlock_v4_6", "v4.6's queued spinlock",
	  &prims[QSPINLOCK_V4_6], .kernel = "4.6" },
	{ "decb_spinlock", "x86's byte spinlock before 2.6.25 (lock; decb)",
	  &prims[DECB_SPINLOCK], .kernel = "2.6.22" },
	{ "ia64_spinlock", "2.6.7's ia64 spinlock (cmpxchg4.acq, ld4 spin)",
	  &prims[IA64_SPINLOCK], .kernel = "2.6.7" },
	{ "mutex", "struct mutex on the model scheduler", &prims[MUTEX],
	  .kernel = "2.6.26" },
	{ "atomic", "atomic_t counts", &prims[ATOMIC], .kernel = "2.6.26" },
	{ "percpu", "this_cpu counts summed over the CPUs", &prims[PERCPU],
	  .kernel = "2.6.26" },
	{ "rcu", "RCU readers against retire-and-free", &prims[RCU],
	  .kernel = "2.6.26" },
};

static const struct kscale_variant_table prim_variants = {
	prim_rows, NR_PRIMS,
};

static struct rcu_obj *rcu_obj_new(void)
{
	struct rcu_obj *o = malloc(sizeof(*o));

	if (!o)
		abort();
	o->magic = RCU_LIVE;
	return o;
}

static int prim_init(const void *variant, int nr_tasks)
{
	p.prim = *(const enum prim *)variant;
	spin_lock_init(&p.spin);
	mutex_init(&p.mutex);
	p.owner = -1;
	p.count = p.retired = p.freed = p.trylock_fails = 0;
	atomic_set(&p.atomic, 0);
	p.percpu = alloc_percpu(int);
	p.mine = calloc(nr_tasks, sizeof(*p.mine));
	p.rcu_threads = aligned_alloc(sizeof(*p.rcu_threads),
				      nr_tasks * sizeof(*p.rcu_threads));
	if (!p.percpu || !p.mine || !p.rcu_threads)
		abort();
	p.rcu_ptr = rcu_obj_new();
	return 0;
}

static void prim_task_init(struct torture_task *t)
{
	if (p.prim == RCU)
		rcu_register_thread(&p.rcu_threads[t->id]);
}

static void prim_task_exit(struct torture_task *t)
{
	if (p.prim == RCU)
		rcu_unregister_thread();
}

/* Take the variant's lock, or fail a trylock (one in four): false. */
static bool prim_lock(void)
{
	bool try = torture_random() % 4 == 0;

	switch (p.prim) {
	case SPINLOCK:
	case QSPINLOCK:
	case QSPINLOCK_V4_6:
	case DECB_SPINLOCK:
	case IA64_SPINLOCK:
		if (try)
			return spin_trylock(&p.spin);
		spin_lock(&p.spin);
		return true;
	default:
		mutex_lock(&p.mutex);
		return true;
	}
}

static void prim_unlock(void)
{
	switch (p.prim) {
	case SPINLOCK:
	case QSPINLOCK:
	case QSPINLOCK_V4_6:
	case DECB_SPINLOCK:
	case IA64_SPINLOCK:
		spin_unlock(&p.spin);
		break;
	default:
		mutex_unlock(&p.mutex);
		break;
	}
}

static void prim_locked_op(struct torture_task *t)
{
	unsigned long count;
	int owner;

	if (!prim_lock()) {
		__atomic_fetch_add(&p.trylock_fails, 1, __ATOMIC_RELAXED);
		return;
	}
	owner = READ_ONCE(p.owner);
	if (owner != -1)
		torture_fail("task %d took the lock task %d holds", t->id, owner);
	WRITE_ONCE(p.owner, t->id);
	count = READ_ONCE(p.count);
	ndelay(torture_random() % 100);
	WRITE_ONCE(p.count, count + 1);
	p.mine[t->id]++;
	owner = READ_ONCE(p.owner);
	if (owner != t->id)
		torture_fail("task %d's lock taken over by task %d", t->id, owner);
	WRITE_ONCE(p.owner, -1);
	prim_unlock();
}

static void prim_rcu_free(struct rcu_head *head)
{
	struct rcu_obj *o = (struct rcu_obj *)head;

	o->magic = RCU_DEAD;
	__atomic_fetch_add(&p.freed, 1, __ATOMIC_RELAXED);
	free(o);
}

static void prim_rcu_op(struct torture_task *t)
{
	struct rcu_obj *o;

	if (torture_random() % 8 == 0) {
		struct rcu_obj *new = rcu_obj_new();

		spin_lock(&p.spin);
		o = p.rcu_ptr;
		rcu_assign_pointer(p.rcu_ptr, new);
		p.retired++;
		spin_unlock(&p.spin);
		call_rcu(&o->rcu, prim_rcu_free);
	} else {
		rcu_read_lock();
		o = rcu_dereference(p.rcu_ptr);
		ndelay(torture_random() % 500);
		if (READ_ONCE(o->magic) != RCU_LIVE)
			torture_fail("task %d: an RCU reader saw a freed object "
				     "(magic %#x)", t->id, READ_ONCE(o->magic));
		rcu_read_unlock();
	}
	rcu_quiescent_state();
}

static void prim_op(struct torture_task *t)
{
	long v;

	switch (p.prim) {
	case ATOMIC:
		v = (long)(torture_random() % 201) - 100;
		if (torture_random() % 2)
			atomic_add(v, &p.atomic);
		else
			atomic_sub(-v, &p.atomic);
		p.mine[t->id] += v;
		break;
	case PERCPU:
		preempt_disable();
		if (smp_processor_id() != current->cpu)
			torture_fail("task %d on CPU %d counts into CPU %d's",
				     t->id, current->cpu, smp_processor_id());
		this_cpu_inc(*this_cpu_ptr(p.percpu));
		preempt_enable();
		p.mine[t->id]++;
		break;
	case RCU:
		prim_rcu_op(t);
		break;
	default:
		prim_locked_op(t);
		break;
	}
}

static long prim_sum_mine(void)
{
	long sum = 0;
	int i;

	for (i = 0; i < torture_nr_tasks; i++)
		sum += p.mine[i];
	return sum;
}

static void prim_quiet(void)
{
	long sum = prim_sum_mine(), percpu = 0;
	int cpu;

	switch (p.prim) {
	case ATOMIC:
		if (atomic_read(&p.atomic) != sum)
			torture_fail("atomic_t %d, the tasks added %ld",
				     atomic_read(&p.atomic), sum);
		break;
	case PERCPU:
		for_each_possible_cpu(cpu)
			percpu += *per_cpu_ptr(p.percpu, cpu);
		if (percpu != sum)
			torture_fail("per-CPU counts sum to %ld, the tasks "
				     "added %ld", percpu, sum);
		break;
	case RCU:
		if (p.freed > p.retired)
			torture_fail("%lu objects freed, %lu retired",
				     p.freed, p.retired);
		break;
	default:
		if ((long)p.count != sum || p.owner != -1)
			torture_fail("count %lu, the holders counted %ld, owner "
				     "%d", p.count, sum, p.owner);
		if (spin_is_locked(&p.spin) ||
		    atomic_read(&p.mutex.count) != 1 ||
		    !list_empty(&p.mutex.wait_list))
			torture_fail("a lock held or waited on at a quiet point");
		break;
	}
}

static void prim_stats(char *buf, size_t len)
{
	if (p.prim == RCU)
		snprintf(buf, len, "Retired: %lu Freed: %lu", p.retired, p.freed);
	else if (p.prim <= IA64_SPINLOCK)
		snprintf(buf, len, "Trylock fails: %lu", p.trylock_fails);
}

static void prim_cleanup(void)
{
	rcu_barrier();
	if (p.prim == RCU && p.freed != p.retired)
		torture_fail("%lu objects retired, %lu freed after rcu_barrier()",
			     p.retired, p.freed);
	free(p.rcu_ptr);
	free_percpu(p.percpu);
	free(p.mine);
	free(p.rcu_threads);
}

static const struct torture_model primitives_torture = {
	.name		= "primitives",
	.variants	= &prim_variants,
	.init		= prim_init,
	.task_init	= prim_task_init,
	.op		= prim_op,
	.task_exit	= prim_task_exit,
	.quiet		= prim_quiet,
	.stats		= prim_stats,
	.cleanup	= prim_cleanup,
};
torture_model_register(primitives_torture);
