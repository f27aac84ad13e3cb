// SPDX-License-Identifier: GPL-2.0
/*
 * Validation of lib/kernel under contention: spinlock and mutex mutual
 * exclusion and FIFO tickets, the retrying locks (decb, ia64) past 128
 * waiters, atomic_t sums, per-CPU slots on distinct
 * cache lines.
 *
 * The class of test issue 25 found missing here: memory ordering no test
 * checked.  A lock's release must be a release and its acquisitions
 * (lock, trylock, the wait's last read, a mutex's spin and slow path)
 * acquires, or the section's stores move past the unlock; x86's TSO
 * never shows it, the compiler may.  So every lock is raced through
 * each of its ways in, and the data it protects is plain (not atomic):
 * under ThreadSanitizer (test_primitives_tsan) any of them weakened to
 * relaxed is a data race on that data (tests/mutations/primitives.txt).
 */
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <cmocka.h>

#include "../lib/kernel/atomic.h"
#include "../lib/kernel/delay.h"
#include "../lib/kernel/mutex.h"
#include "../lib/kernel/page_alloc.h"
#include "../lib/kernel/percpu.h"
#include "../lib/kernel/qspinlock.h"
#include "../lib/kernel/spinlock.h"
#include "../lib/kernel/spinlock_decb.h"
#include "../lib/kernel/spinlock_ia64.h"
#include "helpers.h"

#define THREADS		4	/* lock-free races may share CPUs */
#define MAX_THREADS	4
#ifdef KSCALE_SANITIZE
#define LOOPS		2000	/* ThreadSanitizer serialises the race */
#else
#define LOOPS		20000
#endif

static struct topology machine;

/*
 * Work outside the lock, one take in four: the lock is then often free
 * when another thread comes, which takes it on its fast path or trylock
 * straight after this one's release (with none, a waiter takes it in
 * its wait, or the releaser again).
 */
static void outside(int i)
{
	if ((i & 3) == 3)
		ndelay(500);
}

/*
 * A race through one way in at a time: a trylock's acquire between
 * spin_lock()s would order what the releases before it published, and
 * hide a fast path that does not acquire.
 */
/* What every lock's race does inside: plain data, overlaps noted. */
struct section {
	unsigned long count;		/* plain: only the lock protects it */
	int inside;			/* threads in the critical section */
	int overlaps;
};

static void section(struct section *s)
{
	unsigned long v;

	if (__atomic_add_fetch(&s->inside, 1, __ATOMIC_RELAXED) != 1)
		test_note(&s->overlaps);
	v = s->count;
	cpu_relax();
	s->count = v + 1;
	__atomic_sub_fetch(&s->inside, 1, __ATOMIC_RELAXED);
}

struct locked_counter {
	spinlock_t lock;
	bool trylock;			/* taken by spinning on the trylock */
	struct section s;
};

static void hammer_lock(struct test_thread *t)
{
	struct locked_counter *c = t->arg;
	int i;

	for (i = 0; i < LOOPS; i++) {
		if (c->trylock)
			while (!spin_trylock(&c->lock))
				cpu_relax();
		else
			spin_lock(&c->lock);
		section(&c->s);
		spin_unlock(&c->lock);
		outside(i);
	}
}

static void test_spinlock_mutual_exclusion(void **state)
{
	struct locked_counter c = { .lock = __SPIN_LOCK_UNLOCKED };
	int n = test_racers(MAX_THREADS);

	test_race(n, hammer_lock, &c);
	c.trylock = true;
	test_race(n, hammer_lock, &c);
	assert_int_equal(c.s.overlaps, 0);
	assert_int_equal(c.s.count, 2 * n * LOOPS);
	assert_false(spin_is_locked(&c.lock));
}

