/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tally, a throwaway model (tests/new_model/README): one count that every
 * thread adds to, behind one table, as a model's header declares it.
 */
#ifndef KSCALE_TALLY_H
#define KSCALE_TALLY_H

#include "../../lib/harness/variant.h"

/* A variant's implementation: its name is its table row's (variants.c). */
struct tally_ops {
	void (*reset)(void);
	void (*add)(void);
	unsigned long (*read)(void);	/* exact at a quiet point */
};

extern const struct tally_ops tally_locked;

/* The model's variant table: each row's .ops a struct tally_ops. */
extern const struct kscale_variant_table tally_variants;

#endif
