// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: cpulist_parse(), the --cpus thread counts and list:CPUS.
 * The input is the list.  Each is parsed as CPU ids (no names), sorted and
 * in order, and as thread counts of a 6-CPU machine (all, all*K, 1-all,
 * sweep).  Beyond not crashing: a parsed list is in bounds, sorted lists
 * ascend without duplicates, the ordered list sorts to the sorted one,
 * names only add to what parses, and a list printed back (as ranges, or
 * value by value) parses to the same list.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/sys/cpulist.c"
#include "fuzz.h"

#define MAX_VALUE	CPULIST_MAX_VALUE
#define NR_ALL		6
/* longer lists (1-1000000 is one) are checked less, to keep inputs fast */
#define CHECK_MAX	(1 << 12)
#define BIG		(1 << 16)

static const int sweep[] = { 1, 2, 4, 6 };
static const struct cpulist_names names = {
	.all = NR_ALL, .sweep = sweep, .nr_sweep = 4,
};

static int parse(const char *s, const struct cpulist_names *n, bool sorted,
		 int **v, int *nr)
{
	char err[256];
	int ret;

	err[0] = '\0';
	*v = NULL;
	*nr = 0;
	ret = cpulist_parse(s, n, sorted, v, nr, err, sizeof(err));
	FUZZ_CHECK(ret == 0 || ret == -1);
	if (ret) {
		FUZZ_CHECK(err[0]);
		return -1;
	}
	FUZZ_CHECK(*v && *nr >= 1);
	return 0;
}

static int compare(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* "0-3,8" from a sorted list, or "8,0,1" value by value. */
static char *print_list(const int *v, int n, bool ranges)
{
	char *s = malloc((size_t)n * 24 + 1), *p = s;
	int i, j;

	*p = '\0';
	for (i = 0; i < n; i = j) {
		j = i + 1;
		if (ranges)
			while (j < n && v[j] == v[j - 1] + 1)
				j++;
		p += sprintf(p, "%s%d", i ? "," : "", v[i]);
		if (j - i > 1)
			p += sprintf(p, "-%d", v[j - 1]);
	}
	return s;
}

static void check_round_trip(const int *v, int n, bool sorted)
{
	char *s = print_list(v, n, sorted);
	int *w, nr;

	FUZZ_CHECK(!parse(s, NULL, sorted, &w, &nr));
	FUZZ_CHECK(nr == n && !memcmp(v, w, n * sizeof(*v)));
	free(w);
	free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s = strndup((const char *)data, size);
	int *sorted, *ordered, *named, nr_s, nr_o, nr_n, i, u;
	int ok_s, ok_o, ok_n;

	ok_o = !parse(s, NULL, false, &ordered, &nr_o);
	if (ok_o && nr_o > BIG) {
		/* sorting a million items a run: bounds only, and next input */
		for (i = 0; i < nr_o; i++)
			FUZZ_CHECK(ordered[i] >= 0 && ordered[i] <= MAX_VALUE);
		free(ordered);
		free(s);
		return 0;
	}
	ok_s = !parse(s, NULL, true, &sorted, &nr_s);
	ok_n = !parse(s, &names, true, &named, &nr_n);
	/* sorting is applied after parsing: the same lists parse */
	FUZZ_CHECK(ok_s == ok_o);
	/* names only add items */
	FUZZ_CHECK(!ok_s || ok_n);
	if (ok_s) {
		FUZZ_CHECK(s[strspn(s, "0123456789,-")] == '\0');
		for (i = 0; i < nr_s; i++)
			FUZZ_CHECK(sorted[i] >= 0 && sorted[i] <= MAX_VALUE);
		for (i = 1; i < nr_s; i++)
			FUZZ_CHECK(sorted[i - 1] < sorted[i]);
		/* without names the same list, with them */
		FUZZ_CHECK(nr_n == nr_s &&
			   !memcmp(named, sorted, nr_s * sizeof(*sorted)));
	}
	if (ok_s && nr_o <= CHECK_MAX) {
		/* the list in order, sorted and made unique, is the sorted */
		qsort(ordered, nr_o, sizeof(*ordered), compare);
		for (i = 0, u = 0; i < nr_o; i++)
			if (!u || ordered[u - 1] != ordered[i])
				ordered[u++] = ordered[i];
		FUZZ_CHECK(u == nr_s &&
			   !memcmp(ordered, sorted, u * sizeof(*sorted)));
		check_round_trip(sorted, nr_s, true);
		/* parse again (sorted above) and print back in order */
		free(ordered);
		FUZZ_CHECK(!parse(s, NULL, false, &ordered, &nr_o));
		check_round_trip(ordered, nr_o, false);
	}
	if (ok_n) {
		for (i = 0; i < nr_n; i++)
			FUZZ_CHECK(named[i] >= 0 && named[i] <= MAX_VALUE);
		for (i = 1; i < nr_n; i++)
			FUZZ_CHECK(named[i - 1] < named[i]);
		if (nr_n <= CHECK_MAX)
			check_round_trip(named, nr_n, true);
	}
	if (ok_s)
		free(sorted);
	if (ok_o)
		free(ordered);
	if (ok_n)
		free(named);
	free(s);
	return 0;
}
