// SPDX-License-Identifier: GPL-2.0
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../kernel/percpu.h"
#include "../kernel/sched.h"
#include "disturb.h"
#include "fatal.h"
#include "perf.h"
#include "rt_throttle.h"
#include "topology.h"
#include "window.h"

/* How long threads may take to leave their loops once told to stop. */
#define WATCHDOG_S	30

static int progress_done, progress_total;

void kscale_progress_total(int total)
{
	progress_total = total;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_until(double t)
{
	struct timespec ts = { (time_t)t, (long)((t - (time_t)t) * 1e9) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

struct snapshot {
	unsigned long ops;
	double cputime;
};

static double thread_cputime(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		return 0;
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void snapshot(const struct kscale_run *run, struct snapshot *s)
{
	int i;

	for (i = 0; i < run->nr_threads; i++) {
		s[i].ops = READ_ONCE(run->threads[i].ops);
		s[i].cputime = thread_cputime(run->threads[i].cputime);
	}
}

static double min_over_max(double min, double max)
{
	return max > 0 ? min / max : 0;
}

static void set_counters(struct kscale_bench *b, const struct snapshot *start,
			 const struct snapshot *end)
{
	struct kscale_run *run = &b->run;
	double total = 0, min = -1, max = 0, d;
	double cpu_min = -1, cpu_max = 0, c, cpu = 0;
	int i;

	for (i = 0; i < run->nr_threads; i++) {
		d = (double)(end[i].ops - start[i].ops);
		total += d;
		min = min < 0 || d < min ? d : min;
		max = d > max ? d : max;
		c = end[i].cputime - start[i].cputime;
		cpu += c;
		cpu_min = cpu_min < 0 || c < cpu_min ? c : cpu_min;
		cpu_max = c > cpu_max ? c : cpu_max;
	}
	kscale_set_counter(run, "ops_per_sec", total / b->window);
	kscale_set_counter(run, "ops_per_sec_per_cpu",
			   total / b->window / b->nr_distinct_cpus);
	kscale_set_counter(run, "fairness", min_over_max(min, max));
	kscale_set_counter(run, "cpu_fairness", min_over_max(cpu_min, cpu_max));
	kscale_set_counter(run, "cpu_busy_pct",
			   100 * cpu / b->window / b->nr_distinct_cpus);
}

/* A stuck run cannot be torn down: name the threads, leave. */
static void watchdog(struct kscale_bench *b)
{
	double deadline = now() + WATCHDOG_S;
	int i;

	while (READ_ONCE(b->nr_done) < b->nr_threads) {
		if (now() < deadline) {
			sleep_until(now() + 0.01);
			continue;
		}
		fprintf(stderr, "kscale: watchdog: %s: %d of %d threads still "
			"in the loop %d s after the window ended\n", b->name,
			b->nr_threads - READ_ONCE(b->nr_done), b->nr_threads,
			WATCHDOG_S);
		for (i = 0; i < b->nr_threads; i++)
			fprintf(stderr, "kscale: watchdog: thread %d (CPU %d): "
				"%lu ops\n", i, b->run.threads[i].cpu,
				READ_ONCE(b->run.threads[i].ops));
		fatal_exit(1);
	}
}

/* Warm up, then one window between two snapshots of every counter. */
static void *controller(void *arg)
{
	struct kscale_bench *b = arg;
	struct kscale_run *run = &b->run;
	struct snapshot *start = calloc(run->nr_threads, sizeof(*start));
	struct snapshot *end = calloc(run->nr_threads, sizeof(*end));
	struct sched_param sp = { .sched_priority = SCHED_PRIO_CONTROL };
	struct disturb_snapshot d0, d1;
	double started, t0, t1, late;

	if (b->model_sched && sched_fifo)
		pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	pthread_barrier_wait(&b->window_met);
	started = now();
	sleep_until(started + b->warmup);
	/* perf's events on before the first snapshot, off after the last */
	if (b->perf)
		perf_enable(run);
	disturb_snapshot(run, b->cpu_of_thread, b->nr_threads, &d0);
	snapshot(run, start);
	t0 = now();
	sleep_until(t0 + b->duration);
	late = now() - (t0 + b->duration);
	snapshot(run, end);
	t1 = now();
	disturb_snapshot(run, b->cpu_of_thread, b->nr_threads, &d1);
	if (b->perf)
		perf_disable(run);
	WRITE_ONCE(run->stop, 1);
	b->window = t1 - t0;
	run->elapsed = t1 - started;
	set_counters(b, start, end);
	disturb_counters(run, &d0, &d1, late);
	watchdog(b);
	pthread_barrier_wait(&b->window_met);
	free(start);
	free(end);
	return NULL;
}

int kscale_bench_init(struct kscale_bench *b)
{
	if (pthread_barrier_init(&b->threads_met, NULL, b->nr_threads) ||
	    pthread_barrier_init(&b->window_met, NULL, b->nr_threads + 1))
		return -1;
	return 0;
}

static bool run_prepare(struct kscale_bench *b)
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
	fprintf(stderr, "kscale: [%d/%d] %s\n", ++progress_done,
		progress_total, b->name);
	/* set-up runs unpinned, but per-CPU data needs a CPU to name */
	kscale_set_cpu(b->cpu_of_thread[0]);
	b->nr_done = 0;
	b->model_sched = !b->model->variants[b->variant].host;
	if (b->model_sched && sched_fifo && rt_throttle_lift())
		fprintf(stderr, "kscale: %s: RT throttling stays on: model "
			"tasks may stop for 50 ms a second\n", b->name);
	/* before the set-up, which may start the host's own load (fio) */
	b->perf = !b->model_sched && perf_usable();
	if (b->perf && perf_start(run, b->cpu_of_thread, b->nr_threads))
		return false;
	if (b->workload->setup && b->workload->setup(run)) {
		perf_finish(run);
		return false;
	}
	if (pthread_create(&b->controller, NULL, controller, b)) {
		kscale_fail(run, "cannot start the controller thread");
		b->workload->teardown(run);
		perf_finish(run);
		return false;
	}
	return true;
}

int kscale_migrate(struct kscale_thread *t, int cpu)
{
	if (sched_migrate_task(cpu))
		return kscale_fail(t->run, "cannot move thread %d to CPU %d",
				   t->id, cpu);
	return 0;
}

int kscale_partner_cpu(const struct kscale_thread *t)
{
	const struct kscale_bench *b = t->run->bench;
	int i;

	for (i = 0; i < b->nr_order && b->order[i] != t->cpu; i++)
		;
	return b->order[(i + 1) % b->nr_order];
}

int kscale_nr_usable_cpus(const struct kscale_run *run)
{
	return run->bench->nr_order;
}

int kscale_nr_distinct_cpus(const struct kscale_run *run)
{
	return run->bench->nr_distinct_cpus;
}

double kscale_window_seconds(const struct kscale_run *run)
{
	return run->bench->duration;
}

double kscale_warmup_seconds(const struct kscale_run *run)
{
	return run->bench->warmup;
}

static void run_thread(struct kscale_bench *b, struct kscale_thread *t)
{
	const struct kscale_workload *w = b->workload;
	bool ok = true;

	if (b->model_sched ? sched_task_start(t->cpu) :
	    sched_migrate_task(t->cpu))
		ok = !kscale_fail(&b->run, "cannot pin thread %d to CPU %d",
				  t->id, t->cpu);
	t->tid = gettid();
	if (ok && pthread_getcpuclockid(pthread_self(), &t->cputime))
		ok = !kscale_fail(&b->run, "no CPU-time clock for thread %d",
				  t->id);
	if (ok && w->thread_init)
		ok = !w->thread_init(t);
	/* a failed thread still meets the others, then leaves at once */
	if (!ok)
		WRITE_ONCE(b->run.stop, 1);
	pthread_barrier_wait(&b->window_met);
	if (ok) {
		if (b->model_sched)
			sched_task_run();
		w->loop(t);
	}
	sched_task_exit();
	__atomic_fetch_add(&b->nr_done, 1, __ATOMIC_RELEASE);
	pthread_barrier_wait(&b->window_met);
}

_Static_assert(KB_MAX_COUNTERS >= KSCALE_MAX_COUNTERS,
	       "Google Benchmark's side must hold every counter");

static void run_finish(struct kscale_bench *b, struct kb_result *res)
{
	struct kscale_run *run = &b->run;
	int i;

	b->workload->teardown(run);
	perf_finish(run);
	res->nr_counters = run->nr_counters;
	for (i = 0; i < run->nr_counters; i++) {
		res->counters[i].name = run->counters[i].name;
		res->counters[i].value = run->counters[i].value;
	}
}

/* Thread 0 is Google Benchmark's main thread: its affinity is restored. */
void kscale_bench_thread(void *arg, int thread, struct kb_result *res)
{
	struct kscale_bench *b = arg;
	size_t size = CPU_ALLOC_SIZE(kscale_topology->nr_cpu_ids);
	cpu_set_t *saved = NULL;

	if (thread == 0) {
		saved = CPU_ALLOC(kscale_topology->nr_cpu_ids);
		pthread_getaffinity_np(pthread_self(), size, saved);
		b->started = run_prepare(b);
	}
	pthread_barrier_wait(&b->threads_met);
	if (b->started)
		run_thread(b, &b->run.threads[thread]);
	pthread_barrier_wait(&b->threads_met);
	if (thread == 0) {
		if (b->started) {
			pthread_join(b->controller, NULL);
			run_finish(b, res);
		}
		rt_throttle_restore();
		pthread_setaffinity_np(pthread_self(), size, saved);
		CPU_FREE(saved);
	}
	if (thread == 0 && b->run.failed)
		fprintf(stderr, "%s: %s: %s\n", b->model->name, b->name,
			b->run.error);
	pthread_barrier_wait(&b->threads_met);
	res->seconds = b->started ? b->window : 1e-9;
	res->error = b->run.failed ? b->run.error : NULL;
}

int kscale_fail(struct kscale_run *run, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(&run->failed, 1, __ATOMIC_ACQ_REL))
		return -1;
	va_start(ap, fmt);
	vsnprintf(run->error, sizeof(run->error), fmt, ap);
	va_end(ap);
	WRITE_ONCE(run->stop, 1);
	return -1;
}

double kscale_counter(const struct kscale_run *run, const char *name)
{
	int i;

	for (i = 0; i < run->nr_counters; i++)
		if (!strcmp(run->counters[i].name, name))
			return run->counters[i].value;
	return 0;
}

double kscale_now_ns(void)
{
	return now() * 1e9;
}

void kscale_set_counter(struct kscale_run *run, const char *name, double v)
{
	int i;

	for (i = 0; i < run->nr_counters; i++)
		if (!strcmp(run->counters[i].name, name))
			break;
	if (i == KSCALE_MAX_COUNTERS) {
		kscale_fail(run, "counter %s: more than %d counters", name,
			    KSCALE_MAX_COUNTERS);
		return;
	}
	run->counters[i].name = name;
	run->counters[i].value = v;
	if (i == run->nr_counters)
		run->nr_counters++;
}
