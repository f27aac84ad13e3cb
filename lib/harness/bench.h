/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One registered benchmark (a workload, a variant, one value of each knob,
 * a thread count and its CPU plan), made by main.c, run by its window
 * (window.h), read by a run's API (run.c), the gate and watchdog
 * (watchdog.h) and the progress lines (progress.h).
 */
#ifndef KSCALE_BENCH_H
#define KSCALE_BENCH_H

#include <pthread.h>

#include "kscale.h"

struct sim_setup;

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
	const struct sim_setup *sim;	/* --sim's (sim/setup.h), or NULL */
	struct kscale_run run;
};

/* After b's plan and timings are set; 0 or -1. */
int kscale_bench_init(struct kscale_bench *b);

#endif
