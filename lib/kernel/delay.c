// SPDX-License-Identifier: GPL-2.0
#include <time.h>

#include "delay.h"

double loops_per_ns = 1.0;

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* The fastest of a few timings, so a preempted one does not count. */
void calibrate_delay(void)
{
	const unsigned long loops = 1 << 22;
	double best = 0, t, rate;
	int i;

	for (i = 0; i < 5; i++) {
		t = now_ns();
		__delay(loops);
		rate = loops / (now_ns() - t);
		if (rate > best)
			best = rate;
	}
	loops_per_ns = best;
}
