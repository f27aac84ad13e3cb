// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../sys/clock.h"
#include "../sys/median.h"
#include "tsc.h"

/*
 * A sample: ns per cycle over one sleep.  Six of them (the first untimed)
 * take 60 ms of start-up; the clock reads around a sample are some 100 ns
 * of its 10 ms, and the median drops a sample where the task was
 * preempted between a clock read and the counter's.
 */
#define TSC_SAMPLE_NS	10000000
#define TSC_SAMPLES	5

double tsc_per_ns = 1.0;

int tsc_calibrate(char *err, size_t len)
{
	struct timespec pause = { 0, TSC_SAMPLE_NS };
	double sample[TSC_SAMPLES], t0;
	uint64_t c0;
	int i;

	for (i = -1; i < TSC_SAMPLES; i++) {
		t0 = now_ns();
		c0 = rdtsc_ordered();
		if (nanosleep(&pause, NULL)) {
			snprintf(err, len, "the TSC's calibration sleep: %s",
				 strerror(errno));
			return -1;
		}
		if (i >= 0)
			sample[i] = (now_ns() - t0) / (rdtsc_ordered() - c0);
	}
	tsc_per_ns = 1 / kscale_median(sample, TSC_SAMPLES);
	return 0;
}
