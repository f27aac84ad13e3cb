// SPDX-License-Identifier: GPL-2.0
/*
 * A litmus test of today's rwsem_mark_wake() (models/rwsem/rwsem_upstream.c),
 * its own code run by the litmus engine (litmus.h): the releaser grants
 * the queued readers while each reader, as in rwsem_down_read_slowpath(),
 * leaves its wait loop the moment it reads its waiter->task cleared, and
 * reads the count.  Every interleaving of their shared accesses.
 *
 * The kernel wakes in two passes so that a woken reader never runs
 * without its bias in the count: a reader that has not slept yet sees
 * waiter->task cleared and may run and up_read() at once, taking the
 * count's reader part below the readers inside.  So the count must hold
 * the bias of every reader the wake-up grants before any of them is told.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../lib/kernel/atomic.h"
#include "../lib/kernel/compiler.h"
#include "../lib/kernel/percpu.h"
#include "helpers.h"
#include "litmus.h"

/* The model's shared accesses, steps of the litmus engine. */
#undef READ_ONCE
#undef WRITE_ONCE
#undef smp_load_acquire
#undef smp_store_release
#undef atomic_long_add
#undef atomic_long_fetch_add
#define READ_ONCE(x)		LITMUS_READ_ONCE(x)
#define WRITE_ONCE(x, v)	LITMUS_WRITE_ONCE(x, v)
#define smp_load_acquire(p)	LITMUS_READ_ONCE(*(p))
#define smp_store_release(p, v)	LITMUS_WRITE_ONCE(*(p), v)
#define atomic_long_add(i, v)						\
	((void)litmus_add(&(v)->counter, (i), sizeof(long), true))
#define atomic_long_fetch_add(i, v)					\
	litmus_add(&(v)->counter, (i), sizeof(long), true)

/* A copy of the model's table under a name of its own. */
#define rwsem_upstream_ops	litmus_rwsem_upstream_ops
#include "../models/rwsem/rwsem_upstream.c"

#define READERS		2

struct grant {
	struct rw_semaphore sem;
	enum rwsem_wake_type type;
	int nr_waiters;			/* queued readers */
	long want;			/* readers inside once they are granted */
	struct rwsem_waiter waiter[READERS];
	struct task_struct task[READERS];	/* never woken: not run */
	long seen[READERS];		/* the count each read once granted */
};

/* The count's reader part: the readers inside. */
static long readers(long count)
{
	return (long)((unsigned long)count >> RWSEM_READER_SHIFT);
}

static void setup(void *arg)
{
	struct grant *g = arg;
	int i;

	kscale_set_cpu(0);
	init_rwsem(&g->sem);
	/* up_write() or downgrade_write() has run: the releaser's count */
	atomic_long_set(&g->sem.count, RWSEM_FLAG_WAITERS |
			(g->type == RWSEM_WAKE_READ_OWNED ?
			 RWSEM_READER_BIAS : 0));
	memset(g->waiter, 0, sizeof(g->waiter));
	for (i = 0; i < g->nr_waiters; i++) {
		g->waiter[i].task = &g->task[i];
		g->waiter[i].type = RWSEM_WAITING_FOR_READ;
		list_add_tail(&g->waiter[i].list, &g->sem.wait_list);
		g->seen[i] = -1;
	}
}

/* rwsem_wake() or rwsem_downgrade_wake() but for wake_up_q(). */
static void releaser(void *arg)
{
	struct grant *g = arg;
	DEFINE_WAKE_Q(wake_q);

	raw_spin_lock_irq(&g->sem.wait_lock);
	rwsem_mark_wake(&g->sem, g->type, &wake_q);
	raw_spin_unlock_irq(&g->sem.wait_lock);
}

/* rwsem_down_read_slowpath()'s wait loop, and the count after it. */
static void waiter(struct grant *g, int i)
{
	while (smp_load_acquire(&g->waiter[i].task))
		litmus_spin();
	g->seen[i] = atomic_long_read(&g->sem.count);
}

static void waiter0(void *arg)
{
	waiter(arg, 0);
}

static void waiter1(void *arg)
{
	waiter(arg, 1);
}

static const char *check(void *arg)
{
	struct grant *g = arg;
	int i;

	for (i = 0; i < g->nr_waiters; i++)
		if (readers(g->seen[i]) < g->want)
			return "a granted reader ran without its bias in the "
			       "count";
	if (readers(atomic_long_read(&g->sem.count)) != g->want ||
	    atomic_long_read(&g->sem.count) & RWSEM_FLAG_WAITERS)
		return "the count is not the readers granted, no waiter";
	return NULL;
}

static void explore(enum rwsem_wake_type type, int nr_waiters, long want)
{
	static struct grant g;
	struct litmus l = {
		.name = "rwsem_mark_wake",
		.nr_threads = 1 + nr_waiters,
		.arg = &g,
		.setup = setup,
		.thread = { releaser, waiter0, waiter1 },
		.cpu = { 0, 1, 2 },
		.check = check,
	};
	struct litmus_result r;

	g.type = type;
	g.nr_waiters = nr_waiters;
	g.want = want;
	litmus_assert_allowed(&l, &r);
}

/* up_write() with two readers queued: both granted, two biases. */
static void test_readers_woken_by_a_release_see_their_bias(void **state)
{
	explore(RWSEM_WAKE_ANY, 2, 2);
}

/* downgrade_write() with one reader queued: it and the downgrader. */
static void test_reader_woken_by_a_downgrade_sees_its_bias(void **state)
{
	explore(RWSEM_WAKE_READ_OWNED, 1, 2);
}

int main(void)
{
	static struct topology machine;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_readers_woken_by_a_release_see_their_bias),
		cmocka_unit_test(test_reader_woken_by_a_downgrade_sees_its_bias),
	};

	test_machine(&machine, 4, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
