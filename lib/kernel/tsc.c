// SPDX-License-Identifier: GPL-2.0
#include "../harness/calibrate.h"
#include "tsc.h"

/*
 * A sample: cycles over one sleep.  Six of them (the first untimed) take
 * 60 ms of start-up; the clock reads around a sample are some 100 ns of
 * its 10 ms, and the median drops a sample where the task was preempted
 * between a clock read and the counter's.
 */
#define TSC_SAMPLE_NS	10000000

double tsc_per_ns = 1.0;

static long tsc_round(struct kscale_round *r)
{
	struct timespec pause = { 0, TSC_SAMPLE_NS };
	uint64_t c0 = rdtsc_ordered();

	if (nanosleep(&pause, NULL))
		return -1;
	return (long)(rdtsc_ordered() - c0);
}

int tsc_calibrate(char *err, size_t len)
{
	double ns_per_cycle;

	if (kscale_calibrate_warmup(tsc_round, NULL, 0, &ns_per_cycle, err,
				    len))
		return -1;
	tsc_per_ns = 1 / ns_per_cycle;
	return 0;
}
