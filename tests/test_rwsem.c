// SPDX-License-Identifier: GPL-2.0
/*
 * Validation of the v4.6 rwsem and the seed's reader-owned variant:
 * readers and writers exclude each other, writers exclude writers, no
 * wake-up is lost (a watchdog), plain data written under the lock is
 * seen whole (ordered by the lock alone, for ThreadSanitizer: up_read()
 * and up_write() must release), the count returns to 0 and the wait list
 * empties; the OSQ lets one spinner through at a time, also when
 * spinners unqueue; the owner field is set exactly where each version
 * sets it.
 *
 * Then each decision the seed changes, in scenarios set up step by step,
 * both versions: whether a writer spins (behind a running writer, an
 * owner that sleeps, no owner yet, an owner turning reader, a lock that
 * readers left, readers), the reader mark of the hand-off,
 * downgrade_write() and trylock; and the wait list's rules: readers at
 * the head granted in one batch up to the first writer,
 * RWSEM_WAKE_READERS, a reader grant undone when a writer stole the
 * lock, downgrade_write() with waiters, the OSQ's unqueue with a
 * successor, trylock under contention, and every operation at random
 * with 6 tasks on 2 CPUs.  Each fails if any hunk of the seed is undone.
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
	struct test_rw_check check;
	unsigned long progress;
	int done;
};

static void read_side(struct race *r)
{
	down_read(&r->sem);
	test_rw_read(&r->check);
	up_read(&r->sem);
}

static void write_side(struct race *r)
{
	down_write(&r->sem);
	test_rw_write(&r->check);
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
	assert_int_equal(r->check.violations, 0);
	assert_int_equal(r->progress, test_racers(MAX_RACERS) * LOOPS);
	assert_int_equal(r->check.data, 2 * r->check.writes);
	assert_released(&r->sem);
	free(r);
}

static void test_mutual_exclusion_and_no_lost_wakeup(void **state)
{
	race_version(false);
	race_version(true);
}

/*
 * The racers' queue nodes are made before the race, as the kernel's are
 * per-CPU: on a racer's stack, ThreadSanitizer took the racer's earlier
 * plain writes there (clock_gettime()'s result) for a race with the
 * unlocker's store to the node, which the kernel orders by the address
 * dependency on next, not a release ThreadSanitizer can see.
 */
struct osq_race {
	struct optimistic_spin_queue osq;
	int inside;
	int overlaps;
	unsigned long granted, unqueued;
	struct optimistic_spin_node *nodes;
};

static void osq_racer(struct test_thread *t)
{
	struct osq_race *o = t->arg;
	int n;

	task_start(&o->nodes[t->id], t->id);
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
	o.nodes = calloc(n, sizeof(*o.nodes));
	assert_non_null(o.nodes);
	test_race_tasks(n, cpus, osq_racer, &o);
	free(o.nodes);
	assert_int_equal(o.overlaps, 0);
	assert_int_equal(o.granted + o.unqueued, (unsigned long)n * LOOPS);
	assert_false(osq_is_locked(&o.osq));
}

/*
 * The scenarios below set the lock up step by step rather than racing for
 * it: tasks wait for each other's flags and for the wait list to reach a
 * given length, and waiters that never run are queued by hand, so each
 * checks one decision of the model, the same way on every run.
 */
#define GIVE_UP_MS	5000	/* a step that never comes: fail, not hang */
#define STOP_MS		20	/* a spinner that stops has queued by then */
#define V46_TRIES	5
#ifdef KSCALE_SANITIZE
#define GUARD_MS	120000
#define MIX_LOOPS	300
#else
#define GUARD_MS	20000
#define MIX_LOOPS	4000
#endif

static bool gave_up(double since_ms)
{
	return test_now_ms() - since_ms > GIVE_UP_MS;
}

/* Wait on the CPU without leaving it: an owner waiting so stays on_cpu. */
#define spin_until(cond)						\
({									\
	double __since = test_now_ms();					\
	bool __ok = true;						\
									\
	while (!(cond)) {						\
		if (gave_up(__since)) {					\
			__ok = false;					\
			break;						\
		}							\
		cpu_relax();						\
	}								\
	__ok;								\
})

/* The same for at most ms: whether cond came true. */
#define spin_until_ms(cond, ms)						\
({									\
	double __since = test_now_ms();					\
									\
	while (!(cond) && test_now_ms() - __since < (ms))		\
		cpu_relax();						\
	(cond);								\
})

/* Wait letting the other tasks of the CPU run. */
#define yield_until(cond)						\
({									\
	double __since = test_now_ms();					\
	bool __ok = true;						\
									\
	while (!(cond)) {						\
		if (gave_up(__since)) {					\
			__ok = false;					\
			break;						\
		}							\
		yield();						\
	}								\
	__ok;								\
})

#define load(x)		__atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define store(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define inc(x)		__atomic_add_fetch(&(x), 1, __ATOMIC_SEQ_CST)
#define dec(x)		__atomic_sub_fetch(&(x), 1, __ATOMIC_SEQ_CST)

static void spin_ms(double ms)
{
	double since = test_now_ms();

	while (test_now_ms() - since < ms)
		cpu_relax();
}

/* A scenario that hangs aborts with its name instead of timing out. */
struct guard {
	pthread_t tid;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int done;
	const char *what;
};

static void *guard_thread(void *arg)
{
	struct guard *g = arg;
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += GUARD_MS / 1000;
	pthread_mutex_lock(&g->lock);
	while (!g->done)
		if (pthread_cond_timedwait(&g->cond, &g->lock, &until)) {
			fprintf(stderr, "%s: still running after %d ms\n",
				g->what, GUARD_MS);
			abort();
		}
	pthread_mutex_unlock(&g->lock);
	return NULL;
}

static void guard_start(struct guard *g, const char *what)
{
	g->done = 0;
	g->what = what;
	pthread_mutex_init(&g->lock, NULL);
	pthread_cond_init(&g->cond, NULL);
	if (pthread_create(&g->tid, NULL, guard_thread, g))
		abort();
}

static void guard_stop(struct guard *g)
{
	pthread_mutex_lock(&g->lock);
	g->done = 1;
	pthread_cond_signal(&g->cond);
	pthread_mutex_unlock(&g->lock);
	pthread_join(g->tid, NULL);
	pthread_cond_destroy(&g->cond);
	pthread_mutex_destroy(&g->lock);
}

/*
 * test_race_tasks(), but no task leaves before all are done: a spinner
 * may still read the on_cpu of an owner that released the lock, and a
 * task lives in its thread's storage (the model counts no references).
 */
struct together {
	void (*fn)(struct test_thread *);
	void *arg;
	int nr, left;
};

static void together_task(struct test_thread *t)
{
	struct together *g = t->arg;
	struct test_thread inner = { t->id, g->arg };

	g->fn(&inner);
	inc(g->left);
	yield_until(load(g->left) == g->nr);
}

static void race_tasks(int nr, int cpus, void (*fn)(struct test_thread *),
		       void *arg)
{
	struct together g = { fn, arg, nr, 0 };

	test_race_tasks(nr, cpus, together_task, &g);
}

/* Tasks on two CPUs at most, as on the smallest machine the tests run on. */
static int two_cpus(void)
{
	return test_task_cpus() < 2 ? 1 : 2;
}

/* A spinner and the owner it watches each need a CPU of their own. */
static void need_two_cpus(void)
{
	if (test_task_cpus() < 2) {
		print_message("skipped: needs two CPUs\n");
		skip();
	}
}

static long count_of(struct rw_semaphore *sem)
{
	return READ_ONCE(sem->count);
}

static void count_add(struct rw_semaphore *sem, long delta)
{
	__atomic_add_fetch(&sem->count, delta, __ATOMIC_SEQ_CST);
}

