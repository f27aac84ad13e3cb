// SPDX-License-Identifier: GPL-2.0
#include "tsc.h"

double tsc_per_ns = 1.0;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

void tsc_calibrate(void)
{
	struct timespec pause = { 0, 20 * 1000 * 1000 };
	double t0 = now_ns(), t1;
	uint64_t c0 = rdtsc_ordered(), c1;

	nanosleep(&pause, NULL);
	c1 = rdtsc_ordered();
	t1 = now_ns();
	tsc_per_ns = (double)(c1 - c0) / (t1 - t0);
}
