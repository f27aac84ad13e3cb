// SPDX-License-Identifier: GPL-2.0
/* Validation of every tally variant: each addition counted once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "../lib/kernel/percpu.h"
#include "../models/tally/tally.h"
#include "helpers.h"

static struct topology machine;

static void test_every_addition_counts(void **state)
{
	const struct tally_ops *ops;
	int i, n;

	for_each_variant(ops, i, &tally_variants) {
		kscale_set_cpu(0);
		ops->reset();
		for (n = 0; n < 3; n++)
			ops->add();
		assert_int_equal(ops->read(), 3);
	}
}

static int setup(void **state)
{
	test_machine(&machine, 2, 1);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_addition_counts),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
