/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KSCALE_CPULIST_H
#define KSCALE_CPULIST_H

#include <stdbool.h>
#include <stddef.h>

/* What the names in a list of thread counts stand for. */
struct cpulist_names {
	int all;		/* "all": the placement's usable CPUs, N */
	const int *sweep;	/* "sweep": these counts */
	int nr_sweep;
};

/*
 * Parse "1,2,4", "1-8" or "0-3,8" into a list: sorted without duplicates,
 * or in the order given.  With names (thread counts), an item may also be
 * "all" (N), "all*K" (K x N, oversubscription), "LO-all" (LO..N) or
 * "sweep"; without (CPU ids), these are refused.  Returns 0, or -1 with a
 * one-line reason in err.
 */
int cpulist_parse(const char *s, const struct cpulist_names *names,
		  bool sorted, int **out, int *nr, char *err, size_t errlen);

#endif
