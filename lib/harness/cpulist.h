/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KSCALE_CPULIST_H
#define KSCALE_CPULIST_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Parse "1,2,4", "1-8", "0-3,8" or "all" into a list: sorted without
 * duplicates, or in the order given.  With all_max > 0, "all" stands for
 * 1..all_max and "all*K" for K x all_max alone (oversubscription); both
 * are refused otherwise.  Returns 0, or -1 with a one-line reason in err.
 */
int cpulist_parse(const char *s, int all_max, bool sorted, int **out,
		  int *nr, char *err, size_t errlen);

#endif
