// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>

#include "compiler.h"

static unsigned long warnings;

int kscale_warn_on(int cond, const char *what, const char *file, int line)
{
	if (unlikely(cond)) {
		__atomic_fetch_add(&warnings, 1, __ATOMIC_RELAXED);
		fprintf(stderr, "WARNING: %s:%d: WARN_ON(%s)\n", file, line, what);
	}
	return cond;
}

unsigned long kscale_warnings(void)
{
	return __atomic_load_n(&warnings, __ATOMIC_RELAXED);
}
