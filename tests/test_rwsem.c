// SPDX-License-Identifier: GPL-2.0
/*
 * Validation of the v4.6 rwsem and the seed's reader-owned variant:
 * readers and writers exclude each other, writers exclude writers, no
 * wake-up is lost (a watchdog), the count returns to 0 and the wait list
 * empties; the OSQ lets one spinner through at a time, also when
 * spinners unqueue; the owner field is set exactly where each version
 * sets it.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "../lib/kernel/percpu.h"
#include "../models/rwsem/rwsem.h"
#include "helpers.h"

#define MAX_RACERS	4
#ifdef KSCALE_SANITIZE
#define LOOPS		2000	/* ThreadSanitizer serialises the race */
#else
#define LOOPS		20000
#endif
#define STALL_MS	2000

static struct topology machine;
static struct optimistic_spin_node main_node;

static void task_start(struct optimistic_spin_node *node, int nr)
{
	osq_thread_init(node, nr);
}

static void assert_released(struct rw_semaphore *sem)
{
	assert_int_equal(sem->count, 0);
	assert_true(list_empty(&sem->wait_list));
	assert_false(osq_is_locked(&sem->osq));
}

static void owner_after_each_path(bool patch)
{
	struct task_struct *reader = patch ? RWSEM_READER_OWNED : NULL;
	struct rw_semaphore sem;

	rwsem_reader_owned_patch = patch;
	init_rwsem(&sem);
	down_read(&sem);
	assert_ptr_equal(sem.owner, reader);
	up_read(&sem);
	assert_ptr_equal(sem.owner, reader);	/* readers leave it */
	assert_int_equal(down_read_trylock(&sem), 1);
	assert_ptr_equal(sem.owner, reader);
	up_read(&sem);
	down_write(&sem);
	assert_ptr_equal(sem.owner, current);
	assert_int_equal(down_read_trylock(&sem), 0);
	up_write(&sem);
	assert_ptr_equal(sem.owner, NULL);
	down_write(&sem);
	downgrade_write(&sem);
	assert_ptr_equal(sem.owner, reader);
	up_read(&sem);
	assert_released(&sem);
}

static void test_owner_set_where_each_version_sets_it(void **state)
{
	owner_after_each_path(false);
	owner_after_each_path(true);
}

struct handoff {
	struct rw_semaphore sem;
	int reader_waiting;
	struct task_struct *owner_seen;
};

/* Blocks behind the writer, then reports the owner it finds. */
static void *blocked_reader(void *arg)
{
	struct handoff *h = arg;
	struct optimistic_spin_node node;

	task_start(&node, 1);
	__atomic_store_n(&h->reader_waiting, 1, __ATOMIC_SEQ_CST);
	down_read(&h->sem);
	h->owner_seen = READ_ONCE(h->sem.owner);
	up_read(&h->sem);
	return NULL;
}

static void handoff_to_reader(bool patch)
{
	struct handoff h = { .reader_waiting = 0 };
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	pthread_t reader;

	rwsem_reader_owned_patch = patch;
	init_rwsem(&h.sem);
	down_write(&h.sem);
	pthread_create(&reader, NULL, blocked_reader, &h);
	while (!__atomic_load_n(&h.reader_waiting, __ATOMIC_SEQ_CST))
		;
	nanosleep(&pause, NULL);	/* let it queue and sleep */
	up_write(&h.sem);
	pthread_join(reader, NULL);
	assert_ptr_equal(h.owner_seen, patch ? RWSEM_READER_OWNED : NULL);
	assert_released(&h.sem);
}

static void test_woken_readers_are_marked_owners(void **state)
{
	handoff_to_reader(false);
	handoff_to_reader(true);
}

struct race {
	struct rw_semaphore sem;
	int readers;		/* inside as readers */
	int writers;		/* inside as writers */
	int violations;
	unsigned long progress;
	int done;
};

static void read_side(struct race *r)
{
	down_read(&r->sem);
	__atomic_fetch_add(&r->readers, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->writers, __ATOMIC_SEQ_CST))
		test_note(&r->violations);
	cpu_relax();
	__atomic_fetch_sub(&r->readers, 1, __ATOMIC_SEQ_CST);
	up_read(&r->sem);
}

static void write_side(struct race *r)
{
	down_write(&r->sem);
	if (__atomic_fetch_add(&r->writers, 1, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&r->readers, __ATOMIC_SEQ_CST))
		test_note(&r->violations);
	cpu_relax();
	__atomic_fetch_sub(&r->writers, 1, __ATOMIC_SEQ_CST);
	up_write(&r->sem);
}

