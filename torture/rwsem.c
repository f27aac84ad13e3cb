// SPDX-License-Identifier: GPL-2.0
/*
 * The rwsem model under torture (models/rwsem/, through struct rwsem_ops):
 * every row of rwsem_variants: v4.6's rwsem-xadd, with the seed's
 * reader-owned patch, v5.1's rwsem-xadd, v5.3's and today's rwsem.c.
 * Each operation is down_read, down_write, down_write then
 * downgrade_write then up_read, or a read or write trylock, on one of two
 * rwsems or nested on both (always the first one first).  As in the
 * locktest workload, a quarter of the tasks only ever read the first
 * rwsem and a quarter only ever write it (the one class each, a writer
 * class that never reads: what hand-off and reader spinning must keep
 * fair); the others mix.
 *
 * Invariants: inside a section the holders count themselves (atomics):
 * a writer sees no other writer and no reader, a reader no writer, and a
 * writer's owner word and data survive its section, a reader's data too;
 * trylocks that return 1 pass the same checks.  Now and then a section
 * also reads the model's own state: a writer is the lock's owner, readers
 * hold no writer bit (and mark the owner reader-owned, where the version
 * does).  At quiet points each rwsem is unlocked with an empty wait list,
 * no waiters or handoff flag, no writer owner, writers not barred from
 * spinning (RWSEM_NONSPINNABLE; v5.3's RWSEM_WR_NONSPINNABLE), the
 * OSQ unlocked; the writers' data sums to what they added; no WARN_ON()
 * fired.  A lost wake-up is the framework's no-progress failure.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/kernel/delay.h"
#include "../models/rwsem/rwsem.h"
#include "torture.h"

#define NR_SEMS		2
#define NESTED_ONE_IN	8	/* operations taking both rwsems */
#define STATE_ONE_IN	4	/* sections that also read the model's state */
#define CLASS_ONE_IN	4	/* tasks that only read, and as many that write */

enum rt_mode { RT_READ, RT_WRITE, RT_DOWNGRADE, RT_READ_TRY, RT_WRITE_TRY };

struct rt_sem {
	struct rwsem_storage sem;
	int readers, writers;		/* holders, counted by themselves */
	int owner;			/* writer's task id + 1, or 0 */
	unsigned long data;		/* writers add 1, non-atomically */
} ____cacheline_aligned;

struct rt_task {
	struct optimistic_spin_node osq_node;
	unsigned long data[NR_SEMS];	/* what it added to each */
	unsigned long reads, writes, downgrades, trylock_fails;
	unsigned long sleeps, spins;	/* its slow paths' (rwsem_profile) */
} ____cacheline_aligned;

static struct {
	const struct rwsem_variant *v;
	struct rt_sem sems[NR_SEMS];
	struct rt_task *tasks;
	unsigned long warnings;
	unsigned long reads, writes, downgrades, trylock_fails;
	unsigned long sleeps, spins;
} rt;

static int rt_init(const void *variant, int nr_tasks)
{
	int i;

	memset(&rt, 0, sizeof(rt));
	rt.v = variant;
	rwsem_reader_owned_patch = rt.v->reader_owned_patch;
	for (i = 0; i < NR_SEMS; i++)
		rt.v->ops->init(&rt.sems[i].sem);
	rt.tasks = aligned_alloc(SMP_CACHE_BYTES, nr_tasks * sizeof(*rt.tasks));
	if (!rt.tasks)
		abort();
	memset(rt.tasks, 0, nr_tasks * sizeof(*rt.tasks));
	rt.warnings = kscale_warnings();
	return 0;
}

static void rt_task_init(struct torture_task *t)
{
	t->priv = &rt.tasks[t->id];
	osq_thread_init(&rt.tasks[t->id].osq_node, t->id);
}

static int rt_nr(struct rt_sem *s)
{
	return s - rt.sems;
}

static void rt_task_exit(struct torture_task *t)
{
	struct rt_task *rtt = t->priv;

	rtt->sleeps = rwsem_profile.sleeps;
	rtt->spins = rwsem_profile.spin_acquired;
}

/* The model's own view of a lock this task holds. */
static void rt_check_state(struct torture_task *t, struct rt_sem *s, bool write)
{
	struct rwsem_state st;

	rt.v->state(&s->sem, &st);
	if (write && (!st.writer_locked || st.owner_task != current ||
		      st.active < 1))
		torture_fail("task %d holds rwsem %d for write: owner %#lx, "
			     "count %#lx", t->id, rt_nr(s), st.owner,
			     st.count);
	if (!write && (st.writer_locked || st.active < 1 ||
		       st.reader_owned != rt.v->reader_mark))
		torture_fail("task %d holds rwsem %d for read: owner %#lx, "
			     "count %#lx", t->id, rt_nr(s), st.owner,
			     st.count);
}