/* The length of the wait list, read under wait_lock. */
static int queued(struct rw_semaphore *sem)
{
	struct list_head *pos;
	int n = 0;

	spin_lock(&sem->wait_lock);
	for (pos = sem->wait_list.next; pos != &sem->wait_list; pos = pos->next)
		n++;
	spin_unlock(&sem->wait_lock);
	return n;
}

static struct task_struct *owner_of(struct rw_semaphore *sem)
{
	return READ_ONCE(sem->owner);
}

static struct task_struct *reader_mark(bool patch)
{
	return patch ? RWSEM_READER_OWNED : NULL;
}

/*
 * Waiters queued by hand, for tasks that never run: the wait list and the
 * count are then exactly what the test built when __rwsem_do_wake() reads
 * them.  The layout is the model's struct rwsem_waiter (private to
 * rwsem_xadd.c): list, task, enum rwsem_waiter_type.
 */
enum { QUEUED_WRITER, QUEUED_READER };

struct queued_waiter {
	struct list_head list;
	struct task_struct *task;
	int type;
};

/* Never asleep: wake_up_process() finds it TASK_RUNNING, returns 0. */
static struct task_struct absent_task = { .state = TASK_RUNNING };

/*
 * The queueing of rwsem_down_read_failed() and rwsem_down_write_wait()
 * without the wake-up check that follows it there: the state where that
 * check found nothing to wake.
 */
static void queue_by_hand(struct rw_semaphore *sem, struct queued_waiter *w,
			  int type)
{
	w->task = &absent_task;
	w->type = type;
	spin_lock(&sem->wait_lock);
	if (list_empty(&sem->wait_list))
		count_add(sem, RWSEM_WAITING_BIAS);
	list_add_tail(&w->list, &sem->wait_list);
	spin_unlock(&sem->wait_lock);
}

/* What the waiter would do on taking the lock: leave the list. */
static void dequeue_by_hand(struct rw_semaphore *sem, struct queued_waiter *w)
{
	spin_lock(&sem->wait_lock);
	list_del_init(&w->list);
	if (list_empty(&sem->wait_list))
		count_add(sem, -RWSEM_WAITING_BIAS);
	spin_unlock(&sem->wait_lock);
}

static bool granted(struct queued_waiter *w)
{
	return !READ_ONCE(w->task);
}

/*
 * up_write() with readers queued: __rwsem_do_wake() grants every reader
 * at the head in one count update, stops at the first writer, marks the
 * lock reader-owned (the seed) before any of them runs, and takes the
 * waiting bias away only when it emptied the list.
 */
static void handoff_batches(bool patch)
{
	struct queued_waiter r[3], w, last;
	struct rw_semaphore sem;
	int i;

	rwsem_reader_owned_patch = patch;
	init_rwsem(&sem);
	down_write(&sem);
	for (i = 0; i < 3; i++)
		queue_by_hand(&sem, &r[i], QUEUED_READER);
	queue_by_hand(&sem, &w, QUEUED_WRITER);
	queue_by_hand(&sem, &last, QUEUED_READER);
	assert_int_equal(count_of(&sem),
			 RWSEM_ACTIVE_WRITE_BIAS + RWSEM_WAITING_BIAS);
	up_write(&sem);
	for (i = 0; i < 3; i++)
		assert_true(granted(&r[i]));
	assert_false(granted(&w));
	assert_false(granted(&last));
	assert_int_equal(count_of(&sem),
			 3 * RWSEM_ACTIVE_READ_BIAS + RWSEM_WAITING_BIAS);
	assert_ptr_equal(owner_of(&sem), reader_mark(patch));
	assert_ptr_equal(sem.wait_list.next, &w.list);
	assert_ptr_equal(w.list.prev, &sem.wait_list);
	assert_ptr_equal(w.list.next, &last.list);
	assert_ptr_equal(sem.wait_list.prev, &last.list);

	/* the last of the three wakes the writer but grants it nothing */
	for (i = 0; i < 3; i++)
		up_read(&sem);
	assert_int_equal(count_of(&sem), RWSEM_WAITING_BIAS);
	assert_false(granted(&w));
	assert_false(granted(&last));
	dequeue_by_hand(&sem, &w);
	dequeue_by_hand(&sem, &last);
	assert_released(&sem);

	/* readers to the end of the list: the waiting bias goes too */
	down_write(&sem);
	queue_by_hand(&sem, &r[0], QUEUED_READER);
	queue_by_hand(&sem, &r[1], QUEUED_READER);
	up_write(&sem);
	assert_true(granted(&r[0]) && granted(&r[1]));
	assert_int_equal(count_of(&sem), 2 * RWSEM_ACTIVE_READ_BIAS);
	assert_true(list_empty(&sem.wait_list));
	assert_ptr_equal(owner_of(&sem), reader_mark(patch));
	up_read(&sem);
	up_read(&sem);
	assert_released(&sem);

	/* a writer at the head: woken, not granted; no reader passes it */
	down_write(&sem);
	queue_by_hand(&sem, &w, QUEUED_WRITER);
	queue_by_hand(&sem, &r[0], QUEUED_READER);
	up_write(&sem);
	assert_false(granted(&w));
	assert_false(granted(&r[0]));
	assert_int_equal(count_of(&sem), RWSEM_WAITING_BIAS);
	assert_ptr_equal(owner_of(&sem), NULL);
	dequeue_by_hand(&sem, &w);
	dequeue_by_hand(&sem, &r[0]);
	assert_released(&sem);
}

static void test_handoff_grants_leading_readers_at_once(void **state)
{
	handoff_batches(false);
	handoff_batches(true);
}

/*
 * The spin decisions of rwsem_optimistic_spin(): task 0 owns the lock on
 * CPU 0 and never leaves it unless the case says so; task 1 calls
 * down_write() on CPU 1, alone there (no tick, no need_resched).  Whether
 * it spun is read from its struct rwsem_profile and from the OSQ, which
 * only a spinner holds.
 */
enum spin_case {
	OWNER_RUNS,		/* the writer owner runs, then releases */
	OWNER_SLEEPS,		/* it sleeps while holding the lock */
	OWNER_UNSET_EARLY,	/* owner not set yet when the spinner comes */
	OWNER_UNSET,		/* owner cleared, count not yet: up_write() */
	OWNER_DOWNGRADES,	/* it becomes a reader */
	OWNER_UNSET_DOWNGRADES,	/* cleared, then downgraded */
	OWNER_LEFT_TO_READERS,	/* free, last owned by readers */
	READER_HOLDS,		/* a reader holds the lock */
};

struct spin {
	struct rw_semaphore sem;
	enum spin_case what;
	int held;		/* task 0 holds the lock */
	int spinning;		/* task 1 was seen in the OSQ, not queued */
	int still_spinning;	/* ... once the owner field was cleared */
	int queued_while_read;	/* task 1 queued while a reader held it */
	int stuck;
	bool patch;
	struct rwsem_profile prof;	/* task 1's */
};

static bool spinner_in_osq(struct spin *s)
{
	return osq_is_locked(&s->sem.osq) && !queued(&s->sem);
}

