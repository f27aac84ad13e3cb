/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The gate every thread of a run passes into the window, and the wait
 * for them to leave it: the controller waits --watchdog seconds at most
 * for each, then names the threads missing and exits 1.
 */
#ifndef KSCALE_WATCHDOG_H
#define KSCALE_WATCHDOG_H

struct kscale_bench;
struct snapshot;

/* Each thread, set up and pinned: wait for the window to open. */
void gate_arrive(struct kscale_bench *b, int id);
/* The controller: every thread in, within the watchdog's bound. */
void gate_open(struct kscale_bench *b);
/* The controller, the window over: every thread out of its loop. */
void wait_threads_left(struct kscale_bench *b, const struct snapshot *start,
		       const struct snapshot *end);

#endif
