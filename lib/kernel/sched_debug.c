// SPDX-License-Identifier: GPL-2.0
/*
 * The model scheduler's checks and its default slice, shared by its two
 * implementations: the host's (sched.c) and the simulator's
 * (lib/sim/sched.c).
 */
#include <stdio.h>
#include <stdlib.h>

#include "sched.h"

void sched_bug(const char *what)
{
	fprintf(stderr, "BUG: %s: cpu %d, preempt_count %d\n", what,
		current->cpu, __preempt_count);
	abort();
}

void __might_sleep(const char *file, int line)
{
	fprintf(stderr, "BUG: sleeping function called from invalid context "
		"at %s:%d\n", file, line);
	sched_bug("might_sleep");
}

/* sched_init_granularity(): 0.75 ms * (1 + ilog2(min(CPUs, 8))). */
uint64_t sched_default_slice_ns(int nr_cpus)
{
	int factor = 1, n = nr_cpus < 8 ? nr_cpus : 8;

	while (n >>= 1)
		factor++;
	return 750000ull * factor;
}
