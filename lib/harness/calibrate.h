/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Calibration of a model's `auto` work on the running kernel: the median
 * of CALIBRATE_ROUNDS timings of round(arg), after 0.1 s of untimed
 * rounds (one round warms nothing up: the kernel's page allocator and
 * caches took some 20 shmem passes to reach the benchmark's steady state),
 * pinned to the CPU the caller is on (its affinity is restored after).
 */
#ifndef KSCALE_CALIBRATE_H
#define KSCALE_CALIBRATE_H

#define CALIBRATE_ROUNDS	5
#define CALIBRATE_WARMUP_NS	1e8

/* round() returns the operations it did, or -1 to stop. */
double kscale_calibrate(long (*round)(void *arg), void *arg);

#endif
