// SPDX-License-Identifier: GPL-2.0
/*
 * tally's bench (tests/new_model/README): each thread adds one to the
 * count, over and over.
 */
#include "../lib/harness/kscale.h"
#include "../models/tally/tally.h"

static void add_loop(struct kscale_thread *t)
{
	const struct tally_ops *ops = kscale_row(t->run)->ops;

	while (kscale_running(t)) {
		ops->add();
		kscale_count(t);
	}
}

static int add_setup(struct kscale_run *run)
{
	const struct tally_ops *ops = kscale_row(run)->ops;

	ops->reset();
	return 0;
}

/* Nothing to check (the torture and the validation do) or to free. */
static int add_teardown(struct kscale_run *run)
{
	return 0;
}

static const struct kscale_workload workloads[] = {
	{
		.name = "add",
		.doc = "every thread adds one to the count",
		.setup = add_setup,
		.loop = add_loop,
		.teardown = add_teardown,
	},
};

static const struct kscale_variant host_variants[] = {};
static const struct kscale_knob knobs[] = {};

KSCALE_MODEL("tally", "a throwaway model: one count under a lock", NULL,
	     &tally_variants);