static void spin_owner(struct spin *s)
{
	double since;

	if (s->what == READER_HOLDS) {
		down_read(&s->sem);
		store(s->held, 1);
		if (!spin_until(queued(&s->sem)))
			test_note(&s->stuck);
		up_read(&s->sem);
		return;
	}
	if (s->what == OWNER_UNSET_EARLY) {
		down_write(&s->sem);
		WRITE_ONCE(s->sem.owner, NULL);
		store(s->held, 1);
		if (!spin_until(osq_is_locked(&s->sem.osq) || queued(&s->sem)))
			test_note(&s->stuck);
		spin_ms(2);
		store(s->spinning, spinner_in_osq(s));
		up_write(&s->sem);
		return;
	}
	down_write(&s->sem);
	store(s->held, 1);
	if (!spin_until(osq_is_locked(&s->sem.osq))) {
		test_note(&s->stuck);
		up_write(&s->sem);
		return;
	}
	spin_ms(2);	/* long in rwsem_spin_on_owner() by now */
	store(s->spinning, spinner_in_osq(s));
	switch (s->what) {
	case OWNER_RUNS:
		up_write(&s->sem);
		break;
	case OWNER_SLEEPS:
		since = test_now_ms();
		while (!queued(&s->sem) && !gave_up(since))
			schedule_timeout_ns(100 * 1000);
		up_write(&s->sem);
		break;
	case OWNER_UNSET:
		WRITE_ONCE(s->sem.owner, NULL);
		spin_until_ms(queued(&s->sem), STOP_MS);
		store(s->still_spinning, spinner_in_osq(s));
		up_write(&s->sem);
		break;
	case OWNER_UNSET_DOWNGRADES:
		WRITE_ONCE(s->sem.owner, NULL);
		spin_until_ms(queued(&s->sem), STOP_MS);
		store(s->still_spinning, spinner_in_osq(s));
		/* fall through */
	case OWNER_DOWNGRADES:
		downgrade_write(&s->sem);
		store(s->queued_while_read,
		      spin_until_ms(queued(&s->sem), 200));
		up_read(&s->sem);
		break;
	case OWNER_LEFT_TO_READERS:
		/*
		 * What the spinner sees if it misses downgrade_write() and
		 * up_read() (an interrupt): the count free, the owner field
		 * as the reader left it.  No waiters, so no wake-up is due.
		 */
		count_add(&s->sem, -RWSEM_ACTIVE_WRITE_BIAS);
		WRITE_ONCE(s->sem.owner, reader_mark(s->patch));
		/*
		 * On the CPU until the spinner has decided: one that read
		 * the owner field just before it changed and our on_cpu
		 * only after we left the CPU (together_task() yields) stops
		 * too, in v4.6 as well, as the kernel's would.
		 */
		if (!spin_until(!osq_is_locked(&s->sem.osq)))
			test_note(&s->stuck);
		break;
	default:
		break;
	}
}

static void spin_task(struct test_thread *t)
{
	struct spin *s = t->arg;
	struct optimistic_spin_node node;

	task_start(&node, t->id + 1);
	if (t->id == 0) {
		spin_owner(s);
		return;
	}
	if (!spin_until(load(s->held))) {
		test_note(&s->stuck);
		return;
	}
	down_write(&s->sem);
	s->prof = rwsem_profile;
	up_write(&s->sem);
}

static void run_spin(struct spin *s, bool patch, enum spin_case what)
{
	struct guard g;

	memset(s, 0, sizeof(*s));
	rwsem_reader_owned_patch = patch;
	init_rwsem(&s->sem);
	s->what = what;
	s->patch = patch;
	guard_start(&g, "spin case");
	race_tasks(2, 2, spin_task, s);
	guard_stop(&g);
	assert_int_equal(s->stuck, 0);
	assert_int_equal(s->prof.spin_acquired + s->prof.spin_abandoned, 1);
	assert_released(&s->sem);
}

/*
 * v4.6 stops when the owner field changes only if the spinner is inside
 * rwsem_spin_on_owner(), which reads the count; at the top of the spin
 * loop it sees no owner and spins on.  The owner's 2 ms of watching put
 * it inside, unless the host preempted it (ThreadSanitizer's tasks are
 * SCHED_OTHER): then it is run again, a few times at most.
 */
static void run_spin_v46_stopping(struct spin *s, enum spin_case what)
{
	int tries;

	for (tries = 0; tries < V46_TRIES; tries++) {
		run_spin(s, false, what);
		if (!s->still_spinning && s->prof.spin_abandoned)
			break;
	}
}

/* Behind a writer that runs, a writer spins and takes the lock from it. */
static void test_writer_spins_behind_running_writer(void **state)
{
	struct spin s;
	int tries;

	need_two_cpus();
	run_spin(&s, false, OWNER_RUNS);
	assert_true(s.spinning);
	assert_true(s.prof.osq > 0);
	/*
	 * v4.6 may still give up at the release: up_write() clears the
	 * owner before the count, and rwsem_spin_on_owner() reads the
	 * count in between (test_spin_continues_while_owner_unset).
	 */
	/* a wake-up on the spinner's CPU (need_resched) may end one try */
	for (tries = 0; tries < V46_TRIES; tries++) {
		run_spin(&s, true, OWNER_RUNS);
		if (s.prof.spin_acquired)
			break;
	}
	assert_true(s.spinning);
	assert_int_equal(s.prof.spin_acquired, 1);
	assert_int_equal(s.prof.sleeps, 0);
}

/* The owner leaves the CPU: the spinner stops, queues, and sleeps. */
static void test_spin_stops_when_owner_sleeps(void **state)
{
	struct spin s;
	bool patch;

	need_two_cpus();
	for (patch = false; ; patch = true) {
		run_spin(&s, patch, OWNER_SLEEPS);
		assert_true(s.spinning);
		assert_int_equal(s.prof.spin_abandoned, 1);
		if (patch)
			break;
	}
}

/*
 * No owner while the count says write-locked (a writer that has not set
 * it yet, or the middle of up_write()): v4.6 reads the count and does not
 * spin, or gives up; with the seed, no owner is no reason not to spin.
 */
static void test_spin_continues_while_owner_unset(void **state)
{
	struct spin s;

	need_two_cpus();
	run_spin(&s, false, OWNER_UNSET_EARLY);
	assert_false(s.spinning);
	assert_int_equal(s.prof.osq, 0);
	assert_int_equal(s.prof.spin_abandoned, 1);
	run_spin(&s, true, OWNER_UNSET_EARLY);
	assert_true(s.spinning);
	assert_int_equal(s.prof.spin_acquired, 1);
	assert_int_equal(s.prof.sleeps, 0);

	run_spin_v46_stopping(&s, OWNER_UNSET);
	assert_true(s.spinning);
	assert_false(s.still_spinning);
	assert_int_equal(s.prof.spin_abandoned, 1);
	run_spin(&s, true, OWNER_UNSET);
	assert_true(s.spinning);
	assert_true(s.still_spinning);
	assert_int_equal(s.prof.spin_acquired, 1);
	assert_int_equal(s.prof.sleeps, 0);
}

/*
 * The writer it spins on downgrades: readers own the lock, so the
 * spinner stops and queues while they hold it, whether it was watching
 * the owner (rwsem_spin_on_owner()) or the owner field was empty and it
 * finds the reader mark at the top of the spin loop.
 */
static void test_spin_stops_when_readers_take_over(void **state)
{
	struct spin s;
	bool patch;

	need_two_cpus();
	for (patch = false; ; patch = true) {
		if (patch)
			run_spin(&s, patch, OWNER_DOWNGRADES);
		else
			run_spin_v46_stopping(&s, OWNER_DOWNGRADES);
		assert_true(s.spinning);
		assert_true(s.queued_while_read);
		assert_int_equal(s.prof.spin_abandoned, 1);

		if (patch)
			run_spin(&s, patch, OWNER_UNSET_DOWNGRADES);
		else
			run_spin_v46_stopping(&s, OWNER_UNSET_DOWNGRADES);
		assert_true(s.spinning);
		assert_int_equal(s.still_spinning, patch);
		assert_true(s.queued_while_read);
		assert_int_equal(s.prof.spin_abandoned, 1);
		if (patch)
			break;
	}
}

/*
 * Readers took the lock from the writer the spinner watches, and left:
 * the lock is free.  With the seed the reader mark stops the spinner all
 * the same (rwsem_spin_on_owner() says stop, no last try), and it takes
 * the lock from the wait list; v4.6 sees no owner, a free count, and
 * takes it spinning.
 */
static void test_reader_mark_stops_spinning_on_free_lock(void **state)
{
	struct spin s;

	need_two_cpus();
	run_spin(&s, false, OWNER_LEFT_TO_READERS);
	assert_true(s.spinning);
	assert_int_equal(s.prof.spin_acquired, 1);
	run_spin(&s, true, OWNER_LEFT_TO_READERS);
	assert_true(s.spinning);
	assert_int_equal(s.prof.spin_abandoned, 1);
	assert_int_equal(s.prof.sleeps, 0);
}

