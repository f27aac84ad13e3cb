// SPDX-License-Identifier: GPL-2.0
/* CPU and thread-count lists: what parses, what is refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../lib/harness/cpulist.h"

static char err[256];

static void expect_list(const char *s, int all, bool sorted,
			const int *want, int nr_want)
{
	int *v = NULL, n = 0, i;

	assert_int_equal(cpulist_parse(s, all, sorted, &v, &n, err,
				       sizeof(err)), 0);
	assert_int_equal(n, nr_want);
	for (i = 0; i < n; i++)
		assert_int_equal(v[i], want[i]);
	free(v);
}

static void test_values_and_ranges(void **state)
{
	expect_list("1,2,4", 0, true, (int[]){ 1, 2, 4 }, 3);
	expect_list("1-4", 0, true, (int[]){ 1, 2, 3, 4 }, 4);
	expect_list("8,0-2,2", 0, true, (int[]){ 0, 1, 2, 8 }, 4);
	expect_list("7", 0, true, (int[]){ 7 }, 1);
}

static void test_all(void **state)
{
	expect_list("all", 3, true, (int[]){ 1, 2, 3 }, 3);
	expect_list("1,all", 2, true, (int[]){ 1, 2 }, 2);
	expect_list("all*2", 3, true, (int[]){ 6 }, 1);
	expect_list("all,all*2", 2, true, (int[]){ 1, 2, 4 }, 3);
}

static void test_order_kept_when_unsorted(void **state)
{
	expect_list("4,0,2", 0, false, (int[]){ 4, 0, 2 }, 3);
}

static void test_malformed(void **state)
{
	const char *bad[] = { "", "abc", "1,", ",1", "1,,2", "3-1", "1-",
			      "-1", "1 2", "1.5", "all", "all*", "all*0",
			      "99999999999" };
	int *v = NULL, n = 0;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = 0;
		assert_int_equal(cpulist_parse(bad[i], 0, true, &v, &n, err,
					       sizeof(err)), -1);
		assert_non_null(strstr(err, bad[i][0] ? "malformed" : "empty"));
		assert_null(strchr(err, '\n'));
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_values_and_ranges),
		cmocka_unit_test(test_all),
		cmocka_unit_test(test_order_kept_when_unsorted),
		cmocka_unit_test(test_malformed),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
