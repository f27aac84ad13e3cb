// SPDX-License-Identifier: GPL-2.0
/*
 * Validation of today's rwsem (models/rwsem/rwsem_upstream.c) beside
 * v4.6's, v5.1's and v5.3's, all driven through struct rwsem_ops:
 *  - for all: each entry point leaves the count and wait list as it
 *    should; readers and writers exclude each other and writers exclude
 *    writers, with trylocks and downgrades mixed in, 8 tasks on 2 CPUs,
 *    no wake-up lost (a watchdog) and the lock unlocked with an empty
 *    wait list at the end, plain data written under the lock seen
 *    whole (and ordered by it alone, for ThreadSanitizer: up_read()
 *    and up_write() must release); a downgrade hands the lock to the
 *    readers queued behind it, not to the writer queued after them;
 *    up_write() grants every queued reader at once;
 *  - for all, a writer spins, without sleeping, behind a writer owner
 *    that runs (v5.3: a reader too); v5.3 and today's: a writer
 *    spinning on a reader-owned lock gives up after
 *    rwsem_rspin_threshold() and marks the lock
 *    nonspinnable; a writer kept waiting RWSEM_WAIT_TIMEOUT sets
 *    RWSEM_FLAG_HANDOFF and gets the lock before a writer that keeps
 *    stealing it; v5.1 and today's: a writer sleeping behind readers
 *    that run, and a reader behind a writer, each count their sleep
 *    reason (and queueing reason) once; today's only: the handoff as
 *    readers see it.
 * What depends on timing is checked where the tasks are SCHED_FIFO (not
 * under ThreadSanitizer, where the scenarios still run for their races).
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "../lib/kernel/percpu.h"
#include "../models/rwsem/rwsem.h"
#include "helpers.h"

#ifdef KSCALE_SANITIZE
#define LOOPS		300	/* ThreadSanitizer serialises the race */
#else
#define LOOPS		3000
#endif
#define RACERS		8	/* tasks in the race, on at most 2 CPUs */
/*
 * A lost wake-up stalls for good; the host can stall a task for seconds
 * too (another process's SCHED_FIFO tasks on a shared machine), so both
 * limits are generous.
 */
#define STALL_MS	10000
#define DEADLINE_MS	10000	/* a scenario's wait for its own state */

struct version {
	const char *row;	/* its row of rwsem_variants: its lock */
	const struct rwsem_ops *ops;
	void (*state)(struct rwsem_storage *sem, struct rwsem_state *st);
	bool reader_task;	/* readers leave their task in the owner */
	bool reader_spins;	/* readers spin on a writer owner (v5.3) */
	bool rspin;		/* writers spin on readers, up to a time */
	bool handoff;		/* RWSEM_FLAG_HANDOFF */
	bool today;		/* today's: readers steal, handoff spin */
};

static const struct version versions[] = {
	{ "v4.6", &rwsem_v4_6_ops, rwsem_v4_6_state },
	{ "v5.1", &rwsem_v5_1_ops, rwsem_v5_1_state, .reader_task = true },
	{ "v5.3", &rwsem_v5_3_ops, rwsem_v5_3_state, .reader_task = true,
	  .reader_spins = true, .rspin = true, .handoff = true },
	{ "upstream", &rwsem_upstream_ops, rwsem_upstream_state,
	  .reader_task = true, .rspin = true, .handoff = true, .today = true },
};

#ifndef ARRAY_SIZE
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#endif

/* Its row's lock for every rwsem set up from here (spinlock.h). */
static bool version_locks(const struct version *v)
{
	const struct kscale_variant *row;

	for_each_variant_row(row, &rwsem_variants) {
		if (!strcmp(row->name, v->row)) {
			kscale_variant_locks(row);
			return true;
		}
	}
	fail_msg("no row %s", v->row);
	return false;
}

#define for_each_version(v)						\
	for ((v) = versions; (v) < versions + ARRAY_SIZE(versions) &&	\
	     version_locks(v); (v)++)
#define for_each_version_with(v, what)					\
	for_each_version(v)						\
		if (!(v)->what) {} else

static struct topology machine;
static struct optimistic_spin_node main_node;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Work on the CPU without a preemption point: the task stays on_cpu. */
static void busy_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;

	while (now_ns() < end)
		cpu_relax();
}

/* A model task's wait that lets the other tasks of its CPU run. */
static void nap(void)
{
	schedule_timeout_ns(20 * 1000);
}

