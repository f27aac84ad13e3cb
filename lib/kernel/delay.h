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

static inline uint64_t rdtsc(void)
{
#if defined(KSCALE_SIM)
	return sim_rdtsc();
#elif defined(__x86_64__) || defined(__i386__)
	return __builtin_ia32_rdtsc();
#else
	return rdtsc_ordered();
#endif
}

#ifdef KSCALE_SIM
extern struct sim_cpu *sim_cpu_running;
void sim_delay(uint64_t ns);
#endif

static inline void ndelay(unsigned long ns)
{
	uint64_t end;

	if (!ns)
		return;
#ifdef KSCALE_SIM
	/* lib/sim: the running CPU's clock moves on, scaled */
	if (sim_cpu_running) {
		sim_delay(ns);
		return;
	}
#endif
	end = rdtsc() + (uint64_t)(ns * tsc_per_ns);
	while (rdtsc() < end)
		barrier();
}

#endif
