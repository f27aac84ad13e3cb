/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One registered benchmark (a workload, a variant, one value of each knob,
 * a thread count and its CPU plan) and its fixed-window run.
 *
 * All threads start together, run until one shared stop flag, and count
 * their own operations in their own cache lines; no thread stops early.
 * A controller thread times a warm-up, snapshots every counter, times the
 * window, snapshots again, then raises the flag (will-it-scale's design,
 * with one window per run instead of a running sample).  Model variants'
 * threads are tasks of the model scheduler (lib/kernel/sched.h); the
 * controller runs above them, on a CPU of its own when one is free, and
 * is the run's watchdog: threads that do not reach the window, or do not
 * leave it, within --watchdog seconds fail the run by name.
 */
#ifndef KSCALE_WINDOW_H
#define KSCALE_WINDOW_H

#include <pthread.h>

#include "gbench.h"
#include "kscale.h"

struct kscale_bench {
	char *name;
	const struct kscale_model *model;
	const struct kscale_workload *workload;
	const struct kscale_variant *row;
	const char **knob_value;	/* [model->nr_knobs] */
	int nr_threads;
	int *cpu_of_thread;		/* [nr_threads] */
	int nr_distinct_cpus;
	const int *order;		/* every usable CPU, placement order */
	int nr_order;
	double duration;
	double warmup;
	double until_counted;		/* s past duration: --window-until-counted */
	double watchdog;		/* s a phase may overrun: --watchdog */
	pthread_barrier_t threads_met;	/* the run's threads */
	pthread_barrier_t window_met;	/* the run's threads and controller */
	pthread_mutex_t gate_lock;	/* threads' arrival at the window */
	pthread_cond_t gate_cond;
	bool *arrived;			/* [nr_threads] */
	int nr_arrived;
	uint64_t gate_ns;		/* simulated: virtual time the gate opened */
	uint32_t gate_open;		/* a futex word: the threads go */
	bool *left;			/* [nr_threads]: out of the loop */
	pthread_t controller;
	int controller_cpu;		/* -1: none free, shares the workers' */
	bool started;			/* set up, controller running */
	bool model_sched;		/* tasks on the model's scheduler */
	bool perf;			/* perf records the window (perf.h) */
	int nr_done;			/* threads out of their loop */
	double window;			/* seconds the last window lasted */
	int nr_windows;			/* simulated: run so far, each its own seed */
	struct kscale_run run;
};

/* A thread's counts at one of the window's two snapshots. */
struct snapshot {
	unsigned long ops;
	double cputime;
};

/* After b's plan and timings are set; 0 or -1. */
int kscale_bench_init(struct kscale_bench *b);
/* Google Benchmark's threads: window.c on the host, window_sim.c simulated. */
void kscale_bench_thread(void *arg, int thread, struct kb_result *res);

/* window_run.c: what both windows do. */
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
/* Teardown and the counters into res. */
void run_finish(struct kscale_bench *b, struct kb_result *res);

#endif
