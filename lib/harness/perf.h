/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The running kernel's profile of a host variant's window: `perf record
 * -e cpu-clock -g` on the run's CPUs, started before the warm-up with its
 * events off, switched on and off through its control fifo at the
 * window's two snapshots, then `perf report --children` for the kernel
 * functions the model names (KSCALE_PERF_SYMBOLS): counters
 * kernel_<function>_children_pct and kernel_<function>_self_pct.  Model
 * variants never record.  One recording at a time, started and finished
 * by Google Benchmark's main thread (the controller switches it on and
 * off): perf dies with that thread (PR_SET_PDEATHSIG), and a fatal signal
 * or the watchdog kills it and removes its files.
 */
#ifndef KSCALE_PERF_H
#define KSCALE_PERF_H

#include <stdbool.h>

#include "options.h"

/*
 * Once, from main() after the model's init: probe perf on `cpu` if
 * --perf asks for it and a host variant will run; the context's
 * kscale_perf (and stderr, if perf cannot run) say what was done.
 */
void perf_init(const struct kscale_model *m, const struct kscale_options *o,
	       int cpu);
/* Host variants' runs record. */
bool perf_usable(void);
/* Start recording, events off, on these CPUs; 0 or kscale_fail(). */
int perf_start(struct kscale_run *run, const int *cpus, int nr);
/* Events on (the window starts) or off (it ended); 0 or kscale_fail(). */
int perf_enable(struct kscale_run *run);
int perf_disable(struct kscale_run *run);
/* Stop perf; unless the run failed, set its kernel_* counters. */
void perf_finish(struct kscale_run *run);

#endif
