/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The torture hooks (kernel/locking/locktorture.c's delays, moved into
 * every lock a model takes): kscale torture (torture/torture.c) points
 * torture_hooks at its own while a variant's tasks run, NULL otherwise.
 * The lock primitives call them through lockstat.h, the scheduler's
 * sleeper through lockstat_sleep_window().  They exist only in code built
 * for kscale torture (-DKSCALE_TORTURE: lockstat.h says why).  What the
 * hooks do, and that they may reach the scheduler, is torture's own:
 * lib/kernel only calls them.
 */
#ifndef KSCALE_KERNEL_TORTURE_H
#define KSCALE_KERNEL_TORTURE_H

#include <stdint.h>

struct torture_hooks {
	/* a lock taken: its wait from start (a cycle count), 0 a trylock */
	void (*lock_acquired)(uint64_t start);
	void (*lock_release)(void);	/* before the store that releases */
	void (*lock_released)(void);	/* after it, preemption still off */
	void (*sleep_window)(void);	/* a sleeper's window (lockstat.h) */
};

extern const struct torture_hooks *torture_hooks;

#endif