static void test_spinlock_trylock(void **state)
{
	spinlock_t lock = __SPIN_LOCK_UNLOCKED;

	assert_true(spin_trylock(&lock));
	assert_true(spin_is_locked(&lock));
	assert_false(spin_trylock(&lock));
	spin_unlock(&lock);
	assert_false(spin_is_locked(&lock));
	assert_true(spin_trylock(&lock));
	spin_unlock(&lock);
}

/* 16-bit tickets wrap; the lock must still hand them out in order. */
static void test_spinlock_ticket_wrap(void **state)
{
	spinlock_t lock = { .tickets = { .head = 0xfffe, .tail = 0xfffe } };
	int i;

	for (i = 0; i < 4; i++) {
		spin_lock(&lock);
		assert_true(spin_is_locked(&lock));
		spin_unlock(&lock);
	}
	assert_int_equal(lock.tickets.head, 2);
	assert_int_equal(lock.tickets.tail, 2);
}

/* The queued spinlock's mutual exclusion, both versions. */
struct qlocked_counter {
	struct qspinlock lock;
	bool v4_6;
	bool trylock;
	struct section s;
};

static void hammer_qlock(struct test_thread *t)
{
	struct qlocked_counter *c = t->arg;
	int i;

	for (i = 0; i < LOOPS; i++) {
		if (c->trylock)
			while (!qspin_trylock(&c->lock))
				cpu_relax();
		else
			qspin_lock(&c->lock, c->v4_6);
		section(&c->s);
		qspin_unlock(&c->lock);
		outside(i);
	}
}

static void test_qspinlock_mutual_exclusion(void **state)
{
	int v4_6;

	for (v4_6 = 0; v4_6 < 2; v4_6++) {
		struct qlocked_counter c = { .v4_6 = v4_6 };
		int n = test_racers(MAX_THREADS);

		test_race(n, hammer_qlock, &c);
		c.trylock = true;
		test_race(n, hammer_qlock, &c);
		assert_int_equal(c.s.overlaps, 0);
		assert_int_equal(c.s.count, 2 * n * LOOPS);
		assert_int_equal(atomic_read(&c.lock.val), 0);
	}
}

/*
 * The tail at the CPUs the kernel must encode: (cpu + 1, idx) in bits
 * 18-31 and 16-17, clear of the locked and pending bytes, decoded back.
 */
static void test_qspinlock_tail_encoding(void **state)
{
	static const int cpus[] = { 0, 1, 511, 512, 8191 };
	unsigned int i;
	int idx;

	assert_int_equal(_Q_PENDING_BITS, 8);
	assert_int_equal(_Q_TAIL_OFFSET, 16);
	assert_true(CONFIG_NR_CPUS >= 8192);
	for (i = 0; i < sizeof(cpus) / sizeof(cpus[0]); i++)
		for (idx = 0; idx < _Q_MAX_NODES; idx++) {
			uint32_t tail = encode_tail(cpus[i], idx);

			assert_int_equal(tail & _Q_LOCKED_PENDING_MASK, 0);
			assert_true(tail & _Q_TAIL_MASK);
			assert_int_equal(decode_tail_cpu(tail), cpus[i]);
			assert_int_equal(decode_tail_idx(tail), idx);
		}
	assert_int_equal(encode_tail(511, 0), 512u << 18);
	assert_int_equal(encode_tail(8191, 3), (8192u << 18) | (3u << 16));
}

/* A queued spinlock's ways in, as one test drives them. */
struct qlock_ops {
	void (*lock)(struct qspinlock *lock);
	void (*unlock)(struct qspinlock *lock);
};

#define QUEUE_WAITERS	5

/*
 * The lock, its waiters in the order they came, and the order they took
 * it in; each waiter notes the word it found once it held the lock.
 */
struct queue_run {
	const struct qlock_ops *ops;
	struct qspinlock lock;
	int cpu[QUEUE_WAITERS];		/* the waiters' CPU ids */
	int order[QUEUE_WAITERS];	/* plain: the lock orders it */
	uint32_t held_word[QUEUE_WAITERS];
	int nr_taken;
	int done;
};

