// SPDX-License-Identifier: GPL-2.0
/*
 * Validation of the simulator (lib/sim/sim.h) on a made-up machine whose
 * every cost is a round number: each coherence transition costs what the
 * machine says, requests to one line are served one after another and
 * take effect in that order, the CPU losing a line hits it until the
 * request reaches it whatever queues behind, a
 * spinner parks instead of looping on the host and one on a deadline still
 * sees it pass, sleeps, wake-ups, timers
 * and the model disk take virtual time, a lock keeps its tasks apart
 * (x86's byte lock does not past 128 waiters, ia64's does), a
 * task nobody wakes is reported as a lost wake-up, a wake-up that comes
 * before the sleep is not lost, the code between events costs its basic
 * blocks, two hardware threads of a core share it, the same seed gives
 * the same run, and a migrated task's clock never runs backwards.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../lib/kernel/blkdev.h"
#include "../lib/kernel/delay.h"
#include "../lib/kernel/mutex.h"
#include "../lib/kernel/percpu.h"
#include "../lib/kernel/sched.h"
#include "../lib/kernel/spinlock.h"
#include "../lib/sim/machine.h"
#include "../lib/sim/sim.h"
#include "../lib/sys/clock.h"
#include "helpers.h"

/* 8 CPUs, 2 nodes of 2 cores of 2 threads. */
static const struct sim_machine machine = {
	.name = "test",
	.cpus = 8,
	.nodes = 2,
	.threads_per_core = 2,
	.line_bytes = 64,
	.ghz = 1,
	.hit_ns = 1,
	.line_ns_smt = 10,
	.line_ns_node = 50,
	.line_ns_remote = 200,
	.mem_ns_local = 100,
	.mem_ns_remote = 300,
	.atomic_ns = 5,
	.wake_ns = 1000,
	.ctxsw_ns = 500,
	.work_scale = 1,
};

static struct topology topo;

static void start(uint64_t seed)
{
	char err[128];

	assert_int_equal(sim_init(&machine, seed, err, sizeof(err)), 0);
	sched_set_slice_ns(1000000, machine.cpus);
}

/* Virtual ns from here to at (absolute), spent as work. */
static void wait_until(uint64_t at)
{
	uint64_t now = sim_now();

	if (at > now)
		sim_delay(at - now);
}

struct probe {
	uint64_t at;		/* start at this virtual ns */
	const void *line;
	int kind;
	uint64_t cost;		/* ns the access took */
};

static void probe_task(void *arg)
{
	struct probe *p = arg;
	uint64_t t0;

	wait_until(p->at);
	t0 = sim_now();
	sim_access(p->line, 4, p->kind);
	p->cost = sim_now() - t0;
}

/* One access by cpu at virtual time at: what it cost. */
static uint64_t probe(int cpu, uint64_t at, const void *line, int kind)
{
	struct probe p = { at, line, kind, 0 };

	sim_spawn(cpu, probe_task, &p);
	assert_int_equal(sim_run(UINT64_MAX), 0);
	return p.cost;
}

static void test_coherence_costs(void **state)
{
	static int a __attribute__((aligned(64))), b __attribute__((aligned(64)));
	static int untouched __attribute__((aligned(64)));

	start(1);
	/* a line nobody holds: memory at its home (first touch: node 0) */
	assert_int_equal(probe(0, 1000, &a, SIM_READ), 100);
	assert_int_equal(probe(0, 2000, &a, SIM_READ), 1);
	/* from a sharer: the SMT sibling, then the node's other core */
	assert_int_equal(probe(1, 3000, &a, SIM_READ), 10);
	assert_int_equal(probe(2, 4000, &a, SIM_READ), 50);
	/* a write from the other node: its farthest sharer is remote */
	assert_int_equal(probe(4, 5000, &a, SIM_WRITE), 200);
	assert_int_equal(probe(4, 6000, &a, SIM_WRITE), 1);
	/* Modified on node 1: a read from node 0 and an RMW back on node 1 */
	assert_int_equal(probe(3, 7000, &a, SIM_READ), 200);
	assert_int_equal(probe(6, 8000, &a, SIM_RMW), 200 + 5);
	assert_int_equal(probe(7, 9000, &a, SIM_RMW), 10 + 5);
	assert_int_equal(probe(5, 10000, &a, SIM_RMW), 50 + 5);
	/* a line homed on node 1 by its allocation, read from node 0 */
	sim_set_home(&b, sizeof(b), 1);
	assert_int_equal(probe(0, 11000, &b, SIM_READ), 300);
	/* each access above that moved or filled its line, not the hits */
	assert_int_equal(sim_line_misses(&a), 8);
	assert_int_equal(sim_line_misses(&b), 1);
	assert_int_equal(sim_line_misses(&untouched), 0);
	sim_exit();
}

