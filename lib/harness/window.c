// SPDX-License-Identifier: GPL-2.0
/*
 * A run's fixed window on the host (window.h): its set-up, its threads, the
 * controller's warm-up, two snapshots and the window's own counters, and
 * its teardown into Google Benchmark's result.
 */
#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../kernel/lockstat.h"
#include "../kernel/percpu.h"
#include "../kernel/sched.h"
#include "../sys/affinity.h"
#include "../sys/topology.h"
#include "../sys/clock.h"
#include "disturb.h"
#include "fatal.h"
#include "perf.h"
#include "progress.h"
#include "res.h"
#include "rt_throttle.h"
#include "watchdog.h"
#include "window.h"
#include "window_run.h"

/* When a snapshot began and ended: its instant is the midpoint. */
struct span {
	double before, after;
};

static double thread_cputime(clockid_t clock)
{
	struct timespec ts;

	if (clock_gettime(clock, &ts))
		return 0;
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/*
 * The operation counts first and alone, timed on both sides: at 512
 * threads reading every CPU-time clock takes some 0.5 ms, and the counts
 * must be read as close to one instant as the cache lines allow.  With
 * --profile (res), lockstat's counts next, per operation.
 */
static void snapshot(const struct kscale_run *run, struct snapshot *s,
		     struct res_snapshot *res, struct span *ops,
		     struct span *cpu)
{
	int i;

	ops->before = now();
	for (i = 0; i < run->nr_threads; i++)
		s[i].ops = READ_ONCE(run->threads[i].ops);
	ops->after = now();
	cpu->before = ops->after;
	if (res) {
		res->cost = lockstat_sum(res->acc);
		cpu->before = now();
	}
	for (i = 0; i < run->nr_threads; i++)
		s[i].cputime = thread_cputime(run->threads[i].cputime);
	cpu->after = now();
}

/* Names no more threads than this that --window-until-counted gave up on. */
#define UNCOUNTED_NAMED	8

/*
 * What the host says of a thread: its state, policy and priority, the CPU
 * it ran on last, and the innermost frames of its kernel stack (root
 * only; else its wchan).
 */
static void host_state(pid_t tid, char *buf, size_t size)
{
	static const char *const policy[] = { "SCHED_OTHER", "SCHED_FIFO",
					      "SCHED_RR", "SCHED_BATCH" };
	char path[64], line[512], *p, *fn;
	int cpu = -1, prio = 0, pol = 0, frames = 0;
	size_t len;
	char state = '?';
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/stat", (int)tid);
	f = fopen(path, "r");
	if (f && fgets(line, sizeof(line), f) && (p = strrchr(line, ')')))
		sscanf(p + 2, "%c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
		       "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s "
		       "%*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %d %d %d",
		       &state, &cpu, &prio, &pol);
	if (f)
		fclose(f);
	len = snprintf(buf, size, "host %c on CPU %d, %s %d", state, cpu,
		       pol >= 0 && pol < 4 ? policy[pol] : "policy?", prio);
	snprintf(path, sizeof(path), "/proc/self/task/%d/stack", (int)tid);
	f = fopen(path, "r");
	while (f && frames < 4 && len < size && fgets(line, sizeof(line), f)) {
		fn = strchr(line, ' ');
		if (!fn)
			break;
		fn[strcspn(fn, "+\n")] = '\0';
		len += snprintf(buf + len, size - len, "%s%s",
				frames++ ? " <" : ", in", fn);
	}
	if (f)
		fclose(f);
	if (frames)
		return;
	snprintf(path, sizeof(path), "/proc/self/task/%d/wchan", (int)tid);
	f = fopen(path, "r");
	if (f && len < size && fgets(line, sizeof(line), f) &&
	    strcmp(line, "0"))
		snprintf(buf + len, size - len, ", in %.64s", line);
	if (f)
		fclose(f);
}

static int thread_of_task(const struct kscale_run *run,
			  const struct task_struct *task)
{
	int i;

	for (i = 0; task && i < run->nr_threads; i++)
		if (run->threads[i].task == task)
			return i;
	return -1;
}

/*
 * A thread that never counted: where the host and the model scheduler
 * say it is, and the task its CPU switched in last, which it may wait
 * behind (give_back_to_host_sleeper()).
 */
static void name_uncounted(const struct kscale_bench *b,
			   const struct kscale_thread *t)
{
	const struct kscale_run *run = &b->run;
	const struct task_struct *p = t->task, *curr;
	char host[256], curr_host[256];
	int c;

	host_state(t->tid, host, sizeof(host));
	fprintf(stderr, "kscale: %s: thread %d (CPU %d, tid %d) did no "
		"operation in the window nor in the %g s it went on: %s",
		b->name, t->id, t->cpu, (int)t->tid, b->until_counted, host);
	if (b->model_sched && p->rq) {
		curr = READ_ONCE(p->rq->curr);
		c = thread_of_task(run, curr);
		fprintf(stderr, "; model state %#x, on_cpu %d, %lu sleeps, %lu "
			"preemptions; its rq: %u runnable, switched in last ",
			READ_ONCE(p->state), READ_ONCE(p->on_cpu),
			READ_ONCE(p->nvcsw), READ_ONCE(p->nivcsw),
			READ_ONCE(p->rq->nr_running));
		if (c < 0) {
			fprintf(stderr, "%s", curr ? "another's task" : "none");
		} else {
			host_state(run->threads[c].tid, curr_host,
				   sizeof(curr_host));
			fprintf(stderr, "thread %d (on_cpu %d, %s)", c,
				READ_ONCE(curr->on_cpu), curr_host);
		}
	}
	fputc('\n', stderr);
}

/*
 * Past the window's end, until each thread has an operation in it or
 * until_counted is over: under a hypervisor that runs its vCPUs in turn
 * (kscale vm-test's 64 on one host thread), a fixed window can end
 * before a thread's vCPU ran at all.  A model row's only: a host row's
 * thread at 0 is the host's to answer for (glibc's rwlock starves its
 * writers), and waiting for it would only stretch the run.
 */
static void until_counted(const struct kscale_bench *b,
			  const struct snapshot *start, double end)
{
	const struct kscale_run *run = &b->run;
	int i = 0, named = 0;

	while (i < run->nr_threads && now() < end) {
		if (READ_ONCE(run->threads[i].ops) != start[i].ops)
			i++;
		else
			sleep_until(now() + 0.001);
	}
	for (; i < run->nr_threads && named < UNCOUNTED_NAMED; i++) {
		if (READ_ONCE(run->threads[i].ops) == start[i].ops) {
			name_uncounted(b, &run->threads[i]);
			named++;
		}
	}
}

static double interval(const struct span *a, const struct span *b)
{
	return (b->before + b->after) / 2 - (a->before + a->after) / 2;
}

/* Off the workers' CPUs when one is free, so it steals no time from them. */
static void place_controller(struct kscale_bench *b)
{
	struct kscale_run *run = &b->run;

	kscale_set_counter(run, "controller_shares_cpu",
			   b->controller_cpu < 0);
	if (b->controller_cpu >= 0 && affinity_pin(b->controller_cpu))
		kscale_fail(run, "cannot pin the controller to CPU %d",
			    b->controller_cpu);
}

/* Warm up, then one window between two snapshots of every counter. */
static void *controller(void *arg)
{
	struct kscale_bench *b = arg;
	struct kscale_run *run = &b->run;
	struct snapshot *start = calloc(run->nr_threads, sizeof(*start));
	struct snapshot *end = calloc(run->nr_threads, sizeof(*end));
	struct sched_param sp = { .sched_priority = SCHED_PRIO_CONTROL };
	struct res_snapshot res0, res1;
	struct disturb_snapshot d0, d1;
	struct span ops0, ops1, cpu0, cpu1;
	double started, late, go_on, ops;

	place_controller(b);
	if (b->model_sched && sched_fifo)
		pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	gate_open(b);
	started = now();
	sleep_until(started + b->warmup);
	/* perf's events on before the first snapshot, off after the last */
	if (b->perf)
		perf_enable(run);
	disturb_snapshot(run, b->cpu_of_thread, b->nr_threads, &d0);
	snapshot(run, start, lockstat.enabled ? &res0 : NULL, &ops0, &cpu0);
	if (lockstat.enabled)
		lockstat_window(true);
	sleep_until(ops0.after + b->duration);
	late = now() - (ops0.after + b->duration);
	go_on = b->row->host ? 0 : b->until_counted;
	if (go_on > 0)
		until_counted(b, start, ops0.after + b->duration + go_on);
	snapshot(run, end, lockstat.enabled ? &res1 : NULL, &ops1, &cpu1);
	if (lockstat.enabled)
		lockstat_window(false);
	disturb_snapshot(run, b->cpu_of_thread, b->nr_threads, &d1);
	if (b->perf)
		perf_disable(run);
	WRITE_ONCE(run->stop, 1);
	b->window = interval(&ops0, &ops1);
	run->elapsed = ops1.after - started;
	ops = set_counters(b, start, end, interval(&cpu0, &cpu1));
	if (lockstat.enabled)
		res_counters(run, ops, &res0, &res1);
	kscale_set_counter(run, "until_counted_s", go_on);
	kscale_set_counter(run, "snapshot_us",
			   1e6 * fmax(ops0.after - ops0.before,
				      ops1.after - ops1.before));
	disturb_counters(run, &d0, &d1, late);
	wait_threads_left(b, start, end);
	pthread_barrier_wait(&b->window_met);
	free(start);
	free(end);
	return NULL;
}

static void run_thread(struct kscale_bench *b, struct kscale_thread *t)
{
	bool ok = thread_setup(b, t);

	gate_arrive(b, t->id);
	thread_run(b, t, ok);
	pthread_barrier_wait(&b->window_met);
}

/* After run_prepare(): the host's RT throttling off, the controller on. */
static bool start_controller(struct kscale_bench *b)
{
	if (b->model_sched && sched_fifo && rt_throttle_lift())
		fprintf(stderr, "kscale: %s: RT throttling stays on: model "
			"tasks may stop for 50 ms a second\n", b->name);
	if (!pthread_create(&b->controller, NULL, controller, b))
		return true;
	kscale_fail(&b->run, "cannot start the controller thread");
	run_abandon(b);
	return false;
}

/* Thread 0 is Google Benchmark's main thread: its affinity is restored. */
void kscale_bench_thread(void *arg, int thread, struct kb_result *res)
{
	struct kscale_bench *b = arg;
	struct affinity saved;
	int ret;

	if (thread == 0) {
		ret = affinity_save(&saved);
		b->started = !ret && run_prepare(b) && start_controller(b);
		if (ret)
			kscale_fail(&b->run, "cannot save the main thread's "
				    "CPU affinity: %s", strerror(-ret));
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
		if (saved.set && (ret = affinity_restore(&saved))) {
			fprintf(stderr, "kscale: %s: cannot restore the main "
				"thread's CPU affinity: %s\n", b->name,
				strerror(-ret));
			fatal_exit(1);
		}
	}
	if (thread == 0 && b->run.failed)
		fprintf(stderr, "%s: %s: %s\n", b->model->name, b->name,
			b->run.error);
	pthread_barrier_wait(&b->threads_met);
	res->seconds = b->started ? b->window : 1e-9;
	res->error = b->run.failed ? b->run.error : NULL;
}
