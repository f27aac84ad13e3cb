// SPDX-License-Identifier: GPL-2.0
#include "tally.h"

KSCALE_VARIANT_TABLE(tally_variants,
	{ "locked", "one count under a ticket spinlock", &tally_locked,
	  .kernel = "2.6.26" },
);
