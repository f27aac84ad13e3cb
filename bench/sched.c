// SPDX-License-Identifier: GPL-2.0
/*
 * What a context switch of the model scheduler (lib/kernel/sched.h)
 * costs, beside the host's own.  The tasks on each CPU form a ring and
 * pass a token: each operation is one wake-up of the next task and one
 * sleep until the token comes back, so with two or more tasks a CPU
 * every operation is a switch (switch_ns).  `yield` switches at a
 * preemption point instead, with need_resched set by hand.
 */
#include <stdlib.h>

#include "../lib/harness/kscale.h"

enum switch_kind { WAKEUP, YIELD };

struct ring_task {
	struct task_struct *task;
	struct ring_task *next;		/* the next task on the same CPU */
	int token;
} ____cacheline_aligned;

struct ring {
	enum switch_kind kind;
	struct ring_task *tasks;	/* [nr_threads] */
};

static void wait_token(struct ring_task *me)
{
	for (;;) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		if (__atomic_load_n(&me->token, __ATOMIC_ACQUIRE))
			break;
		schedule();
	}
	__set_current_state(TASK_RUNNING);
	WRITE_ONCE(me->token, 0);
}

static void pass_token(struct ring_task *next)
{
	__atomic_store_n(&next->token, 1, __ATOMIC_RELEASE);
	wake_up_process(READ_ONCE(next->task));
}

/* Every task leaves holding the token, so no one is left asleep. */
static void switch_loop(struct kscale_thread *t)
{
	struct ring *r = t->run->priv;
	struct ring_task *me = &r->tasks[t->id];
	bool running;

	if (r->kind == YIELD) {
		while (kscale_running(t)) {
			WRITE_ONCE(current->rq->need_resched, 1);
			kscale_count(t);
		}
		return;
	}
	do {
		wait_token(me);
		running = kscale_running(t);
		pass_token(me->next);
		if (running)
			kscale_count(t);
	} while (running);
}

static int switch_setup(struct kscale_run *run)
{
	const struct kscale_variant *v = kscale_row(run);
	struct ring *r = calloc(1, sizeof(*r));
	int i, j, n = run->nr_threads;

	run->priv = r;
	r->kind = *(const enum switch_kind *)(v->ops ?: v->host);
	r->tasks = aligned_alloc(SMP_CACHE_BYTES, n * sizeof(*r->tasks));
	for (i = 0; i < n; i++) {
		for (j = (i + 1) % n; run->threads[j].cpu != run->threads[i].cpu;)
			j = (j + 1) % n;
		r->tasks[i] = (struct ring_task){ .next = &r->tasks[j] };
	}
	/* the first task of each CPU's ring starts with the token */
	for (i = 0; i < n; i++) {
		for (j = 0; run->threads[j].cpu != run->threads[i].cpu; j++)
			;
		r->tasks[i].token = i == j;
	}
	return 0;
}

static int switch_thread_init(struct kscale_thread *t)
{
	struct ring *r = t->run->priv;

	WRITE_ONCE(r->tasks[t->id].task, current);
	return 0;
}

static int switch_teardown(struct kscale_run *run)
{
	struct ring *r = run->priv;
	double per_cpu = kscale_counter(run, "ops_per_sec_per_cpu");

	if (run->nr_threads > kscale_nr_distinct_cpus(run) && per_cpu > 0)
		kscale_set_counter(run, "switch_ns", 1e9 / per_cpu);
	free(r->tasks);
	free(r);
	return run->failed ? -1 : 0;
}

static const struct kscale_workload workloads[] = {
	{
		.name = "switch",
		.doc = "tasks sharing a CPU hand it to each other",
		.setup = switch_setup,
		.thread_init = switch_thread_init,
		.loop = switch_loop,
		.teardown = switch_teardown,
	},
};

static const enum switch_kind switch_wakeup = WAKEUP;
static const enum switch_kind switch_yield = YIELD;

/*
 * The model scheduler's own table: its rows' ops say how a task switches;
 * its locks are the default's, 2.6.26's ticket locks.
 */
KSCALE_VARIANT_TABLE(sched_variants,
	{ "wakeup", "model tasks: wake the next task on the CPU, sleep",
	  &switch_wakeup, .kernel = "2.6.26" },
	{ "yield", "model tasks: a preemption point with need_resched set",
	  &switch_yield, .kernel = "2.6.26" },
);

static const struct kscale_variant host_variants[] = {
	{ "host", "host threads (SCHED_OTHER, futex): the running kernel's "
		  "switch", .host = &switch_wakeup },
};

static const struct kscale_knob knobs[] = {
};

KSCALE_MODEL("sched",
	     "the model scheduler's context switch, and the host's",
	     NULL, &sched_variants);
