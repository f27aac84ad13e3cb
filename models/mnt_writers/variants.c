// SPDX-License-Identifier: GPL-2.0
#include "mnt_writers.h"

const struct mnt_writers_ops *const mnt_writers_variants[] = {
	&mnt_writers_none,
	&mnt_writers_atomic,
	&mnt_writers_pernode,
	&mnt_writers_percpu,
	&mnt_writers_upstream,
};

const int mnt_writers_nr_variants =
	sizeof(mnt_writers_variants) / sizeof(mnt_writers_variants[0]);
