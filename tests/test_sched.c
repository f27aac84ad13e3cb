// SPDX-License-Identifier: GPL-2.0
/*
 * Validation of the model scheduler (lib/kernel/sched.h): more tasks than
 * CPUs, and none of them switched out where the kernel would not switch
 * it.  A spinlock holder never lets another task onto its CPU; a task
 * asleep on a timer lets the others run and gets its CPU back from a
 * task that never sleeps; a thousand tasks on the CPUs there are all make
 * progress; a wake-up onto a busy CPU sets its need_resched, and one that
 * races a sleeper's last look at its condition is not lost; on_cpu is
 * false for a task that sleeps or waits for its turn; scheduling while
 * atomic is a BUG; a task the host put to sleep while atomic gets its
 * CPU back from the one the host ran instead, and the sleep is counted.
 * A task asleep on a timer or the model disk, alone on its CPU, runs again
 * when it wakes even where a host thread at the tasks' priority that never
 * yields shares the CPU (another process's model task alone on its CPU),
 * round after round of task sets started and stopped.  With
 * sched_wake_poll a sleeper polls instead of waiting on its futex (its
 * state says TASK_POLLING) and runs sched_wake_poll_ns after its wake-up,
 * not before.
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "../lib/harness/kscale.h"
#include "../lib/kernel/blkdev.h"
#include "../lib/kernel/delay.h"
#include "../lib/kernel/mutex.h"
#include "../lib/kernel/percpu.h"
#include "../lib/kernel/sched.h"
#include "../lib/kernel/spinlock.h"
#include "../lib/sys/affinity.h"
#include "../lib/sys/futex.h"
#include "helpers.h"

#ifdef KSCALE_SANITIZE
#define LOOPS		2000	/* ThreadSanitizer serialises the race */
#define MANY_TASKS	100
#else
#define LOOPS		20000
#define MANY_TASKS	1000
#endif
#define TASKS_PER_CPU	4
#define GIVE_UP_MS	20000	/* no progress by then: a task was starved */

static struct topology machine;

/*
 * Not root, or ThreadSanitizer (lib/kernel/sched.c): tasks are SCHED_OTHER
 * and the host may switch them anywhere, so there is nothing to check.
 */
static void need_fifo(void)
{
	if (!sched_fifo) {
		print_message("skipped: model tasks are not SCHED_FIFO here\n");
		skip();
	}
}

/* Tasks share CPUs, so a test that must end bounds its wait. */
static bool gave_up(double since_ms)
{
	return test_now_ms() - since_ms > GIVE_UP_MS;
}

struct holders {
	spinlock_t lock[2];
	struct task_struct *holder[CPU_SETSIZE];	/* per CPU, while held */
	int intruders;		/* ran on a CPU whose holder was out */
	unsigned long sections;
};

/* Where a task starts or resumes running: its CPU must have no holder. */
static void check_cpu(struct holders *h)
{
	struct task_struct *held = READ_ONCE(h->holder[smp_processor_id()]);

	if (held && held != current)
		test_note(&h->intruders);
}

static void holder_task(struct test_thread *t)
{
	struct holders *h = t->arg;
	uint64_t rng = 0x9e3779b97f4a7c15ULL * (t->id + 1);
	spinlock_t *lock;
	int n;

	for (n = 0; n < LOOPS; n++) {
		check_cpu(h);
		lock = &h->lock[kscale_rand64(&rng) & 1];
		spin_lock(lock);
		WRITE_ONCE(h->holder[smp_processor_id()], current);
		/* the tick and wake-ups land here, but must wait */
		ndelay(kscale_rand64(&rng) % 20000);
		cond_resched();
		__atomic_fetch_add(&h->sections, 1, __ATOMIC_RELAXED);
		WRITE_ONCE(h->holder[smp_processor_id()], NULL);
		spin_unlock(lock);
		if (!(kscale_rand64(&rng) % 64))
			schedule_timeout_ns(kscale_rand64(&rng) % 20000);
		check_cpu(h);
		cond_resched();
	}
}

static void test_spinlock_holder_is_never_switched_out(void **state)
{
	int cpus = test_task_cpus(), n = TASKS_PER_CPU * cpus;
	struct holders *h;

	need_fifo();
	h = calloc(1, sizeof(*h));
	spin_lock_init(&h->lock[0]);
	spin_lock_init(&h->lock[1]);
	test_race_tasks(n, cpus, holder_task, h);
	assert_int_equal(h->intruders, 0);
	assert_int_equal(h->sections, (unsigned long)n * LOOPS);
	free(h);
}