/*
 * A lost wake-up leaves waiters asleep while the lock is free, or granted
 * to a reader that never runs: every holder here leaves within
 * microseconds, so no progress for STALL_MS fails the test.
 */
static void watchdog(struct race *r)
{
	struct timespec tick = { 0, 1000 * 1000 };
	unsigned long seen = 0, now;
	double since = test_now_ms();

	while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
		nanosleep(&tick, NULL);
		now = __atomic_load_n(&r->progress, __ATOMIC_RELAXED);
		if (now != seen) {
			seen = now;
			since = test_now_ms();
		} else if (test_now_ms() - since > STALL_MS) {
			/* the sleepers will never return: fail loudly, now */
			fprintf(stderr, "lost wake-up: no progress for %d ms "
				"(count %#lx)\n", STALL_MS,
				READ_ONCE(r->sem.count));
			abort();
		}
	}
}

static void racer(struct test_thread *t)
{
	struct race *r = t->arg;
	struct optimistic_spin_node node;
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (t->id + 1);
	int n;

	if (t->id == 0) {
		watchdog(r);
		return;
	}
	task_start(&node, t->id);
	for (n = 0; n < LOOPS; n++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		if (rng % 3)
			read_side(r);
		else
			write_side(r);
		__atomic_fetch_add(&r->progress, 1, __ATOMIC_RELAXED);
	}
}

/* The last racer to finish tells the watchdog. */
static void racer_then_done(struct test_thread *t)
{
	struct race *r = t->arg;
	static int finished;

	racer(t);
	if (t->id && __atomic_add_fetch(&finished, 1, __ATOMIC_ACQ_REL) ==
	    test_racers(MAX_RACERS)) {
		__atomic_store_n(&finished, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
	}
}

static void race_version(bool patch)
{
	struct race *r = calloc(1, sizeof(*r));

	rwsem_reader_owned_patch = patch;
	init_rwsem(&r->sem);
	/* the racers and the watchdog, which only sleeps and looks */
	test_race(test_racers(MAX_RACERS) + 1, racer_then_done, r);
	assert_int_equal(r->violations, 0);
	assert_int_equal(r->progress, test_racers(MAX_RACERS) * LOOPS);
	assert_released(&r->sem);
	free(r);
}

static void test_mutual_exclusion_and_no_lost_wakeup(void **state)
{
	race_version(false);
	race_version(true);
}

struct osq_race {
	struct optimistic_spin_queue osq;
	int inside;
	int overlaps;
	unsigned long granted, unqueued;
};

static void osq_racer(struct test_thread *t)
{
	struct osq_race *o = t->arg;
	struct optimistic_spin_node node;
	int n;

	task_start(&node, t->id);
	for (n = 0; n < LOOPS; n++) {
		/* every other try, the tick came: spinners must unqueue */
		if (n & 1)
			WRITE_ONCE(current->rq->need_resched, 1);
		if (!osq_lock(&o->osq)) {
			__atomic_fetch_add(&o->unqueued, 1, __ATOMIC_RELAXED);
			cond_resched();
			continue;
		}
		if (__atomic_add_fetch(&o->inside, 1, __ATOMIC_SEQ_CST) != 1)
			test_note(&o->overlaps);
		cpu_relax();
		__atomic_sub_fetch(&o->inside, 1, __ATOMIC_SEQ_CST);
		__atomic_fetch_add(&o->granted, 1, __ATOMIC_RELAXED);
		osq_unlock(&o->osq);
		cond_resched();
	}
}

static void test_osq_grants_one_spinner_at_a_time(void **state)
{
	struct osq_race o = { .inside = 0 };
	int cpus = test_task_cpus(), n = 2 * cpus;	/* two tasks a CPU */

	osq_lock_init(&o.osq);
	test_race_tasks(n, cpus, osq_racer, &o);
	assert_int_equal(o.overlaps, 0);
	assert_int_equal(o.granted + o.unqueued, (unsigned long)n * LOOPS);
	assert_false(osq_is_locked(&o.osq));
}

static int setup(void **state)
{
	test_machine(&machine, 8, 2);
	task_start(&main_node, 0);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_owner_set_where_each_version_sets_it),
		cmocka_unit_test(test_woken_readers_are_marked_owners),
		cmocka_unit_test(test_mutual_exclusion_and_no_lost_wakeup),
		cmocka_unit_test(test_osq_grants_one_spinner_at_a_time),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