static int load(const int *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void store(int *p, int v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

static struct rwsem_state state_of(const struct version *v,
				   struct rwsem_storage *sem)
{
	struct rwsem_state st;

	v->state(sem, &st);
	return st;
}

static void assert_released(const struct version *v, struct rwsem_storage *sem)
{
	struct rwsem_state st = state_of(v, sem);

	if (!st.unlocked || st.nr_waiters || st.osq_locked)
		fprintf(stderr, "%s: count %#lx, %d waiters, osq %d\n",
			v->ops->name, st.count, st.nr_waiters, st.osq_locked);
	assert_true(st.unlocked);
	assert_int_equal(st.nr_waiters, 0);
	assert_false(st.flag_waiters);
	assert_false(st.osq_locked);
}

/*
 * No progress for STALL_MS: a wake-up was lost (every hold here is short),
 * and the sleepers will never return; fail loudly, now.
 */
struct watchdog {
	pthread_t thread;
	const unsigned long *progress;
	const struct version *v;
	struct rwsem_storage *sem;
	const char *what;
	int stop;
};

static void *watchdog_fn(void *arg)
{
	struct watchdog *w = arg;
	struct timespec tick = { 0, 1000 * 1000 };
	unsigned long seen = 0, now;
	double since = test_now_ms();
	struct rwsem_state st;

	while (!load(&w->stop)) {
		nanosleep(&tick, NULL);
		now = __atomic_load_n(w->progress, __ATOMIC_RELAXED);
		if (now != seen) {
			seen = now;
			since = test_now_ms();
		} else if (test_now_ms() - since > STALL_MS) {
			w->v->state(w->sem, &st);
			fprintf(stderr, "%s, %s: no progress for %d ms "
				"(count %#lx, owner %#lx, %d waiters)\n",
				w->v->ops->name, w->what, STALL_MS, st.count,
				st.owner, st.nr_waiters);
			abort();
		}
	}
	return NULL;
}

static void watchdog_start(struct watchdog *w, const char *what,
			   const struct version *v, struct rwsem_storage *sem,
			   const unsigned long *progress)
{
	*w = (struct watchdog){ .progress = progress, .v = v, .sem = sem,
				.what = what };
	if (pthread_create(&w->thread, NULL, watchdog_fn, w))
		abort();
}

static void watchdog_stop(struct watchdog *w)
{
	store(&w->stop, 1);
	pthread_join(w->thread, NULL);
}

/*
 * Every task of a scenario takes an OSQ node of its own, and starts with
 * its return to user space: a need_resched left on its CPU is for it.
 */
static void task_start(struct optimistic_spin_node *node, int id)
{
	osq_thread_init(node, id + 1);
	cond_resched();
}

/*
 * Whether a scenario's timing can be relied on: only SCHED_FIFO tasks
 * are switched where the kernel would switch them.  Elsewhere (not root,
 * ThreadSanitizer) the host may stop a spinner or an owner anywhere for
 * milliseconds, so a scenario still runs and its safety is checked, but
 * not the behaviour its timing decides.
 */
static bool timing_checked(void)
{
	if (!sched_fifo)
		print_message("behaviour not checked: model tasks are not "
			      "SCHED_FIFO here\n");
	return sched_fifo;
}

/*
 * A task may be woken (wake_up_process()) by a waker still leaving its
 * unlock after the task itself is done: none leaves before all are.
 */
static void leave_together(int *finished, int nr)
{
	__atomic_add_fetch(finished, 1, __ATOMIC_ACQ_REL);
	while (load(finished) < nr)
		nap();
}

/* 1. Each entry point, alone: what the count and owner say after it. */

static void paths_of(const struct version *v)
{
	const struct rwsem_ops *ops = v->ops;
	struct rwsem_storage sem;
	struct rwsem_state st;

	ops->init(&sem);
	assert_released(v, &sem);

	ops->down_read(&sem);
	st = state_of(v, &sem);
	assert_int_equal(st.active, 1);
	assert_false(st.writer_locked);
	assert_int_equal(ops->down_read_trylock(&sem), 1);
	assert_int_equal(state_of(v, &sem).active, 2);
	assert_int_equal(ops->down_write_trylock(&sem), 0);
	ops->up_read(&sem);
	ops->up_read(&sem);
	assert_released(v, &sem);

	ops->down_write(&sem);
	st = state_of(v, &sem);
	assert_int_equal(st.active, 1);
	assert_true(st.writer_locked);
	assert_ptr_equal(st.owner_task, current);
	assert_int_equal(ops->down_read_trylock(&sem), 0);
	assert_int_equal(ops->down_write_trylock(&sem), 0);
	ops->up_write(&sem);
	assert_released(v, &sem);

	assert_int_equal(ops->down_write_trylock(&sem), 1);
	assert_true(state_of(v, &sem).writer_locked);
	ops->downgrade_write(&sem);
	st = state_of(v, &sem);
	assert_int_equal(st.active, 1);
	assert_false(st.writer_locked);
	assert_int_equal(ops->down_write_trylock(&sem), 0);
	assert_int_equal(ops->down_read_trylock(&sem), 1);
	ops->up_read(&sem);
	ops->up_read(&sem);
	assert_released(v, &sem);
}

/* The owner field since 4.20: the writer, or the last reader, flagged. */
static void upstream_owner(const struct version *v)
{
	const struct rwsem_ops *ops = v->ops;
	struct rwsem_storage sem;
	struct rwsem_state st;

	ops->init(&sem);
	ops->down_read(&sem);
	st = state_of(v, &sem);
	assert_true(st.reader_owned);
	assert_ptr_equal(st.owner_task, current);
	ops->up_read(&sem);
	st = state_of(v, &sem);
	assert_true(st.reader_owned);		/* left for debugging */
	ops->down_write(&sem);
	st = state_of(v, &sem);
	assert_int_equal(st.owner, (unsigned long)current);
	ops->downgrade_write(&sem);
	st = state_of(v, &sem);
	assert_true(st.reader_owned);
	assert_false(st.nonspinnable);
	ops->up_read(&sem);
	ops->down_write(&sem);
	ops->up_write(&sem);
	assert_int_equal(state_of(v, &sem).owner, 0);
	assert_released(v, &sem);
}

static void test_each_path_alone(void **state)
{
	const struct version *v;

	for_each_version(v) {
		paths_of(v);
		if (v->reader_task)
			upstream_owner(v);
	}
}

/*
 * Each unlock releases its section's writes to the next holder, which
 * synchronises with it through the count alone: the two tasks hand over
 * with a relaxed flag, which orders nothing, and take the fast paths, so
 * ThreadSanitizer reports the plain data as a race if up_write() or
 * up_read() does not release.  The race below meets that case only where
 * a fast-path unlock happens to meet a fast-path lock: in one run of
 * `kscale mutate rwsem`, v4.6's __up_write() made relaxed went unreported.
 */
struct handover {
	const struct version *v;
	struct rwsem_storage sem;
	unsigned long data, seen;
	int step;
};

static void step_to(struct handover *h, int step)
{
	__atomic_store_n(&h->step, step, __ATOMIC_RELAXED);
}

static void step_wait(struct handover *h, int step)
{
	while (__atomic_load_n(&h->step, __ATOMIC_RELAXED) != step)
		cpu_relax();
}

static void handover_fn(struct test_thread *t)
{
	struct handover *h = t->arg;
	const struct rwsem_ops *ops = h->v->ops;
	struct optimistic_spin_node node;

	task_start(&node, t->id);
	if (t->id == 0) {
		ops->down_write(&h->sem);
		h->data = 1;
		ops->up_write(&h->sem);
		step_to(h, 1);
		step_wait(h, 2);
		ops->down_write(&h->sem);
		h->data = 2;
		ops->up_write(&h->sem);
	} else {
		step_wait(h, 1);
		ops->down_read(&h->sem);
		h->seen = h->data;
		ops->up_read(&h->sem);
		step_to(h, 2);
	}
}

static void test_unlocks_release_to_the_next_holder(void **state)
{
	const struct version *v;

	for_each_version(v) {
		struct handover h = { .v = v };

		v->ops->init(&h.sem);
		test_race(2, handover_fn, &h);
		assert_int_equal(h.seen, 1);
		assert_int_equal(h.data, 2);
		assert_released(v, &h.sem);
	}
}

/* 2. The race: exclusion, trylocks, downgrades, no lost wake-up. */

struct race {
	const struct version *v;
	struct rwsem_storage sem;
	struct test_rw_check check;
	int finished;
	int nr;
	unsigned long progress;
	unsigned long tries_won, tries_lost;
	unsigned long sleeps, spins;
};

static void one_op(struct race *r, unsigned int op)
{
	const struct rwsem_ops *ops = r->v->ops;
	struct rwsem_storage *sem = &r->sem;

	switch (op % 8) {
	case 0: case 1: case 2:
		ops->down_read(sem);
		test_rw_read(&r->check);
		ops->up_read(sem);
		break;
	case 3: case 4:
		ops->down_write(sem);
		test_rw_write(&r->check);
		/* now and then the holder is switched out, as at a fault */
		if (op & 64)
			cond_resched();
		ops->up_write(sem);
		break;
	case 5:
		ops->down_write(sem);
		test_rw_write(&r->check);
		ops->downgrade_write(sem);
		test_rw_read(&r->check);
		ops->up_read(sem);
		break;
	case 6:
		if (!ops->down_read_trylock(sem)) {
			__atomic_fetch_add(&r->tries_lost, 1, __ATOMIC_RELAXED);
			break;
		}
		__atomic_fetch_add(&r->tries_won, 1, __ATOMIC_RELAXED);
		test_rw_read(&r->check);
		ops->up_read(sem);
		break;
	case 7:
		if (!ops->down_write_trylock(sem)) {
			__atomic_fetch_add(&r->tries_lost, 1, __ATOMIC_RELAXED);
			break;
		}
		__atomic_fetch_add(&r->tries_won, 1, __ATOMIC_RELAXED);
		test_rw_write(&r->check);
		ops->up_write(sem);
		break;
	}
}

static void racer(struct test_thread *t)
{
	struct race *r = t->arg;
	struct optimistic_spin_node node;
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (t->id + 1);
	int n;

	task_start(&node, t->id);
	memset(&rwsem_profile, 0, sizeof(rwsem_profile));
	for (n = 0; n < LOOPS; n++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		one_op(r, (unsigned int)(rng >> 32));
		__atomic_fetch_add(&r->progress, 1, __ATOMIC_RELAXED);
		cond_resched();		/* the return to user space */
	}
	__atomic_fetch_add(&r->sleeps, rwsem_profile.sleeps, __ATOMIC_RELAXED);
	__atomic_fetch_add(&r->spins, rwsem_profile.spin_acquired,
			   __ATOMIC_RELAXED);
	leave_together(&r->finished, r->nr);
}

static void race_version(const struct version *v)
{
	struct race *r = calloc(1, sizeof(*r));
	int cpus = test_task_cpus() < 2 ? 1 : 2;
	struct watchdog w;

	r->v = v;
	r->nr = RACERS;
	v->ops->init(&r->sem);
	watchdog_start(&w, "race", v, &r->sem, &r->progress);
	test_race_tasks(RACERS, cpus, racer, r);
	watchdog_stop(&w);
	fprintf(stderr, "%s: %d tasks on %d CPUs: %lu sleeps, %lu spins won, "
		"trylocks %lu won %lu lost\n", v->ops->name, RACERS, cpus,
		r->sleeps, r->spins, r->tries_won, r->tries_lost);
	assert_int_equal(r->check.violations, 0);
	assert_int_equal(r->progress, (unsigned long)RACERS * LOOPS);
	assert_int_equal(r->check.data, 2 * r->check.writes);
	/* it was a race: some slept, some trylocks met the lock taken */
	if (timing_checked()) {
		assert_true(r->sleeps > 0);
		assert_true(r->tries_won > 0);
		assert_true(r->tries_lost > 0);
	}
	assert_released(v, &r->sem);
	free(r);
}

static void test_exclusion_and_no_lost_wakeup(void **state)
{
	const struct version *v;

	for_each_version(v)
		race_version(v);
}

/* 3. A downgrade grants the readers queued behind it, not the writer. */

enum { DG_OWNER, DG_READERS = 3, DG_WRITER = DG_READERS + 1, DG_TASKS };

struct downgrade {
	const struct version *v;
	struct rwsem_storage sem;
	int held;		/* the owner holds it for writing */
	int inside;		/* readers holding it */
	int released;		/* the owner dropped its read hold */
	int timed_out;
	int violations;
	int finished;
	unsigned long progress;
	struct rwsem_state after;	/* right after downgrade_write() */
	int readers_together;	/* all readers in while the owner reads */
};

static bool wait_waiters(struct downgrade *d, int nr)
{
	uint64_t end = now_ns() + DEADLINE_MS * 1000000ull;

	while (state_of(d->v, &d->sem).nr_waiters < nr) {
		if (now_ns() > end) {
			store(&d->timed_out, 1);
			return false;
		}
		nap();
	}
	return true;
}

static void downgrader(struct test_thread *t)
{
	struct downgrade *d = t->arg;
	const struct rwsem_ops *ops = d->v->ops;
	struct optimistic_spin_node node;
	uint64_t end;

	task_start(&node, t->id);
	if (t->id == DG_OWNER) {
		ops->down_write(&d->sem);
		store(&d->held, 1);
		wait_waiters(d, DG_READERS + 1);
		ops->downgrade_write(&d->sem);
		d->v->state(&d->sem, &d->after);
		end = now_ns() + DEADLINE_MS * 1000000ull;
		while (load(&d->inside) < DG_READERS && now_ns() < end)
			nap();
		d->readers_together = load(&d->inside) == DG_READERS;
		store(&d->released, 1);
		ops->up_read(&d->sem);
	} else if (t->id < DG_WRITER) {
		/* queue in order: reader i behind i - 1 */
		while (!load(&d->held))
			nap();
		wait_waiters(d, t->id - 1);
		ops->down_read(&d->sem);
		__atomic_add_fetch(&d->inside, 1, __ATOMIC_ACQ_REL);
		while (!load(&d->released) && !load(&d->timed_out))
			nap();
		__atomic_sub_fetch(&d->inside, 1, __ATOMIC_ACQ_REL);
		ops->up_read(&d->sem);
	} else {
		while (!load(&d->held))
			nap();
		wait_waiters(d, DG_READERS);
		ops->down_write(&d->sem);
		if (load(&d->inside) || !load(&d->released))
			test_note(&d->violations);
		ops->up_write(&d->sem);
	}
	__atomic_fetch_add(&d->progress, 1, __ATOMIC_RELAXED);
	leave_together(&d->finished, DG_TASKS);
}

static void test_downgrade_wakes_queued_readers(void **state)
{
	int cpus = test_task_cpus() < 2 ? 1 : 2;
	const struct version *v;
	struct watchdog w;

	for_each_version(v) {
		struct downgrade *d = calloc(1, sizeof(*d));

		d->v = v;
		v->ops->init(&d->sem);
		watchdog_start(&w, "downgrade", v, &d->sem, &d->progress);
		test_race_tasks(DG_TASKS, cpus, downgrader, d);
		watchdog_stop(&w);
		assert_false(d->timed_out);
		/* the owner and its readers hold it; the writer still waits */
		assert_int_equal(d->after.active, 1 + DG_READERS);
		assert_false(d->after.writer_locked);
		assert_int_equal(d->after.nr_waiters, 1);
		assert_int_equal(d->after.nr_write_waiters, 1);
		assert_true(d->readers_together);
		assert_int_equal(d->violations, 0);
		assert_released(v, &d->sem);
		free(d);
	}
}

/* 4. up_write() grants every reader queued behind the writer at once. */

#define WR_READERS	4

struct wake_readers {
	const struct version *v;
	struct rwsem_storage sem;
	int held, sampled, timed_out, finished, got;
	unsigned long progress;
	struct rwsem_state after;	/* right after up_write() */
};

static void writer_then_readers(struct test_thread *t)
{
	struct wake_readers *w = t->arg;
	const struct rwsem_ops *ops = w->v->ops;
	struct optimistic_spin_node node;
	uint64_t end = now_ns() + DEADLINE_MS * 1000000ull;

	task_start(&node, t->id);
	if (t->id == 0) {
		ops->down_write(&w->sem);
		store(&w->held, 1);
		while (state_of(w->v, &w->sem).nr_waiters < WR_READERS) {
			if (now_ns() > end) {
				store(&w->timed_out, 1);
				break;
			}
			nap();
		}
		ops->up_write(&w->sem);
		w->v->state(&w->sem, &w->after);
		store(&w->sampled, 1);
	} else {
		while (!load(&w->held))
			nap();
		ops->down_read(&w->sem);
		__atomic_add_fetch(&w->got, 1, __ATOMIC_ACQ_REL);
		while (!load(&w->sampled))
			nap();
		ops->up_read(&w->sem);
	}
	__atomic_fetch_add(&w->progress, 1, __ATOMIC_RELAXED);
	leave_together(&w->finished, 1 + WR_READERS);
}

static void test_up_write_wakes_every_queued_reader(void **state)
{
	int cpus = test_task_cpus() < 2 ? 1 : 2;
	const struct version *v;
	struct watchdog wd;

	for_each_version(v) {
		struct wake_readers *w = calloc(1, sizeof(*w));

		w->v = v;
		v->ops->init(&w->sem);
		watchdog_start(&wd, "wake readers", v, &w->sem, &w->progress);
		test_race_tasks(1 + WR_READERS, cpus, writer_then_readers, w);
		watchdog_stop(&wd);
		assert_false(w->timed_out);
		assert_int_equal(w->after.active, WR_READERS);
		assert_false(w->after.writer_locked);
		assert_int_equal(w->after.nr_waiters, 0);
		assert_false(w->after.flag_waiters);
		if (v->reader_task)
			assert_true(w->after.reader_owned);
		assert_int_equal(w->got, WR_READERS);
		assert_released(v, &w->sem);
		free(w);
	}
}

/* From here on: two CPUs, a task on each; today's alone from 8. */

static const struct version *upstream(void)
{
	return &versions[ARRAY_SIZE(versions) - 1];
}

static bool two_cpus(void)
{
	return test_task_cpus() >= 2;
}

/* 5. A writer spins behind a writer owner that runs, and never sleeps. */

#define OWNER_HOLD_NS	(2 * 1000 * 1000)

#define SPIN_RUNS	10

struct spin_behind {
	const struct version *v;
	bool read;			/* the spinner is a reader (v5.3) */
	struct rwsem_storage sem;
	int held, finished;
	unsigned long sleeps, spin_acquired, spin_abandoned;
	uint64_t slowpath;		/* cycles in the spinner's slow path */
	uint64_t spun;			/* of which in rwsem_spin_on_owner() */
	uint64_t waited_ns;
};

static void spin_behind_writer(struct test_thread *t)
{
	struct spin_behind *s = t->arg;
	const struct rwsem_ops *ops = s->v->ops;
	struct optimistic_spin_node node;
	uint64_t t0;

	task_start(&node, t->id);
	memset(&rwsem_profile, 0, sizeof(rwsem_profile));
	if (t->id == 0) {
		ops->down_write(&s->sem);
		store(&s->held, 1);
		busy_ns(OWNER_HOLD_NS);		/* on its CPU all along */
		ops->up_write(&s->sem);
		busy_ns(OWNER_HOLD_NS / 10);	/* and a while after */
	} else {
		while (!load(&s->held))
			cpu_relax();
		t0 = now_ns();
		if (s->read)
			ops->down_read(&s->sem);
		else
			ops->down_write(&s->sem);
		s->waited_ns = now_ns() - t0;
		s->sleeps = rwsem_profile.sleeps;
		s->spin_acquired = rwsem_profile.spin_acquired;
		s->spin_abandoned = rwsem_profile.spin_abandoned;
		s->slowpath = s->read ? rwsem_profile.read_failed :
					rwsem_profile.write_failed;
		s->spun = rwsem_profile.spin_on_owner;
		if (s->read)
			ops->up_read(&s->sem);
		else
			ops->up_write(&s->sem);
	}
	leave_together(&s->finished, 2);
}

/*
 * Some runs say nothing, and are run again: where the host held the
 * spinner up until the owner had gone (a VM's vCPU, another process's
 * SCHED_FIFO task), it took the fast path; where it was held up between
 * reading the owner and its on_cpu, it saw the owner leave the CPU and
 * queued, as the kernel's spinner would, finding the lock free.  In
 * every run that came to the slow path it spun and never slept.
 */
static void spins_behind_running_writer(const struct version *v, bool read)
{
	int run, taken = 0;

	for (run = 0; run < SPIN_RUNS && !taken; run++) {
		struct spin_behind *s = calloc(1, sizeof(*s));

		s->v = v;
		s->read = read;
		v->ops->init(&s->sem);
		test_race_tasks(2, 2, spin_behind_writer, s);
		assert_released(v, &s->sem);
		if (!s->slowpath || !timing_checked()) {
			free(s);
			continue;
		}
		if (!s->spin_acquired || s->sleeps)
			fprintf(stderr, "%s: run %d: the %s queued "
				"after %.2f ms, %lu sleeps\n", v->ops->name,
				run, read ? "reader" : "writer",
				s->waited_ns / 1e6, s->sleeps);
		/* it waited for the owner, spinning on it */
		assert_true(s->waited_ns > OWNER_HOLD_NS / 4);
		assert_true(cycles_to_ns(s->spun) > OWNER_HOLD_NS / 4);
		assert_int_equal(s->sleeps, 0);
		taken = s->spin_acquired;
		free(s);
	}
	if (timing_checked())
		assert_true(taken);
}

static void test_writer_spins_behind_running_writer(void **state)
{
	const struct version *v;

	if (!two_cpus())
		skip();
	for_each_version(v)
		spins_behind_running_writer(v, false);
}

/* 5b. v5.3's reader spins as a writer does, and never sleeps. */
static void test_reader_spins_behind_running_writer(void **state)
{
	const struct version *v;

	if (!two_cpus())
		skip();
	for_each_version_with(v, reader_spins)
		spins_behind_running_writer(v, true);
}

/*
 * 6. A writer spinning on a reader-owned lock stops once
 * rwsem_rspin_threshold() has passed, (20 + readers) / 2 us, and marks
 * the lock RWSEM_NONSPINNABLE before it queues.
 */

#define RSPIN_MIN_NS	(21 * 1000 / 2)	/* one reader: 10.5 us */

struct reader_owned {
	const struct version *v;
	struct rwsem_storage sem;
	int held, finished, timed_out;
	struct rwsem_state queued;	/* as the reader saw it queue */
	unsigned long sleeps, spin_abandoned;
	uint64_t spun_cycles;		/* in the slow path's callees */
	uint64_t waited_ns;
};

static void spin_on_reader(struct test_thread *t)
{
	struct reader_owned *r = t->arg;
	const struct rwsem_ops *ops = r->v->ops;
	struct optimistic_spin_node node;
	uint64_t end, t0;

	task_start(&node, t->id);
	memset(&rwsem_profile, 0, sizeof(rwsem_profile));
	if (t->id == 0) {
		ops->down_read(&r->sem);
		store(&r->held, 1);
		/* hold it, on the CPU, until the writer has queued */
		end = now_ns() + DEADLINE_MS * 1000000ull;
		do {
			r->queued = state_of(r->v, &r->sem);
			if (now_ns() > end) {
				store(&r->timed_out, 1);
				break;
			}
		} while (!r->queued.nr_waiters);
		ops->up_read(&r->sem);
	} else {
		while (!load(&r->held))
			cpu_relax();
		t0 = now_ns();
		ops->down_write(&r->sem);
		r->waited_ns = now_ns() - t0;
		r->sleeps = rwsem_profile.sleeps;
		r->spin_abandoned = rwsem_profile.spin_abandoned;
		r->spun_cycles = rwsem_profile.write_failed_callees;
		ops->up_write(&r->sem);
	}
	leave_together(&r->finished, 2);
}

static void reader_owned_spin_is_bounded(const struct version *v)
{
	struct reader_owned *r;

	r = calloc(1, sizeof(*r));
	r->v = v;
	v->ops->init(&r->sem);
	test_race_tasks(2, 2, spin_on_reader, r);
	fprintf(stderr, "%s: spun %.1f us on a reader-owned lock, "
		"then queued\n", v->ops->name,
		cycles_to_ns(r->spun_cycles) / 1000);
	assert_false(r->timed_out);		/* it stopped spinning */
	if (timing_checked()) {
		assert_true(r->queued.reader_owned);
		assert_true(r->queued.nonspinnable);
		assert_int_equal(r->queued.nr_write_waiters, 1);
		assert_int_equal(r->spin_abandoned, 1);
		assert_true(r->sleeps >= 1);
		/* it spun the threshold first (the tsc rate is approximate) */
		assert_true(cycles_to_ns(r->spun_cycles) > RSPIN_MIN_NS * 0.9);
	}
	assert_released(v, &r->sem);
	assert_false(state_of(v, &r->sem).nonspinnable);
	free(r);
}

static void test_reader_owned_spin_is_bounded(void **state)
{
	const struct version *v;

	if (!two_cpus())
		skip();
	for_each_version_with(v, rspin)
		reader_owned_spin_is_bounded(v);
}

/*
 * 7. Handoff: a stealer on one CPU retakes the lock each time it lets go,
 * ahead of a writer queued on the other, until that writer has waited
 * RWSEM_WAIT_TIMEOUT (4 ms) and sets RWSEM_FLAG_HANDOFF.  From then on
 * the lock must go to the queued writer first.  A run where the queued
 * writer wins a race before its timeout shows no handoff (more often
 * when the host holds the stealer up): such runs are retried.
 */

#define STEAL_HOLD_NS	(50 * 1000)
#define HANDOFF_BUDGET_MS	3000	/* runs until one shows a handoff */
#define STARVED_MS	500

struct handoff {
	const struct version *v;
	struct rwsem_storage sem;
	int held, waiter_got, finished;
	int handoff_seen;	/* the stealer saw RWSEM_FLAG_HANDOFF */
	int violations;		/* it took the lock next, all the same */
	int starved;
	unsigned long steals;
	uint64_t waited_ns;
};

static void stealer_and_waiter(struct test_thread *t)
{
	struct handoff *h = t->arg;
	const struct rwsem_ops *ops = h->v->ops;
	struct optimistic_spin_node node;
	struct rwsem_state st;
	uint64_t end, t0;
	bool handoff;

	task_start(&node, t->id);
	if (t->id == 0) {
		ops->down_write(&h->sem);
		store(&h->held, 1);
		end = now_ns() + DEADLINE_MS * 1000000ull;
		while (!state_of(h->v, &h->sem).nr_waiters &&
		       now_ns() < end)
			cpu_relax();
		busy_ns(STEAL_HOLD_NS);		/* it is asleep by now */
		end = now_ns() + STARVED_MS * 1000000ull;
		for (;;) {
			/*
			 * The waiter sets the flag while the stealer holds
			 * the lock, then spins on it and takes the lock as
			 * soon as it is let go: look before letting go.
			 */
			st = state_of(h->v, &h->sem);
			handoff = st.flag_handoff;
			if (handoff)
				store(&h->handoff_seen, 1);
			ops->up_write(&h->sem);
			if (load(&h->waiter_got))
				break;
			if (now_ns() > end) {
				store(&h->starved, 1);
				break;
			}
			ops->down_write(&h->sem);
			if (handoff && !load(&h->waiter_got))
				test_note(&h->violations);
			h->steals++;
			busy_ns(STEAL_HOLD_NS);
		}
	} else {
		while (!load(&h->held))
			cpu_relax();
		/* a tick came: it cannot spin, so it queues first */
		WRITE_ONCE(current->rq->need_resched, 1);
		t0 = now_ns();
		ops->down_write(&h->sem);
		h->waited_ns = now_ns() - t0;
		store(&h->waiter_got, 1);
		ops->up_write(&h->sem);
	}
	leave_together(&h->finished, 2);
}

static void handoff_beats_lock_stealing(const struct version *v)
{
	double end = test_now_ms() + HANDOFF_BUDGET_MS;
	int run, handoffs = 0;

	for (run = 0; !handoffs && test_now_ms() < end; run++) {
		struct handoff *h = calloc(1, sizeof(*h));

		h->v = v;
		v->ops->init(&h->sem);
		test_race_tasks(2, 2, stealer_and_waiter, h);
		fprintf(stderr, "%s: run %d: %lu steals, waiter got it "
			"after %.2f ms, handoff %sseen\n", v->ops->name,
			run, h->steals,
			h->waited_ns / 1e6, h->handoff_seen ? "" : "not ");
		assert_int_equal(h->violations, 0);
		assert_true(h->waiter_got);
		if (h->handoff_seen) {
			/* not before it had waited RWSEM_WAIT_TIMEOUT */
			assert_true(h->waited_ns >= 4 * 1000 * 1000);
			handoffs++;
		}
		assert_released(v, &h->sem);
		if (sched_fifo)
			assert_false(h->starved);
		free(h);
	}
	if (timing_checked())
		assert_true(handoffs > 0);
}

static void test_handoff_beats_lock_stealing(void **state)
{
	const struct version *v;

	if (!two_cpus())
		skip();
	for_each_version_with(v, handoff)
		handoff_beats_lock_stealing(v);
}

/*
 * 8. The handoff as a reader sees it: once the first waiter, a writer,
 * has set RWSEM_FLAG_HANDOFF, a reader arriving at the free lock must
 * not take it (rwsem_down_read_slowpath()'s optimistic stealing tests
 * the bit), but queue behind the writer, which then takes the lock.
 *
 * Task 0 (CPU 0) holds the lock shared; task 1 (CPU 1), a writer, spins
 * on the reader-owned lock, gives up and sleeps.  Past RWSEM_WAIT_TIMEOUT
 * task 0 wakes it (a spurious wake-up: its loop retries), and its
 * rwsem_try_write_lock() sets the handoff bit; the lock still read-held,
 * it sleeps again.  Task 3, also on CPU 1, then keeps that CPU without a
 * preemption point, so the writer woken by task 0's up_read() cannot run
 * yet: the lock is free, the bit set, the writer first in the queue, as
 * task 0 calls down_read().  Task 3 lets the writer run once task 0 has
 * queued (or, in a broken model, got the lock).  Under SCHED_OTHER the
 * writer may run first and the window is not made; the order is checked
 * all the same.
 */
#define HANDOFF_WAIT_NS	(5 * 1000 * 1000)	/* > RWSEM_WAIT_TIMEOUT */

struct read_handoff {
	struct rwsem_storage sem;
	struct task_struct *writer;
	int hog, hogging, handoff_set, reader_queued;
	int reader_in, writer_in, writer_done;
	int reader_saw_handoff;	/* flag set as the reader got the lock */
	int violations, stuck, finished;
};

static bool writer_asleep(struct read_handoff *h)
{
	struct task_struct *p = READ_ONCE(h->writer);

	return p && (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) &
		     TASK_ASLEEP);
}

/* Task 0: the reader that holds, then the one that must wait. */
static void read_handoff_reader(struct read_handoff *h)
{
	const struct rwsem_ops *ops = upstream()->ops;
	uint64_t end = now_ns() + DEADLINE_MS * 1000000ull;
	struct rwsem_state st;

	ops->down_read(&h->sem);
	while (!(writer_asleep(h) && state_of(upstream(), &h->sem).nr_waiters))
		if (now_ns() > end)
			goto stuck;
	busy_ns(HANDOFF_WAIT_NS);
	wake_up_process(h->writer);
	while (!(writer_asleep(h) &&
		 state_of(upstream(), &h->sem).flag_handoff))
		if (now_ns() > end)
			goto stuck;
	store(&h->handoff_set, 1);
	store(&h->hog, 1);
	while (!load(&h->hogging))
		if (now_ns() > end)
			goto stuck;
	ops->up_read(&h->sem);
	ops->down_read(&h->sem);
	st = state_of(upstream(), &h->sem);
	store(&h->reader_in, 1);
	if (!load(&h->writer_done)) {
		h->reader_saw_handoff = st.flag_handoff;
		test_note(&h->violations);
	}
	ops->up_read(&h->sem);
	return;
stuck:
	test_note(&h->stuck);
	ops->up_read(&h->sem);
	store(&h->hog, 1);
}

static void read_handoff_task(struct test_thread *t)
{
	struct read_handoff *h = t->arg;
	const struct rwsem_ops *ops = upstream()->ops;
	struct optimistic_spin_node node;
	uint64_t end = now_ns() + DEADLINE_MS * 1000000ull;

	task_start(&node, t->id);
	switch (t->id) {
	case 0:
		read_handoff_reader(h);
		break;
	case 1:
		while (!state_of(upstream(), &h->sem).reader_owned)
			cpu_relax();
		WRITE_ONCE(h->writer, current);
		ops->down_write(&h->sem);
		store(&h->writer_in, 1);
		if (load(&h->reader_in))
			test_note(&h->violations);
		store(&h->writer_done, 1);
		ops->up_write(&h->sem);
		break;
	case 3:
		while (!load(&h->hog))
			nap();
		store(&h->hogging, 1);
		/* CPU 1's until the reader queued behind the writer */
		while (!load(&h->reader_in) &&
		       state_of(upstream(), &h->sem).nr_waiters < 2)
			if (now_ns() > end) {
				test_note(&h->stuck);
				break;
			}
		store(&h->reader_queued, !load(&h->reader_in));
		break;
	}
	leave_together(&h->finished, 4);
}

static void test_reader_honours_writer_handoff(void **state)
{
	struct read_handoff *h = calloc(1, sizeof(*h));

	if (!two_cpus())
		skip();
	upstream()->ops->init(&h->sem);
	test_race_tasks(4, 2, read_handoff_task, h);
	if (h->reader_saw_handoff)
		fprintf(stderr, "upstream: a reader took the lock while "
			"RWSEM_FLAG_HANDOFF was set\n");
	assert_int_equal(h->stuck, 0);
	assert_int_equal(h->violations, 0);
	assert_true(h->handoff_set);
	assert_true(h->writer_done && h->reader_in);
	if (timing_checked())
		assert_true(h->reader_queued);
	assert_released(upstream(), &h->sem);
	assert_false(state_of(upstream(), &h->sem).flag_handoff);
	free(h);
}

/*
 * 9. The handoff as the first waiter, a reader, requests it: a fairness
 * rule no test forced before (class: "a fairness rule no test forces";
 * a reader branch that never set RWSEM_FLAG_HANDOFF passed every test,
 * as nothing kept a reader waiting past its timeout).  Two writers, one
 * on each CPU, steal the lock from each other by optimistic spinning
 * ahead of a reader queued on CPU 0: each releaser's rwsem_mark_wake()
 * finds the thief's writer bit, backs the reader's grant out and, once
 * the reader has waited RWSEM_WAIT_TIMEOUT, sets the handoff bit and
 * the reader's handoff_set.  The holder looks before it lets go (the
 * releaser of the previous round set the bit while it held the lock):
 *  - the bit is seen only once the reader has waited 4 ms (time_after());
 *  - from then on neither writer takes the lock before the reader: the
 *    spinner may not steal it (rwsem_try_write_lock_unqueued()), and the
 *    other writer, made to queue behind the reader (its CPU's
 *    need_resched, as a wake-up would set it) and woken spuriously just
 *    as the holder lets go, may not take the free lock in the window
 *    before the releaser's rwsem_mark_wake() (rwsem_try_write_lock()
 *    honours the first waiter's handoff_set);
 *  - once the reader has the lock the bit is clear, the other writer
 *    still queued (rwsem_mark_wake() clears it as it grants).
 * A run whose reader wins a release before its timeout shows no handoff
 * and is run again.  The other writer lands in the second rule's window
 * about one poke in eight here, so 32 handoffs are looked for (a
 * rwsem_try_write_lock() that ignores the handoff failed 17 runs of
 * 18); under ThreadSanitizer the thief never wins that race, and no
 * handoff is required.
 */
#define RH_HOLD_NS	(2500 * 1000)	/* a handoff at the second steal */
#define RH_HANDOFFS	32		/* handoff runs looked for */
#define RH_BUDGET_MS	8000
#define RH_STARVED_MS	100		/* 25 times RWSEM_WAIT_TIMEOUT */
#define RH_POKE_NS	(1000 * 1000)	/* the other writer's wait */
#define RH_TIMEOUT_NS	(4 * 1000 * 1000)	/* RWSEM_WAIT_TIMEOUT */
/*
 * The reader's timeout is set just after its down_read() began, and the
 * releaser's rwsem_mark_wake() reads the clock just after the thief's
 * steal: the bit follows a steal, on time, within this bound (a host
 * that stalls the releaser breaks it: only SCHED_FIFO asserts it).
 */
#define RH_LATE_NS	(RH_TIMEOUT_NS + 500 * 1000)

struct reader_handoff {
	struct rwsem_storage sem;
	struct task_struct *writer[2];
	int held, queued, reader_got, finished;
	int left[2];		/* writer i is out of its stealing loop */
	int handoff_seen;
	int poked;		/* the other writer woke just as it let go */
	int violations, stuck, starved;
	int late;		/* a steal past the timeout set no handoff */
	int handoff_after;	/* the bit still set once the reader got it */
	unsigned long steals;
	uint64_t reader_t0;	/* the reader's down_read() */
	int bit_seen;
	uint64_t bit_seen_ns;	/* into the reader's wait, the bit first seen */
	uint64_t waited_ns;
};

static void rh_check(struct reader_handoff *h)
{
	if (load(&h->handoff_seen) && !load(&h->reader_got))
		test_note(&h->violations);
}

/*
 * The handoff bit, looked at by the holder or by a releaser just out of
 * up_write(): when first seen, how far into the reader's wait.  The bit
 * was set before, when a clock read said the reader had waited
 * RWSEM_WAIT_TIMEOUT, so that far at least, however late a loaded host
 * lets the look come.
 */
static bool rh_bit(struct reader_handoff *h)
{
	bool bit = state_of(upstream(), &h->sem).flag_handoff;
	uint64_t at = now_ns() -
		      __atomic_load_n(&h->reader_t0, __ATOMIC_ACQUIRE);

	bit = bit && !load(&h->reader_got);
	if (bit && !__atomic_exchange_n(&h->bit_seen, 1, __ATOMIC_ACQ_REL))
		h->bit_seen_ns = at;
	return bit;
}

/* A writer's down_write(): how long into the reader's wait it got it. */
static uint64_t rh_steal(struct reader_handoff *h)
{
	uint64_t at;

	upstream()->ops->down_write(&h->sem);
	at = now_ns() - __atomic_load_n(&h->reader_t0, __ATOMIC_ACQUIRE);
	rh_check(h);
	return at;
}

/*
 * The holder, with the bit set: the other writer queues behind the
 * reader, then is woken (spuriously) and let go of the lock as it comes
 * back to rwsem_try_write_lock(), its state set, wait_lock next.
 */
static void rh_poke_other(struct reader_handoff *h, int other)
{
	struct task_struct *p = READ_ONCE(h->writer[other]);
	uint64_t end = now_ns() + RH_POKE_NS;

	WRITE_ONCE(p->rq->need_resched, 1);
	while (state_of(upstream(), &h->sem).nr_write_waiters < 1 ||
	       !(__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) & TASK_ASLEEP))
		if (load(&h->left[other]) || now_ns() > end)
			return;
	wake_up_process(p);
	while (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) !=
	       TASK_UNINTERRUPTIBLE)
		if (now_ns() > end)
			return;
	store(&h->poked, 1);
}

