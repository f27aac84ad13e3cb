// SPDX-License-Identifier: GPL-2.0
/*
 * What a run's window does on the host (window.c) and in the simulator
 * (sim/window.c) alike (window_run.h): its set-up and teardown, each
 * thread's set-up and loop, and the window's counters.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernel/lockstat.h"
#include "../kernel/percpu.h"
#include "../kernel/sched.h"
#include "../sys/clock.h"
#include "perf.h"
#include "progress.h"
#include "window_run.h"

void set_thread_spread(struct kscale_run *run, double min, double mean,
		       double max)
{
	kscale_set_counter(run, "thread_ops_per_sec_min", min);
	kscale_set_counter(run, "thread_ops_per_sec_mean", mean);
	kscale_set_counter(run, "thread_ops_per_sec_max", max);
}

/* Each class's counters' names: the harness keeps a name, not a copy. */
#define MAX_CLASSES	4

enum { C_THREADS, C_OPS, C_RATE, C_MIN, C_MEAN, C_MAX, C_NR };

static const char *const class_counter_kind[C_NR] = {
	"threads", "ops", "ops_per_sec", "ops_per_sec_min",
	"ops_per_sec_mean", "ops_per_sec_max",
};

static char class_counter[MAX_CLASSES][C_NR][64];

static void set_class_counter(struct kscale_run *run, int c, int kind,
			      const char *class, double v)
{
	char *name = class_counter[c][kind];

	snprintf(name, sizeof(class_counter[c][kind]), "%s_%s", class,
		 class_counter_kind[kind]);
	kscale_set_counter(run, name, v);
}

/* The window's operations of each of the workload's thread classes. */
static void set_class_counters(struct kscale_bench *b,
			       const struct snapshot *start,
			       const struct snapshot *end)
{
	const char *const *classes = b->workload->classes;
	struct kscale_run *run = &b->run;
	double total, min, max, d;
	int c, i, n;

	for (c = 0; classes && classes[c]; c++) {
		if (c == MAX_CLASSES) {
			kscale_fail(run, "%s: more than %d thread classes",
				    b->workload->name, MAX_CLASSES);
			return;
		}
		total = 0, min = -1, max = 0, n = 0;
		for (i = 0; i < run->nr_threads; i++) {
			if (run->threads[i].class != c)
				continue;
			d = (double)(end[i].ops - start[i].ops);
			total += d;
			min_max_add(d, &min, &max);
			n++;
		}
		set_class_counter(run, c, C_THREADS, classes[c], n);
		set_class_counter(run, c, C_OPS, classes[c], total);
		set_class_counter(run, c, C_RATE, classes[c],
				  total / b->window);
		if (!n)
			continue;
		set_class_counter(run, c, C_MIN, classes[c], min / b->window);
		set_class_counter(run, c, C_MEAN, classes[c],
				  total / n / b->window);
		set_class_counter(run, c, C_MAX, classes[c], max / b->window);
	}
}

double set_counters(struct kscale_bench *b, const struct snapshot *start,
		    const struct snapshot *end, double cpu_window)
{
	struct kscale_run *run = &b->run;
	double total = 0, min = -1, max = 0, d;
	double cpu_min = -1, cpu_max = 0, c, cpu = 0;
	int i;

	for (i = 0; i < run->nr_threads; i++) {
		d = (double)(end[i].ops - start[i].ops);
		total += d;
		min_max_add(d, &min, &max);
		c = end[i].cputime - start[i].cputime;
		cpu += c;
		min_max_add(c, &cpu_min, &cpu_max);
	}
	kscale_set_counter(run, "ops_per_sec", total / b->window);
	kscale_set_counter(run, "ops_per_sec_per_cpu",
			   total / b->window / b->nr_distinct_cpus);
	kscale_set_counter(run, "fairness", min_over_max(min, max));
	set_thread_spread(run, min / b->window,
			  total / run->nr_threads / b->window, max / b->window);
	set_class_counters(b, start, end);
	kscale_set_counter(run, "cpu_fairness", min_over_max(cpu_min, cpu_max));
	kscale_set_counter(run, "cpu_busy_pct",
			   100 * cpu / cpu_window / b->nr_distinct_cpus);
	return total;
}