static void queue_waiter(struct queue_run *r, int i)
{
	/* smp_processor_id() alone: the tail encodes any CPU id */
	kscale_this_cpu = r->cpu[i];
	r->ops->lock(&r->lock);
	r->held_word[i] = atomic_read(&r->lock.val);
	r->order[r->nr_taken++] = i;
	r->ops->unlock(&r->lock);
	test_note(&r->done);
}

/* Until *word & mask == want, at most 10 s: false if it never was. */
static bool wait_word(int *word, uint32_t mask, uint32_t want)
{
	double end = test_now_ms() + 10000;

	while (((uint32_t)__atomic_load_n(word, __ATOMIC_ACQUIRE) & mask) !=
	       want)
		if (test_now_ms() > end)
			return false;
	return true;
}

struct queue_start {
	struct queue_run *run;
	int i;
	pthread_t tid;
};

static void *queue_thread(void *arg)
{
	struct queue_start *start = arg;

	queue_waiter(start->run, start->i);
	return NULL;
}

/*
 * The holder (this thread, CPU 0) holds the lock while waiter 0 comes
 * and takes the pending bit (0,1,1), then waiters 1.. queue one at a
 * time, each seen as the tail (cpu + 1, 0) before the next comes: CPUs
 * 8191 and 511 among them, so that each decodes the other's tail.  Then
 * the holder lets go: they must take the lock in the order they came,
 * the pending one first, each finding pending clear once it holds it.
 */
static void run_queue_order(const struct qlock_ops *ops)
{
	static const int cpus[QUEUE_WAITERS] = { 1, 8191, 511, 2, 3 };
	static struct queue_run r;
	static struct queue_start start[QUEUE_WAITERS];
	int i, saved_cpu = kscale_this_cpu;

	memset(&r, 0, sizeof(r));
	r.ops = ops;
	memcpy(r.cpu, cpus, sizeof(cpus));
	ops->lock(&r.lock);
	for (i = 0; i < QUEUE_WAITERS; i++) {
		start[i] = (struct queue_start){ &r, i, 0 };
		if (pthread_create(&start[i].tid, NULL, queue_thread,
				   &start[i]))
			abort();
		if (i == 0)
			assert_true(wait_word(&r.lock.val.counter,
					      ~(uint32_t)0, _Q_PENDING_VAL |
					      _Q_LOCKED_VAL));
		else
			assert_true(wait_word(&r.lock.val.counter,
					      _Q_TAIL_MASK,
					      encode_tail(cpus[i], 0)));
	}
	ops->unlock(&r.lock);
	assert_true(wait_word(&r.done, ~(uint32_t)0, QUEUE_WAITERS));
	for (i = 0; i < QUEUE_WAITERS; i++) {
		pthread_join(start[i].tid, NULL);
		assert_int_equal(r.order[i], i);
		assert_int_equal(r.held_word[i] & _Q_LOCKED_PENDING_MASK,
				 _Q_LOCKED_VAL);
	}
	/* the last one claimed the lock as the only one queued */
	assert_int_equal(r.held_word[QUEUE_WAITERS - 1], _Q_LOCKED_VAL);
	assert_int_equal(atomic_read(&r.lock.val), 0);
	kscale_this_cpu = saved_cpu;
}

static void raw_qlock(struct qspinlock *lock)
{
	queued_spin_lock(lock, false);
}

static void raw_qlock_v4_6(struct qspinlock *lock)
{
	queued_spin_lock(lock, true);
}

static const struct qlock_ops qspin_ops = { raw_qlock, queued_spin_unlock };
static const struct qlock_ops qspin_v4_6_ops = {
	raw_qlock_v4_6, queued_spin_unlock,
};

static void test_qspinlock_queue_order(void **state)
{
	run_queue_order(&qspin_ops);
	run_queue_order(&qspin_v4_6_ops);
}

