// SPDX-License-Identifier: GPL-2.0
/* tally under torture: the count is every addition at each quiet point. */
#include "../lib/kernel/atomic.h"
#include "../models/tally/tally.h"
#include "torture.h"

static const struct tally_ops *ops;
static atomic_long_t added;

static int tally_init(const void *variant, int nr_tasks)
{
	ops = variant;
	ops->reset();
	atomic_long_set(&added, 0);
	return 0;
}

static void tally_op(struct torture_task *t)
{
	ops->add();
	atomic_long_add(1, &added);
}

static void tally_quiet(void)
{
	unsigned long want = atomic_long_read(&added);

	if (ops->read() != want)
		torture_fail("count %lu, added %lu", ops->read(), want);
}

static const struct torture_model tally_torture = {
	.name	= "tally",
	.variants = &tally_variants,
	.init	= tally_init,
	.op	= tally_op,
	.quiet	= tally_quiet,
};
torture_model_register(tally_torture);
