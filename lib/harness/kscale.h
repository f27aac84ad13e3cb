/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a model file provides and what it can call.
 *
 * A bench binary is lib/ plus one file that defines `kscale_model`: its
 * workloads (each a loop that counts operations until told to stop),
 * variants, and knobs.  The harness owns everything else: options,
 * topology and pinning, the fixed measurement window, Google Benchmark
 * registration, results and their context.
 */
#ifndef KSCALE_H
#define KSCALE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include "../kernel/compiler.h"
#include "../kernel/sched.h"
#include "variant.h"

struct kscale_run;

struct kscale_thread {
	unsigned long ops;		/* written by its thread only */
	struct kscale_run *run;
	int id;				/* 0 .. nr_threads - 1 */
	int cpu;			/* the CPU the plan gave it */
	void *priv;			/* the workload's, per thread */
	clockid_t cputime;		/* its CPU-time clock */
	pid_t tid;
	struct task_struct *task;	/* its model task, for the controller */
	int class;			/* its workload's ->classes[], set up */
	double loop_ns;			/* in its loop, the drain after stop too */
} __attribute__((aligned(2 * SMP_CACHE_BYTES)));

/*
 * A run's counters: --profile sets 7 a resource class and 10 an rwsem's
 * (lockstat.h); real_lookup's parallel with --fs-io-us and --icache
 * needs 80 in all.  gbench.h's KB_MAX_COUNTERS holds as many.
 */
#define KSCALE_MAX_COUNTERS	96

struct kscale_counter {
	const char *name;
	double value;
};

struct kscale_run {
	const struct kscale_bench *bench;
	int nr_threads;
	struct kscale_thread *threads;
	void *priv;			/* the workload's, shared */
	int failed;			/* error[] is set: the run is void */
	double elapsed;			/* s from start to stop, warm-up included */
	char error[256];
	int nr_counters;
	struct kscale_counter counters[KSCALE_MAX_COUNTERS];
	int stop ____cacheline_aligned;
};

struct kscale_workload {
	const char *name;
	const char *doc;
	/* Main thread, before the window; 0 or kscale_fail(). */
	int (*setup)(struct kscale_run *run);
	/* Each thread, pinned, before the window. */
	int (*thread_init)(struct kscale_thread *t);
	/* The test: `while (kscale_running(t)) { ...; kscale_count(t); }` */
	void (*loop)(struct kscale_thread *t);
	/* Main thread, after every thread left the loop: check, count, free. */
	int (*teardown)(struct kscale_run *run);
	/*
	 * Not 0: each thread's t->priv, this many bytes, zeroed and aligned
	 * as struct kscale_thread is, allocated on the thread's own CPU
	 * before thread_init (first touch: its node's memory) and freed
	 * after teardown.
	 */
	size_t thread_size;
	/*
	 * Not NULL: the classes of its threads, NULL-terminated ("reader",
	 * "writer"); the set-up gives each thread its t->class, and the
	 * window counts each class's operations apart (<class>_ops,
	 * <class>_ops_per_sec, <class>_threads and, when the class has
	 * threads, <class>_ops_per_sec_min/_mean/_max).
	 */
	const char *const *classes;
	/* Not NULL: whether it runs a row; the others are not registered. */
	bool (*runs)(const struct kscale_variant *row);
};

struct kscale_knob {
	const char *name;		/* --name (with '-' for '_') */
	const char *def;		/* default, a comma list */
	const char *doc;
	/* One value; 0, or -1 with a reason in err. */
	int (*check)(const char *value, char *err, size_t len);
	/* Not NULL: the one workload it is a knob of, in whose names only. */
	const char *workload;
};

struct kscale_options;

struct kscale_model {
	const char *name;
	const char *doc;
	const struct kscale_workload *workloads;
	int nr_workloads;
	/* The model's table (variant.h), then the bench's host rows. */
	const struct kscale_variant_table *variants;
	const struct kscale_variant *host_variants;
	int nr_host_variants;
	const struct kscale_knob *knobs;
	int nr_knobs;
	/* Once, before any run: calibrate, add context; 0 or -1 with err. */
	int (*init)(const struct kscale_options *o, char *err, size_t len);
};

extern const struct kscale_model kscale_model;

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/*
 * A bench file ends with this, after its workloads[], host_variants[] (its
 * host rows, variant.h) and knobs[]; _variants is the model's table.
 */
#define KSCALE_MODEL(_name, _doc, _init, _variants)			\
	const struct kscale_model kscale_model = {			\
		.name = (_name),					\
		.doc = (_doc),						\
		.workloads = workloads,					\
		.nr_workloads = ARRAY_SIZE(workloads),			\
		.variants = (_variants),				\
		.host_variants = host_variants,				\
		.nr_host_variants = ARRAY_SIZE(host_variants),		\
		.knobs = knobs,						\
		.nr_knobs = ARRAY_SIZE(knobs),				\
		.init = (_init),					\
	}