struct sleeper {
	int asleep;		/* the sleeper is in schedule_timeout_ns() */
	int done;		/* the sleeper woke and ran again */
	unsigned long ops_while_asleep;
	int timed_out;
};

/* Task 0 sleeps on a timer; task 1, on the same CPU, never sleeps. */
static void sleeper_task(struct test_thread *t)
{
	struct sleeper *s = t->arg;
	double start = test_now_ms();

	if (t->id == 0) {
		WRITE_ONCE(s->asleep, 1);
		schedule_timeout_ns(20 * 1000 * 1000);
		WRITE_ONCE(s->asleep, 0);
		WRITE_ONCE(s->done, 1);
		return;
	}
	while (!READ_ONCE(s->done)) {
		if (READ_ONCE(s->asleep))
			s->ops_while_asleep++;
		cond_resched();
		if (gave_up(start)) {
			s->timed_out = 1;
			return;
		}
	}
}

static void test_timer_sleep_lets_others_run_then_returns(void **state)
{
	struct sleeper s = { 0 };

	need_fifo();
	test_race_tasks(2, 1, sleeper_task, &s);	/* both on CPU 0 */
	assert_true(s.ops_while_asleep > 0);
	assert_int_equal(s.timed_out, 0);
	assert_int_equal(s.done, 1);
}

struct crowd {
	struct mutex mutex;
	spinlock_t lock;
	unsigned long *ops;		/* [MANY_TASKS], per task */
	unsigned long in_mutex, in_spinlock;
	int behind;			/* tasks below the goal */
	int timed_out;
};

#define CROWD_GOAL	10

/* Every task works until every task has done CROWD_GOAL operations. */
static void crowd_task(struct test_thread *t)
{
	struct crowd *c = t->arg;
	double start = test_now_ms();

	while (READ_ONCE(c->behind)) {
		if (t->id & 1) {
			mutex_lock(&c->mutex);
			c->in_mutex++;
			mutex_unlock(&c->mutex);
		} else {
			spin_lock(&c->lock);
			c->in_spinlock++;
			spin_unlock(&c->lock);
		}
		if (++c->ops[t->id] == CROWD_GOAL)
			__atomic_fetch_sub(&c->behind, 1, __ATOMIC_RELAXED);
		cond_resched();
		if (gave_up(start)) {
			test_note(&c->timed_out);
			return;
		}
	}
}

static void test_a_thousand_tasks_all_make_progress(void **state)
{
	struct crowd c = { .behind = MANY_TASKS };
	int i;

	need_fifo();	/* SCHED_OTHER ticket waiters collapse, as in issue 8 */
	c.ops = calloc(MANY_TASKS, sizeof(*c.ops));
	mutex_init(&c.mutex);
	spin_lock_init(&c.lock);
	sched_set_slice_ns(100 * 1000, 1);
	test_race_tasks(MANY_TASKS, test_task_cpus(), crowd_task, &c);
	sched_set_slice_ns(0, 1);
	assert_int_equal(c.timed_out, 0);
	for (i = 0; i < MANY_TASKS; i++)
		assert_true(c.ops[i] >= CROWD_GOAL);
	assert_true(c.in_mutex + c.in_spinlock >= MANY_TASKS * CROWD_GOAL);
	assert_int_equal(c.mutex.count.counter, 1);
}

struct wakeup {
	struct task_struct *sleeper;
	struct task_struct *runner;
	int runner_saw;			/* need_resched() after the wake-up */
	int queued_on_cpu;		/* a queued task's on_cpu, sampled */
	int asleep_on_cpu;		/* the sleeper's, while asleep */
	int woken;
	int timed_out;
};

/*
 * On one CPU: task 0 sleeps in schedule(); task 1 runs without a
 * preemption point until need_resched(), which only the wake-up of task 0
 * by the main thread can set (the slice is longer than the test).
 */
static void wakeup_task(struct test_thread *t)
{
	struct wakeup *w = t->arg;
	double start = test_now_ms();

	if (t->id == 0) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		WRITE_ONCE(w->sleeper, current);
		schedule();
		WRITE_ONCE(w->woken, 1);
		return;
	}
	WRITE_ONCE(w->runner, current);
	while (!READ_ONCE(w->sleeper))
		yield();
	while (!need_resched()) {
		if (gave_up(start)) {
			w->timed_out = 1;
			return;
		}
	}
	w->runner_saw = 1;
	/* task 0 is queued behind us: runnable, not on the CPU */
	w->queued_on_cpu = READ_ONCE(w->sleeper->on_cpu) +
			   !READ_ONCE(w->woken);
	cond_resched();
}

