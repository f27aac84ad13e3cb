/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The lock hooks' torture side (kernel/locking/locktorture.c's delays,
 * moved into every lock a model takes): with lockstat.torture set by
 * scripts/kscale torture, each release first holds the lock a random
 * while longer, and each acquisition is counted with its wait.  What the
 * hold may do follows the kernel's rule for the context it runs in:
 * with preemption off (a spinlock, get_cpu_var()) it only spins; in a
 * sleeping lock's section it may also reach a preemption point, sleep
 * or be migrated.  The kernel's torture hooks are in the test's own
 * lock calls; here they sit in the model's, so every critical section
 * of a model is stretched, not only the torture loop's.
 */
#ifndef KSCALE_KERNEL_TORTURE_H
#define KSCALE_KERNEL_TORTURE_H

#include <stdbool.h>
#include <stdint.h>

/* One thread's, read by the torture framework once the thread is done. */
struct torture_lock_stats {
	uint64_t acquisitions;
	uint64_t max_wait;		/* cycles from the call to the lock held */
	uint64_t spins, preempts, sleeps, migrations;	/* delays inside */
};

extern __thread struct torture_lock_stats torture_lock_stats;
/* torture_random()'s state: the framework seeds it per thread. */
extern __thread uint64_t torture_rand;
/* The CPUs a sleeping section may be migrated to. */
extern const int *torture_cpus;
extern int torture_nr_cpus;

/* xorshift64*: locktorture's torture_random() stand-in. */
static inline uint32_t torture_random(void)
{
	uint64_t x = torture_rand;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	torture_rand = x;
	return (uint32_t)((x * 0x2545F4914F6CDD1DULL) >> 32);
}

/* To one of torture_cpus at random: true if the task moved. */
bool torture_migrate(void);

void torture_lock_acquired(uint64_t start);
void torture_lock_release(void);
void torture_lock_released(void);
void torture_sleep_window(void);

#endif