/*
 * A reader holds the lock: with the seed the owner field says so, v4.6
 * reads the count; neither lets a writer into the OSQ.
 */
static void test_no_spin_on_reader_owned_lock(void **state)
{
	struct spin s;
	bool patch;

	need_two_cpus();
	for (patch = false; ; patch = true) {
		run_spin(&s, patch, READER_HOLDS);
		assert_int_equal(s.prof.osq, 0);
		assert_int_equal(s.prof.spin_abandoned, 1);
		if (patch)
			break;
	}
}

/*
 * Sleeping waiters queued in a known order behind a holder (task 0):
 * task k queues when k - 1 wait.  The holder releases (or downgrades),
 * and the readers at the head must be granted together: each waits
 * inside for the others, which a reader granted alone would never see.
 */
enum role { HOLDER, READER, WRITER };

#define MAX_QUEUE	8

struct queue_case {
	struct rw_semaphore sem;
	const enum role *roles;
	int nr;
	bool downgrade;		/* the holder downgrades, stays a reader */
	int batch;		/* readers granted together, holder included */
	int step;
	int seq;
	int order[MAX_QUEUE];	/* 1 for the first waiter in, ... */
	int readers_in, writers_in;
	int arrived;		/* readers of the batch inside */
	int batch_seen;		/* the count read with all of them in */
	int released;		/* the holder read the owner once released */
	long count_held;	/* every waiter queued */
	long count_batch;	/* the batch inside, the others queued */
	struct task_struct *owner_after;
	int violations, stuck;
};

static void queue_case_reader_inside(struct queue_case *q, bool in_batch)
{
	if (load(q->writers_in))
		test_note(&q->violations);
	inc(q->readers_in);
	if (in_batch) {
		if (inc(q->arrived) == q->batch) {
			q->count_batch = count_of(&q->sem);
			store(q->batch_seen, 1);
		} else if (!yield_until(load(q->batch_seen))) {
			test_note(&q->stuck);	/* granted one at a time */
		}
		if (!yield_until(load(q->released)))
			test_note(&q->stuck);
	}
	dec(q->readers_in);
}

static void queue_case_holder(struct queue_case *q)
{
	down_write(&q->sem);
	store(q->step, 1);
	if (!yield_until(queued(&q->sem) == q->nr - 1))
		test_note(&q->stuck);
	q->count_held = count_of(&q->sem);
	if (q->downgrade) {
		downgrade_write(&q->sem);
		q->owner_after = owner_of(&q->sem);
		store(q->released, 1);
		queue_case_reader_inside(q, true);
		up_read(&q->sem);
	} else {
		up_write(&q->sem);
		q->owner_after = owner_of(&q->sem);
		store(q->released, 1);
	}
}

static void queue_case_task(struct test_thread *t)
{
	struct queue_case *q = t->arg;
	struct optimistic_spin_node node;
	bool in_batch = true;
	int i;

	task_start(&node, t->id + 1);
	if (t->id == 0) {
		queue_case_holder(q);
		return;
	}
	for (i = 1; i <= t->id; i++)
		if (q->roles[i] != READER)
			in_batch = false;
	if (!yield_until(load(q->step) &&
			 queued(&q->sem) == t->id - 1)) {
		test_note(&q->stuck);
		return;
	}
	if (q->roles[t->id] == READER) {
		down_read(&q->sem);
		q->order[t->id] = inc(q->seq);
		queue_case_reader_inside(q, in_batch);
		up_read(&q->sem);
		return;
	}
	down_write(&q->sem);
	q->order[t->id] = inc(q->seq);
	if (inc(q->writers_in) != 1 || load(q->readers_in))
		test_note(&q->violations);
	cpu_relax();
	dec(q->writers_in);
	up_write(&q->sem);
}

static void run_queue_case(struct queue_case *q, bool patch)
{
	struct guard g;
	int i, leading = q->batch - (q->downgrade ? 1 : 0);

	rwsem_reader_owned_patch = patch;
	init_rwsem(&q->sem);
	guard_start(&g, "queue case");
	race_tasks(q->nr, two_cpus(), queue_case_task, q);
	guard_stop(&g);
	assert_int_equal(q->stuck, 0);
	assert_int_equal(q->violations, 0);
	assert_int_equal(q->count_held,
			 RWSEM_ACTIVE_WRITE_BIAS + RWSEM_WAITING_BIAS);
	assert_int_equal(q->count_batch, q->batch * RWSEM_ACTIVE_READ_BIAS +
					 RWSEM_WAITING_BIAS);
	assert_ptr_equal(q->owner_after, reader_mark(patch));
	/* the batch first, then each waiter after it in queue order */
	for (i = 1; i < q->nr; i++)
		if (i <= leading)
			assert_true(q->order[i] >= 1 && q->order[i] <= leading);
		else
			assert_int_equal(q->order[i], i);
	assert_released(&q->sem);
}

/* Three readers behind a writer, then a writer and a reader: 6 tasks. */
static void test_batched_grant_to_sleeping_readers(void **state)
{
	static const enum role roles[] = {
		HOLDER, READER, READER, READER, WRITER, READER
	};
	struct queue_case q;
	bool patch;

	for (patch = false; ; patch = true) {
		q = (struct queue_case){ .roles = roles, .nr = 6, .batch = 3 };
		run_queue_case(&q, patch);
		if (patch)
			break;
	}
}

/*
 * downgrade_write() wakes the readers at the head to share with the
 * downgraded holder (RWSEM_WAKE_READ_OWNED: no first grant to undo); the
 * writer queued after them stays queued, and the reader behind it too.
 */
static void test_downgrade_grants_waiting_readers(void **state)
{
	static const enum role roles[] = {
		HOLDER, READER, READER, WRITER, READER
	};
	struct queue_case q;
	bool patch;

	for (patch = false; ; patch = true) {
		q = (struct queue_case){ .roles = roles, .nr = 5, .batch = 3,
					 .downgrade = true };
		run_queue_case(&q, patch);
		if (patch)
			break;
	}
}

/*
 * RWSEM_WAKE_READERS: the lock is read-owned (task 0) and two readers
 * wait at the head (queued by hand: their wake-up was missed).  A writer
 * (task 1) queueing behind them must grant them before it sleeps; two
 * readers arriving after it (tasks 2 and 3) queue behind the writer.
 */
struct wake_readers {
	struct rw_semaphore sem;
	struct queued_waiter ahead[2];
	int step;
	int seq;
	int order[4];
	int granted_ahead;	/* the writer granted the two */
	long count_granted;
	struct task_struct *owner_granted;
	int writer_in, readers_in;
	int violations, stuck;
};

static void wake_readers_task(struct test_thread *t)
{
	struct wake_readers *w = t->arg;
	struct optimistic_spin_node node;
	int i;

	task_start(&node, t->id + 1);
	switch (t->id) {
	case 0:
		down_read(&w->sem);
		queue_by_hand(&w->sem, &w->ahead[0], QUEUED_READER);
		queue_by_hand(&w->sem, &w->ahead[1], QUEUED_READER);
		store(w->step, 1);
		if (!yield_until(granted(&w->ahead[0]) &&
				 granted(&w->ahead[1]) &&
				 queued(&w->sem) == 1))
			test_note(&w->stuck);
		w->granted_ahead = granted(&w->ahead[0]) &&
				   granted(&w->ahead[1]);
		w->count_granted = count_of(&w->sem);
		w->owner_granted = owner_of(&w->sem);
		store(w->step, 2);
		if (!yield_until(queued(&w->sem) == 3))
			test_note(&w->stuck);
		/* the two granted readers leave, then task 0 */
		for (i = 0; i < 3; i++)
			up_read(&w->sem);
		return;
	case 1:
		if (!yield_until(load(w->step) >= 1)) {
			test_note(&w->stuck);
			return;
		}
		down_write(&w->sem);
		w->order[1] = inc(w->seq);
		store(w->writer_in, 1);
		if (load(w->readers_in))
			test_note(&w->violations);
		store(w->writer_in, 0);
		up_write(&w->sem);
		return;
	default:
		if (!yield_until(load(w->step) >= 2 &&
				 queued(&w->sem) == t->id - 1)) {
			test_note(&w->stuck);
			return;
		}
		down_read(&w->sem);
		w->order[t->id] = inc(w->seq);
		inc(w->readers_in);
		if (load(w->writer_in))
			test_note(&w->violations);
		dec(w->readers_in);
		up_read(&w->sem);
	}
}