static void *wake_when_asleep(void *arg)
{
	struct wakeup *w = arg;
	struct task_struct *p;

	/* one asleep in schedule(), the other back on the CPU */
	while (!(p = READ_ONCE(w->sleeper)) || !READ_ONCE(w->runner) ||
	       !(__atomic_load_n(&p->state, __ATOMIC_ACQUIRE) & TASK_ASLEEP) ||
	       !READ_ONCE(w->runner->on_cpu))
		;
	w->asleep_on_cpu = READ_ONCE(p->on_cpu);
	wake_up_process(p);
	return NULL;
}

static void test_wakeup_onto_busy_cpu_sets_need_resched(void **state)
{
	struct wakeup w = { 0 };
	pthread_t waker;

	need_fifo();
	sched_set_slice_ns(60ull * 1000 * 1000 * 1000, 1);
	pthread_create(&waker, NULL, wake_when_asleep, &w);
	test_race_tasks(2, 1, wakeup_task, &w);
	pthread_join(waker, NULL);
	sched_set_slice_ns(0, 1);
	assert_int_equal(w.timed_out, 0);
	assert_int_equal(w.asleep_on_cpu, 0);
	assert_int_equal(w.runner_saw, 1);
	assert_int_equal(w.queued_on_cpu, 1);	/* off the CPU, not woken yet */
	assert_int_equal(w.woken, 1);
}

/*
 * A task alone on its CPU, spinning with preemption off, gets
 * need_resched() once it has run sched_lone_ns alone (sched.h): the
 * kernel's own threads would want the CPU by then; without them a
 * spinner whose wake-up was lost (5.3's reader on a free rwsem whose
 * handoff writer sleeps) spun for good.
 */
static void lone_spinner(struct test_thread *t)
{
	int *saw = t->arg;
	double start = test_now_ms();

	preempt_disable();
	while (!need_resched() && !gave_up(start))
		cpu_relax();
	*saw = need_resched();
	preempt_enable();
	cond_resched();
}

static void test_lone_spinner_gets_need_resched(void **state)
{
	int saw = 0;

	need_fifo();
	sched_lone_ns = SCHED_LONE_NS;
	sched_set_slice_ns(0, 1);	/* wakes the ticks to the new rule */
	test_race_tasks(1, 1, lone_spinner, &saw);
	sched_lone_ns = 0;
	assert_int_equal(saw, 1);
}

/*
 * The store-buffering race of every sleep and wake-up: the sleeper sets
 * its state and then reads the condition, the waker sets the condition
 * and then reads the state (wake_up_process()).  Each needs a full
 * barrier between its store and its load (set_current_state()'s, and
 * try_to_wake_up()'s smp_mb__after_spinlock()), or both may read the old
 * value: the sleeper goes to sleep and the waker sees it running.
 * Round after round the two start together, the waker a random few
 * cycles late; a round lost a wake-up if the sleeper missed the
 * condition and is still TASK_UNINTERRUPTIBLE once the waker is done.
 */
#define SB_ROUNDS	200000

struct store_buffering {
	struct task_struct *sleeper;
	unsigned long go, done;		/* rounds started, sleeper finished */
	unsigned long cond;
	int lost;
};

static void sb_thread(struct test_thread *t)
{
	struct store_buffering *sb = t->arg;
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	struct task_struct *sleeper;
	unsigned long r;
	unsigned int n;

	affinity_pin(t->id);
	if (t->id == 0) {
		smp_store_release(&sb->sleeper, current);
		for (r = 1; r <= SB_ROUNDS; r++) {
			while (__atomic_load_n(&sb->go, __ATOMIC_ACQUIRE) != r)
				;
			set_current_state(TASK_UNINTERRUPTIBLE);
			if (smp_load_acquire(&sb->cond) == r)
				__set_current_state(TASK_RUNNING);
			smp_store_release(&sb->done, r);
		}
		return;
	}
	while (!(sleeper = smp_load_acquire(&sb->sleeper)))
		;
	for (r = 1; r <= SB_ROUNDS; r++) {
		smp_store_release(&sb->go, r);
		for (n = kscale_rand64(&rng) % 64; n; n--)
			barrier();
		smp_store_release(&sb->cond, r);
		wake_up_process(sleeper);
		while (smp_load_acquire(&sb->done) != r)
			;
		if (READ_ONCE(sleeper->state) != TASK_RUNNING)
			sb->lost++;
		WRITE_ONCE(sleeper->state, TASK_RUNNING);
	}
}

