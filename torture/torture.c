// SPDX-License-Identifier: GPL-2.0
/*
 * The torture framework and its main(): kernel/locking/locktorture.c's
 * writer loop, stutter and verdict, and kernel/torture.c's shuffler,
 * for the models of kscale.  Departures: a variant runs for a fixed
 * time rather than until the module is removed; the quiet points, where
 * every task is parked between operations so that whole-state
 * invariants hold exactly, stand in for locktorture's stutter.  The
 * lock hooks (torture.h) are its delays inside critical sections.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/harness/flags.h"
#include "../lib/sys/topology.h"
#include "../lib/kernel/delay.h"
#include "../lib/kernel/lockstat.h"
#include "../lib/kernel/percpu.h"
#include "../lib/kernel/sched.h"
#include "torture.h"

#define FAIL_MESSAGES	10	/* said per variant; all are counted */
#define TASK_STACK	(256 * 1024)

/*
 * Inside critical sections, as locktorture's torture_*_write_delay():
 * mostly none, a short one now and then, a long one rarely, so that
 * waiters pile up behind a holder.  Sleeping holds model the kernel's
 * might_sleep() sections: a mutex or rwsem holder preempted, sleeping on
 * I/O or moved to another CPU.  One in ..., per release (locktorture:
 * one in nrealwriters * 2000 long).
 */
#define SHORT_DELAY_ONE_IN	16
#define LONG_DELAY_ONE_IN	2000
#define SHORT_SPIN_NS		2000	/* locktorture's shortdelay_us = 2 */
#define LONG_SPIN_NS		50000	/* in atomic context: spins only */
#define LONG_SLEEP_NS		2000000	/* a sleeping section: 2 ms asleep */
/* An interrupt just after a spinlock's release, one in ... */
#define IRQ_ONE_IN		64
#define IRQ_SPIN_NS		2000
/* In a sleeper's window (lockstat_sleep_window()), one in ... */
#define SLEEP_WINDOW_ONE_IN	8
#define SLEEP_WINDOW_SPIN_NS	5000

/* Between operations, one in ...: a short spin, a sleep, a migration. */
#define OUTSIDE_SPIN_ONE_IN	8
#define OUTSIDE_SPIN_NS		1000
#define OUTSIDE_SLEEP_ONE_IN	2000
#define OUTSIDE_SLEEP_NS	1000000
#define MIGRATE_ONE_IN		1000

extern const struct torture_model *const __start_torture_models[];
extern const struct torture_model *const __stop_torture_models[];

#define for_each_torture_model(m)					\
	for (const struct torture_model *const *m = __start_torture_models; \
	     m < __stop_torture_models; m++)

static struct {
	double seconds;
	int nr_tasks;
	int numa_emulate;
	unsigned long seed;
	double stall;
	double quiet_ms;
	bool list;
	bool help;
} opt;

static const struct kscale_flag torture_flags[] = {
	KSCALE_FLAG_SECONDS("seconds", "S", &opt.seconds,
		KSCALE_FROM(0.01, 1e6), "30", "per variant"),
	KSCALE_FLAG_INT("tasks", "N", &opt.nr_tasks, KSCALE_FROM(1, 4096),
		"4 per CPU, at least 8", "model tasks"),
	KSCALE_FLAG_INT("numa-emulate", "N", &opt.numa_emulate,
		KSCALE_FROM(1, 4096),
		"the real nodes, or 2 on a one-node machine with 2+ CPUs",
		"pretend nodes over the CPUs"),
	KSCALE_FLAG_INT("seed", "N", &opt.seed, KSCALE_FROM(0, 1e15),
		"from the clock; printed", "random seed"),
	KSCALE_FLAG_SECONDS("stall", "S", &opt.stall, KSCALE_FROM(0.1, 1e6),
		"10", "a task without progress for S s fails"),
	KSCALE_FLAG_DOUBLE("quiet-ms", "MS", &opt.quiet_ms,
		KSCALE_FROM(1, 1e6), "100", "a quiet point every MS ms"),
	KSCALE_FLAG_ACTION("list", 0, &opt.list,
		"print MODEL/VARIANT names and exit"),
	KSCALE_FLAG_ACTION("help", 'h', &opt.help, "this text"),
};
#define NR_TORTURE_FLAGS	(sizeof(torture_flags) / sizeof(torture_flags[0]))