static void test_queueing_writer_wakes_readers_ahead(void **state)
{
	struct wake_readers w;
	struct guard g;
	bool patch;

	for (patch = false; ; patch = true) {
		memset(&w, 0, sizeof(w));
		rwsem_reader_owned_patch = patch;
		init_rwsem(&w.sem);
		guard_start(&g, "wake readers");
		race_tasks(4, two_cpus(), wake_readers_task, &w);
		guard_stop(&g);
		assert_int_equal(w.stuck, 0);
		assert_int_equal(w.violations, 0);
		assert_true(w.granted_ahead);
		/* task 0 and the two granted: 3 readers, a writer waiting */
		assert_int_equal(w.count_granted, 3 * RWSEM_ACTIVE_READ_BIAS +
						  RWSEM_WAITING_BIAS);
		assert_ptr_equal(w.owner_granted, reader_mark(patch));
		assert_int_equal(w.order[1], 1);
		assert_true(w.order[2] > 1 && w.order[3] > 1);
		assert_released(&w.sem);
		if (patch)
			break;
	}
}

/*
 * A writer steals the lock between up_write()'s count update and its
 * wake-up: the wake-up's first reader grant finds the writer and is
 * undone, and the readers stay queued until the thief releases.
 * Task 1 holds the lock with tasks 2 and 3 queued as readers; task 0
 * takes wait_lock, so task 1's up_write() waits for it, and steals the
 * free lock by spinning (no wait_lock needed), then lets task 1 go on.
 */
struct steal {
	struct rw_semaphore sem;
	int step;
	int wake_waiting;	/* task 1 waits for wait_lock in rwsem_wake() */
	int wake_done;
	int thief_in;
	int reader_in_with_thief;
	long count_after_undo;
	int queued_after_undo;
	struct task_struct *owner_after_undo, *thief_task;
	struct rwsem_profile thief;
	int readers_in;
	int stuck;
};

static bool wait_lock_contended(struct rw_semaphore *sem)
{
	uint32_t v = READ_ONCE(sem->wait_lock.head_tail);

	return (uint16_t)((v >> TICKET_SHIFT) - (uint16_t)v) > 1;
}

static void steal_task(struct test_thread *t)
{
	struct steal *s = t->arg;
	struct optimistic_spin_node node;

	task_start(&node, t->id + 1);
	switch (t->id) {
	case 0:
		if (!yield_until(load(s->step) >= 2)) {
			test_note(&s->stuck);
			return;
		}
		spin_lock(&s->sem.wait_lock);
		store(s->wake_waiting, 1);
		if (!spin_until(wait_lock_contended(&s->sem))) {
			test_note(&s->stuck);
			spin_unlock(&s->sem.wait_lock);
			return;
		}
		/* free with waiters: taken without wait_lock, not queued */
		down_write(&s->sem);
		store(s->thief_in, 1);
		s->thief_task = current;
		s->thief = rwsem_profile;
		spin_unlock(&s->sem.wait_lock);
		if (!yield_until(load(s->wake_done)))
			test_note(&s->stuck);
		s->count_after_undo = count_of(&s->sem);
		s->queued_after_undo = queued(&s->sem);
		s->owner_after_undo = owner_of(&s->sem);
		store(s->thief_in, 0);
		up_write(&s->sem);
		return;
	case 1:
		down_write(&s->sem);
		store(s->step, 1);
		if (!yield_until(queued(&s->sem) == 2)) {
			test_note(&s->stuck);
			up_write(&s->sem);
			return;
		}
		store(s->step, 2);
		if (!spin_until(load(s->wake_waiting)))
			test_note(&s->stuck);
		up_write(&s->sem);
		store(s->wake_done, 1);
		return;
	default:
		if (!yield_until(load(s->step) >= 1 &&
				 queued(&s->sem) == t->id - 2)) {
			test_note(&s->stuck);
			return;
		}
		down_read(&s->sem);
		if (load(s->thief_in))
			test_note(&s->reader_in_with_thief);
		up_read(&s->sem);
	}
}

static void test_reader_grant_undone_when_writer_steals(void **state)
{
	struct steal s;
	struct guard g;
	bool patch;

	need_two_cpus();
	for (patch = false; ; patch = true) {
		memset(&s, 0, sizeof(s));
		rwsem_reader_owned_patch = patch;
		init_rwsem(&s.sem);
		guard_start(&g, "reader grant undone");
		race_tasks(4, 2, steal_task, &s);
		guard_stop(&g);
		assert_int_equal(s.stuck, 0);
		/* x86's fast path or a spinner: never queued */
		assert_int_equal(s.thief.spin_abandoned, 0);
		assert_int_equal(s.thief.sleeps, 0);
		/* the grant undone: the thief's bias and the waiters' only */
		assert_int_equal(s.count_after_undo,
				 RWSEM_ACTIVE_WRITE_BIAS + RWSEM_WAITING_BIAS);
		assert_int_equal(s.queued_after_undo, 2);
		assert_ptr_equal(s.owner_after_undo, s.thief_task);
		assert_int_equal(s.reader_in_with_thief, 0);
		assert_released(&s.sem);
		if (patch)
			break;
	}
}

/*
 * osq_lock()'s unqueue with a successor: A holds the OSQ, B (a model
 * task, alone on CPU 1) spins behind it and C behind B.  B's need_resched
 * comes: it unlinks itself, A's next becomes C and C's prev A, and A's
 * unlock hands the OSQ to C.  A and C are plain threads on CPU 0, never
 * need_resched, so only B can unqueue.
 */
/* osq_thread_init() numbers, and the tail values they encode (nr + 1) */
#define OSQ_A	1
#define OSQ_B	2
#define OSQ_C	3

struct osq_unqueue {
	struct optimistic_spin_queue osq;
	struct optimistic_spin_node a, b, c;
	struct rq *b_rq;
	int a_locked, a_unlocking;
	int b_ret, b_done;
	int c_ret, c_before_unlock;
	int a_next_is_c, c_prev_is_a, tail_is_c, c_waiting;
	int stuck;
};

static void *osq_unqueue_a(void *arg)
{
	struct osq_unqueue *o = arg;

	sched_migrate_task(0);
	osq_thread_init(&o->a, OSQ_A);
	if (!osq_lock(&o->osq))
		test_note(&o->stuck);
	store(o->a_locked, 1);
	if (!yield_until(READ_ONCE(o->b.next) == &o->c &&
			 load(o->b_rq))) {
		test_note(&o->stuck);
	} else {
		WRITE_ONCE(o->b_rq->need_resched, 1);	/* the tick, for B */
		if (!yield_until(load(o->b_done)))
			test_note(&o->stuck);
	}
	o->a_next_is_c = READ_ONCE(o->a.next) == &o->c;
	o->c_prev_is_a = READ_ONCE(o->c.prev) == &o->a;
	o->tail_is_c = atomic_read(&o->osq.tail) == OSQ_C + 1;
	o->c_waiting = !smp_load_acquire(&o->c.locked);
	store(o->a_unlocking, 1);
	osq_unlock(&o->osq);
	return NULL;
}

