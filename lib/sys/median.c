// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include "median.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double kscale_median(double *v, int nr)
{
	qsort(v, nr, sizeof(*v), cmp_double);
	return v[nr / 2];
}