int torture_nr_tasks;
__thread struct torture_lock_stats torture_lock_stats;
__thread uint64_t torture_rand = 1;
static struct topology topo;
static const char *variant_name;	/* "model/variant" running */
static int nr_fail;
static bool quiesce, stop;
static int nr_parked;
static unsigned long nr_quiet;		/* quiet points checked */

void torture_fail(const char *fmt, ...)
{
	va_list ap;

	if (__atomic_fetch_add(&nr_fail, 1, __ATOMIC_RELAXED) >= FAIL_MESSAGES)
		return;
	flockfile(stderr);
	fprintf(stderr, "%s-torture: FAIL: ", variant_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

bool torture_migrate(void)
{
	return topo.nr_cpus > 1 &&
	       !sched_migrate_task(topo.cpus[torture_random() % topo.nr_cpus]);
}

static void torture_lock_acquired(uint64_t start)
{
	struct torture_lock_stats *s = &torture_lock_stats;

	s->acquisitions++;
	if (start) {
		uint64_t wait = rdtsc_ordered() - start;

		if (wait > s->max_wait)
			s->max_wait = wait;
	}
}

/* In a section that may sleep: one of the kernel's ways to lose the CPU. */
static void torture_sleeping_hold(struct torture_lock_stats *s)
{
	switch (torture_random() % 4) {
	case 0:
		s->sleeps++;
		schedule_timeout_ns(torture_random() % LONG_SLEEP_NS);
		break;
	case 1:
		if (current->rq && torture_migrate())
			s->migrations++;
		break;
	default:
		s->preempts++;
		yield();
		break;
	}
}

static void torture_lock_release(void)
{
	struct torture_lock_stats *s = &torture_lock_stats;
	uint32_t r = torture_random();

	if (r % LONG_DELAY_ONE_IN == 0) {
		if (preempt_count() || !current->rq) {
			s->spins++;
			ndelay(LONG_SPIN_NS);
		} else {
			torture_sleeping_hold(s);
		}
	} else if (r % SHORT_DELAY_ONE_IN == 0) {
		s->spins++;
		ndelay(torture_random() % SHORT_SPIN_NS);
	}
}

/*
 * Just after a spinlock's release: an interrupt, as one can arrive there
 * in the kernel.  It spins only: the releaser may still have preemption
 * disabled.
 */
static void torture_lock_released(void)
{
	if (torture_random() % IRQ_ONE_IN == 0)
		ndelay(torture_random() % IRQ_SPIN_NS);
}

/*
 * A sleeper's window: it spins only, as it may still hold a spinlock
 * (a state set under wait_lock); long enough for a waker on another CPU
 * to drop its lock, wake us and go.  A sleep costs microseconds anyway.
 */
static void torture_sleep_window(void)
{
	if (torture_random() % SLEEP_WINDOW_ONE_IN == 0)
		ndelay(torture_random() % SLEEP_WINDOW_SPIN_NS);
}

static const struct torture_hooks lock_hooks = {
	.lock_acquired = torture_lock_acquired,
	.lock_release = torture_lock_release,
	.lock_released = torture_lock_released,
	.sleep_window = torture_sleep_window,
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - (time_t)s) * 1e9) };

	nanosleep(&ts, NULL);
}

struct torture_run {
	const struct torture_model *m;
	struct torture_task *tasks;
	pthread_barrier_t start;
};

