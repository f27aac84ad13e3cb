/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The cycle counter, for in-model accounting of where time goes (lock
 * waits, slow paths) where hardware counters are unavailable, as in most
 * VMs.  tsc_calibrate() measures its rate against CLOCK_MONOTONIC: the
 * median of short sleeps, on whichever CPU the caller is: the rate is
 * the invariant TSC's, the same on every CPU.
 */
#ifndef KSCALE_KERNEL_TSC_H
#define KSCALE_KERNEL_TSC_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "compiler.h"

extern double tsc_per_ns;

/* 0, or -1 with the reason in err. */
int tsc_calibrate(char *err, size_t len);

#ifndef rdtsc_ordered
static inline uint64_t rdtsc_ordered(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;

	__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi) :: "memory");
	return ((uint64_t)hi << 32) | lo;
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
#endif
}
#endif

static inline double cycles_to_ns(uint64_t cycles)
{
	return cycles / tsc_per_ns;
}

#endif