/*
 * The running kernel's functions on the model's path, profiled over its
 * host variants' windows (--perf): kernel_<function>_children_pct and
 * kernel_<function>_self_pct.  Optional, one line in a bench file:
 * KSCALE_PERF_SYMBOLS("osq_lock", "rwsem_spin_on_owner");
 */
extern const char *const kscale_perf_symbols[];
#define KSCALE_PERF_SYMBOLS(...)					\
	const char *const kscale_perf_symbols[] = { __VA_ARGS__, NULL }

/*
 * The metric a reader looks at first (kscale compare's default, context
 * kscale_primary_metric); ops_per_sec without.  One line in a bench file.
 */
#define KSCALE_PRIMARY_METRIC(name)					\
	const char kscale_primary_metric[] = name

/*
 * A share of the threads' time in their loops, in %: of every thread's
 * time from its loop's start to its end, the drain after the window
 * included (a waiter queued at the stop still waits its turn), so that
 * what the threads counted over the same span is at most 100.
 */
static inline double kscale_loop_pct(const struct kscale_run *run, double ns)
{
	double all = 0;
	int i;

	for (i = 0; i < run->nr_threads; i++)
		all += run->threads[i].loop_ns;
	return all > 0 ? 100 * ns / all : 0;
}

static inline bool kscale_running(struct kscale_thread *t)
{
	return likely(!READ_ONCE(t->run->stop));
}

/* The end of an operation: the return to user space, a preemption point. */
static inline void kscale_count(struct kscale_thread *t)
{
	WRITE_ONCE(t->ops, t->ops + 1);
	cond_resched();
}

const char *kscale_variant(const struct kscale_run *run);
/*
 * The run's row: a model row's ->ops, or a host row's ->host.  A bench
 * has one step vector a host row and one for every model row, which
 * calls the row's ops: `k = row->host ?: &model_kind`.
 */
const struct kscale_variant *kscale_row(const struct kscale_run *run);
const char *kscale_knob(const struct kscale_run *run, const char *name);
long kscale_knob_long(const struct kscale_run *run, const char *name);
int kscale_fail(struct kscale_run *run, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void kscale_set_counter(struct kscale_run *run, const char *name, double v);
void kscale_add_context(const char *key, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Move the calling task to cpu and make it "this CPU". */
int kscale_migrate(struct kscale_thread *t, int cpu);
/* The next CPU after t's in the placement order, for migrations. */
int kscale_partner_cpu(const struct kscale_thread *t);
/* CPUs the placement can use (threads may be fewer). */
int kscale_nr_usable_cpus(const struct kscale_run *run);
/* Distinct CPUs this run's threads are on. */
int kscale_nr_distinct_cpus(const struct kscale_run *run);
double kscale_window_seconds(const struct kscale_run *run);
double kscale_warmup_seconds(const struct kscale_run *run);

int kscale_check_long(const char *value, long min, long max, char *err,
		      size_t len);
int kscale_check_bool(const char *value, char *err, size_t len);
/* A knob of ns of calibrated work: a number up to 10 ms, or "auto". */
#define KSCALE_MAX_NS	(10 * 1000 * 1000)
int kscale_check_ns_or_auto(const char *value, char *err, size_t len);
/* Its value in a run, `measured` standing for "auto". */
unsigned long kscale_knob_ns(const struct kscale_run *run, const char *name,
			     unsigned long measured);
/* A size with its k/m/g suffix (4k, 64m); SIZE_MAX where it overflows. */
size_t kscale_parse_size(const char *value);
/* A knob of a size from min to max bytes, kscale_parse_size()'s. */
int kscale_check_size(const char *value, size_t min, size_t max, char *err,
		      size_t len);
/* A counter already set for the run, 0 if none. */
double kscale_counter(const struct kscale_run *run, const char *name);
double kscale_now_ns(void);

/*
 * The sum over the run's threads of the unsigned longs of a struct at
 * offset in each thread's t->priv (the workload's thread_size), into sum,
 * which has nr of them: KSCALE_SUM_THREADS(run, struct x_thread, stats,
 * &total) for a member `stats` made of unsigned longs alone.
 */
void kscale_sum_threads(const struct kscale_run *run, size_t offset,
			unsigned long *sum, size_t nr);
#define KSCALE_SUM_THREADS(run, type, member, sum) ({			\
	_Static_assert(sizeof(*(sum)) == sizeof(((type *)0)->member) &&	\
		       sizeof(*(sum)) % sizeof(unsigned long) == 0,	\
		       "a struct of unsigned longs, the member's type");\
	kscale_sum_threads((run), offsetof(type, member),		\
			   (unsigned long *)(sum),			\
			   sizeof(*(sum)) / sizeof(unsigned long));	\
})

/* xorshift64: a cheap per-thread random stream (seed it non-zero). */
static inline uint64_t kscale_rand64(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

#endif
