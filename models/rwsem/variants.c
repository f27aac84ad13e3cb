// SPDX-License-Identifier: GPL-2.0
#include "rwsem_ops.h"

static const struct rwsem_variant v4_6 = {
	.ops = &rwsem_v4_6_ops,
	.state = rwsem_v4_6_state,
};

static const struct rwsem_variant reader_owned = {
	.ops = &rwsem_v4_6_ops,
	.reader_owned_patch = true,
	.reader_mark = true,
	.state = rwsem_v4_6_state,
};

static const struct rwsem_variant v5_1 = {
	.ops = &rwsem_v5_1_ops,
	.reader_mark = true,
	.state = rwsem_v5_1_state,
};

static const struct rwsem_variant v5_3 = {
	.ops = &rwsem_v5_3_ops,
	.reader_mark = true,
	.state = rwsem_v5_3_state,
};

static const struct rwsem_variant upstream = {
	.ops = &rwsem_upstream_ops,
	.reader_mark = true,
	.state = rwsem_upstream_state,
};

KSCALE_VARIANT_TABLE(rwsem_variants,
	{ "v4.6", "rwsem-xadd as in v4.6: owner NULL for readers and for a "
		  "writer not yet set", &v4_6,
	  .kernel = "4.6" },
	{ "reader_owned", "the seed (4.8): RWSEM_READER_OWNED, spinning stops "
			  "when readers own the lock", &reader_owned,
	  .kernel = "4.8" },
	{ "v5.1", "rwsem-xadd as the 5.1-based tip (5.2) had it: generic "
		  "fast paths, wake_q, spinning stops on readers", &v5_1,
	  .kernel = "5.1" },
	{ "v5.3", "rwsem.c of 5.3: writer handoff, reader spinning, "
		  "time-bounded spinning on readers", &v5_3,
	  .kernel = "5.3" },
	{ "upstream", "today's rwsem (v6.18 kernel/locking/rwsem.c): "
		      "handoff, bounded spinning on readers", &upstream,
	  .kernel = "6.18" },
);