static void rh_writer(struct reader_handoff *h, int id)
{
	const struct rwsem_ops *ops = upstream()->ops;
	uint64_t end = now_ns() + DEADLINE_MS * 1000000ull;
	uint64_t stole_at = 0;	/* into the reader's wait */
	bool handoff;

	WRITE_ONCE(h->writer[id], current);
	if (id == 0) {
		ops->down_write(&h->sem);
		store(&h->held, 1);
		/* nap: the reader shares this CPU */
		while (!state_of(upstream(), &h->sem).nr_waiters) {
			if (now_ns() > end) {
				test_note(&h->stuck);
				break;
			}
			nap();
		}
		store(&h->queued, 1);
	} else {
		while (!load(&h->queued))
			cpu_relax();
		stole_at = rh_steal(h);	/* spins on writer 0 */
	}
	end = now_ns() + RH_STARVED_MS * 1000000ull;
	for (;;) {
		busy_ns(RH_HOLD_NS);
		handoff = rh_bit(h);
		if (!handoff && stole_at > RH_LATE_NS && !load(&h->reader_got))
			test_note(&h->late);
		if (handoff) {
			store(&h->handoff_seen, 1);
			rh_poke_other(h, !id);
		}
		ops->up_write(&h->sem);
		rh_bit(h);	/* as this release's mark_wake left it */
		if (handoff || load(&h->reader_got))
			break;
		if (now_ns() > end) {
			store(&h->starved, 1);
			break;
		}
		stole_at = rh_steal(h);
		__atomic_fetch_add(&h->steals, 1, __ATOMIC_RELAXED);
	}
	store(&h->left[id], 1);
	/* and once more: after the reader */
	rh_steal(h);
	ops->up_write(&h->sem);
}