static void rt_enter_write(struct torture_task *t, struct rt_sem *s)
{
	int writers = __atomic_add_fetch(&s->writers, 1, __ATOMIC_SEQ_CST);
	int readers = __atomic_load_n(&s->readers, __ATOMIC_SEQ_CST);
	int owner = __atomic_exchange_n(&s->owner, t->id + 1, __ATOMIC_SEQ_CST);
	struct rt_task *rtt = t->priv;
	unsigned long data;

	if (writers != 1 || readers || owner)
		torture_fail("task %d took rwsem %d for write beside %d "
			     "writers (owner %d), %d readers", t->id, rt_nr(s),
			     writers - 1, owner - 1, readers);
	if (torture_random() % STATE_ONE_IN == 0)
		rt_check_state(t, s, true);
	data = READ_ONCE(s->data);
	ndelay(torture_random() % 200);
	WRITE_ONCE(s->data, data + 1);
	rtt->data[rt_nr(s)]++;
}

static void rt_exit_write(struct torture_task *t, struct rt_sem *s)
{
	int owner = __atomic_exchange_n(&s->owner, 0, __ATOMIC_SEQ_CST);

	if (owner != t->id + 1 || READ_ONCE(s->readers))
		torture_fail("task %d's write hold of rwsem %d: owner %d, %d "
			     "readers", t->id, rt_nr(s), owner - 1,
			     READ_ONCE(s->readers));
	__atomic_sub_fetch(&s->writers, 1, __ATOMIC_SEQ_CST);
}

/* A reader: the data it saw, unchanged until rt_exit_read(). */
static unsigned long rt_enter_read(struct torture_task *t, struct rt_sem *s)
{
	int writers;

	__atomic_add_fetch(&s->readers, 1, __ATOMIC_SEQ_CST);
	writers = __atomic_load_n(&s->writers, __ATOMIC_SEQ_CST);
	if (writers)
		torture_fail("task %d took rwsem %d for read beside %d writers "
			     "(owner %d)", t->id, rt_nr(s), writers,
			     READ_ONCE(s->owner) - 1);
	if (torture_random() % STATE_ONE_IN == 0)
		rt_check_state(t, s, false);
	return READ_ONCE(s->data);
}

static void rt_exit_read(struct torture_task *t, struct rt_sem *s,
			 unsigned long data)
{
	ndelay(torture_random() % 200);
	if (READ_ONCE(s->data) != data || READ_ONCE(s->writers))
		torture_fail("task %d's read hold of rwsem %d: data %lu -> "
			     "%lu, %d writers", t->id, rt_nr(s), data,
			     READ_ONCE(s->data), READ_ONCE(s->writers));
	__atomic_sub_fetch(&s->readers, 1, __ATOMIC_SEQ_CST);
}

static bool rt_read_mode(enum rt_mode mode)
{
	return mode == RT_READ || mode == RT_READ_TRY;
}

/* Take s as mode says, checked: false if a trylock failed. */
static bool rt_lock(struct torture_task *t, struct rt_sem *s, enum rt_mode mode,
		    unsigned long *data)
{
	const struct rwsem_ops *ops = rt.v->ops;
	struct rt_task *rtt = t->priv;

	switch (mode) {
	case RT_READ:
		ops->down_read(&s->sem);
		break;
	case RT_READ_TRY:
		if (!ops->down_read_trylock(&s->sem))
			goto fail;
		break;
	case RT_WRITE_TRY:
		if (!ops->down_write_trylock(&s->sem))
			goto fail;
		break;
	default:
		ops->down_write(&s->sem);
		break;
	}
	if (rt_read_mode(mode)) {
		*data = rt_enter_read(t, s);
		rtt->reads++;
	} else {
		rt_enter_write(t, s);
		rtt->writes++;
	}
	return true;
fail:
	rtt->trylock_fails++;
	return false;
}

static void rt_unlock(struct torture_task *t, struct rt_sem *s,
		      enum rt_mode mode, unsigned long data)
{
	const struct rwsem_ops *ops = rt.v->ops;
	struct rt_task *rtt = t->priv;