/* Asleep until the monitor has checked the quiet state. */
static void torture_park(struct torture_task *t)
{
	__atomic_store_n(&t->parked, true, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&nr_parked, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		if (!__atomic_load_n(&quiesce, __ATOMIC_ACQUIRE))
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	__atomic_sub_fetch(&nr_parked, 1, __ATOMIC_SEQ_CST);
	__atomic_store_n(&t->parked, false, __ATOMIC_SEQ_CST);
}

/* Between operations: locktorture's writer delays and the shuffler. */
static void torture_outside(struct torture_task *t)
{
	uint32_t r = torture_random();

	if (r % OUTSIDE_SPIN_ONE_IN == 0)
		ndelay(torture_random() % OUTSIDE_SPIN_NS);
	if (r % OUTSIDE_SLEEP_ONE_IN == 1)
		schedule_timeout_ns(torture_random() % OUTSIDE_SLEEP_NS);
	if (r % MIGRATE_ONE_IN == 2 && torture_migrate())
		t->migrations++;
	cond_resched();
}

static struct torture_run run;

static void *torture_task_fn(void *arg)
{
	struct torture_task *t = arg;
	int id = t->id;

	if (sched_task_start(topo.cpus[id % topo.nr_cpus])) {
		torture_fail("task %d: cannot start on CPU %d", id,
			     topo.cpus[id % topo.nr_cpus]);
		pthread_barrier_wait(&run.start);
		return NULL;
	}
	t->task = current;
	torture_rand = opt.seed * 0x9E3779B97F4A7C15ULL + id + 1;
	memset(&torture_lock_stats, 0, sizeof(torture_lock_stats));
	pthread_barrier_wait(&run.start);
	sched_task_run();
	if (run.m->task_init)
		run.m->task_init(t);
	while (!__atomic_load_n(&stop, __ATOMIC_ACQUIRE)) {
		if (__atomic_load_n(&quiesce, __ATOMIC_ACQUIRE))
			torture_park(t);
		run.m->op(t);
		__atomic_store_n(&t->ops, t->ops + 1, __ATOMIC_RELEASE);
		torture_outside(t);
	}
	if (run.m->task_exit)
		run.m->task_exit(t);
	t->locks = torture_lock_stats;
	sched_task_exit();
	return NULL;
}

/* Tasks that made no progress since the last look, for stall seconds. */
static void torture_check_progress(struct torture_task *tasks,
				   unsigned long *seen, double *since,
				   double now)
{
	int i;

	for (i = 0; i < torture_nr_tasks; i++) {
		unsigned long ops = __atomic_load_n(&tasks[i].ops,
						    __ATOMIC_ACQUIRE);

		if (ops != seen[i] ||
		    __atomic_load_n(&tasks[i].parked, __ATOMIC_ACQUIRE)) {
			seen[i] = ops;
			since[i] = now;
		} else if (since[i] && now - since[i] > opt.stall) {
			struct task_struct *p = tasks[i].task;

			torture_fail("task %d: no progress for %.0f s (%lu ops, "
				     "state %#x, CPU %d): a lost wake-up?", i,
				     now - since[i], ops,
				     p ? __atomic_load_n(&p->state,
							 __ATOMIC_RELAXED) : 0,
				     p ? p->cpu : -1);
			since[i] = 0;	/* once a task */
		}
	}
}

/*
 * Park every task, check the whole state, let them go.  Only parked tasks
 * are woken: a wake-up of any other could hide a model's lost one.
 */
static void torture_quiet_point(void)
{
	double deadline = now_s() + opt.stall;
	int i;

	__atomic_store_n(&quiesce, true, __ATOMIC_SEQ_CST);
	while (__atomic_load_n(&nr_parked, __ATOMIC_SEQ_CST) < torture_nr_tasks) {
		if (now_s() > deadline) {
			for (i = 0; i < torture_nr_tasks; i++)
				if (!__atomic_load_n(&run.tasks[i].parked,
						     __ATOMIC_ACQUIRE))
					torture_fail("task %d: not parked within "
						     "%.0f s", i, opt.stall);
			break;
		}
		sleep_s(0.0002);
	}
	if (__atomic_load_n(&nr_parked, __ATOMIC_SEQ_CST) == torture_nr_tasks) {
		if (run.m->quiet)
			run.m->quiet();
		nr_quiet++;
	}
	__atomic_store_n(&quiesce, false, __ATOMIC_SEQ_CST);
	for (i = 0; i < torture_nr_tasks; i++)
		if (__atomic_load_n(&run.tasks[i].parked, __ATOMIC_SEQ_CST))
			wake_up_process(run.tasks[i].task);
}

/* The monitor outranks the tasks, as the harness's controller does. */
static void monitor_priority(bool raise)
{
	struct sched_param sp = { raise ? SCHED_PRIO_CONTROL : 0 };

	if (sched_fifo)
		pthread_setschedparam(pthread_self(),
				      raise ? SCHED_FIFO : SCHED_OTHER, &sp);
}

static void torture_monitor(void)
{
	unsigned long *seen = calloc(torture_nr_tasks, sizeof(*seen));
	double *since = calloc(torture_nr_tasks, sizeof(*since));
	double start = now_s(), next_quiet = start + opt.quiet_ms / 1e3;
	double now;

	if (!seen || !since)
		abort();
	monitor_priority(true);
	while ((now = now_s()) < start + opt.seconds) {
		torture_check_progress(run.tasks, seen, since, now);
		if (now >= next_quiet) {
			torture_quiet_point();
			next_quiet = now_s() + opt.quiet_ms / 1e3;
		}
		sleep_s(0.01);
	}
	monitor_priority(false);
	free(seen);
	free(since);
}

/* Join within the stall bound, or give up on the process. */
static void torture_join(pthread_t *tid)
{
	struct timespec ts;
	int i;

	__atomic_store_n(&stop, true, __ATOMIC_SEQ_CST);
	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += (time_t)opt.stall + 1;
	for (i = 0; i < torture_nr_tasks; i++) {
		if (pthread_timedjoin_np(tid[i], NULL, &ts)) {
			torture_fail("task %d: did not stop within %.0f s",
				     i, opt.stall);
			printf("%s-torture: End of test: FAILURE: %d\n",
			       variant_name, nr_fail);
			fflush(stdout);
			_exit(1);
		}
	}
}

/* Sections the host slept in before this variant (sched_host_sleeps()). */
static unsigned long host_sleeps_start;

static void print_verdict(double secs, const char *verdict)
{
	struct torture_lock_stats sum = { 0 };
	unsigned long ops = 0, migrations = 0;
	char extra[256] = "";
	int i;

	for (i = 0; i < torture_nr_tasks; i++) {
		struct torture_task *t = &run.tasks[i];

		ops += t->ops;
		migrations += t->migrations + t->locks.migrations;
		sum.acquisitions += t->locks.acquisitions;
		sum.spins += t->locks.spins;
		sum.preempts += t->locks.preempts;
		sum.sleeps += t->locks.sleeps;
		if (t->locks.max_wait > sum.max_wait)
			sum.max_wait = t->locks.max_wait;
	}
	if (run.m->stats)
		run.m->stats(extra, sizeof(extra));
	printf("%s-torture: Operations: %lu Acquisitions: %llu Max wait: "
	       "%.0f us Delays inside: %llu spins %llu preemptions %llu "
	       "sleeps Migrations: %lu Host sleeps: %lu Quiet points: %lu%s%s "
	       "Fail: %d\n", variant_name, ops,
	       (unsigned long long)sum.acquisitions,
	       cycles_to_ns(sum.max_wait) / 1e3,
	       (unsigned long long)sum.spins,
	       (unsigned long long)sum.preempts,
	       (unsigned long long)sum.sleeps, migrations,
	       sched_host_sleeps() - host_sleeps_start, nr_quiet,
	       *extra ? " " : "", extra, nr_fail);
	printf("%s-torture: End of test: %s: %.1f s, nr_tasks=%d nr_cpus=%d "
	       "nodes=%d seed=%lu\n", variant_name, verdict, secs,
	       torture_nr_tasks, topo.nr_cpus, topo.nr_nodes, opt.seed);
	fflush(stdout);
}

static const char *posted_bug(const struct torture_model *m, const void *v)
{
	return m->posted_bug ? m->posted_bug(v) : NULL;
}

/* One variant: 0 on SUCCESS, or on the FAILURE its posted bug must cause. */
static int torture_variant(const struct torture_model *m, const void *v,
			   const char *name)
{
	pthread_t *tid = calloc(torture_nr_tasks, sizeof(*tid));
	const char *bug = posted_bug(m, v);
	char full[128], verdict[256];
	int missed;
	pthread_attr_t attr;
	double start;
	int i;

	snprintf(full, sizeof(full), "%s/%s", m->name, name);
	variant_name = full;
	run.m = m;
	nr_fail = 0;
	stop = quiesce = false;
	nr_parked = 0;
	nr_quiet = 0;
	run.tasks = aligned_alloc(sizeof(*run.tasks),
				  torture_nr_tasks * sizeof(*run.tasks));
	if (!tid || !run.tasks)
		abort();
	memset(run.tasks, 0, torture_nr_tasks * sizeof(*run.tasks));
	for (i = 0; i < torture_nr_tasks; i++)
		run.tasks[i].id = i;
	printf("%s-torture: Start: nr_tasks=%d nr_cpus=%d nodes=%d "
	       "seconds=%g seed=%lu\n", full, torture_nr_tasks, topo.nr_cpus,
	       topo.nr_nodes, opt.seconds, opt.seed);
	fflush(stdout);
	if (m->init(v, torture_nr_tasks)) {
		printf("%s-torture: End of test: FAILURE: init\n", full);
		return 1;
	}
	__atomic_store_n(&torture_hooks, &lock_hooks, __ATOMIC_SEQ_CST);
	host_sleeps_start = sched_host_sleeps();
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, TASK_STACK);
	pthread_barrier_init(&run.start, NULL, torture_nr_tasks + 1);
	for (i = 0; i < torture_nr_tasks; i++)
		if (pthread_create(&tid[i], &attr, torture_task_fn,
				   &run.tasks[i]))
			abort();
	pthread_barrier_wait(&run.start);
	start = now_s();
	torture_monitor();
	torture_join(tid);
	__atomic_store_n(&torture_hooks, NULL, __ATOMIC_SEQ_CST);
	/* the tasks gone: the end state is a quiet point too */
	if (m->quiet)
		m->quiet();
	if (m->cleanup)
		m->cleanup();
	missed = bug ? !nr_fail : nr_fail != 0;
	if (!bug)
		snprintf(verdict, sizeof(verdict), "%s",
			 nr_fail ? "FAILURE" : "SUCCESS");
	else
		snprintf(verdict, sizeof(verdict), "%s the posted bug: %s",
			 nr_fail ? "FAILURE, as expected from" :
			 "FAILURE: missed", bug);
	print_verdict(now_s() - start, verdict);
	pthread_barrier_destroy(&run.start);
	pthread_attr_destroy(&attr);
	free(run.tasks);
	free(tid);
	return missed;
}