static void reader_handoff_task(struct test_thread *t)
{
	struct reader_handoff *h = t->arg;
	const struct rwsem_ops *ops = upstream()->ops;
	struct optimistic_spin_node node;

	task_start(&node, t->id);
	if (t->id < 2) {
		rh_writer(h, t->id);
	} else {
		while (!load(&h->held))
			nap();
		__atomic_store_n(&h->reader_t0, now_ns(), __ATOMIC_RELEASE);
		ops->down_read(&h->sem);
		h->waited_ns = now_ns() - h->reader_t0;
		h->handoff_after = state_of(upstream(), &h->sem).flag_handoff;
		store(&h->reader_got, 1);
		ops->up_read(&h->sem);
	}
	leave_together(&h->finished, 3);
}

static void test_reader_handoff_beats_spinning_writers(void **state)
{
	double end = test_now_ms() + RH_BUDGET_MS;
	int run, handoffs = 0, pokes = 0;

	if (!two_cpus())
		skip();
	for (run = 0; handoffs < RH_HANDOFFS && test_now_ms() < end; run++) {
		struct reader_handoff *h = calloc(1, sizeof(*h));

		upstream()->ops->init(&h->sem);
		test_race_tasks(3, 2, reader_handoff_task, h);
		if (h->violations || h->late ||
		    (sched_fifo && h->handoff_after) ||
		    (h->handoff_seen && h->bit_seen_ns < RH_TIMEOUT_NS))
			fprintf(stderr, "upstream: run %d: %lu steals, reader "
				"got it after %.2f ms, handoff %s, first at "
				"%.2f ms, %d violations, %d late%s\n", run,
				h->steals, h->waited_ns / 1e6,
				h->handoff_seen ? "seen" : "not seen",
				h->bit_seen_ns / 1e6, h->violations, h->late,
				h->handoff_after ? ", the bit kept" : "");
		assert_int_equal(h->stuck, 0);
		assert_int_equal(h->violations, 0);
		assert_true(h->reader_got);
		if (h->handoff_seen) {
			/* not before the reader had waited RWSEM_WAIT_TIMEOUT */
			assert_true(h->bit_seen_ns >= RH_TIMEOUT_NS);
			handoffs++;
			pokes += h->poked;
		}
		assert_released(upstream(), &h->sem);
		/*
		 * The bit after the grant is timing's too: a writer queued
		 * behind the reader that has waited RWSEM_WAIT_TIMEOUT sets
		 * it itself (rwsem_try_write_lock()), and a host that stalls
		 * tasks for milliseconds lets it (1 run in 12 or so under
		 * ThreadSanitizer beside a busy CPU).
		 */
		if (sched_fifo) {
			assert_int_equal(h->late, 0);
			assert_false(h->starved);
			assert_false(h->handoff_after);
		}
		free(h);
	}
	fprintf(stderr, "upstream: %d runs, %d with a reader's handoff, "
		"%d of them with the other writer woken as it was let go\n",
		run, handoffs, pokes);
	if (timing_checked())
		assert_true(handoffs > 0);
}