/*
 * The pending path alone: one waiter beside the holder sets pending
 * (0,1,1), takes the lock when it is let go, and clears pending as it
 * does (0,0,1); the lock is free after it.
 */
static void test_qspinlock_pending(void **state)
{
	static const struct qlock_ops *ops[] = { &qspin_ops, &qspin_v4_6_ops };
	static struct queue_run r;
	static struct queue_start start;
	unsigned int k;

	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		memset(&r, 0, sizeof(r));
		r.ops = ops[k];
		r.cpu[0] = 1;
		start = (struct queue_start){ &r, 0, 0 };
		ops[k]->lock(&r.lock);
		if (pthread_create(&start.tid, NULL, queue_thread, &start))
			abort();
		assert_true(wait_word(&r.lock.val.counter, ~(uint32_t)0,
				      _Q_PENDING_VAL | _Q_LOCKED_VAL));
		ops[k]->unlock(&r.lock);
		pthread_join(start.tid, NULL);
		assert_int_equal(r.held_word[0], _Q_LOCKED_VAL);
		assert_int_equal(atomic_read(&r.lock.val), 0);
	}
}

/*
 * The locks whose waiters retry, decb and ia64, each a spinlock_t of its
 * kind as a model's spin_lock_init() makes it.
 */
static void retrying_lock_init(spinlock_t *lock, enum spin_lock_kind kind)
{
	spin_lock_init_kind = kind;
	spin_lock_init(lock);
	spin_lock_init_kind = SPIN_TICKET;
}

/* The free word of each: decb's byte 1, ia64's word 0. */
static void assert_retrying_lock_free(spinlock_t *lock)
{
	assert_false(spin_is_locked(lock));
	if (lock->kind == SPIN_DECB)
		assert_int_equal(lock->decb.slock, 1);
	else
		assert_int_equal(lock->ia64.lock, 0);
}

struct retrying_counter {
	spinlock_t lock;
	bool trylock;			/* the even takes spin on the trylock */
	struct section s;
	int counted_inside;
	unsigned long acquisitions;
};

/*
 * Half the takes through the counting variant, summed after; its counts
 * must not change while the lock is held (they are counted after the
 * release).  Ten times the loops: an idle vCPU can take a millisecond
 * to wake for the race.
 */
static void hammer_retrying(struct test_thread *t)
{
	struct retrying_counter *c = t->arg;
	struct lock_class_stats st = { 0 }, before;
	uint64_t wait = 0;
	int i;

	for (i = 0; i < 10 * LOOPS; i++) {
		before = st;
		if (i & 1)
			wait = spin_lock_account(&c->lock);
		else if (c->trylock)
			while (!spin_trylock(&c->lock))
				cpu_relax();
		else
			spin_lock(&c->lock);
		if (memcmp(&st, &before, sizeof(st)))
			test_note(&c->counted_inside);
		section(&c->s);
		if (i & 1)
			spin_unlock_account(&c->lock, &st, wait);
		else
			spin_unlock(&c->lock);
		outside(i);
	}
	if (!st.contentions != !st.waittime)
		test_note(&c->counted_inside);
	__atomic_fetch_add(&c->acquisitions, st.acquisitions, __ATOMIC_RELAXED);
}

static const enum spin_lock_kind retrying_kinds[] = { SPIN_DECB, SPIN_IA64 };
#define NR_RETRYING	(sizeof(retrying_kinds) / sizeof(retrying_kinds[0]))

static void test_retrying_spinlock_mutual_exclusion(void **state)
{
	unsigned int k;

	for (k = 0; k < NR_RETRYING; k++) {
		struct retrying_counter c = { 0 };
		int n = test_racers(MAX_THREADS);

		retrying_lock_init(&c.lock, retrying_kinds[k]);
		test_race(n, hammer_retrying, &c);
		c.trylock = true;
		test_race(n, hammer_retrying, &c);
		assert_int_equal(c.s.overlaps, 0);
		assert_int_equal(c.counted_inside, 0);
		assert_int_equal(c.s.count, 2 * n * 10 * LOOPS);
		assert_int_equal(c.acquisitions, 2 * n * 10 * LOOPS / 2);
		assert_retrying_lock_free(&c.lock);
	}
}