/*
 * The old owner goes on hitting the line until the request reaches it,
 * half a transfer: a few increments of a counter go by between two.
 */
static void test_owner_hits_until_the_request_arrives(void **state)
{
	static int a __attribute__((aligned(64)));

	start(1);
	assert_int_equal(probe(0, 1000, &a, SIM_WRITE), 100);
	assert_int_equal(probe(4, 2000, &a, SIM_WRITE), 200);
	assert_int_equal(probe(0, 2099, &a, SIM_WRITE), 1);
	assert_int_equal(probe(0, 2200, &a, SIM_WRITE), 200);
	sim_exit();
}

static void read_at(void *arg)
{
	struct probe *p = arg;

	wait_until(p->at);
	sim_access(p->line, 4, SIM_READ);
	p->cost = sim_now();
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Seven readers of a line written on node 1 are served one at a time. */
static void test_requests_to_a_line_queue(void **state)
{
	static int a __attribute__((aligned(64)));
	struct probe p[7];
	uint64_t done[7];
	int i;

	start(1);
	probe(4, 1000, &a, SIM_WRITE);
	for (i = 0; i < 7; i++) {
		p[i] = (struct probe){ .at = 5000, .line = &a };
		sim_spawn(i < 4 ? i : i + 1, read_at, &p[i]);
	}
	assert_int_equal(sim_run(UINT64_MAX), 0);
	for (i = 0; i < 7; i++)
		done[i] = p[i].cost;
	qsort(done, 7, sizeof(done[0]), cmp_u64);
	/* the first from the owner, then each from a sharer, in turn */
	assert_true(done[0] >= 5000 + 10);
	for (i = 1; i < 7; i++)
		assert_true(done[i] - done[i - 1] >= 10);
	assert_true(done[6] - 5000 >= 200 + 6 * 10);
	sim_exit();
}

/*
 * The window is the losing CPU's: two more requests queued behind the one
 * that takes the line do not end it.
 */
static void test_owner_window_survives_a_queue(void **state)
{
	static int a __attribute__((aligned(64)));

	start(1);
	assert_int_equal(probe(0, 1000, &a, SIM_WRITE), 100);
	/* from node 0 to CPU 4: the request reaches CPU 0 at 2100 */
	assert_int_equal(probe(4, 2000, &a, SIM_WRITE), 200);
	/* behind it, 4's sibling (10 ns), then 5's node (50 ns) */
	assert_int_equal(probe(5, 2010, &a, SIM_WRITE), 190 + 10);
	assert_int_equal(probe(6, 2020, &a, SIM_WRITE), 190 + 50);
	assert_int_equal(probe(0, 2099, &a, SIM_WRITE), 1);
	sim_exit();
}

struct rmw {
	uint64_t at;		/* start at this virtual ns */
	int *v;
	int seen;		/* the value it changed */
	uint64_t done;
};

static void rmw_at(void *arg)
{
	struct rmw *r = arg;

	wait_until(r->at);
	sim_access(r->v, sizeof(*r->v), SIM_RMW);
	r->seen = (*r->v)++;
	r->done = sim_now();
}

/*
 * An access takes effect when the line serves it, not when it is asked
 * for: three CPUs queue for the line CPU 0 holds, and CPU 0, asking after
 * them but still in its window, changes it first; they change it in the
 * order they are served, each after the one before.
 */
static void test_effect_in_service_order(void **state)
{
	static int v __attribute__((aligned(64)));
	static const int cpu[4] = { 4, 5, 2, 0 };
	struct rmw r[4] = { { 2000 }, { 2010 }, { 2020 }, { 2050 } };
	int i;

	start(1);
	probe(0, 1000, &v, SIM_WRITE);
	for (i = 0; i < 4; i++) {
		r[i].v = &v;
		sim_spawn(cpu[i], rmw_at, &r[i]);
	}
	assert_int_equal(sim_run(UINT64_MAX), 0);
	/* CPU 0's window lasts until 2100: a hit and a locked add */
	assert_int_equal(r[3].seen, 0);
	assert_int_equal(r[3].done, 2050 + 1 + 5);
	/* 200 ns to CPU 4, 10 to its sibling, 200 to CPU 2 on node 0 */
	assert_int_equal(r[0].seen, 1);
	assert_int_equal(r[0].done, 2000 + 200 + 5);
	assert_int_equal(r[1].seen, 2);
	assert_int_equal(r[1].done, 2200 + 10 + 5);
	assert_int_equal(r[2].seen, 3);
	assert_int_equal(r[2].done, 2210 + 200 + 5);
	assert_int_equal(v, 4);
	sim_exit();
}

struct spin {
	spinlock_t lock;
	uint64_t hold_ns;
	int inside, max_inside;
	unsigned long count;
};

static void spin_task(void *arg)
{
	struct spin *s = arg;

	assert_int_equal(sched_task_start(sim_task_cpu(sim_task_current())),
			 0);
	sched_task_run();
	spin_lock(&s->lock);
	if (++s->inside > s->max_inside)
		s->max_inside = s->inside;
	s->count++;
	ndelay(s->hold_ns);
	s->inside--;
	spin_unlock(&s->lock);
	sched_task_exit();
}

/*
 * The Altix's scale on the lock the Altix did not have: 256 CPUs take one
 * lock while the first holds it 1 ms, so that every other one's first
 * take fails while it is held.  x86's byte lock counts them: its 129th
 * failed decb wraps the byte positive and the next arrivals take the
 * held lock (spinlock_decb.h).  ia64's cmpxchg lock, which 2.6.7 ran on
 * the Altix, writes nothing when a take fails: one holder at a time,
 * every CPU served.  The same seed gives the same run, so this is no
 * matter of chance.
 */
static void retrying_task(void *arg)
{
	struct spin *s = arg;
	int inside;

	assert_int_equal(sched_task_start(sim_task_cpu(sim_task_current())),
			 0);
	sched_task_run();
	spin_lock(&s->lock);
	/* events, so that the holds overlap in virtual time, not host order */
	inside = __atomic_add_fetch(&s->inside, 1, __ATOMIC_RELAXED);
	if (inside > s->max_inside)
		s->max_inside = inside;
	s->count++;
	ndelay(s->hold_ns);
	__atomic_sub_fetch(&s->inside, 1, __ATOMIC_RELAXED);
	spin_unlock(&s->lock);
	sched_task_exit();
}

static void test_retrying_locks_past_128_waiters(void **state)
{
	static const enum spin_lock_kind kinds[] = { SPIN_DECB, SPIN_IA64 };
	struct sim_machine m = machine;
	static struct spin s;
	char err[128];
	unsigned int k;
	int i;

	m.cpus = 256;
	for (k = 0; k < 2; k++) {
		assert_int_equal(sim_init(&m, 1, err, sizeof(err)), 0);
		sched_set_slice_ns(1000000, m.cpus);
		memset(&s, 0, sizeof(s));
		spin_lock_init_kind = kinds[k];
		spin_lock_init(&s.lock);
		spin_lock_init_kind = SPIN_TICKET;
		s.hold_ns = 1000000;
		for (i = 0; i < m.cpus; i++)
			sim_spawn(i, retrying_task, &s);
		assert_int_equal(sim_run(UINT64_MAX), 0);
		assert_int_equal(s.count, m.cpus);
		if (kinds[k] == SPIN_DECB)
			assert_true(s.max_inside > 1);
		else
			assert_int_equal(s.max_inside, 1);
		sim_exit();
	}
}

/*
 * Seven CPUs wait 100 ms each behind a holder: a spin parks on the
 * lock's line, so the host handles a few events a 10 us spin timeout,
 * not one a cpu_relax() (some 70 million).
 */
static void test_spinner_costs_no_host_cpu(void **state)
{
	static struct spin s;
	struct sim_stats st;
	int i;

	start(1);
	spin_lock_init(&s.lock);
	s.hold_ns = 100000000;
	for (i = 0; i < 8; i++)
		sim_spawn(i, spin_task, &s);
	assert_int_equal(sim_run(UINT64_MAX), 0);
	sim_get_stats(&st);
	assert_int_equal(s.count, 8);
	assert_int_equal(s.max_inside, 1);
	/* 8 holds of 100 ms, one after another */
	assert_true(st.busy_ns >= 8 * 100000000ull);
	assert_true(st.events < 1000000);
	assert_true(st.parks > 0);
	sim_exit();
}

struct deadline {
	int word;
	uint64_t until, left;
};

static void deadline_task(void *arg)
{
	struct deadline *d = arg;
	uint64_t until = (uint64_t)now_ns() + d->until;

	while (!READ_ONCE(d->word) && (uint64_t)now_ns() < until)
		cpu_relax();
	d->left = sim_now();
}

/*
 * A spin that ends on its clock (rwsem's sched_clock() threshold) sees the
 * deadline pass within half a microsecond, not at the next 10 us timeout.
 */
static void test_spin_on_a_deadline_ends_on_time(void **state)
{
	static struct deadline d = { .until = 2000 };

	start(1);
	sim_spawn(0, deadline_task, &d);
	assert_int_equal(sim_run(UINT64_MAX), 0);
	assert_true(d.left >= 2000);
	assert_true(d.left < 2000 + 1000);
	sim_exit();
}

struct sleeper {
	struct task_struct *task;
	int cond;
	uint64_t woke_at, slept_at;
	uint64_t timeout_ns;
};

static void sleeper_task(void *arg)
{
	struct sleeper *s = arg;

	sched_task_start(sim_task_cpu(sim_task_current()));
	sched_task_run();
	s->task = current;
	s->slept_at = sim_now();
	if (s->timeout_ns) {
		schedule_timeout_ns(s->timeout_ns);
	} else {
		for (;;) {
			set_current_state(TASK_UNINTERRUPTIBLE);
			if (READ_ONCE(s->cond))
				break;
			schedule();
		}
		__set_current_state(TASK_RUNNING);
	}
	s->woke_at = sim_now();
	sched_task_exit();
}

static void waker_task(void *arg)
{
	struct sleeper *s = arg;

	sched_task_start(sim_task_cpu(sim_task_current()));
	sched_task_run();
	wait_until(5000000);
	WRITE_ONCE(s->cond, 1);
	wake_up_process(s->task);
	sched_task_exit();
}

/* A wake-up at 5 ms runs the sleeper wake_ns later; a timer after its ns. */
static void test_sleep_and_wake_in_virtual_time(void **state)
{
	static struct sleeper s, t;

	start(1);
	sim_spawn(0, sleeper_task, &s);
	sim_spawn(4, waker_task, &s);
	t.timeout_ns = 2000000;
	sim_spawn(2, sleeper_task, &t);
	assert_int_equal(sim_run(UINT64_MAX), 0);
	assert_true(s.woke_at >= 5000000 + 1000);
	assert_true(s.woke_at < 5000000 + 1000 + 2000);
	assert_true(t.woke_at >= t.slept_at + 2000000 + 1000);
	assert_true(t.woke_at < t.slept_at + 2000000 + 1000 + 2000);
	sim_exit();
}

/*
 * With a wake curve, a CPU idle 1 us wakes after the curve's first
 * point and one idle 3 ms after its last: 2 us and 20 us here.
 */
static void test_wake_after_a_long_idle_costs_more(void **state)
{
	static struct sleeper s;
	struct sim_machine m = machine;
	char err[128];

	assert_int_equal(sim_machine_wake_curve(&m, "1000:2000,1000000:20000"),
			 0);
	assert_int_equal(sim_machine_wake_curve(&m, "5:1,4:1"), -1);
	assert_int_equal(sim_machine_wake_curve(&m, "1000:2000,1000000:20000"),
			 0);
	assert_int_equal(sim_init(&m, 1, err, sizeof(err)), 0);
	sim_spawn(0, sleeper_task, &s);
	sim_spawn(4, waker_task, &s);
	assert_int_equal(sim_run(UINT64_MAX), 0);
	/* asleep from near 0 to 5 ms: flat past the last point */
	assert_true(s.woke_at >= 5000000 + 20000);
	assert_true(s.woke_at < 5000000 + 20000 + 2000);
	assert_true(sim_machine_wake_ns(&m, 500) == 2000);
	assert_true(sim_machine_wake_ns(&m, 500500) == 11000);
	sim_exit();
}

struct disk {
	struct request_queue q;
	uint64_t done[3];
	int next;
};

static void reader_task(void *arg)
{
	struct disk *d = arg;

	sched_task_start(sim_task_cpu(sim_task_current()));
	sched_task_run();
	blk_read_sync(&d->q, 1000000);
	d->done[d->next++] = sim_now();
	sched_task_exit();
}

/* Three 1 ms reads on a disk of depth 1 end near 1, 2 and 3 ms. */
static void test_model_disk_in_virtual_time(void **state)
{
	static struct disk d;
	int i;

	start(1);
	blk_queue_init(&d.q, 1);
	for (i = 0; i < 3; i++)
		sim_spawn(i * 2, reader_task, &d);
	assert_int_equal(sim_run(UINT64_MAX), 0);
	assert_int_equal(d.next, 3);
	for (i = 0; i < 3; i++) {
		assert_true(d.done[i] >= (i + 1) * 1000000ull);
		assert_true(d.done[i] < (i + 1) * 1000000ull + (i + 1) * 5000);
	}
	sim_exit();
}

struct counted {
	struct mutex lock;
	int inside, max_inside;
	unsigned long count;
};

static void mutex_task(void *arg)
{
	struct counted *c = arg;
	int i;

	sched_task_start(sim_task_cpu(sim_task_current()));
	sched_task_run();
	for (i = 0; i < 200; i++) {
		mutex_lock(&c->lock);
		if (++c->inside > c->max_inside)
			c->max_inside = c->inside;
		c->count++;
		ndelay(300);
		c->inside--;
		mutex_unlock(&c->lock);
		ndelay(100);
		cond_resched();
	}
	sched_task_exit();
}

/* 32 tasks on 8 CPUs: the 2.6.32 mutex keeps them apart, every one counted. */
static void test_mutex_excludes_in_the_simulator(void **state)
{
	static struct counted c;
	int i;

	start(1);
	mutex_init(&c.lock);
	for (i = 0; i < 32; i++)
		sim_spawn(i % 8, mutex_task, &c);
	assert_int_equal(sim_run(UINT64_MAX), 0);
	assert_int_equal(c.count, 32 * 200);
	assert_int_equal(c.max_inside, 1);
	assert_int_equal(sim_nr_tasks(), 0);
	sim_exit();
}

static void lost_waker_task(void *arg)
{
	struct sleeper *s = arg;

	sched_task_start(sim_task_cpu(sim_task_current()));
	sched_task_run();
	wait_until(1000000);
	WRITE_ONCE(s->cond, 1);		/* and no wake_up_process() */
	sched_task_exit();
}

/* A waker that forgets wake_up_process(): the sleeper is reported. */
static void test_lost_wakeup_is_caught(void **state)
{
	static struct sleeper s;

	start(1);
	sim_spawn(0, sleeper_task, &s);
	sim_spawn(4, lost_waker_task, &s);
	assert_int_equal(sim_run(UINT64_MAX), -1);
	assert_int_equal(sim_nr_tasks(), 1);
	sim_exit();
}

/* Two tasks that only work on one CPU, each 5 ms of it in 1 us steps. */
struct turns {
	uint64_t first[2];
	int started;
};

static void turn_task(void *arg)
{
	struct turns *s = arg;
	int me = s->started++, i;

	sched_task_start(0);
	sched_task_run();
	s->first[me] = sim_now();
	for (i = 0; i < 5000; i++) {
		ndelay(1000);
		cond_resched();
	}
	sched_task_exit();
}

/*
 * The tick is the scheduler's setting, made once (sched_set_slice_ns()):
 * every run of an invocation has it, not the first alone.  In the second
 * run two tasks of one CPU take turns a 1 ms slice each, so the second
 * starts at the first's slice's end, not at its end 5 ms later.
 */
static void test_the_tick_outlives_a_run(void **state)
{
	static struct turns s;
	char err[128];
	int run;

	for (run = 0; run < 2; run++) {
		if (run == 0)
			start(1);
		else
			assert_int_equal(sim_init(&machine, 2, err,
						  sizeof(err)), 0);
		memset(&s, 0, sizeof(s));
		sim_spawn(0, turn_task, &s);
		sim_spawn(0, turn_task, &s);
		assert_int_equal(sim_run(UINT64_MAX), 0);
		assert_true(s.first[1] > s.first[0]);
		assert_true(s.first[1] < s.first[0] + 1100000);
		sim_exit();
	}
}

struct lone {
	uint64_t left;
};

static void lone_spin_task(void *arg)
{
	struct lone *l = arg;

	sched_task_start(0);
	sched_task_run();
	while (!need_resched())
		cpu_relax();
	l->left = sim_now();
	sched_task_exit();
}

/*
 * A task alone on its CPU spinning until need_resched() (5.3's reader on
 * a free rwsem whose handoff writer sleeps) gets it from the tick once it
 * has run sched_lone_ns alone, as on the host (sched.h), not never.
 */
static void test_lone_spinner_gets_need_resched(void **state)
{
	static struct lone l;

	sched_lone_ns = 2000000;
	start(1);
	sim_spawn(0, lone_spin_task, &l);
	assert_int_equal(sim_run(10000000), 0);
	sched_lone_ns = 0;
	assert_true(l.left >= 2000000);
	assert_true(l.left < 2000000 + 20000);
	sim_exit();
}

struct early {
	struct sim_task *task;
	int a __attribute__((aligned(64)));
	int b __attribute__((aligned(64)));
	int flag __attribute__((aligned(64)));
	uint64_t woke_at;
};

/*
 * Decides to sleep at 1 us, then switches out (500 ns of work and a miss
 * it yields at) before it sleeps: schedule() between try_to_sleep() and
 * the switch.
 */
static void early_sleeper_task(void *arg)
{
	struct early *e = arg;

	e->task = sim_task_current();
	wait_until(1000);
	sim_access(&e->a, 4, SIM_WRITE);
	sim_delay(500);
	sim_access(&e->b, 4, SIM_WRITE);
	sim_sleep(0);
	e->woke_at = sim_now();
}

static void early_waker_task(void *arg)
{
	struct early *e = arg;

	wait_until(1200);
	sim_access(&e->flag, 4, SIM_WRITE);
	assert_int_equal(sim_wake(e->task), 1);
}

/*
 * A wake-up that comes while the task is on its way to sleep is kept, as
 * try_to_wake_up() waits for p->on_cpu: the task is queued again at once.
 */
static void test_wakeup_before_the_sleep_is_kept(void **state)
{
	static struct early e;

	start(1);
	sim_spawn(0, early_sleeper_task, &e);
	sim_spawn(4, early_waker_task, &e);
	assert_int_equal(sim_run(UINT64_MAX), 0);
	assert_true(e.woke_at >= 1600 + 500);
	assert_int_equal(sim_nr_tasks(), 0);
	sim_exit();
}

struct contend {
	spinlock_t lock;
	unsigned long ops[8];
	int stop;
};

static void contend_task(void *arg)
{
	struct contend *c = arg;
	int cpu = sim_task_cpu(sim_task_current());

	sched_task_start(cpu);
	sched_task_run();
	while (!READ_ONCE(c->stop)) {
		spin_lock(&c->lock);
		ndelay(50);
		spin_unlock(&c->lock);
		ndelay(200);
		c->ops[cpu]++;
	}
	sched_task_exit();
}

static void contend(uint64_t seed, unsigned long *ops, uint64_t *events)
{
	static struct contend c;
	struct sim_stats st;
	int i;

	memset(&c, 0, sizeof(c));
	start(seed);
	for (i = 0; i < 8; i++)
		sim_spawn(i, contend_task, &c);
	assert_int_equal(sim_run(2000000), 0);
	c.stop = 1;
	sim_host_write(&c.stop);
	assert_int_equal(sim_run(UINT64_MAX), 0);
	sim_get_stats(&st);
	memcpy(ops, c.ops, sizeof(c.ops));
	*events = st.events;
	sim_exit();
}

struct code_probe {
	long n;			/* iterations of plain code */
	uint64_t ns;		/* virtual ns they took */
	uint64_t blocks;	/* basic blocks counted meanwhile */
};

static int code_list[64];

/* A walk of plain loads and branches between two clock reads. */
static void code_task(void *arg)
{
	struct code_probe *p = arg;
	uint64_t t0, b0;
	long i, sum = 0;

	t0 = sim_now();
	b0 = sim_code_blocks();
	for (i = 0; i < p->n; i++)
		sum += code_list[i % 64] & 1 ? i : -i;
	p->blocks = sim_code_blocks() - b0;
	p->ns = sim_now() - t0;
	code_list[0] = (int)sum;
}

/*
 * The code between two events costs its basic blocks at the machine's
 * cost a block: n iterations take at least n blocks' time, and what the
 * blocks counted meanwhile cost.
 */
static void test_code_costs_its_blocks(void **state)
{
	struct sim_machine m = machine;
	struct code_probe p = { 10000, 0, 0 };
	char err[128];

	m.block_ns = 1;
	assert_int_equal(sim_init(&m, 1, err, sizeof(err)), 0);
	sim_spawn(0, code_task, &p);
	assert_int_equal(sim_run(UINT64_MAX), 0);
	sim_exit();
	assert_true(p.blocks >= (uint64_t)p.n);
	assert_true(p.ns >= p.blocks && p.ns <= p.blocks + 10);
}

struct smt_work {
	uint64_t until;		/* virtual ns */
	long done;		/* 1 us pieces of work */
};

static void smt_task(void *arg)
{
	struct smt_work *w = arg;

	while (sim_now() < w->until) {
		sim_delay(1000);
		w->done++;
	}
}

/* Work of two tasks on cpus a and b over 1 ms, in 1 us pieces. */
static long smt_pair(const struct sim_machine *m, int a, int b)
{
	struct smt_work w[2] = { { 1000000, 0 }, { 1000000, 0 } };
	char err[128];

	assert_int_equal(sim_init(m, 1, err, sizeof(err)), 0);
	sim_spawn(a, smt_task, &w[0]);
	sim_spawn(b, smt_task, &w[1]);
	assert_int_equal(sim_run(UINT64_MAX), 0);
	sim_exit();
	return w[0].done + w[1].done;
}

/*
 * Two hardware threads of one core share it: two tasks of pure work on a
 * core's siblings do smt_throughput times one task's work, not twice it;
 * on two cores, twice.
 */
static void test_smt_siblings_share_a_core(void **state)
{
	struct sim_machine m = machine;
	long solo = 1000, siblings, cores;

	m.smt_throughput = 1.25;
	siblings = smt_pair(&m, 0, 1);
	cores = smt_pair(&m, 0, 2);
	assert_true(siblings >= 1.25 * solo - 2 && siblings <= 1.25 * solo + 2);
	assert_true(cores >= 2 * solo - 2 && cores <= 2 * solo + 2);
}

struct migrant {
	int stop;
	int backwards;		/* migrations that resumed before they left */
	uint64_t worst;		/* the most virtual ns they went back */
	int migrations;
};

/* CPU 1's own task: spins with preemption points until the migrant ends. */
static void preemptible_spinner_task(void *arg)
{
	struct migrant *m = arg;

	sched_task_start(sim_task_cpu(sim_task_current()));
	sched_task_run();
	while (!READ_ONCE(m->stop)) {
		cpu_relax();
		cond_resched();
	}
	sched_task_exit();
}

/* 1.5 ms of work a CPU, then on to the other: CPU 0, 1, 0, ... */
static void migrant_task(void *arg)
{
	struct migrant *m = arg;
	uint64_t left;
	int i;

	sched_task_start(0);
	sched_task_run();
	for (i = 0; i < 8; i++) {
		ndelay(1500000);
		left = sim_now();
		sched_migrate_task(i % 2 ? 0 : 1);
		if (sim_now() < left) {
			m->backwards++;
			if (left - sim_now() > m->worst)
				m->worst = left - sim_now();
		}
		m->migrations++;
	}
	WRITE_ONCE(m->stop, 1);
	sched_task_exit();
}

/*
 * A task's virtual time never runs backwards across a migration: moved to
 * CPU 1, whose own task spins there, it runs once that task gives way;
 * moved back to CPU 0, idle since it left 1.5 ms before, it resumes where
 * it left off, not at the clock CPU 0 stopped at.
 */
static void test_migration_keeps_the_task_clock(void **state)
{
	static struct migrant m;

	memset(&m, 0, sizeof(m));
	start(1);
	sim_spawn(0, migrant_task, &m);
	sim_spawn(1, preemptible_spinner_task, &m);
	assert_int_equal(sim_run(UINT64_MAX), 0);
	assert_int_equal(m.migrations, 8);
	if (m.backwards)
		fail_msg("%d of 8 migrations resumed before they left, by up "
			 "to %llu ns", m.backwards,
			 (unsigned long long)m.worst);
	sim_exit();
}

#ifndef __SANITIZE_ADDRESS__
/*
 * lib/sim/heap.c: whatever was allocated and freed before, an allocation
 * starts a line of the longest a machine may have and no other shares
 * it; realloc() keeps the contents.  (AddressSanitizer's build keeps its
 * own malloc().)
 */
static void test_allocations_share_no_line(void **state)
{
	const uintptr_t line = SIM_LINE_BYTES_MAX;
	size_t size[48];
	char *p[48], *q;
	void *r = NULL;
	int i, j;

	for (i = 0; i < 48; i++) {
		size[i] = 1 + i * 37 % 700;
		p[i] = i % 3 ? malloc(size[i]) : calloc(1, size[i]);
		assert_non_null(p[i]);
		if (i % 3 == 0)
			assert_int_equal(p[i][0] | p[i][size[i] - 1], 0);
		if (i % 4 == 3) {
			free(p[i - 2]);
			p[i - 2] = NULL;
		}
	}
	for (i = 0; i < 48; i++)
		for (j = 0; p[i] && j < 48; j++)
			if (j != i && p[j])
				assert_true((uintptr_t)p[j] / line >
					    (uintptr_t)(p[i] + size[i] - 1) / line ||
					    (uintptr_t)(p[j] + size[j] - 1) / line <
					    (uintptr_t)p[i] / line);
	strcpy(p[0], "kept");
	q = realloc(p[0], 3 * line);
	assert_non_null(q);
	assert_int_equal((uintptr_t)q % line, 0);
	assert_string_equal(q, "kept");
	p[0] = q;
	assert_int_equal(posix_memalign(&r, 4096, 10), 0);
	assert_int_equal((uintptr_t)r % 4096, 0);
	free(r);
	assert_int_equal(posix_memalign(&r, 24, 10), EINVAL);
	for (i = 0; i < 48; i++)
		free(p[i]);
}
#endif

/* The same seed, the same run to the operation; another seed, another. */
static void test_same_seed_same_run(void **state)
{
	unsigned long a[8], b[8], c[8];
	uint64_t ea, eb, ec;

	contend(1, a, &ea);
	contend(1, b, &eb);
	contend(2, c, &ec);
	assert_memory_equal(a, b, sizeof(a));
	assert_int_equal(ea, eb);
	assert_true(memcmp(a, c, sizeof(a)) || ea != ec);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_coherence_costs),
		cmocka_unit_test(test_owner_hits_until_the_request_arrives),
		cmocka_unit_test(test_requests_to_a_line_queue),
		cmocka_unit_test(test_owner_window_survives_a_queue),
		cmocka_unit_test(test_effect_in_service_order),
		cmocka_unit_test(test_spinner_costs_no_host_cpu),
		cmocka_unit_test(test_retrying_locks_past_128_waiters),
		cmocka_unit_test(test_spin_on_a_deadline_ends_on_time),
		cmocka_unit_test(test_sleep_and_wake_in_virtual_time),
		cmocka_unit_test(test_wake_after_a_long_idle_costs_more),
		cmocka_unit_test(test_model_disk_in_virtual_time),
		cmocka_unit_test(test_mutex_excludes_in_the_simulator),
		cmocka_unit_test(test_lost_wakeup_is_caught),
		cmocka_unit_test(test_the_tick_outlives_a_run),
		cmocka_unit_test(test_lone_spinner_gets_need_resched),
		cmocka_unit_test(test_wakeup_before_the_sleep_is_kept),
		cmocka_unit_test(test_code_costs_its_blocks),
		cmocka_unit_test(test_smt_siblings_share_a_core),
		cmocka_unit_test(test_same_seed_same_run),
#ifndef __SANITIZE_ADDRESS__
		cmocka_unit_test(test_allocations_share_no_line),
#endif
		cmocka_unit_test(test_migration_keeps_the_task_clock),
	};

	/* the CPUs of machine on their nodes, up to 256 (4 a node) */
	test_machine(&topo, 256, 256 / (machine.cpus / machine.nodes));
	sched_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