static void *osq_unqueue_b(void *arg)
{
	struct osq_unqueue *o = arg;

	if (sched_task_start(1))
		abort();
	sched_task_run();
	osq_thread_init(&o->b, OSQ_B);
	store(o->b_rq, current->rq);
	if (spin_until(load(o->a_locked))) {
		o->b_ret = osq_lock(&o->osq);
		if (o->b_ret)
			osq_unlock(&o->osq);
	} else {
		test_note(&o->stuck);
	}
	store(o->b_done, 1);
	cond_resched();
	sched_task_exit();
	return NULL;
}

static void *osq_unqueue_c(void *arg)
{
	struct osq_unqueue *o = arg;

	sched_migrate_task(0);
	osq_thread_init(&o->c, OSQ_C);
	if (!yield_until(READ_ONCE(o->a.next) == &o->b &&
			 atomic_read(&o->osq.tail) == OSQ_B + 1)) {
		test_note(&o->stuck);
		return NULL;
	}
	o->c_ret = osq_lock(&o->osq);
	o->c_before_unlock = !load(o->a_unlocking);
	if (o->c_ret)
		osq_unlock(&o->osq);
	return NULL;
}

static void test_osq_unqueue_with_successor(void **state)
{
	void *(*fn[3])(void *) = { osq_unqueue_a, osq_unqueue_b,
				   osq_unqueue_c };
	struct osq_unqueue *o;
	pthread_t tid[3];
	struct guard g;
	int i;

	need_two_cpus();
	o = calloc(1, sizeof(*o));
	osq_lock_init(&o->osq);
	guard_start(&g, "osq unqueue");
	for (i = 0; i < 3; i++)
		if (pthread_create(&tid[i], NULL, fn[i], o))
			abort();
	for (i = 0; i < 3; i++)
		pthread_join(tid[i], NULL);
	guard_stop(&g);
	assert_int_equal(o->stuck, 0);
	assert_int_equal(o->b_ret, 0);		/* B unqueued */
	assert_true(o->a_next_is_c);
	assert_true(o->c_prev_is_a);
	assert_true(o->tail_is_c);
	assert_true(o->c_waiting);
	assert_int_equal(o->c_ret, 1);		/* C got it, from A */
	assert_int_equal(o->c_before_unlock, 0);
	assert_false(osq_is_locked(&o->osq));
	free(o);
}

/*
 * down_read_trylock() under contention, 4 tasks: it succeeds beside
 * readers, fails while a writer holds the lock or waits for it (count
 * negative), never admits a reader beside a writer, and marks the owner
 * as down_read() does.
 */
struct trylock {
	struct rw_semaphore sem;
	int phase_arrived, phase_gen;
	int in_with_readers;	/* trylocks that succeeded beside a reader */
	int in_with_writer;	/* trylocks that succeeded beside a writer */
	int in_with_waiter;	/* ... beside a queued writer */
	int tried;		/* phase 3: tasks 2 and 3 are done trying */
	unsigned long contended_ok, contended_fail;
	int readers_in, writers_in;
	long count_shared;
	int violations, stuck;
};

/* All 4 tasks meet here between phases. */
static void trylock_phase(struct trylock *t)
{
	int gen = load(t->phase_gen);

	if (inc(t->phase_arrived) == 4) {
		store(t->phase_arrived, 0);
		inc(t->phase_gen);
	} else if (!yield_until(load(t->phase_gen) != gen)) {
		test_note(&t->stuck);
	}
}

static void trylock_task(struct test_thread *th)
{
	struct trylock *t = th->arg;
	struct optimistic_spin_node node;
	int id = th->id, n, ok = 0;

	task_start(&node, id + 1);

	/* 1: beside a reader, every trylock succeeds */
	if (id == 0)
		down_read(&t->sem);
	trylock_phase(t);
	if (id && (ok = down_read_trylock(&t->sem)))
		inc(t->in_with_readers);
	trylock_phase(t);
	if (id == 0)
		t->count_shared = count_of(&t->sem);
	trylock_phase(t);
	if (id == 0 || ok)
		up_read(&t->sem);
	trylock_phase(t);

	/* 2: a writer holds it: every trylock fails */
	if (id == 0)
		down_write(&t->sem);
	trylock_phase(t);
	for (n = 0; id && n < 100; n++)
		if (down_read_trylock(&t->sem)) {
			inc(t->in_with_writer);
			up_read(&t->sem);
		}
	trylock_phase(t);
	if (id == 0)
		up_write(&t->sem);
	trylock_phase(t);

	/* 3: read-owned, a writer queued: trylock does not pass it */
	if (id == 0)
		down_read(&t->sem);
	trylock_phase(t);
	if (id == 1) {
		down_write(&t->sem);	/* asleep until task 0 leaves */
		up_write(&t->sem);
	} else if (id >= 2) {
		if (!yield_until(queued(&t->sem) == 1))
			test_note(&t->stuck);
		for (n = 0; n < 100; n++)
			if (down_read_trylock(&t->sem)) {
				inc(t->in_with_waiter);
				up_read(&t->sem);
			}
		inc(t->tried);
	} else {
		if (!yield_until(load(t->tried) == 2))
			test_note(&t->stuck);
		up_read(&t->sem);	/* task 1 gets it */
	}
	trylock_phase(t);

	/* 4: two writers and two trylock readers, as fast as they can */
	for (n = 0; n < MIX_LOOPS; n++) {
		if (id < 2) {
			down_write(&t->sem);
			if (inc(t->writers_in) != 1 || load(t->readers_in))
				test_note(&t->violations);
			cpu_relax();
			dec(t->writers_in);
			up_write(&t->sem);
			if (!(n % 64))
				schedule_timeout_ns(20 * 1000);
		} else if (down_read_trylock(&t->sem)) {
			inc(t->readers_in);
			if (load(t->writers_in))
				test_note(&t->violations);
			cpu_relax();
			dec(t->readers_in);
			up_read(&t->sem);
			__atomic_fetch_add(&t->contended_ok, 1,
					   __ATOMIC_RELAXED);
		} else {
			__atomic_fetch_add(&t->contended_fail, 1,
					   __ATOMIC_RELAXED);
		}
		cond_resched();
	}
}

static void trylock_marks_owner(bool patch)
{
	struct rw_semaphore sem;

	rwsem_reader_owned_patch = patch;
	init_rwsem(&sem);
	down_write(&sem);
	up_write(&sem);
	assert_ptr_equal(owner_of(&sem), NULL);
	assert_int_equal(down_read_trylock(&sem), 1);
	assert_ptr_equal(owner_of(&sem), reader_mark(patch));
	assert_int_equal(count_of(&sem), RWSEM_ACTIVE_READ_BIAS);
	up_read(&sem);
	assert_released(&sem);
}

static void test_trylock_under_contention(void **state)
{
	struct trylock *t = calloc(1, sizeof(*t));
	struct guard g;
	bool patch;

	for (patch = false; ; patch = true) {
		trylock_marks_owner(patch);
		memset(t, 0, sizeof(*t));
		rwsem_reader_owned_patch = patch;
		init_rwsem(&t->sem);
		guard_start(&g, "trylock");
		race_tasks(4, two_cpus(), trylock_task, t);
		guard_stop(&g);
		assert_int_equal(t->stuck, 0);
		assert_int_equal(t->in_with_readers, 3);
		assert_int_equal(t->count_shared, 4 * RWSEM_ACTIVE_READ_BIAS);
		assert_int_equal(t->in_with_writer, 0);
		assert_int_equal(t->in_with_waiter, 0);
		assert_int_equal(t->violations, 0);
		assert_int_equal(t->contended_ok + t->contended_fail,
				 2ul * MIX_LOOPS);
		assert_released(&t->sem);
		if (patch)
			break;
	}
	free(t);
}

/*
 * Every operation at random, 6 tasks on 2 CPUs (3 a CPU: the tick
 * preempts, spinners see need_resched and owners off CPU): readers and
 * writers exclude each other, a downgraded writer shares only with
 * readers, no wake-up is lost (a watchdog: no progress for STALL_MS
 * aborts), and the lock ends free with no waiter and no spinner.
 */
