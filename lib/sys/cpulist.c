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

/* Skip word at *p if it is there. */
static bool take(const char **p, const char *word)
{
	size_t n = strlen(word);

	if (strncmp(*p, word, n))
		return false;
	*p += n;
	return true;
}

/* One item of the list, appended to v: a number, a range or a name. */
static int parse_item(const char **p, const struct cpulist_names *names,
		      int **v, int *n, int *cap)
{
	int lo, hi, k, i;

	if (names && take(p, "sweep")) {
		for (i = 0; i < names->nr_sweep; i++)
			if (append_range(v, n, cap, names->sweep[i],
					 names->sweep[i]))
				return -1;
		return 0;
	}
	if (names && take(p, "all")) {
		k = 1;
		/* all*K: K times as many threads as CPUs */
		if (take(p, "*") && (parse_number(p, &k) || k < 1 || k > 64))
			return -1;
		return append_range(v, n, cap, k * names->all,
				    k * names->all);
	}
	if (parse_number(p, &lo))
		return -1;
	hi = lo;
	if (take(p, "-")) {
		if (names && take(p, "all"))
			hi = names->all;
		else if (parse_number(p, &hi))
			return -1;
	}
	if (hi < lo)
		return -1;
	return append_range(v, n, cap, lo, hi);
}

int cpulist_parse(const char *s, const struct cpulist_names *names,
		  bool sorted, int **out, int *nr, char *err, size_t errlen)
{
	const char *p = s;
	int *v = NULL, n = 0, cap = 0;

	if (!s || !*s) {
		snprintf(err, errlen, "empty list");
		return -1;
	}
	for (;;) {
		if (parse_item(&p, names, &v, &n, &cap))
			goto bad;
		if (!*p)
			break;
		if (*p != ',' || !*++p)
			goto bad;
	}
	*nr = sorted ? sort_unique(v, n) : n;
	*out = v;
	return 0;
bad:
	free(v);
	snprintf(err, errlen, "malformed list '%s' near '%s' "
		 "(expected e.g. 1,2,4 or 1-8%s)", s, *p ? p : "end",
		 names ? ", sweep, all, all*2 or 1-all" : "");
	return -1;
}
