/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kscale torture: locktorture's standard for every primitive and model
 * (kernel/locking/locktorture.c, kernel/torture.c).  A torture file is
 * one model: its variants and one random operation; the framework runs
 * many more tasks than CPUs on the model scheduler, stretches every
 * critical section (its lock hooks below), delays and migrates tasks
 * between operations, parks them all now and then for the model's
 * whole-state checks, bounds every task's progress, and prints
 * locktorture's verdict per variant.
 */
#ifndef KSCALE_TORTURE_H
#define KSCALE_TORTURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/harness/variant.h"
#include "../lib/kernel/compiler.h"

/*
 * The lock hooks (lib/kernel/torture.h), locktorture's delays moved into
 * every lock a model takes: while a variant's tasks run, each release
 * first holds the lock a random while longer, and each acquisition is
 * counted with its wait.  What the hold may do follows the kernel's rule
 * for the context it runs in: with preemption off (a spinlock,
 * get_cpu_var()) it only spins; in a sleeping lock's section it may also
 * reach a preemption point, sleep or be migrated.  The kernel's torture
 * hooks are in the test's own lock calls; here they sit in the model's,
 * so every critical section of a model is stretched, not only the
 * torture loop's.
 */
struct torture_lock_stats {
	uint64_t acquisitions;
	uint64_t max_wait;		/* cycles from the call to the lock held */
	uint64_t spins, preempts, sleeps, migrations;	/* delays inside */
};

/* One thread's, read by the framework once the thread is done. */
extern __thread struct torture_lock_stats torture_lock_stats;
/* torture_random()'s state: the framework seeds it per thread. */
extern __thread uint64_t torture_rand;

/* xorshift64*: locktorture's torture_random() stand-in. */
static inline uint32_t torture_random(void)
{
	uint64_t x = torture_rand;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	torture_rand = x;
	return (uint32_t)((x * 0x2545F4914F6CDD1DULL) >> 32);
}

/* To one of the run's CPUs at random: true if the task moved. */
bool torture_migrate(void);

struct torture_task {
	int id;				/* 0 .. torture_nr_tasks - 1 */
	void *priv;			/* the model's, per task */
	unsigned long ops;		/* operations done: its progress */
	bool parked;			/* at a quiet point */
	struct task_struct *task;
	struct torture_lock_stats locks;	/* its hooks' counts, at exit */
	unsigned long migrations;	/* between operations */
} ____cacheline_aligned;

struct torture_model {
	const char *name;
	/* The model's table (variant.h): each row's ops is what init() takes. */
	const struct kscale_variant_table *variants;
	/* Before the tasks start: 0, or -1 after torture_fail(). */
	int (*init)(const void *variant, int nr_tasks);
	void (*task_init)(struct torture_task *t);	/* optional */
	/* One random operation; invariants it can see go to torture_fail(). */
	void (*op)(struct torture_task *t);
	void (*task_exit)(struct torture_task *t);	/* optional */
	/*
	 * Optional: every task parked between operations (and once more
	 * after they exit), the whole-state checks.
	 */
	void (*quiet)(void);
	/* Optional: its own counts for the closing line, e.g. "Remounts: 12". */
	void (*stats)(char *buf, size_t len);
	void (*cleanup)(void);				/* optional */
	/*
	 * Optional: the bug a variant has as posted (NULL: none).  Its run
	 * must fail, or the torture missed it: "FAILURE, as expected".
	 */
	const char *(*posted_bug)(const void *variant);
};

#define torture_model_register(m)					\
	static const struct torture_model *const __torture_##m		\
	__attribute__((used, section("torture_models"))) = &(m)

extern int torture_nr_tasks;

/* An invariant broken: counted into the variant's Fail, said (first few). */
void torture_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

#endif