#define MIX_TASKS	6

struct mix {
	struct rw_semaphore sem;
	int readers_in, writers_in;
	int violations;
	unsigned long progress;
	unsigned long ops[4];
	int done;
	struct task_struct *task[MIX_TASKS];
	int doing[MIX_TASKS];	/* enum mix_step, for the watchdog */
};

enum mix_step {
	MIX_IDLE, MIX_DOWN_READ, MIX_TRYLOCK, MIX_READING, MIX_UP_READ,
	MIX_DOWN_WRITE, MIX_WRITING, MIX_DOWNGRADE, MIX_UP_WRITE, MIX_SLEEP,
	MIX_STEPS
};

static const char *const mix_step_name[MIX_STEPS] = {
	"idle", "down_read", "trylock", "reading", "up_read",
	"down_write", "writing", "downgrade_write", "up_write", "asleep",
};

static void mix_doing(struct mix *m, int id, enum mix_step step)
{
	WRITE_ONCE(m->doing[id], step);
}

static void mix_read(struct mix *m, int id)
{
	mix_doing(m, id, MIX_READING);
	inc(m->readers_in);
	if (load(m->writers_in))
		test_note(&m->violations);
	cpu_relax();
	dec(m->readers_in);
	mix_doing(m, id, MIX_UP_READ);
}

static void mix_write(struct mix *m, int id)
{
	mix_doing(m, id, MIX_WRITING);
	if (inc(m->writers_in) != 1 || load(m->readers_in))
		test_note(&m->violations);
	cpu_relax();
	dec(m->writers_in);
}

static void mix_task(struct test_thread *t)
{
	struct mix *m = t->arg;
	struct optimistic_spin_node node;
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (t->id + 1);
	int n, op, id = t->id;

	task_start(&node, id + 1);
	store(m->task[id], current);
	for (n = 0; n < MIX_LOOPS; n++) {
		rng ^= rng << 13;
		rng ^= rng >> 7;
		rng ^= rng << 17;
		op = rng % 8;
		if (op < 3) {
			mix_doing(m, id, MIX_DOWN_READ);
			down_read(&m->sem);
			mix_read(m, id);
			up_read(&m->sem);
			op = 0;
		} else if (op < 4) {
			mix_doing(m, id, MIX_TRYLOCK);
			if (down_read_trylock(&m->sem)) {
				mix_read(m, id);
				up_read(&m->sem);
			}
			op = 1;
		} else if (op < 6) {
			mix_doing(m, id, MIX_DOWN_WRITE);
			down_write(&m->sem);
			mix_write(m, id);
			mix_doing(m, id, MIX_UP_WRITE);
			up_write(&m->sem);
			op = 2;
		} else {
			mix_doing(m, id, MIX_DOWN_WRITE);
			down_write(&m->sem);
			mix_write(m, id);
			mix_doing(m, id, MIX_DOWNGRADE);
			downgrade_write(&m->sem);
			mix_read(m, id);
			up_read(&m->sem);
			op = 3;
		}
		__atomic_fetch_add(&m->ops[op], 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&m->progress, 1, __ATOMIC_RELAXED);
		mix_doing(m, id, MIX_SLEEP);
		if (!(rng & 0x3f00))
			schedule_timeout_ns(rng % 20000);
		mix_doing(m, id, MIX_IDLE);
		cond_resched();
	}
}

static int mix_task_nr(struct mix *m, struct task_struct *p)
{
	int i;

	for (i = 0; i < MIX_TASKS; i++)
		if (load(m->task[i]) == p)
			return i;
	return -1;
}

/* What every task does, and the lock's state, when progress stopped. */
static void mix_dump(struct mix *m)
{
	struct task_struct *p, *owner = owner_of(&m->sem);
	struct list_head *pos;
	struct queued_waiter *w;
	int i;

	fprintf(stderr, "count %#lx, owner %s%d, osq %s\n",
		count_of(&m->sem),
		owner == RWSEM_READER_OWNED ? "readers " : "task ",
		owner == RWSEM_READER_OWNED ? 0 : mix_task_nr(m, owner),
		osq_is_locked(&m->sem.osq) ? "locked" : "free");
	for (i = 0; i < MIX_TASKS; i++) {
		p = load(m->task[i]);
		if (!p)
			continue;
		fprintf(stderr, "task %d: %s, state %#x, on_cpu %d, cpu %d, "
			"preempt_count %d\n", i,
			mix_step_name[READ_ONCE(m->doing[i])], load(p->state),
			load(p->on_cpu), READ_ONCE(p->cpu),
			READ_ONCE(*READ_ONCE(p->preempt_count)));
	}
	if (!spin_trylock(&m->sem.wait_lock)) {
		fprintf(stderr, "wait_lock held: head %u, tail %u\n",
			READ_ONCE(m->sem.wait_lock.tickets.head),
			READ_ONCE(m->sem.wait_lock.tickets.tail));
		return;
	}
	for (pos = m->sem.wait_list.next; pos != &m->sem.wait_list;
	     pos = pos->next) {
		w = list_entry(pos, struct queued_waiter, list);
		fprintf(stderr, "queued: task %d, %s, %s\n",
			mix_task_nr(m, READ_ONCE(w->task)),
			w->type == QUEUED_READER ? "reader" : "writer",
			READ_ONCE(w->task) ? "waiting" : "granted");
	}
	spin_unlock(&m->sem.wait_lock);
}

static void *mix_watchdog(void *arg)
{
	struct mix *m = arg;
	struct timespec tick = { 0, 1000 * 1000 };
	unsigned long seen = 0, now;
	double since = test_now_ms();

	while (!load(m->done)) {
		nanosleep(&tick, NULL);
		now = __atomic_load_n(&m->progress, __ATOMIC_RELAXED);
		if (now != seen) {
			seen = now;
			since = test_now_ms();
		} else if (test_now_ms() - since > STALL_MS) {
			fprintf(stderr, "lost wake-up: no progress for %d ms\n",
				STALL_MS);
			mix_dump(m);
			abort();
		}
	}
	return NULL;
}

static void test_random_mix_oversubscribed(void **state)
{
	struct mix *m = calloc(1, sizeof(*m));
	pthread_t watchdog;
	bool patch;

	for (patch = false; ; patch = true) {
		memset(m, 0, sizeof(*m));
		rwsem_reader_owned_patch = patch;
		init_rwsem(&m->sem);
		if (pthread_create(&watchdog, NULL, mix_watchdog, m))
			abort();
		race_tasks(MIX_TASKS, two_cpus(), mix_task, m);
		store(m->done, 1);
		pthread_join(watchdog, NULL);
		assert_int_equal(m->violations, 0);
		assert_int_equal(m->progress, MIX_TASKS * MIX_LOOPS);
		assert_true(m->ops[0] && m->ops[1] && m->ops[2] && m->ops[3]);
		assert_released(&m->sem);
		if (patch)
			break;
	}
	free(m);
}

/*
 * Why a waiter slept (struct rwsem_profile's slept[], and for a writer
 * queued[]): one task sleeps once behind a state built by hand, and its
 * reason, and only it, counts 1.  The task is a host thread (no rq: no
 * need_resched), so only the state decides whether a writer spins.
 */
enum sleep_case {
	WRITER_BEHIND_GRANTED,	/* a reader granted asleep, not yet run */
	WRITER_BEHIND_READER,	/* a reader that has run */
	WRITER_BEHIND_WRITER,	/* a writer off its CPU */
	READER_BEHIND_WRITER,
	READER_BEHIND_WAITER_FREE,	/* a queued writer, the lock free */
	READER_BEHIND_WAITER_READER,	/* a queued writer, a reader in */
};

struct sleeper {
	struct rw_semaphore sem;
	bool write;
	struct task_struct *task;
	struct rwsem_profile prof;
};

