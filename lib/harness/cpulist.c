// SPDX-License-Identifier: GPL-2.0
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"

#define CPULIST_MAX_VALUE	(1 << 20)

static int parse_number(const char **p, int *val)
{
	char *end;
	long v;

	if (!isdigit((unsigned char)**p))
		return -1;
	errno = 0;
	v = strtol(*p, &end, 10);
	if (errno || v > CPULIST_MAX_VALUE)
		return -1;
	*p = end;
	*val = (int)v;
	return 0;
}

static int cmp_int(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

static int sort_unique(int *v, int n)
{
	int i, out = 0;

	qsort(v, n, sizeof(*v), cmp_int);
	for (i = 0; i < n; i++)
		if (!out || v[out - 1] != v[i])
			v[out++] = v[i];
	return out;
}

static int append_range(int **v, int *n, int *cap, int lo, int hi)
{
	if (hi - lo + 1 > CPULIST_MAX_VALUE - *n)
		return -1;
	while (*n + (hi - lo + 1) > *cap) {
		int *nv;

		*cap = *cap ? *cap * 2 : 16;
		nv = realloc(*v, *cap * sizeof(**v));
		if (!nv)
			return -1;
		*v = nv;
	}
	for (; lo <= hi; lo++)
		(*v)[(*n)++] = lo;
	return 0;
}

static int parse_item(const char **p, int all_max, int *lo, int *hi)
{
	if (!strncmp(*p, "all", 3)) {
		if (all_max <= 0)
			return -1;
		*p += 3;
		*lo = *hi = all_max;
		if (**p != '*') {
			*lo = 1;
			return 0;
		}
		/* all*K: K times as many threads as CPUs, alone */
		(*p)++;
		if (parse_number(p, hi) || *hi < 1 || *hi > 64)
			return -1;
		*lo = *hi = *hi * all_max;
		return 0;
	}
	if (parse_number(p, lo))
		return -1;
	*hi = *lo;
	if (**p != '-')
		return 0;
	(*p)++;
	if (parse_number(p, hi) || *hi < *lo)
		return -1;
	return 0;
}

int cpulist_parse(const char *s, int all_max, bool sorted, int **out,
		  int *nr, char *err, size_t errlen)
{
	const char *p = s;
	int *v = NULL, n = 0, cap = 0, lo, hi;

	if (!s || !*s) {
		snprintf(err, errlen, "empty list");
		return -1;
	}
	for (;;) {
		if (parse_item(&p, all_max, &lo, &hi) ||
		    append_range(&v, &n, &cap, lo, hi))
			goto bad;
		if (!*p)
			break;
		if (*p++ != ',' || !*p)
			goto bad;
	}
	*nr = sorted ? sort_unique(v, n) : n;
	*out = v;
	return 0;
bad:
	free(v);
	snprintf(err, errlen, "malformed list '%s' near '%s' "
		 "(expected e.g. 1,2,4 or 1-8%s)", s, *p ? p : "end",
		 all_max > 0 ? " or all" : "");
	return -1;
}