static void usage(void)
{
	printf("usage: torture [OPTIONS] [MODEL[/VARIANT]...]\n"
	       "Torture every variant of each MODEL (all models by default) on "
	       "the model\nscheduler; a locktorture verdict per variant; exit "
	       "1 if any failed.\n");
	kscale_flags_help(stdout, torture_flags, NR_TORTURE_FLAGS);
}

static _Noreturn void bad(const char *what, const char *value)
{
	fprintf(stderr, "torture: bad %s '%s' (see --help)\n", what, value);
	exit(2);
}

static bool selected(char **names, int nr, const char *model,
		     const char *variant, bool *used)
{
	size_t len = strlen(model);
	bool any = false;
	int i;

	if (!nr)
		return true;
	for (i = 0; i < nr; i++) {
		if (strcmp(names[i], model) &&
		    (strncmp(names[i], model, len) || names[i][len] != '/' ||
		     strcmp(names[i] + len + 1, variant)))
			continue;
		used[i] = true;
		any = true;
	}
	return any;
}

static void list_variants(void)
{
	for_each_torture_model(m) {
		const struct kscale_variant *v;
		const char *bug;

		for_each_variant_row(v, (*m)->variants) {
			bug = posted_bug(*m, v->ops);
			printf("%s/%s%s%s\n", (*m)->name, v->name,
			       bug ? " posted bug: " : "", bug ? bug : "");
		}
	}
}