/*
 * 10. Why a waiter slept (struct rwsem_profile's slept[], and for a writer
 * queued[]), as test_rwsem.c's test_sleep_reasons checks v4.6: one task
 * sleeps once behind a lock the test's task holds, and its reason, and
 * only it, counts 1.  The two reasons today's rwsem records most: a
 * writer behind readers that run (it spins rwsem_rspin_threshold() on
 * the reader-owned lock, then queues), and a reader behind a writer.
 * The sleeper is a host thread (no rq: no need_resched), so only the
 * lock's state decides whether the writer spins, and for how long.
 */
struct sleeper {
	const struct version *v;
	struct rwsem_storage sem;
	bool write;
	struct task_struct *task;
	struct rwsem_profile prof;
};

static void *sleeper_fn(void *arg)
{
	struct sleeper *s = arg;
	const struct rwsem_ops *ops = s->v->ops;
	struct optimistic_spin_node node;

	task_start(&node, 1);
	memset(&rwsem_profile, 0, sizeof(rwsem_profile));
	__atomic_store_n(&s->task, current, __ATOMIC_RELEASE);
	if (s->write) {
		ops->down_write(&s->sem);
		s->prof = rwsem_profile;
		ops->up_write(&s->sem);
	} else {
		ops->down_read(&s->sem);
		s->prof = rwsem_profile;
		ops->up_read(&s->sem);
	}
	return NULL;
}