static void test_wakeup_races_no_sleeper_into_sleep(void **state)
{
	static struct store_buffering sb;

	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		skip();
	test_race(2, sb_thread, &sb);
	print_message("%d of %d rounds lost their wake-up\n", sb.lost,
		      SB_ROUNDS);
	assert_int_equal(sb.lost, 0);
}

/* In a child: a task that sleeps holding a spinlock must die of it. */
static void test_scheduling_while_atomic_is_a_bug(void **state)
{
	spinlock_t lock = __SPIN_LOCK_UNLOCKED;
	int status;
	pid_t pid = fork();

	if (!pid) {
		if (!freopen("/dev/null", "w", stderr))
			_exit(2);
		sched_task_start(0);
		spin_lock(&lock);
		schedule_timeout_ns(1000);
		_exit(0);
	}
	assert_true(waitpid(pid, &status, 0) == pid);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGABRT);
}

#define IO_TASKS	8
#define IO_DEPTH	2
#define IO_NS		50000000ull

struct io_race {
	struct request_queue q;
	double start_ms[IO_TASKS], end_ms[IO_TASKS];
	double cpu_ms[IO_TASKS];
};

static double thread_cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void reader_task(struct test_thread *t)
{
	struct io_race *r = t->arg;
	double cpu = thread_cpu_ms();

	r->start_ms[t->id] = test_now_ms();
	blk_read_sync(&r->q, IO_NS);
	r->end_ms[t->id] = test_now_ms();
	r->cpu_ms[t->id] = thread_cpu_ms() - cpu;
}

/*
 * 8 reads of 50 ms on a disk of depth 2: each takes its 50 ms, at most 2
 * are serviced at once, so from the first submission to the last
 * completion is at least 4 service times, and no reader spins meanwhile.
 * However late a loaded host starts a reader: at most 6 of them queue
 * (how many do depends on when they come), and none finishes earlier.
 */
static void test_block_device_depth_fifo_asleep(void **state)
{
	struct io_race *r = calloc(1, sizeof(*r));
	double first = 0, last = 0;
	int i;

	blk_queue_init(&r->q, IO_DEPTH);
	test_race_tasks(IO_TASKS, test_task_cpus(), reader_task, r);
	assert_int_equal(r->q.nr_reads, IO_TASKS);
	assert_true(r->q.nr_queued <= IO_TASKS - IO_DEPTH);
	assert_int_equal(r->q.in_flight, 0);
	assert_true(list_empty(&r->q.queued));
	for (i = 0; i < IO_TASKS; i++) {
		if (!i || r->start_ms[i] < first)
			first = r->start_ms[i];
		if (r->end_ms[i] > last)
			last = r->end_ms[i];
		assert_true(r->end_ms[i] - r->start_ms[i] >= IO_NS / 1e6 * 0.99);
#ifndef KSCALE_SANITIZE
		/*
		 * Asleep, not spinning: a few ms of CPU at most (not under
		 * ThreadSanitizer, whose runtime alone took more on CI).
		 */
		assert_true(r->cpu_ms[i] < IO_NS / 1e6 / 4);
#endif
	}
	assert_true(last - first >= IO_TASKS / IO_DEPTH * IO_NS / 1e6 * 0.99);
	free(r);
}

struct host_sleeper {
	spinlock_t lock;
	int holder;		/* -1, or the task inside the section */
	int overlaps;		/* times a task found the other inside */
	unsigned long sections;
};

/* A section with a host sleep inside, as a page migrated under it. */
static void host_sleeper_section(struct host_sleeper *h, int id)
{
	spin_lock(&h->lock);
	if (READ_ONCE(h->holder) != -1)
		h->overlaps++;
	WRITE_ONCE(h->holder, id);
	usleep(1000);
	h->sections++;
	WRITE_ONCE(h->holder, -1);
	spin_unlock(&h->lock);
}

static void host_sleeper_task(struct test_thread *t)
{
	int n;

	for (n = 0; n < 100; n++) {
		host_sleeper_section(t->arg, t->id);
		cond_resched();
	}
}