/* The flags into opt; the MODEL[/VARIANT] names left in names[]. */
static int parse_args(int argc, char **argv, char **names)
{
	char err[256];
	int i, nr = 0, ret;
	bool flags = true;

	opt.seed = (unsigned long)time(NULL);
	if (kscale_flags_defaults(torture_flags, NR_TORTURE_FLAGS,
				  err, sizeof(err)))
		goto fail;
	for (i = 1; i < argc; i++) {
		if (flags && !strcmp(argv[i], "--")) {
			flags = false;
			continue;
		}
		if (!flags || argv[i][0] != '-') {
			names[nr++] = argv[i];
			continue;
		}
		ret = kscale_flags_parse(torture_flags,
					 NR_TORTURE_FLAGS, argv[i],
					 err, sizeof(err));
		if (!ret)
			snprintf(err, sizeof(err), "unknown option '%s' (see "
				 "--help)", argv[i]);
		if (ret <= 0)
			goto fail;
	}
	if (opt.help) {
		usage();
		exit(0);
	}
	if (opt.list) {
		list_variants();
		exit(0);
	}
	return nr;
fail:
	fprintf(stderr, "torture: %s\n", err);
	exit(2);
}

static void machine_init(void)
{
	char err[256];
	int nodes;

	if (topology_from_system(&topo, err, sizeof(err))) {
		fprintf(stderr, "torture: %s\n", err);
		exit(1);
	}
	nodes = opt.numa_emulate ? opt.numa_emulate :
		topo.nr_nodes > 1 ? 0 : topo.nr_cpus > 1 ? 2 : 0;
	if (nodes && topology_emulate(&topo, nodes, err, sizeof(err))) {
		fprintf(stderr, "torture: %s\n", err);
		exit(2);
	}
	percpu_setup(&topo);
	kscale_set_cpu(topo.cpus[0]);
	if (tsc_calibrate(err, sizeof(err))) {
		fprintf(stderr, "torture: %s\n", err);
		exit(1);
	}
	sched_init();
	sched_set_slice_ns(0, topo.nr_cpus);
	sched_lone_ns = SCHED_LONE_NS;
	torture_nr_tasks = opt.nr_tasks ? opt.nr_tasks :
			   4 * topo.nr_cpus < 8 ? 8 : 4 * topo.nr_cpus;
}

