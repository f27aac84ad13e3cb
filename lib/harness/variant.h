/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A variant table: one row a variant, and the row carries what runs it.
 *
 * A model's table (models/<model>/variants.c) has model rows only: ->ops
 * is the model's implementation of the variant (its ops vector, with any
 * patch switch or state hook that goes with it), run on the model
 * scheduler.  A bench adds host rows: ->host is the bench's own step
 * vector for the running kernel or a host library, run on the host's
 * scheduler.  A row has one or the other, never both, never neither:
 * kscale_variant_check() says which row is wrong, and every user of a
 * table (bench, torture, the tests) refuses to run one that is.  Nothing
 * looks a variant up by name: a name in a table always has its code.
 *
 * A model row names the kernel its code follows (->kernel, "2.6.26"),
 * and so its spinlock_t: spin_lock_kind_of() (lib/kernel/kernel_locks.c) is
 * the one table of kernels and their locks.  Whoever sets a model row up
 * calls kscale_variant_locks() first, so that the locks its set-up
 * initialises are its kernel's; --list prints both.
 */
#ifndef KSCALE_VARIANT_H
#define KSCALE_VARIANT_H

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../kernel/spinlock.h"

struct kscale_variant {
	const char *name;
	const char *doc;
	const void *ops;	/* a model row's */
	const void *host;	/* a host row's */
	const char *kernel;	/* a model row's: the version it follows */
};

struct kscale_variant_table {
	const struct kscale_variant *rows;
	int nr;
};

/* models/<model>/variants.c: const struct kscale_variant_table NAME. */
#define KSCALE_VARIANT_TABLE(_table, ...)				\
	static const struct kscale_variant _table##_rows[] = {		\
		__VA_ARGS__						\
	};								\
	const struct kscale_variant_table _table = {			\
		.rows = _table##_rows,					\
		.nr = sizeof(_table##_rows) / sizeof(_table##_rows[0]),	\
	}

#define for_each_variant_row(v, table)					\
	for ((v) = (table)->rows; (v) < (table)->rows + (table)->nr; (v)++)

/*
 * Row v of a model table (model) or of a bench's host rows (!model): 0,
 * or -1 with one line in err.
 */
static inline int kscale_variant_check(const struct kscale_variant *v,
				       bool model, char *err, size_t len)
{
	const char *why = NULL;

	if (!v->name || !*v->name || !v->doc)
		why = "a row without a name or doc";
	else if (model && !v->ops)
		why = "a model row without an implementation (.ops)";
	else if (model && v->host)
		why = "a model row with a host implementation (.host)";
	else if (model && spin_lock_kind_of(v->kernel) < 0)
		why = "a model row without a kernel of kernel_locks.c's "
		      "table (.kernel)";
	else if (!model && !v->host)
		why = "a host row without a host implementation (.host)";
	else if (!model && v->ops)
		why = "a host row with a model implementation (.ops)";
	else if (!model && v->kernel)
		why = "a host row with a model kernel (.kernel)";
	if (why)
		snprintf(err, len, "variant '%s': %s", v->name ? v->name : "",
			 why);
	return why ? -1 : 0;
}

/*
 * Before row v is set up: its kernel's spinlock for the locks its set-up
 * initialises; a host row's (the running kernel's, none of the model's)
 * are ticket locks, the default.
 */
static inline void kscale_variant_locks(const struct kscale_variant *v)
{
	int kind = spin_lock_kind_of(v->kernel);

	spin_lock_init_kind = kind < 0 ? SPIN_TICKET : kind;
}

/*
 * The rows of a table, the first nr_model of them model rows and the rest
 * host rows, each checked and no name twice: 0, or -1 with one line in err.
 */
static inline int kscale_variant_rows_check(const struct kscale_variant *rows,
					    int nr, int nr_model, char *err,
					    size_t len)
{
	int i, j;

	for (i = 0; i < nr; i++) {
		if (kscale_variant_check(&rows[i], i < nr_model, err, len))
			return -1;
		for (j = 0; j < i; j++)
			if (!strcmp(rows[j].name, rows[i].name)) {
				snprintf(err, len, "variant '%s': two rows",
					 rows[i].name);
				return -1;
			}
	}
	return 0;
}

/* Every row of a model table, and no name twice: 0, or -1 with err. */
static inline int kscale_variant_table_check(
	const struct kscale_variant_table *t, char *err, size_t len)
{
	return kscale_variant_rows_check(t->rows, t->nr, t->nr, err, len);
}

#endif