/* And a host sleep outside it, as a malloc behind another's mmap. */
static void host_sleeper_outside_task(struct test_thread *t)
{
	int n;

	for (n = 0; n < 100; n++) {
		usleep(1000);
		host_sleeper_section(t->arg, t->id);
		cond_resched();
	}
}

/*
 * In a child: two tasks on one CPU run fn on h.  The child's exit status:
 * 0, or 3 if no host sleep was counted, 4 if the sections overlapped or
 * were lost; fails the test if the child hangs.
 */
static int host_sleepers(void (*fn)(struct test_thread *),
			 struct host_sleeper *h)
{
	double start = test_now_ms();
	int status;
	pid_t pid, done;

	need_fifo();
	pid = fork();
	if (!pid) {
		test_race_tasks(2, 1, fn, h);
		if (h->overlaps || h->sections != 200)
			_exit(4);
		_exit(sched_host_sleeps() ? 0 : 3);
	}
	/* not given back, the child spins for ever on CPU 0 */
	while (!(done = waitpid(pid, &status, WNOHANG)) && !gave_up(start))
		usleep(10000);
	if (!done) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		fail_msg("the task's host sleep was not given back: it hung");
	}
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

/*
 * Each task sleeps in the host inside a spinlock.  The other task gets
 * the CPU while the sleeper holds the lock: under SCHED_FIFO it would
 * spin for ever, so it must give the CPU back, and the sleep is counted.
 */
static void test_host_sleep_in_atomic_section_is_given_back(void **state)
{
	static struct host_sleeper h = { __SPIN_LOCK_UNLOCKED, -1 };
	int status = host_sleepers(host_sleeper_task, &h);

	if (status == 3)
		fail_msg("a host sleep inside a section went uncounted");
	assert_int_equal(status, 0);
}

/*
 * Each task also sleeps in the host before its section.  The other task
 * gets the CPU meanwhile; given back only for a sleeper inside a section,
 * it takes the lock and sleeps inside, the first comes back from its
 * sleep running beside it, without a switch, and spins for ever on the
 * lock (torture's shmem_fault at 128 tasks on 2 CPUs: a malloc behind an
 * mmap).  The CPU stays the sleeper's until it switches out.
 */
static void test_host_sleep_outside_a_section_keeps_the_cpu(void **state)
{
	static struct host_sleeper h = { __SPIN_LOCK_UNLOCKED, -1 };
	int status = host_sleepers(host_sleeper_outside_task, &h);

	if (status == 4)
		fail_msg("two tasks ran on one CPU: the sections overlapped");
	assert_true(status == 0 || status == 3);	/* counted or not */
}

/* A host thread, not a model task, on CPU 0 at the tasks' priority. */
static void host_thread_on_cpu0(void)
{
	struct sched_param sp = { .sched_priority = SCHED_PRIO_TASK };
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set) ||
	    pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp))
		abort();
}

/*
 * A model task that switched out can still be in the host: a page fault
 * before it sleeps, granted mmap_lock for read while it waited.  Task 1
 * holds a spinlock and waits for the host thread on CPU 0 to run, as a
 * holder waits to write-lock that mmap_lock; task 0 spins on the lock on
 * CPU 0, at the host thread's priority.  Unless the spinner gives the
 * host CPU away now and then, the host thread never runs until task 1
 * gives up (torture's shmem_fault/stat_lock at 128 tasks in a 64-vCPU
 * guest hung for good this way).
 */
#define GRANTED_WAIT_MS	2000

struct host_granted {
	spinlock_t lock;
	int state;		/* 1: task 1 holds the lock; 2: task 0 spins */
	uint32_t grant;		/* futex word: the host thread may go */
	int ran;		/* the host thread ran on CPU 0 */
	int ran_in_time;	/* ... while task 1 still waited for it */
};