int main(int argc, char **argv)
{
	char **names = calloc(argc, sizeof(*names));
	bool *used = calloc(argc, sizeof(*used));
	int nr, i, failed = 0, ran = 0;

	if (!names || !used)
		abort();
	for_each_torture_model(m) {
		char err[256];

		if (kscale_variant_table_check((*m)->variants, err,
					       sizeof(err))) {
			fprintf(stderr, "torture: %s: %s\n", (*m)->name, err);
			exit(2);
		}
	}
	nr = parse_args(argc, argv, names);
	for_each_torture_model(m) {
		const struct kscale_variant *v;

		for_each_variant_row(v, (*m)->variants)
			selected(names, nr, (*m)->name, v->name, used);
	}
	for (i = 0; i < nr; i++)
		if (!used[i])
			bad("model", names[i]);
	machine_init();
	for_each_torture_model(m) {
		const struct kscale_variant *v;

		for_each_variant_row(v, (*m)->variants) {
			if (!selected(names, nr, (*m)->name, v->name, used))
				continue;
			kscale_variant_locks(v);
			failed += torture_variant(*m, v->ops, v->name);
			ran++;
		}
	}
	printf("torture: %d variants, %d failed\n", ran, failed);
	free(used);
	free(names);
	return failed ? 1 : 0;
}
