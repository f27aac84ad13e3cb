/* SPDX-License-Identifier: GPL-2.0 */
/* What the validation tests share: a made-up machine, threads to race. */
#ifndef KSCALE_TEST_HELPERS_H
#define KSCALE_TEST_HELPERS_H

#include "../lib/harness/variant.h"
#include "../lib/sys/topology.h"

/* nr CPUs in nr_nodes nodes becomes the model's machine (percpu_setup). */
void test_machine(struct topology *t, int nr_cpus, int nr_nodes);

struct test_thread {
	int id;
	void *arg;
};

/*
 * Threads that can race without sharing a CPU: a ticket lock whose next
 * waiter is descheduled stalls everyone (userspace cannot disable
 * preemption), which tests time rather than correctness.
 */
int test_racers(int max);

/* Run fn on nr threads, thread i as CPU i of the test machine. */
void test_race(int nr, void (*fn)(struct test_thread *), void *arg);

/* CPUs 0 .. n-1 that the host allows and the test machine has. */
int test_task_cpus(void);

/*
 * Run fn as nr tasks of the model scheduler, task i on CPU i % cpus, as
 * many a CPU as it takes (cpus at most test_task_cpus()).
 */
void test_race_tasks(int nr, int cpus, void (*fn)(struct test_thread *),
		     void *arg);

/* Count an event seen by a racing thread (cmocka asserts are not safe there). */
static inline void test_note(int *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/*
 * A reader-writer lock's exclusion, checked by its holders: who is
 * inside, and broken exclusion counted in violations.
 */
struct test_rw_check {
	int readers;		/* inside as readers */
	int writers;		/* inside as writers */
	int violations;
	/*
	 * Plain data the lock alone orders, outside the counters' atomics
	 * above (which would order it themselves), so that ThreadSanitizer
	 * reports a race if an unlock does not release: a writer makes it
	 * odd before its atomics and even after them, a reader reads it
	 * before its atomics and after them (and sees it even).
	 */
	unsigned long data;
	unsigned long writes;
};

/* Inside a read hold, then a write hold: the checks and the data. */
void test_rw_read(struct test_rw_check *c);
void test_rw_write(struct test_rw_check *c);

double test_now_ms(void);

/* The table checked as bench and torture check it: 0, or a failed test. */
int test_variant_table(const struct kscale_variant_table *t);

/*
 * Each row of a model's variant table (variant.h): its ops, with its
 * kernel's spinlock for the locks its set-up initialises.
 */
#define for_each_variant(_ops, _i, _table)				\
	for ((_i) = test_variant_table(_table); (_i) < (_table)->nr &&	\
	     (kscale_variant_locks(&(_table)->rows[_i]),		\
	      (_ops) = (_table)->rows[_i].ops, 1); (_i)++)

#endif
