/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kscale torture: locktorture's standard for every primitive and model
 * (kernel/locking/locktorture.c, kernel/torture.c).  A torture file is
 * one model: its variants and one random operation; the framework runs
 * many more tasks than CPUs on the model scheduler, stretches every
 * critical section (lib/kernel/torture.h), delays and migrates tasks
 * between operations, parks them all now and then for the model's
 * whole-state checks, bounds every task's progress, and prints
 * locktorture's verdict per variant.
 */
#ifndef KSCALE_TORTURE_H
#define KSCALE_TORTURE_H

#include <stdbool.h>
#include <stddef.h>

#include "../lib/harness/variant.h"
#include "../lib/kernel/compiler.h"
#include "../lib/kernel/torture.h"

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