bool run_prepare(struct kscale_bench *b)
{
	struct kscale_run *run = &b->run;
	int i;

	free(run->threads);
	memset(run, 0, sizeof(*run));
	run->bench = b;
	run->nr_threads = b->nr_threads;
	run->threads = aligned_alloc(2 * SMP_CACHE_BYTES,
				     b->nr_threads * sizeof(*run->threads));
	memset(run->threads, 0, b->nr_threads * sizeof(*run->threads));
	for (i = 0; i < b->nr_threads; i++) {
		run->threads[i].run = run;
		run->threads[i].id = i;
		run->threads[i].cpu = b->cpu_of_thread[i];
	}
	progress_line(b);
	b->nr_done = 0;
	b->nr_arrived = 0;
	b->gate_open = 0;
	memset(b->arrived, 0, b->nr_threads * sizeof(*b->arrived));
	memset(b->left, 0, b->nr_threads * sizeof(*b->left));
	/* on thread 0's CPU: shared data's first touch puts it on its node */
	if (sched_migrate_task(b->cpu_of_thread[0])) {
		kscale_fail(run, "cannot pin the set-up to CPU %d",
			    b->cpu_of_thread[0]);
		return false;
	}
	b->model_sched = !b->row->host;
	/* before the set-up, which may start the host's own load (fio) */
	b->perf = !b->model_sched && perf_usable();
	if (b->perf && perf_start(run, b->cpu_of_thread, b->nr_threads))
		return false;
	/* the set-up registers this run's resources (lockstat.h) */
	if (lockstat.enabled || lockstat.lines)
		lockstat_reset();
	kscale_variant_locks(b->row);
	if (b->workload->setup && b->workload->setup(run)) {
		if (!run->failed)
			kscale_fail(run, "%s: set-up failed without saying why",
				    b->workload->name);
		perf_finish(run);
		return false;
	}
	if (lockstat.enabled && lockstat_threads_init(b->nr_threads)) {
		kscale_fail(run, "lockstat: out of memory");
		run_abandon(b);
		return false;
	}
	return true;
}

void run_abandon(struct kscale_bench *b)
{
	b->workload->teardown(&b->run);
	perf_finish(&b->run);
}


/* Pinned (or a model task), priv and thread_init: false if it failed. */
bool thread_setup(struct kscale_bench *b, struct kscale_thread *t)
{
	const struct kscale_workload *w = b->workload;
	bool ok = true;

	if (b->model_sched ? sched_task_start(t->cpu) :
	    sched_migrate_task(t->cpu))
		ok = !kscale_fail(&b->run, "cannot pin thread %d to CPU %d",
				  t->id, t->cpu);
	t->tid = gettid();
	t->task = current;
	if (ok && pthread_getcpuclockid(pthread_self(), &t->cputime))
		ok = !kscale_fail(&b->run, "no CPU-time clock for thread %d",
				  t->id);
	if (ok && w->thread_size) {
		size_t align = _Alignof(struct kscale_thread);

		t->priv = aligned_alloc(align, (w->thread_size + align - 1) &
					~(align - 1));
		if (t->priv)
			memset(t->priv, 0, w->thread_size);
		else
			ok = !kscale_fail(&b->run, "thread %d: out of memory",
					  t->id);
	}
	if (ok && w->thread_init && w->thread_init(t)) {
		ok = false;
		if (!b->run.failed)
			kscale_fail(&b->run, "%s: thread %d's set-up failed "
				    "without saying why", w->name, t->id);
	}
	/* a failed thread still meets the others, then leaves at once */
	if (!ok)
		WRITE_ONCE(b->run.stop, 1);
	lockstat_thread_attach(t->id);
	return ok;
}

/* Through the gate: the loop, then out of the model scheduler. */
void thread_run(struct kscale_bench *b, struct kscale_thread *t,
		       bool ok)
{
	if (ok) {
		double start;

		if (b->model_sched)
			sched_task_run();
		start = span_clock_ns();
		b->workload->loop(t);
		t->loop_ns = span_clock_ns() - start;
	}
	lockstat_thread_detach();
	sched_task_exit();
	WRITE_ONCE(b->left[t->id], true);
	__atomic_fetch_add(&b->nr_done, 1, __ATOMIC_RELEASE);
}

_Static_assert(KB_MAX_COUNTERS >= KSCALE_MAX_COUNTERS,
	       "Google Benchmark's side must hold every counter");

void run_finish(struct kscale_bench *b, struct kb_result *res)
{
	struct kscale_run *run = &b->run;
	int i;

	if (b->workload->teardown(run) && !run->failed)
		kscale_fail(run, "%s: teardown failed without saying why",
			    b->workload->name);
	for (i = 0; b->workload->thread_size && i < run->nr_threads; i++)
		free(run->threads[i].priv);
	perf_finish(run);
	res->nr_counters = run->nr_counters;
	for (i = 0; i < run->nr_counters; i++) {
		res->counters[i].name = run->counters[i].name;
		res->counters[i].value = run->counters[i].value;
	}
}

