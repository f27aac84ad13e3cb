/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A registered benchmark's fixed-window run (bench.h), on the host
 * (window.c) or in the simulator (sim/window.c): one or the other is
 * built into a bench binary.
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

#include "gbench.h"

/* Google Benchmark's threads of the run of arg, a struct kscale_bench. */
void kscale_bench_thread(void *arg, int thread, struct kb_result *res);

#endif
