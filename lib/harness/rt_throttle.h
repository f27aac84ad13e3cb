/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Model tasks run SCHED_FIFO (lib/kernel/sched.h).  The host's RT
 * bandwidth control (sched_rt_runtime_us, 950000 of every 1000000 us by
 * default) would stop every CPU's tasks for 50 ms a second, spinlock
 * holders included, which no kernel does to its own tasks.  As root it is
 * lifted for each model run and put back after it, and by fatal_exit(),
 * a fatal signal or exit (fatal.h).
 */
#ifndef KSCALE_RT_THROTTLE_H
#define KSCALE_RT_THROTTLE_H

/* 0: the run's FIFO tasks will not be throttled; -1: they may be. */
int rt_throttle_lift(void);
void rt_throttle_restore(void);
/* For the context: what runs will see. */
const char *rt_throttle_note(void);

#endif
