// SPDX-License-Identifier: GPL-2.0
/* CPU and thread-count lists: what parses, what is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../lib/sys/cpulist.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static char err[256];

static void expect_list(const char *s, const struct cpulist_names *names,
			bool sorted, const int *want, int nr_want)
{
	int *v = NULL, n = 0, i;

	assert_int_equal(cpulist_parse(s, names, sorted, &v, &n, err,
				       sizeof(err)), 0);
	assert_int_equal(n, nr_want);
	for (i = 0; i < n; i++)
		assert_int_equal(v[i], want[i]);
	free(v);
}

static void expect_malformed(const char *s, const struct cpulist_names *names)
{
	int *v = NULL, n = 0;

	err[0] = 0;
	assert_int_equal(cpulist_parse(s, names, true, &v, &n, err,
				       sizeof(err)), -1);
	assert_non_null(strstr(err, s[0] ? "malformed" : "empty"));
	assert_null(strchr(err, '\n'));
}

/* A made-up machine of n CPUs: all = n, sweep as given. */
#define NAMES(n, ...) (&(struct cpulist_names){ .all = (n),		\
	.sweep = (int[]){ __VA_ARGS__ },				\
	.nr_sweep = sizeof((int[]){ __VA_ARGS__ }) / sizeof(int) })

static void test_values_and_ranges(void **state)
{
	expect_list("1,2,4", NULL, true, (int[]){ 1, 2, 4 }, 3);
	expect_list("1-4", NULL, true, (int[]){ 1, 2, 3, 4 }, 4);
	expect_list("8,0-2,2", NULL, true, (int[]){ 0, 1, 2, 8 }, 4);
	expect_list("7", NULL, true, (int[]){ 7 }, 1);
}

/* all is N alone, no longer 1..N; 1-all is every count. */
static void test_all(void **state)
{
	expect_list("all", NAMES(3, 1, 2, 3), true, (int[]){ 3 }, 1);
	expect_list("all", NAMES(512, 1, 512), true, (int[]){ 512 }, 1);
	expect_list("1,all", NAMES(2, 1, 2), true, (int[]){ 1, 2 }, 2);
	expect_list("all*2", NAMES(3, 1, 2, 3), true, (int[]){ 6 }, 1);
	expect_list("all*2", NAMES(2, 1, 2), true, (int[]){ 4 }, 1);
	expect_list("all*1", NAMES(2, 1, 2), true, (int[]){ 2 }, 1);
	expect_list("all,all*2", NAMES(2, 1, 2), true, (int[]){ 2, 4 }, 2);
	expect_list("1-all", NAMES(4, 1, 2, 4), true,
		    (int[]){ 1, 2, 3, 4 }, 4);
	expect_list("3-all,all*16", NAMES(4, 1, 2, 4), true,
		    (int[]){ 3, 4, 64 }, 3);
}

/* sweep is the counts it is given, and mixes with the rest of a list. */
static void test_sweep(void **state)
{
	const struct cpulist_names *six = NAMES(6, 1, 2, 4, 6);

	expect_list("sweep", six, true, (int[]){ 1, 2, 4, 6 }, 4);
	expect_list("1,sweep", six, true, (int[]){ 1, 2, 4, 6 }, 4);
	expect_list("3,sweep", six, true, (int[]){ 1, 2, 3, 4, 6 }, 5);
	expect_list("sweep,64", six, true, (int[]){ 1, 2, 4, 6, 64 }, 5);
	expect_list("sweep,all*2", six, true, (int[]){ 1, 2, 4, 6, 12 }, 5);
	expect_list("sweep,all", six, true, (int[]){ 1, 2, 4, 6 }, 4);
	expect_list("sweep", NAMES(1, 1), true, (int[]){ 1 }, 1);
}

static void test_order_kept_when_unsorted(void **state)
{
	expect_list("4,0,2", NULL, false, (int[]){ 4, 0, 2 }, 3);
	expect_list("1,0,1", NULL, false, (int[]){ 1, 0, 1 }, 3);
}

static void test_malformed(void **state)
{
	/* CPU ids: no names */
	const char *bad[] = { "", "abc", "1,", ",1", "1,,2", "3-1", "1-",
			      "-1", "1 2", "1.5", "all", "all*", "all*0",
			      "sweep", "1-all", "99999999999" };
	/* thread counts: names, but only whole */
	const char *bad_counts[] = { "", ",sweep", "sweep,", "1,,sweep",
				     "sweep*2", "sweep-4", "swee", "sweeps",
				     "all-3", "all*", "all*0", "all*65",
				     "alll", "8-all", "1-al", "all,,2" };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		expect_malformed(bad[i], NULL);
	for (i = 0; i < ARRAY_SIZE(bad_counts); i++)
		expect_malformed(bad_counts[i], NAMES(2, 1, 2));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_and_ranges),
		cmocka_unit_test(test_all),
		cmocka_unit_test(test_sweep),
		cmocka_unit_test(test_order_kept_when_unsorted),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