/*
 * More waiters than a byte counts, by construction: while the lock is
 * held, each of the Altix's 512 CPUs arriving makes its first take and
 * fails.  decb's failed decbs each leave their -1: past 128 the byte
 * wraps positive and the 129th arrival takes the held lock (x86 2.6.7's
 * own bug, the reason the Altix's runs do not spin on it).  ia64's failed
 * cmpxchgs write nothing: every arrival fails, the word stays 1, and
 * after the release one take wins and the next fails.
 */
static void test_retrying_spinlock_past_128_waiters(void **state)
{
	decb_spinlock_t decb = __DECB_SPIN_LOCK_UNLOCKED;
	ia64_spinlock_t ia64 = __IA64_SPIN_LOCK_UNLOCKED;
	int i;

	decb_spin_lock(&decb);
	for (i = 0; i < 128; i++)
		assert_false(__decb_try(&decb));
	assert_int_equal(decb.slock, -128);
	assert_true(__decb_try(&decb));		/* a second holder */
	assert_int_equal(decb.slock, 127);
	decb_spin_unlock(&decb);

	ia64_spin_lock(&ia64);
	for (i = 0; i < 512; i++)
		assert_false(__ia64_cmpxchg_acq(&ia64));
	assert_int_equal(ia64.lock, 1);
	ia64_spin_unlock(&ia64);
	assert_true(ia64_spin_trylock(&ia64));
	assert_false(__ia64_cmpxchg_acq(&ia64));
	ia64_spin_unlock(&ia64);
	assert_int_equal(ia64.lock, 0);
}

struct mutex_counter {
	struct mutex mutex;
	struct section s;
};

/*
 * As model tasks, two a CPU: waiters spin on a running owner, sleep on
 * one switched out, take it on the fast path or after a wake-up.
 */
static void hammer_mutex(struct test_thread *t)
{
	struct mutex_counter *c = t->arg;
	int i;

	for (i = 0; i < LOOPS; i++) {
		mutex_lock(&c->mutex);
		section(&c->s);
		mutex_unlock(&c->mutex);
		cond_resched();
	}
}

static void test_mutex_mutual_exclusion(void **state)
{
	struct mutex_counter c = { 0 };
	int cpus = test_task_cpus(), n = 2 * cpus;

	mutex_init(&c.mutex);
	test_race_tasks(n, cpus, hammer_mutex, &c);
	assert_int_equal(c.s.overlaps, 0);
	assert_int_equal(c.s.count, (unsigned long)n * LOOPS);
	assert_int_equal(atomic_read(&c.mutex.count), 1);
	assert_true(list_empty(&c.mutex.wait_list));
}

/*
 * The slow path's first xchg taking a lock that its last holder released
 * on the fast path, with no wait_lock between them: 2.6.32's
 * __mutex_unlock_slowpath() sets count to 1, a third task takes and
 * releases the mutex on its fast paths, and only then does the waiter
 * (queued on wait_lock behind the slow unlock) xchg it.  Only that xchg
 * orders the third task's section before the waiter's; the races above
 * reach this window too rarely to show a relaxed one.  Played step by
 * step: thread 0 is the slow unlock (holding wait_lock), 1 the waiter,
 * 2 the fast-path holder; the steps pass by relaxed flags, which order
 * nothing for ThreadSanitizer.
 */
struct mutex_window {
	struct mutex mutex;
	struct task_struct switched_out;	/* the owner the waiter finds */
	int step;
	unsigned long data;			/* plain: the mutex orders it */
};

static void mutex_window_wait(struct mutex_window *w, int step)
{
	while (__atomic_load_n(&w->step, __ATOMIC_RELAXED) < step)
		sched_yield();
}

