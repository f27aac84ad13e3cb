// SPDX-License-Identifier: GPL-2.0
/*
 * Not a model: a bench binary whose workloads check the harness itself
 * (tests/test_harness.sh).  `rate` spends a known amount of its thread's
 * CPU time per operation, so its rate per second of CPU is known however
 * busy the host is, and checks where it runs and reports the run's own
 * clock; the others
 * misbehave as a model might: a thread that hangs before or in the window,
 * a set-up or teardown that fails without kscale_fail(), too many counters.
 * Every workload runs on the host (`host`) and the model scheduler
 * (`model`).
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../lib/sys/affinity.h"
#include "../lib/harness/kscale.h"
#include "../lib/harness/options.h"
#include "../lib/kernel/delay.h"

struct rate_run {
	int setup_cpu;
	bool stop_aligned;
	unsigned long wrong_cpu;	/* ops run off the thread's CPU */
};

static cpu_set_t *initial_mask;
static size_t initial_size;

static int rate_setup(struct kscale_run *run)
{
	struct rate_run *r = calloc(1, sizeof(*r));

	if (!r)
		return kscale_fail(run, "out of memory");
	r->setup_cpu = sched_getcpu();
	r->stop_aligned = !((uintptr_t)&run->stop % SMP_CACHE_BYTES);
	run->priv = r;
	return 0;
}

/* The thread's own CPU time in ns. */
static long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/*
 * Spin until the thread has had ns more of CPU: where ndelay() spins on
 * the TSC, a thread switched out mid-delay would finish on less CPU.
 */
static void cpu_delay(long ns)
{
	long until = thread_cpu_ns() + ns;

	while (thread_cpu_ns() < until)
		;
}

static void rate_loop(struct kscale_thread *t)
{
	struct rate_run *r = t->run->priv;
	long delay = kscale_knob_long(t->run, "delay_ns");

	while (kscale_running(t)) {
		cpu_delay(delay);
		if (sched_getcpu() != t->cpu)
			__atomic_fetch_add(&r->wrong_cpu, 1, __ATOMIC_RELAXED);
		kscale_count(t);
	}
}

static int rate_teardown(struct kscale_run *run)
{
	struct rate_run *r = run->priv;

	kscale_set_counter(run, "setup_on_thread0_cpu",
			   r->setup_cpu == run->threads[0].cpu);
	kscale_set_counter(run, "stop_cache_aligned", r->stop_aligned);
	kscale_set_counter(run, "wrong_cpu_ops", r->wrong_cpu);
	/* the harness's clock: from the controller's start to its last read */
	kscale_set_counter(run, "elapsed_s", run->elapsed);
	free(r);
	return 0;
}

/* A word on the hung thread's stack, as a sleeper's rwsem_waiter is. */
static volatile int *hung_on;

/* One thread sleeps for good: a lost wake-up. */
static void hang(struct kscale_thread *t)
{
	volatile int on_stack = 1;

	hung_on = &on_stack;
	if (t->run->bench && kscale_variant(t->run)[0] == 'm') {
		set_current_state(TASK_UNINTERRUPTIBLE);
		schedule();
	}
	for (;;)
		pause();
}

static int hang_init(struct kscale_thread *t)
{
	if (t->id == t->run->nr_threads - 1 &&
	    !strcmp(kscale_knob(t->run, "hang"), "init"))
		hang(t);
	return 0;
}

static void hang_loop(struct kscale_thread *t)
{
	bool last = t->id == t->run->nr_threads - 1;

	while (kscale_running(t)) {
		if (last && !strcmp(kscale_knob(t->run, "hang"), "loop") &&
		    t->ops > 1000)
			hang(t);
		ndelay(100);
		kscale_count(t);
	}
}

static int no_teardown(struct kscale_run *run)
{
	return 0;
}

/* As a model's teardown walks a wait list into a sleeper's stack. */
static int hang_teardown(struct kscale_run *run)
{
	if (hung_on && *hung_on != 1)
		return kscale_fail(run, "the hung thread's stack was reused");
	hung_on = NULL;
	return 0;
}

static int silent_setup(struct kscale_run *run)
{
	return -1;
}

static int silent_teardown(struct kscale_run *run)
{
	return -1;
}

static void idle_loop(struct kscale_thread *t)
{
	while (kscale_running(t))
		kscale_count(t);
}

/* The harness's t->priv: zeroed, aligned, the thread's own, summed. */
struct private_counts {
	unsigned long ops, dirty;
};

struct private_thread {
	int cpu_at_init;
	struct private_counts counts;
	char pad[100];
};

static int private_init(struct kscale_thread *t)
{
	struct private_thread *pt = t->priv;
	const char *b = t->priv;
	size_t i;

	for (i = 0; i < sizeof(*pt); i++)
		pt->counts.dirty += b[i] != 0;
	if ((uintptr_t)pt % _Alignof(struct kscale_thread))
		pt->counts.dirty++;
	pt->cpu_at_init = sched_getcpu();
	return 0;
}

static void private_loop(struct kscale_thread *t)
{
	struct private_thread *pt = t->priv;

	while (kscale_running(t)) {
		pt->counts.ops++;
		kscale_count(t);
	}
}

