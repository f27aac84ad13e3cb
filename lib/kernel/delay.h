/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndelay(): busy work of a given length, standing in for the parts of a
 * kernel path a model does not reproduce.  Like the kernel's delay_tsc()
 * it spins on the cycle counter, so its length does not drift with the
 * CPU's speed (a counted loop varied 2x on a VM); it touches no shared
 * memory.  The harness measures the counter's rate at start-up.
 */
#ifndef KSCALE_KERNEL_DELAY_H
#define KSCALE_KERNEL_DELAY_H

#include "tsc.h"

#ifndef rdtsc
static inline uint64_t rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return rdtsc_ordered();
#endif
}
#endif

/* The spin itself, as the kernel's delay_tsc(). */
static inline void delay_tsc(unsigned long ns)
{
	uint64_t end = rdtsc() + (uint64_t)(ns * tsc_per_ns);

	while (rdtsc() < end)
		barrier();
}

#ifndef ndelay
static inline void ndelay(unsigned long ns)
{
	if (ns)
		delay_tsc(ns);
}
#endif

#endif