static void mutex_window_step(struct mutex_window *w, int step)
{
	__atomic_store_n(&w->step, step, __ATOMIC_RELAXED);
}

static void mutex_window_role(struct test_thread *t)
{
	struct mutex_window *w = t->arg;
	spinlock_t *wait_lock = &w->mutex.wait_lock;
	uint32_t v;

	switch (t->id) {
	case 0:
		spin_lock(wait_lock);
		mutex_window_step(w, 1);
		do {	/* the waiter has taken its ticket */
			sched_yield();
			v = __atomic_load_n(&wait_lock->head_tail,
					    __ATOMIC_RELAXED);
		} while ((uint16_t)((v >> TICKET_SHIFT) - v) < 2);
		atomic_set(&w->mutex.count, 1);
		mutex_clear_owner(&w->mutex);
		mutex_window_step(w, 2);
		mutex_window_wait(w, 3);
		spin_unlock(wait_lock);
		break;
	case 1:
		mutex_window_wait(w, 1);
		mutex_lock(&w->mutex);
		w->data++;
		mutex_unlock(&w->mutex);
		break;
	default:
		mutex_window_wait(w, 2);
		mutex_lock(&w->mutex);
		w->data++;
		mutex_unlock(&w->mutex);
		mutex_window_step(w, 3);
	}
}

static void test_mutex_slowpath_after_fastpath_release(void **state)
{
	struct mutex_window w = { 0 };
	enum spin_lock_kind kind = spin_lock_init_kind;

	spin_lock_init_kind = SPIN_TICKET;	/* 2.6.32's, as the step 0 reads */
	mutex_init(&w.mutex);
	spin_lock_init_kind = kind;
	/* Held by a task switched out: the waiter does not spin. */
	atomic_set(&w.mutex.count, 0);
	w.mutex.owner = &w.switched_out;
	test_race(3, mutex_window_role, &w);
	assert_int_equal(w.data, 2);
	assert_int_equal(atomic_read(&w.mutex.count), 1);
	assert_true(list_empty(&w.mutex.wait_list));
}

static void test_retrying_spinlock_trylock(void **state)
{
	spinlock_t lock;
	unsigned int k;

	for (k = 0; k < NR_RETRYING; k++) {
		retrying_lock_init(&lock, retrying_kinds[k]);
		assert_true(spin_trylock(&lock));
		assert_true(spin_is_locked(&lock));
		assert_false(spin_trylock(&lock));
		spin_unlock(&lock);
		assert_false(spin_is_locked(&lock));
		spin_lock(&lock);
		assert_false(spin_trylock(&lock));
		spin_unlock(&lock);
		assert_retrying_lock_free(&lock);
	}
}

/*
 * The first write to a take's statistics, trapped: the stats sit alone on
 * a read-only page and the fault handler notes whether the lock was still
 * held, then lets the write through.
 */
static spinlock_t *stats_lock;
static int stats_writes, stats_writes_held;
static void *stats_page;

static void stats_write_fault(int sig, siginfo_t *si, void *uc)
{
	stats_writes++;
	stats_writes_held += spin_is_locked(stats_lock);
	mprotect(stats_page, PAGE_SIZE, PROT_READ | PROT_WRITE);
}

static void test_retrying_stats_counted_after_release(void **state)
{
	struct sigaction sa = { .sa_sigaction = stats_write_fault,
				.sa_flags = SA_SIGINFO }, old;
	spinlock_t lock;
	struct lock_class_stats *st;
	unsigned int k;

	for (k = 0; k < NR_RETRYING; k++) {
		retrying_lock_init(&lock, retrying_kinds[k]);
		stats_page = aligned_alloc(PAGE_SIZE, PAGE_SIZE);
		memset(stats_page, 0, PAGE_SIZE);
		st = stats_page;
		stats_lock = &lock;
		stats_writes = stats_writes_held = 0;
		assert_int_equal(sigaction(SIGSEGV, &sa, &old), 0);
		assert_int_equal(spin_lock_account(&lock), 0);
		assert_int_equal(mprotect(stats_page, PAGE_SIZE, PROT_READ), 0);
		spin_unlock_account(&lock, st, 100);	/* contended */
		sigaction(SIGSEGV, &old, NULL);
		assert_int_equal(stats_writes, 1);
		assert_int_equal(stats_writes_held, 0);
		assert_int_equal(st->acquisitions, 1);
		assert_int_equal(st->contentions, 1);
		assert_int_equal(st->waittime, 100);
		free(stats_page);
	}
}