static void *sleeper_fn(void *arg)
{
	struct sleeper *s = arg;
	struct optimistic_spin_node node;

	task_start(&node, 1);
	memset(&rwsem_profile, 0, sizeof(rwsem_profile));
	store(s->task, current);
	if (s->write) {
		down_write(&s->sem);
		s->prof = rwsem_profile;
		up_write(&s->sem);
	} else {
		down_read(&s->sem);
		s->prof = rwsem_profile;
		up_read(&s->sem);
	}
	return NULL;
}

static bool sleeper_asleep(struct sleeper *s)
{
	struct task_struct *p = load(s->task);

	return p && (load(p->state) & TASK_ASLEEP);
}

static void sleep_case(bool patch, enum sleep_case c,
		       enum rwsem_sleep_reason why, int queue_why)
{
	struct sleeper s = { .write = c <= WRITER_BEHIND_WRITER };
	struct queued_waiter r, w;
	pthread_t tid;
	int i;

	rwsem_reader_owned_patch = patch;
	init_rwsem(&s.sem);
	switch (c) {
	case WRITER_BEHIND_GRANTED:
	case WRITER_BEHIND_READER:
		down_write(&s.sem);
		queue_by_hand(&s.sem, &r, QUEUED_READER);
		up_write(&s.sem);	/* grants r, which does not run */
		assert_true(granted(&r));
		if (c == WRITER_BEHIND_READER)
			rwsem_grant_taken(&s.sem);	/* r has run */
		break;
	case WRITER_BEHIND_WRITER:
		down_write(&s.sem);
		WRITE_ONCE(current->on_cpu, 0);	/* as if switched out */
		break;
	case READER_BEHIND_WRITER:
		down_write(&s.sem);
		break;
	case READER_BEHIND_WAITER_READER:
		down_read(&s.sem);
		/* fall through */
	case READER_BEHIND_WAITER_FREE:
		queue_by_hand(&s.sem, &w, QUEUED_WRITER);
		break;
	}
	pthread_create(&tid, NULL, sleeper_fn, &s);
	assert_true(spin_until(sleeper_asleep(&s)));
	switch (c) {
	case WRITER_BEHIND_GRANTED:
		rwsem_grant_taken(&s.sem);
		/* fall through */
	case WRITER_BEHIND_READER:
		up_read(&s.sem);	/* r leaves: the writer is woken */
		break;
	case WRITER_BEHIND_WRITER:
		WRITE_ONCE(current->on_cpu, 1);
		/* fall through */
	case READER_BEHIND_WRITER:
		up_write(&s.sem);
		break;
	case READER_BEHIND_WAITER_FREE:
		dequeue_by_hand(&s.sem, &w);
		down_write(&s.sem);	/* its release grants the reader */
		up_write(&s.sem);
		break;
	case READER_BEHIND_WAITER_READER:
		dequeue_by_hand(&s.sem, &w);
		up_read(&s.sem);
		break;
	}
	pthread_join(tid, NULL);
	for (i = 0; i < RWSEM_SLEEP_NR; i++)
		if (s.prof.slept[i] != (i == (int)why))
			fail_msg("%s: slept %s %lu times", patch ? "seed" :
				 "v4.6", rwsem_sleep_name[i], s.prof.slept[i]);
	for (i = 0; i < RWSEM_QUEUE_NR; i++)
		if (s.prof.queued[i] != (i == queue_why))
			fail_msg("%s: queued %s %lu times", patch ? "seed" :
				 "v4.6", rwsem_queue_name[i], s.prof.queued[i]);
	assert_released(&s.sem);
}

static void test_sleep_reasons(void **state)
{
	bool patch;

	for (patch = false; ; patch = true) {
		sleep_case(patch, WRITER_BEHIND_GRANTED,
			   RWSEM_SLEEP_WRITE_GRANTED_READER, patch ?
			   RWSEM_QUEUE_NOSPIN_READER_OWNED :
			   RWSEM_QUEUE_NOSPIN_OWNER_NULL_ACTIVE);
		sleep_case(patch, WRITER_BEHIND_READER,
			   RWSEM_SLEEP_WRITE_READER, patch ?
			   RWSEM_QUEUE_NOSPIN_READER_OWNED :
			   RWSEM_QUEUE_NOSPIN_OWNER_NULL_ACTIVE);
		sleep_case(patch, WRITER_BEHIND_WRITER,
			   RWSEM_SLEEP_WRITE_WRITER,
			   RWSEM_QUEUE_NOSPIN_OWNER_OFF_CPU);
		sleep_case(patch, READER_BEHIND_WRITER,
			   RWSEM_SLEEP_READ_WRITER, -1);
		sleep_case(patch, READER_BEHIND_WAITER_FREE,
			   RWSEM_SLEEP_READ_WAITER_FREE, -1);
		sleep_case(patch, READER_BEHIND_WAITER_READER,
			   RWSEM_SLEEP_READ_WAITER_READERS, -1);
		if (patch)
			break;
	}
}

/*
 * The v4.6 rows' wait_lock is what their kernels (4.6; 4.8 for the
 * seed) spun on, v4.6's queued spinlock: set up through each row, it
 * says so, and taking it sets the queued lock's locked byte.
 */
static void test_wait_lock_is_the_rows_kernels(void **state)
{
	const struct rwsem_variant *rv;
	struct rwsem_storage s;
	struct rw_semaphore *sem = (struct rw_semaphore *)&s;
	int i, n = 0;

	for_each_variant(rv, i, &rwsem_variants) {
		if (rv->ops != &rwsem_v4_6_ops)
			continue;
		rv->ops->init(&s);
		assert_int_equal(sem->wait_lock.kind, SPIN_QUEUED_V4_6);
		spin_lock(&sem->wait_lock);
		assert_int_equal(atomic_read(&sem->wait_lock.q.val),
				 _Q_LOCKED_VAL);
		spin_unlock(&sem->wait_lock);
		assert_false(spin_is_locked(&sem->wait_lock));
		n++;
	}
	assert_int_equal(n, 2);
	kscale_variant_locks(&rwsem_variants.rows[0]);
}

static int setup(void **state)
{
	test_machine(&machine, 8, 2);
	task_start(&main_node, 0);
	/* every rwsem here is v4.6's: its row's lock (rows[0], "v4.6") */
	kscale_variant_locks(&rwsem_variants.rows[0]);
	return 0;
}

int main(void)
{
	const char *only = getenv("RWSEM_TEST");	/* a glob: one test */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_wait_lock_is_the_rows_kernels),
		cmocka_unit_test(test_owner_set_where_each_version_sets_it),
		cmocka_unit_test(test_woken_readers_are_marked_owners),
		cmocka_unit_test(test_mutual_exclusion_and_no_lost_wakeup),
		cmocka_unit_test(test_osq_grants_one_spinner_at_a_time),
		cmocka_unit_test(test_handoff_grants_leading_readers_at_once),
		cmocka_unit_test(test_writer_spins_behind_running_writer),
		cmocka_unit_test(test_spin_stops_when_owner_sleeps),
		cmocka_unit_test(test_spin_continues_while_owner_unset),
		cmocka_unit_test(test_spin_stops_when_readers_take_over),
		cmocka_unit_test(test_reader_mark_stops_spinning_on_free_lock),
		cmocka_unit_test(test_no_spin_on_reader_owned_lock),
		cmocka_unit_test(test_batched_grant_to_sleeping_readers),
		cmocka_unit_test(test_downgrade_grants_waiting_readers),
		cmocka_unit_test(test_queueing_writer_wakes_readers_ahead),
		cmocka_unit_test(test_reader_grant_undone_when_writer_steals),
		cmocka_unit_test(test_osq_unqueue_with_successor),
		cmocka_unit_test(test_trylock_under_contention),
		cmocka_unit_test(test_random_mix_oversubscribed),
		cmocka_unit_test(test_sleep_reasons),
	};

	if (only)
		cmocka_set_test_filter(only);
	return cmocka_run_group_tests(tests, setup, NULL);
}