	if (rt_read_mode(mode)) {
		rt_exit_read(t, s, data);
		ops->up_read(&s->sem);
	} else if (mode == RT_DOWNGRADE) {
		rt_exit_write(t, s);
		ops->downgrade_write(&s->sem);
		data = rt_enter_read(t, s);
		rtt->downgrades++;
		rt_exit_read(t, s, data);
		ops->up_read(&s->sem);
	} else {
		rt_exit_write(t, s);
		ops->up_write(&s->sem);
	}
}

static enum rt_mode rt_random_mode(void)
{
	static const enum rt_mode modes[] = {
		RT_READ, RT_READ, RT_READ, RT_WRITE, RT_WRITE, RT_WRITE,
		RT_DOWNGRADE, RT_DOWNGRADE, RT_READ_TRY, RT_WRITE_TRY,
	};

	return modes[torture_random() % (sizeof(modes) / sizeof(modes[0]))];
}

static void rt_op(struct torture_task *t)
{
	enum rt_mode outer = rt_random_mode(), inner = rt_random_mode();
	struct rt_sem *s = &rt.sems[torture_random() % NR_SEMS];
	unsigned long data, inner_data;

	/* locktest's classes: a reader, or a writer, for good */
	if (t->id % CLASS_ONE_IN < 2) {
		outer = t->id % CLASS_ONE_IN ? RT_WRITE : RT_READ;
		if (rt_lock(t, &rt.sems[0], outer, &data))
			rt_unlock(t, &rt.sems[0], outer, data);
		return;
	}
	if (torture_random() % NESTED_ONE_IN) {
		if (rt_lock(t, s, outer, &data))
			rt_unlock(t, s, outer, data);
		return;
	}
	if (!rt_lock(t, &rt.sems[0], outer, &data))
		return;
	if (rt_lock(t, &rt.sems[1], inner, &inner_data))
		rt_unlock(t, &rt.sems[1], inner, inner_data);
	rt_unlock(t, &rt.sems[0], outer, data);
}

static void rt_quiet(void)
{
	unsigned long warnings = kscale_warnings();
	struct rwsem_state st;
	int i, j;

	for (i = 0; i < NR_SEMS; i++) {
		struct rt_sem *s = &rt.sems[i];
		unsigned long sum = 0;

		rt.v->state(&s->sem, &st);
		if (!st.unlocked || st.nr_waiters || st.flag_waiters ||
		    st.flag_handoff || st.osq_locked || st.writer_locked ||
		    st.nonspinnable || (st.owner && !st.reader_owned))
			torture_fail("rwsem %d at a quiet point: count %#lx, "
				     "owner %#lx, %d waiters, OSQ %slocked", i,
				     st.count, st.owner, st.nr_waiters,
				     st.osq_locked ? "" : "un");
		for (j = 0; j < torture_nr_tasks; j++)
			sum += rt.tasks[j].data[i];
		if (s->readers || s->writers || s->owner || s->data != sum)
			torture_fail("rwsem %d at a quiet point: %d readers, "
				     "%d writers, owner %d, data %lu, added "
				     "%lu", i, s->readers, s->writers,
				     s->owner - 1, s->data, sum);
	}
	if (warnings != rt.warnings)
		torture_fail("%lu WARN_ON()s in the model",
			     warnings - rt.warnings);
	rt.warnings = warnings;
}

static void rt_stats(char *buf, size_t len)
{
	snprintf(buf, len, "Reads: %lu Writes: %lu Downgrades: %lu "
		 "Trylock fails: %lu Slow path sleeps: %lu Spin acquired: %lu",
		 rt.reads, rt.writes, rt.downgrades, rt.trylock_fails,
		 rt.sleeps, rt.spins);
}

static void rt_cleanup(void)
{
	int i;

	for (i = 0; i < torture_nr_tasks; i++) {
		rt.reads += rt.tasks[i].reads;
		rt.writes += rt.tasks[i].writes;
		rt.downgrades += rt.tasks[i].downgrades;
		rt.trylock_fails += rt.tasks[i].trylock_fails;
		rt.sleeps += rt.tasks[i].sleeps;
		rt.spins += rt.tasks[i].spins;
	}
	free(rt.tasks);
	rt.tasks = NULL;
}

static const struct torture_model rwsem_torture = {
	.name		= "rwsem",
	.variants	= &rwsem_variants,
	.init		= rt_init,
	.task_init	= rt_task_init,
	.op		= rt_op,
	.task_exit	= rt_task_exit,
	.quiet		= rt_quiet,
	.stats		= rt_stats,
	.cleanup	= rt_cleanup,
};
torture_model_register(rwsem_torture);
