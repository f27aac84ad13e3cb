/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Calibration of a model's `auto` work on the running kernel: the median
 * of ROUNDS timings of round(arg), after one untimed warm-up, pinned to
 * the CPU the caller is on (its affinity is restored after).
 */
#ifndef KSCALE_CALIBRATE_H
#define KSCALE_CALIBRATE_H

#define CALIBRATE_ROUNDS	5

/* round() returns the operations it did, or -1 to stop. */
double kscale_calibrate(long (*round)(void *arg), void *arg);

#endif