static void *granted_waiter(void *arg)
{
	struct host_granted *g = arg;

	host_thread_on_cpu0();
	while (!__atomic_load_n(&g->grant, __ATOMIC_ACQUIRE))
		futex(&g->grant, FUTEX_WAIT, 0, NULL);
	__atomic_store_n(&g->ran, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void host_granted_task(struct test_thread *t)
{
	struct host_granted *g = t->arg;
	double start;

	if (t->id == 0) {
		while (READ_ONCE(g->state) != 1)
			cpu_relax();
		WRITE_ONCE(g->state, 2);
		spin_lock(&g->lock);
		spin_unlock(&g->lock);
		return;
	}
	spin_lock(&g->lock);
	WRITE_ONCE(g->state, 1);
	while (READ_ONCE(g->state) != 2)
		cpu_relax();
	usleep(20000);		/* task 0 well into its spin */
	__atomic_store_n(&g->grant, 1, __ATOMIC_RELEASE);
	futex(&g->grant, FUTEX_WAKE, 1, NULL);
	start = test_now_ms();
	while (!__atomic_load_n(&g->ran, __ATOMIC_ACQUIRE) &&
	       test_now_ms() - start < GRANTED_WAIT_MS)
		cpu_relax();
	g->ran_in_time = __atomic_load_n(&g->ran, __ATOMIC_ACQUIRE);
	spin_unlock(&g->lock);
}

static void test_spinner_lets_a_host_thread_leave_the_host(void **state)
{
	static struct host_granted g = { __SPIN_LOCK_UNLOCKED };
	pthread_t waiter;

	need_fifo();
	if (test_task_cpus() < 2) {
		print_message("skipped: needs two CPUs\n");
		skip();
	}
	if (pthread_create(&waiter, NULL, granted_waiter, &g))
		abort();
	usleep(10000);		/* asleep on its futex */
	test_race_tasks(2, 2, host_granted_task, &g);
	pthread_join(waiter, NULL);
	if (!g.ran_in_time)
		fail_msg("the host thread did not run on CPU 0 in %d ms while "
			 "a task spun there", GRANTED_WAIT_MS);
}

/*
 * Task 0 spins on a lock that task 1 holds on CPU 1 until task 0 has
 * spun RELAX_HOLD_MS, giving the host CPU away once a tick of the coarse
 * clock; task 2, on CPU 0 too and always runnable, is switched in at each
 * such yield and gives the CPU back.  (Held a fixed time from task 1's
 * side, the spin was under two ticks in a CI-like run, task 0 reaching
 * the lock late on a busy host, and the test failed.)
 * That is no host sleep in a section: none may be counted (real_lookup
 * at 64 tasks a CPU counted 476-865 a run, and compare marked them).
 */
#define RELAX_HOLD_MS	50
#define RELAX_GIVE_UP_MS 5000	/* task 0 never spun: fail, not hang */
#define RELAX_TRIES	5

struct relaxing {
	spinlock_t lock;
	int held;		/* task 1 holds the lock */
	int done;		/* task 0 took it */
	int spinning;		/* task 0 is about to spin, */
	double spin_start;	/* since then */
	double spun_ms;		/* task 0's wait for it */
};

static void relaxing_task(struct test_thread *t)
{
	struct relaxing *r = t->arg;
	double start;

	if (t->id == 1) {
		spin_lock(&r->lock);
		WRITE_ONCE(r->held, 1);
		start = test_now_ms();
		while ((!__atomic_load_n(&r->spinning, __ATOMIC_ACQUIRE) ||
			test_now_ms() - r->spin_start < RELAX_HOLD_MS) &&
		       test_now_ms() - start < RELAX_GIVE_UP_MS)
			barrier();
		spin_unlock(&r->lock);
	} else if (t->id == 0) {
		while (!READ_ONCE(r->held))
			cond_resched();
		start = test_now_ms();
		r->spin_start = start;
		__atomic_store_n(&r->spinning, 1, __ATOMIC_RELEASE);
		spin_lock(&r->lock);
		r->spun_ms = test_now_ms() - start;
		spin_unlock(&r->lock);
		WRITE_ONCE(r->done, 1);
	} else {
		while (!READ_ONCE(r->done))
			cond_resched();
	}
}

static void test_spinners_yield_is_no_host_sleep(void **state)
{
	static struct relaxing r;
	struct timespec tick;
	unsigned long before;
	int try;

	need_fifo();
	if (test_task_cpus() < 2) {
		print_message("skipped: needs two CPUs\n");
		skip();
	}
	clock_getres(CLOCK_MONOTONIC_COARSE, &tick);
	/*
	 * A host busy with other SCHED_FIFO work can keep task 0 from the
	 * lock until task 1 gives up: such a try spun too little to count,
	 * and the next one runs.
	 */
	for (try = 0; try < RELAX_TRIES; try++) {
		r = (struct relaxing){ .lock = __SPIN_LOCK_UNLOCKED };
		before = sched_host_sleeps();
		test_race_tasks(3, 2, relaxing_task, &r);
		/* long enough for cpu_relax() to have yielded, twice */
		if (r.spun_ms * 1e6 > 2 * tick.tv_nsec)
			break;
		print_message("try %d: task 0 spun %.2f ms only\n", try,
			      r.spun_ms);
	}
	assert_true(r.spun_ms * 1e6 > 2 * tick.tv_nsec);
	assert_int_equal(sched_host_sleeps() - before, 0);
}

#define HOGGED_ROUNDS	3
#define HOGGED_READS	200
#define HOGGED_READ_NS	100000ull
#define HOG_MS		1000	/* then it stops: the run ends, even broken */

struct hogged {
	struct request_queue q;
	int running;		/* the task is in its loop: the hog may spin */
	int hogging;		/* the hog spins: the task may read */
	int done;		/* the task made all its reads */
	int saw_done;		/* ... while the hog still had the CPU */
	unsigned long reads;
};

/*
 * Another process's model task alone on CPU 0: SCHED_FIFO at the tasks'
 * priority, never yielding (its own tick never fires).  It waits for the
 * task to run first, so that it competes with a running task, not with
 * one still becoming one; the task waits for it to spin before its
 * reads, so that every read competes with it however late the host
 * wakes it (a loaded host woke it after all 200 reads).
 */
static void *hog(void *arg)
{
	struct hogged *h = arg;
	double start;

	host_thread_on_cpu0();
	while (!READ_ONCE(h->running))
		usleep(1000);
	WRITE_ONCE(h->hogging, 1);
	start = test_now_ms();
	/* barrier(), not cpu_relax(): a hog that never yields */
	while (!READ_ONCE(h->done) && test_now_ms() - start < HOG_MS)
		barrier();
	h->saw_done = READ_ONCE(h->done);
	return NULL;
}

/* Reads from the model disk and sleeps on a timer, in turns, as I/O does. */
static void hogged_reader(struct test_thread *t)
{
	struct hogged *h = t->arg;
	int i;

	WRITE_ONCE(h->running, 1);
	while (!READ_ONCE(h->hogging))
		schedule_timeout_ns(HOGGED_READ_NS);
	for (i = 0; i < HOGGED_READS; i++) {
		if (i & 1)
			blk_read_sync(&h->q, HOGGED_READ_NS);
		else
			schedule_timeout_ns(HOGGED_READ_NS);
		WRITE_ONCE(h->reads, h->reads + 1);
		cond_resched();		/* the return to user space */
	}
	WRITE_ONCE(h->done, 1);
}

/*
 * The timer's wake-up finds the task's CPU idle in the model: the task
 * runs at once, as in the kernel, and does not yield its CPU to the host
 * thread it interrupted (bench real_lookup --fs-io-us beside another
 * bench: every repetition 0 operations, 0 CPU, until that one's window
 * ended).  200 reads of 0.1 ms take some 25 ms; starved, the task would
 * finish only when the hog gives up after a second.
 */
static void test_timed_sleeper_is_not_starved_by_a_host_thread(void **state)
{
	struct hogged *h;
	pthread_t hog_thread;
	int round;

	need_fifo();
	for (round = 0; round < HOGGED_ROUNDS; round++) {
		h = calloc(1, sizeof(*h));
		blk_queue_init(&h->q, 1);
		if (pthread_create(&hog_thread, NULL, hog, h))
			abort();
		test_race_tasks(1, 1, hogged_reader, h);	/* on CPU 0 */
		pthread_join(hog_thread, NULL);
		print_message("round %d: %lu reads beside the hog, %s\n",
			      round, h->reads, h->saw_done ? "while it spun" :
			      "only after it gave up: starved");
		assert_int_equal(h->saw_done, 1);
		assert_int_equal(h->reads, HOGGED_READS);
		assert_int_equal(h->q.in_flight, 0);
		free(h);
	}
	/* nothing left queued on the CPU from the rounds */
	assert_int_equal(cpu_rq(0)->nr_running, 0);
}

/*
 * Task 0 sleeps in schedule() over and over; task 1 wakes it each time it
 * has been asleep IDLE_NS and times the wake-up, from wake_up_process()
 * to task 0 running again.
 */
#define WAKE_ROUNDS	200
#define IDLE_NS		(200 * 1000)

struct wake_cost {
	struct task_struct *sleeper;
	int round;			/* task 0 is asleep for it, or back */
	int polling;			/* rounds whose sleeper had TASK_POLLING */
	uint64_t woken[WAKE_ROUNDS];	/* ns: the wake_up_process() */
	uint64_t ran[WAKE_ROUNDS];	/* ns: task 0 back from schedule() */
	int stuck;
};

static uint64_t mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static void wake_cost_task(struct test_thread *t)
{
	struct wake_cost *w = t->arg;
	double since = test_now_ms();
	uint32_t st;
	int i;

	for (i = 0; i < WAKE_ROUNDS; i++) {
		if (t->id == 0) {
			WRITE_ONCE(w->sleeper, current);
			set_current_state(TASK_UNINTERRUPTIBLE);
			__atomic_store_n(&w->round, 2 * i + 1, __ATOMIC_SEQ_CST);
			schedule();
			w->ran[i] = mono_ns();
			__atomic_store_n(&w->round, 2 * i + 2, __ATOMIC_SEQ_CST);
			continue;
		}
		while (__atomic_load_n(&w->round, __ATOMIC_SEQ_CST) != 2 * i + 1 ||
		       !((st = __atomic_load_n(&w->sleeper->state,
					       __ATOMIC_SEQ_CST)) & TASK_ASLEEP)) {
			if (test_now_ms() - since > GIVE_UP_MS) {
				test_note(&w->stuck);
				return;
			}
			yield();
		}
		if (st & TASK_POLLING)
			w->polling++;
		/* long enough asleep for its CPU to go idle */
		w->woken[i] = mono_ns() + IDLE_NS;
		while (mono_ns() < w->woken[i])
			cpu_relax();
		wake_up_process(w->sleeper);
		/* back, or already asleep for the next round */
		while (__atomic_load_n(&w->round, __ATOMIC_SEQ_CST) < 2 * i + 2)
			yield();
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The rounds' wake-up latencies, sorted, in w->ran. */
static void wake_cost_run(struct wake_cost *w, bool poll, uint64_t ns)
{
	int i;

	memset(w, 0, sizeof(*w));
	sched_wake_poll = poll;
	sched_wake_poll_ns = ns;
	test_race_tasks(2, test_task_cpus() < 2 ? 1 : 2, wake_cost_task, w);
	sched_wake_poll = false;
	sched_wake_poll_ns = 0;
	assert_int_equal(w->stuck, 0);
	for (i = 0; i < WAKE_ROUNDS; i++)
		w->ran[i] -= w->woken[i];
	qsort(w->ran, WAKE_ROUNDS, sizeof(w->ran[0]), cmp_u64);
	print_message("wake-up by %s: median %.1f us, min %.1f us\n",
		      poll ? "polling" : "futex", w->ran[WAKE_ROUNDS / 2] / 1e3,
		      w->ran[0] / 1e3);
}

static void test_wake_by_polling_after_its_latency(void **state)
{
	static struct wake_cost w;

	wake_cost_run(&w, false, 0);
	assert_int_equal(w.polling, 0);
	wake_cost_run(&w, true, 0);
	assert_int_equal(w.polling, WAKE_ROUNDS);
	wake_cost_run(&w, true, 300 * 1000);
	assert_int_equal(w.polling, WAKE_ROUNDS);
	assert_true(w.ran[0] >= 300 * 1000);
}

static int setup(void **state)
{
	test_machine(&machine, 8, 2);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spinlock_holder_is_never_switched_out),
		cmocka_unit_test(test_timer_sleep_lets_others_run_then_returns),
		cmocka_unit_test(test_a_thousand_tasks_all_make_progress),
		cmocka_unit_test(test_wakeup_onto_busy_cpu_sets_need_resched),
		cmocka_unit_test(test_lone_spinner_gets_need_resched),
		cmocka_unit_test(test_wakeup_races_no_sleeper_into_sleep),
		cmocka_unit_test(test_scheduling_while_atomic_is_a_bug),
		cmocka_unit_test(test_host_sleep_in_atomic_section_is_given_back),
		cmocka_unit_test(test_host_sleep_outside_a_section_keeps_the_cpu),
		cmocka_unit_test(test_spinner_lets_a_host_thread_leave_the_host),
		cmocka_unit_test(test_spinners_yield_is_no_host_sleep),
		cmocka_unit_test(test_block_device_depth_fifo_asleep),
		cmocka_unit_test(test_timed_sleeper_is_not_starved_by_a_host_thread),
		cmocka_unit_test(test_wake_by_polling_after_its_latency),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
