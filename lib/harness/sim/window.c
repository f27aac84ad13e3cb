// SPDX-License-Identifier: GPL-2.0
/*
 * A run's window in the simulator (--sim, lib/sim/sim.h; window.h), in
 * place of window.c's, on the machine and seed of sim/setup.h: Google
 * Benchmark's thread 0 sets the run up, then runs every thread of it as
 * a task on the machine's virtual CPUs, on its own host thread; the
 * others only wait for it.  The warm-up, the window and the
 * watchdog are virtual time, and so are the counters: ops_per_sec is
 * operations a virtual second, cpu_busy_pct the tasks' virtual CPU time.
 * The gate is the model scheduler's: a task that arrives before the last
 * sleeps, and the last wakes them.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernel/lockstat.h"
#include "../../kernel/sched.h"
#include "../../sim/sim.h"
#include "../../sys/clock.h"
#include "../res.h"
#include "../window.h"
#include "../window_run.h"
#include "setup.h"

static void gate_arrive_sim(struct kscale_bench *b, int id)
{
	struct kscale_run *run = &b->run;
	int i;

	b->arrived[id] = true;
	if (++b->nr_arrived == b->nr_threads) {
		b->gate_ns = sim_now();
		WRITE_ONCE(b->gate_open, 1);
		for (i = 0; i < b->nr_threads; i++)
			if (i != id)
				wake_up_process(run->threads[i].task);
		return;
	}
	for (;;) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		if (READ_ONCE(b->gate_open))
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
}

static void sim_thread(void *arg)
{
	struct kscale_thread *t = arg;
	struct kscale_bench *b = (struct kscale_bench *)
		((char *)t->run - offsetof(struct kscale_bench, run));
	bool ok = thread_setup(b, t);

	gate_arrive_sim(b, t->id);
	thread_run(b, t, ok);
}

static void sim_snapshot(const struct kscale_run *run, struct snapshot *s)
{
	int i;

	for (i = 0; i < run->nr_threads; i++) {
		s[i].ops = run->threads[i].ops;
		s[i].cputime = 1e-9 * sim_task_cputime(
				sim_task_of(run->threads[i].task));
	}
}

/* Runs to until_ns; false (the run failed, saying why) if it cannot. */
static bool sim_run_to(struct kscale_bench *b, uint64_t until_ns,
		       const char *phase)
{
	if (!sim_run(until_ns))
		return true;
	kscale_fail(&b->run, "simulated, %s: every task asleep with nothing "
		    "to wake it (a lost wake-up)", phase);
	return false;
}

static void sim_counters(struct kscale_run *run, double host_s)
{
	struct sim_stats st;

	sim_get_stats(&st);
	kscale_set_counter(run, "sim_events", st.events);
	kscale_set_counter(run, "sim_host_seconds", host_s);
	kscale_set_counter(run, "sim_events_per_host_sec",
			   host_s > 0 ? st.events / host_s : 0);
	kscale_set_counter(run, "sim_parks", st.parks);
	kscale_set_counter(run, "sim_misses", st.misses);
	kscale_set_counter(run, "sim_lines", st.lines);
}

/* Each lockstat class's lines: the simulator's misses of them so far. */
static void sim_transfers(uint64_t *t)
{
	int i;

	for (i = 0; i < lockstat_nr_classes(); i++)
		t[i] = lockstat_class_lines_sum(i, sim_line_misses);
}

/* The window: every task through the gate, warm-up, two snapshots, stop. */
static void sim_window(struct kscale_bench *b)
{
	struct kscale_run *run = &b->run;
	struct snapshot *start = calloc(run->nr_threads, sizeof(*start));
	struct snapshot *end = calloc(run->nr_threads, sizeof(*end));
	uint64_t watchdog = b->watchdog * 1e9, t0, t1, step = 1000000, t;
	struct res_snapshot res0, res1;
	uint64_t tr0[LOCKSTAT_MAX_CLASSES], tr1[LOCKSTAT_MAX_CLASSES];
	double host0 = now(), ops;
	char err[256];
	int i;

	/* a repetition is another sample: the run's seed, then the next */
	if (sim_init(&b->sim->machine, b->sim->seed + b->nr_windows++, err,
		     sizeof(err))) {
		kscale_fail(run, "%s", err);
		goto out;
	}
	for (i = 0; i < run->nr_threads; i++)
		sim_spawn(b->cpu_of_thread[i], sim_thread, &run->threads[i]);
	for (t = step; !b->gate_open; t += step) {
		if (!sim_run_to(b, t, "setting up"))
			goto out;
		if (t > watchdog) {
			kscale_fail(run, "simulated: %d of %d threads reached "
				    "the window in %g s", b->nr_arrived,
				    b->nr_threads, b->watchdog);
			goto out;
		}
	}
	t0 = b->gate_ns + (uint64_t)(b->warmup * 1e9);
	t1 = t0 + (uint64_t)(b->duration * 1e9);
	if (!sim_run_to(b, t0, "warming up"))
		goto out;
	sim_snapshot(run, start);
	sim_transfers(tr0);
	if (lockstat.enabled) {
		res0.cost = lockstat_sum(res0.acc);
		lockstat_window(true);
	}
	if (!sim_run_to(b, t1, "in the window"))
		goto out;
	sim_snapshot(run, end);
	sim_transfers(tr1);
	if (lockstat.enabled) {
		res1.cost = lockstat_sum(res1.acc);
		lockstat_window(false);
	}
	run->stop = 1;
	sim_host_write(&run->stop);
	if (!sim_run_to(b, t1 + watchdog, "leaving the window"))
		goto out;
	if (sim_nr_tasks()) {
		kscale_fail(run, "simulated: %d threads still in the loop %g s "
			    "after the window", sim_nr_tasks(), b->watchdog);
		goto out;
	}
	b->window = b->duration;
	run->elapsed = 1e-9 * t1;
	ops = set_counters(b, start, end, b->duration);
	if (lockstat.enabled)
		res_counters(run, ops, &res0, &res1);
	res_transfers(run, ops, tr0, tr1);
	sim_counters(run, now() - host0);
out:
	free(start);
	free(end);
}

void kscale_bench_thread(void *arg, int thread, struct kb_result *res)
{
	struct kscale_bench *b = arg;

	/*
	 * Thread 0 sets the run up once every host thread has started: their
	 * start-up's allocations would otherwise interleave with the model's
	 * and move it (lines are each allocation's own, heap.c, but
	 * real_lookup's dentry hash is of addresses).
	 */
	pthread_barrier_wait(&b->threads_met);
	if (thread == 0) {
		b->started = run_prepare(b);
		if (b->started) {
			sim_window(b);
			/*
			 * The tasks' stacks (a sleeper's rwsem_waiter) outlive
			 * the teardown, as threads the host could not stop do.
			 */
			run_finish(b, res);
			sim_exit();
		}
		if (b->run.failed)
			fprintf(stderr, "%s: %s: %s\n", b->model->name,
				b->name, b->run.error);
	}
	pthread_barrier_wait(&b->threads_met);
	res->seconds = b->started ? b->window : 1e-9;
	res->error = b->run.failed ? b->run.error : NULL;
}