static void hammer_atomic(struct test_thread *t)
{
	atomic_t *v = t->arg;
	int i;

	for (i = 0; i < LOOPS; i++) {
		atomic_inc(v);
		atomic_dec(v);
		atomic_inc(v);
	}
}

static void test_atomic_sum(void **state)
{
	atomic_t v = ATOMIC_INIT(0);

	test_race(THREADS, hammer_atomic, &v);
	assert_int_equal(atomic_read(&v), THREADS * LOOPS);
	assert_int_equal(cmpxchg(&v.counter, THREADS * LOOPS, 7),
			 THREADS * LOOPS);
	assert_int_equal(cmpxchg(&v.counter, 0, 9), 7);
	assert_int_equal(atomic_read(&v), 7);
}

struct pcp {
	int count;
};

static void test_percpu_slots_on_distinct_lines(void **state)
{
	struct pcp __percpu *p = alloc_percpu(struct pcp);
	uintptr_t a, b;
	int cpu, other;

	for_each_possible_cpu(cpu) {
		a = (uintptr_t)per_cpu_ptr(p, cpu);
		assert_int_equal(a % SMP_CACHE_BYTES, 0);
		assert_int_equal(per_cpu_ptr(p, cpu)->count, 0);
		for_each_possible_cpu(other) {
			b = (uintptr_t)per_cpu_ptr(p, other);
			if (other != cpu)
				assert_true(a / SMP_CACHE_BYTES !=
					    b / SMP_CACHE_BYTES);
		}
	}
	free_percpu(p);
}

static int wrong_cpu;

static void hammer_this_cpu(struct test_thread *t)
{
	struct pcp __percpu *p = t->arg;
	int i;

	if (smp_processor_id() != t->id)
		__atomic_store_n(&wrong_cpu, 1, __ATOMIC_RELAXED);
	for (i = 0; i < LOOPS; i++)
		this_cpu_inc(this_cpu_ptr(p)->count);
}

static void test_this_cpu_counts_stay_local(void **state)
{
	struct pcp __percpu *p = alloc_percpu(struct pcp);
	int cpu;

	test_race(THREADS, hammer_this_cpu, p);
	assert_int_equal(wrong_cpu, 0);
	for_each_possible_cpu(cpu)
		assert_int_equal(per_cpu(p, cpu).count,
				 cpu < THREADS ? LOOPS : 0);
	free_percpu(p);
}

static void test_node_of_this_cpu(void **state)
{
	kscale_set_cpu(7);
	assert_int_equal(smp_processor_id(), 7);
	assert_int_equal(numa_node_id(), 1);
	kscale_set_cpu(0);
	assert_int_equal(numa_node_id(), 0);
}

/*
 * The orders the slow paths store with, as test_primitives_tsan cannot
 * see them: the MCS hand-off (the head's store of 1 into its successor's
 * node) publishes set_locked() to the successor, which then reads the
 * word; written relaxed, a weaker CPU lets the successor see the lock
 * free and take it too.  x86 and ThreadSanitizer never show it, so a
 * copy of qspinlock.c is built here with every __atomic_store_n() noted
 * first (a macro is not expanded inside itself), under other names.
 */
static int audit_handoffs, audit_relaxed_handoffs;

static void audit_store(const volatile void *p, long v, int order);

