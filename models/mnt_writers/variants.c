// SPDX-License-Identifier: GPL-2.0
#include "mnt_writers.h"

KSCALE_VARIANT_TABLE(mnt_writers_variants,
	{ "none", "before the series: mnt_want_write only checks read-only",
	  &mnt_writers_none, .kernel = "2.6.22" },
	{ "atomic", "one atomic_t per mount, as posted in 2006 ([PATCH "
		    "07/28]; seed: ~4x slowdown)", &mnt_writers_atomic,
	  .kernel = "2.6.22" },
	{ "pernode", "a spinlock and an atomic per node in each mount "
		     "(seed: ~6% on 4-way SMP)", &mnt_writers_pernode,
	  .kernel = "2.6.22" },
	{ "percpu", "2.6.26's merged seed: per-CPU mnt_writer caching the "
		    "last mount", &mnt_writers_percpu,
	  .kernel = "2.6.26" },
	{ "percpu_seed", "the seed as posted: every mount switch adds to the "
			 "old mount, every close reads it (seed: 3% worst "
			 "case)", &mnt_writers_percpu_seed,
	  .kernel = "2.6.22" },
	{ "upstream", "today: per-mount per-CPU counters, MNT_WRITE_HOLD, "
		      "mnt_hold_writers", &mnt_writers_upstream,
	  .kernel = "6.18" },
);