static int private_teardown(struct kscale_run *run)
{
	struct private_counts sum;
	unsigned long ops = 0;
	int i, off_cpu = 0;

	KSCALE_SUM_THREADS(run, struct private_thread, counts, &sum);
	for (i = 0; i < run->nr_threads; i++) {
		ops += run->threads[i].ops;
		off_cpu += ((struct private_thread *)run->threads[i].priv)->
			   cpu_at_init != run->threads[i].cpu;
	}
	kscale_set_counter(run, "private_dirty", sum.dirty);
	kscale_set_counter(run, "private_off_cpu", off_cpu);
	if (sum.ops != ops)
		return kscale_fail(run, "the threads' own counts sum to %lu, "
				   "their ops to %lu", sum.ops, ops);
	return 0;
}

/* One counter more than a run holds. */
static int many_counters(struct kscale_run *run)
{
	static char names[KSCALE_MAX_COUNTERS + 1][8];
	int i;

	for (i = 0; i <= KSCALE_MAX_COUNTERS; i++) {
		snprintf(names[i], sizeof(names[i]), "c%02d", i);
		kscale_set_counter(run, names[i], i);
	}
	return 0;
}

static const struct kscale_workload workloads[] = {
	{ "rate", "delay_ns of CPU time per op: a known rate; checks placement",
	  rate_setup, NULL, rate_loop, rate_teardown },
	{ "private", "each thread counts in the t->priv the harness gives it",
	  NULL, private_init, private_loop, private_teardown,
	  sizeof(struct private_thread) },
	{ "hang", "the last thread hangs (--hang=init|loop)", NULL, hang_init,
	  hang_loop, hang_teardown },
	{ "silent_setup", "set-up returns -1 without kscale_fail()",
	  silent_setup, NULL, idle_loop, no_teardown },
	{ "silent_teardown", "teardown returns -1 without kscale_fail()", NULL,
	  NULL, idle_loop, silent_teardown },
	{ "counters", "sets one counter more than a run holds", NULL, NULL,
	  idle_loop, many_counters },
};

/*
 * The workloads are the same on either scheduler: a row's implementation
 * is only which one it runs on.  Built with -DBROKEN_ROW, each table has
 * a row the harness must refuse (test_harness.sh).
 */
static const bool on_model = true, on_host = true;

KSCALE_VARIANT_TABLE(harness_check_variants,
	{ "model", "the model scheduler", &on_model,
	  .kernel = "2.6.26" },
#if BROKEN_ROW == 1
	{ "typo", "a model row whose implementation was left out",
	  .kernel = "2.6.26" },
#elif BROKEN_ROW == 2
	{ "both", "a model row that also has a host side", &on_model,
	  &on_host, "2.6.26" },
#endif
);

static const struct kscale_variant host_variants[] = {
	{ "host", "the host's scheduler", .host = &on_host },
#if BROKEN_ROW == 3
	{ "model_code", "a host row with a model implementation", &on_model,
	  &on_host },
#elif BROKEN_ROW == 4
	{ "no_host", "a host row with nothing to run" },
#elif BROKEN_ROW == 5
	{ "model", "a host row named as a model row", .host = &on_host },
#endif
};

static int check_hang(const char *value, char *err, size_t len)
{
	if (!strcmp(value, "init") || !strcmp(value, "loop") ||
	    !strcmp(value, "none"))
		return 0;
	snprintf(err, len, "expected init, loop or none");
	return -1;
}

static const struct kscale_knob knobs[] = {
	{ "delay_ns", "1000", "ns of the thread's CPU time per operation",
	  kscale_check_ns_or_auto },
	{ "hang", "none", "where the `hang` workload's last thread hangs",
	  check_hang },
};

/* The main thread's mask when the runs are over, against the one before. */
static void check_mask_restored(void)
{
	struct affinity now;

	if (affinity_save(&now) || now.size != initial_size ||
	    !CPU_EQUAL_S(now.size, now.set, initial_mask)) {
		fprintf(stderr, "harness_check: the main thread's CPU affinity "
			"was not restored\n");
		_exit(3);
	}
	CPU_FREE(now.set);
}

/*
 * The main thread starts the runs on the last allowed CPU (its mask left
 * whole), away from thread 0's under compact placement: a set-up the
 * harness did not pin shows in setup_on_thread0_cpu.
 */
static int harness_check_init(const struct kscale_options *o, char *err,
			      size_t len)
{
	struct affinity a;
	cpu_set_t *last;
	int cpu;

	if (affinity_save(&a)) {
		snprintf(err, len, "cannot read the main thread's affinity");
		return -1;
	}
	initial_mask = a.set;
	initial_size = a.size;
	atexit(check_mask_restored);
	last = CPU_ALLOC(a.size * 8);
	for (cpu = a.size * 8 - 1; cpu >= 0 && !CPU_ISSET_S(cpu, a.size, a.set);)
		cpu--;
	CPU_ZERO_S(a.size, last);
	CPU_SET_S(cpu, a.size, last);
	if (pthread_setaffinity_np(pthread_self(), a.size, last) ||
	    pthread_setaffinity_np(pthread_self(), a.size, a.set)) {
		snprintf(err, len, "cannot move the main thread");
		return -1;
	}
	CPU_FREE(last);
	return 0;
}

KSCALE_MODEL("harness_check", "checks of the harness itself (not a model)",
	     harness_check_init, &harness_check_variants);