static bool sleeper_asleep(struct sleeper *s)
{
	struct task_struct *p = __atomic_load_n(&s->task, __ATOMIC_ACQUIRE);

	return p && (__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) &
		     TASK_ASLEEP);
}

static void sleep_case(const struct version *v, bool write,
		       enum rwsem_sleep_reason why, int queue_why)
{
	const struct rwsem_ops *ops = v->ops;
	struct sleeper *s = calloc(1, sizeof(*s));
	uint64_t end = now_ns() + DEADLINE_MS * 1000000ull;
	bool asleep;
	pthread_t tid;
	int i;

	s->v = v;
	s->write = write;
	ops->init(&s->sem);
	if (write)
		ops->down_read(&s->sem);	/* a reader that runs */
	else
		ops->down_write(&s->sem);
	pthread_create(&tid, NULL, sleeper_fn, s);
	while (!(asleep = sleeper_asleep(s)) && now_ns() < end)
		cpu_relax();
	if (write)
		ops->up_read(&s->sem);
	else
		ops->up_write(&s->sem);
	pthread_join(tid, NULL);
	assert_true(asleep);
	for (i = 0; i < RWSEM_SLEEP_NR; i++)
		if (s->prof.slept[i] != (i == (int)why))
			fail_msg("%s: slept %s %lu times", ops->name,
				 rwsem_sleep_name[i], s->prof.slept[i]);
	for (i = 0; i < RWSEM_QUEUE_NR; i++)
		if (s->prof.queued[i] != (i == queue_why))
			fail_msg("%s: queued %s %lu times", ops->name,
				 rwsem_queue_name[i], s->prof.queued[i]);
	assert_released(v, &s->sem);
	free(s);
}