#define queued_spin_lock_slowpath	audit_queued_spin_lock_slowpath
#define queued_spin_lock_slowpath_v4_6	audit_queued_spin_lock_slowpath_v4_6
void audit_queued_spin_lock_slowpath(struct qspinlock *lock, uint32_t val);
void audit_queued_spin_lock_slowpath_v4_6(struct qspinlock *lock,
					  uint32_t val);
#define __atomic_store_n(p, v, m) ({					\
	audit_store((p), (long)(v), (m));				\
	__atomic_store_n((p), (v), (m));				\
})
#include "../lib/kernel/qspinlock.c"
#undef __atomic_store_n
#undef queued_spin_lock_slowpath
#undef queued_spin_lock_slowpath_v4_6

/* A store of 1 into a node's locked: the hand-off. */
static void audit_store(const volatile void *p, long v, int order)
{
	uintptr_t off = (uintptr_t)p - (uintptr_t)qnodes;

	if ((uintptr_t)p < (uintptr_t)qnodes || off >= sizeof(qnodes) ||
	    off % sizeof(qnodes[0]) % sizeof(struct qnode) !=
	    offsetof(struct mcs_spinlock, locked) || v != 1)
		return;
	test_note(&audit_handoffs);
	if (order != __ATOMIC_RELEASE && order != __ATOMIC_SEQ_CST)
		test_note(&audit_relaxed_handoffs);
}

/* queued_spin_lock(), its slow paths the audited copy's */
static void audit_lock(struct qspinlock *lock)
{
	int val = 0;

	if (!__atomic_compare_exchange_n(&lock->val.counter, &val,
					 _Q_LOCKED_VAL, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		audit_queued_spin_lock_slowpath(lock, val);
}

static void audit_lock_v4_6(struct qspinlock *lock)
{
	int val = 0;

	if (!__atomic_compare_exchange_n(&lock->val.counter, &val,
					 _Q_LOCKED_VAL, false,
					 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		audit_queued_spin_lock_slowpath_v4_6(lock, val);
}

static void test_qspinlock_handoff_releases(void **state)
{
	static const struct qlock_ops audit_ops = {
		audit_lock, queued_spin_unlock,
	};
	static const struct qlock_ops audit_v4_6_ops = {
		audit_lock_v4_6, queued_spin_unlock,
	};

	run_queue_order(&audit_ops);
	run_queue_order(&audit_v4_6_ops);
	/* waiters 1..3 each hand the head on */
	assert_int_equal(audit_handoffs, 2 * (QUEUE_WAITERS - 2));
	assert_int_equal(audit_relaxed_handoffs, 0);
}

static int setup(void **state)
{
	test_machine(&machine, 8, 2);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spinlock_mutual_exclusion),
		cmocka_unit_test(test_spinlock_trylock),
		cmocka_unit_test(test_spinlock_ticket_wrap),
		cmocka_unit_test(test_qspinlock_tail_encoding),
		cmocka_unit_test(test_qspinlock_pending),
		cmocka_unit_test(test_qspinlock_queue_order),
		cmocka_unit_test(test_qspinlock_handoff_releases),
		cmocka_unit_test(test_qspinlock_mutual_exclusion),
		cmocka_unit_test(test_retrying_spinlock_mutual_exclusion),
		cmocka_unit_test(test_retrying_spinlock_past_128_waiters),
		cmocka_unit_test(test_mutex_mutual_exclusion),
		cmocka_unit_test(test_mutex_slowpath_after_fastpath_release),
		cmocka_unit_test(test_retrying_spinlock_trylock),
		cmocka_unit_test(test_retrying_stats_counted_after_release),
		cmocka_unit_test(test_atomic_sum),
		cmocka_unit_test(test_percpu_slots_on_distinct_lines),
		cmocka_unit_test(test_this_cpu_counts_stay_local),
		cmocka_unit_test(test_node_of_this_cpu),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
