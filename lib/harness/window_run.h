/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a run's window does on the host (window.c) and in the simulator
 * (sim/window.c) alike (window_run.c): its set-up and teardown, each
 * thread's set-up and loop, and the window's counters.
 */
#ifndef KSCALE_WINDOW_RUN_H
#define KSCALE_WINDOW_RUN_H

#include "bench.h"
#include "gbench.h"

/* A thread's counts at one of the window's two snapshots. */
struct snapshot {
	unsigned long ops;
	double cputime;
};

/* v into the least and the most seen so far (*min < 0: none yet). */
static inline void min_max_add(double v, double *min, double *max)
{
	*min = *min < 0 || v < *min ? v : *min;
	*max = v > *max ? v : *max;
}

/* A fairness: the least over the most, 0 when the most is 0. */
static inline double min_over_max(double min, double max)
{
	return max > 0 ? min / max : 0;
}

/* The run's threads, its set-up on thread 0's CPU: false if it failed. */
bool run_prepare(struct kscale_bench *b);
/* After run_prepare(), when the run will not start after all. */
void run_abandon(struct kscale_bench *b);
/* A thread's own set-up before the gate: false if it failed. */
bool thread_setup(struct kscale_bench *b, struct kscale_thread *t);
/* Past the gate: the loop (if ok), then out of the scheduler. */
void thread_run(struct kscale_bench *b, struct kscale_thread *t, bool ok);
/* The window's counters of every run; returns the operations in it. */
double set_counters(struct kscale_bench *b, const struct snapshot *start,
		    const struct snapshot *end, double cpu_window);
/*
 * The per-thread spread of a run's operations, as rates over its window
 * (ops/s): its least and most busy thread's, and their mean.
 */
void set_thread_spread(struct kscale_run *run, double min, double mean,
		       double max);
/* Teardown and the counters into res. */
void run_finish(struct kscale_bench *b, struct kb_result *res);

#endif