/*
 * Where readers do not spin (v5.3's spin on the writer here, which runs
 * until they have slept): v5.1's writer queues at once on a reader-owned
 * lock, today's after its bounded spin.
 */
static void test_sleep_reasons(void **state)
{
	const struct version *v;

	for_each_version_with(v, reader_task) {
		if (v->reader_spins)
			continue;
		sleep_case(v, true, RWSEM_SLEEP_WRITE_READER, v->rspin ?
			   RWSEM_QUEUE_SPIN_READER_TIMEOUT :
			   RWSEM_QUEUE_NOSPIN_READER_OWNED);
		sleep_case(v, false, RWSEM_SLEEP_READ_WRITER, -1);
	}
}

static int setup(void **state)
{
	test_machine(&machine, 8, 2);
	osq_thread_init(&main_node, 0);
	/* until a version's test sets its own: today's row's lock */
	version_locks(upstream());
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_each_path_alone),
		cmocka_unit_test(test_unlocks_release_to_the_next_holder),
		cmocka_unit_test(test_exclusion_and_no_lost_wakeup),
		cmocka_unit_test(test_downgrade_wakes_queued_readers),
		cmocka_unit_test(test_up_write_wakes_every_queued_reader),
		cmocka_unit_test(test_writer_spins_behind_running_writer),
		cmocka_unit_test(test_reader_spins_behind_running_writer),
		cmocka_unit_test(test_reader_owned_spin_is_bounded),
		cmocka_unit_test(test_handoff_beats_lock_stealing),
		cmocka_unit_test(test_reader_honours_writer_handoff),
		cmocka_unit_test(test_reader_handoff_beats_spinning_writers),
		cmocka_unit_test(test_sleep_reasons),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
