/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --profile: each registered class's visits per operation, and a visit's
 * hold and wait, between the window's two sums (lockstat.h); and what
 * the hooks themselves took of an operation.
 */
#ifndef KSCALE_RES_H
#define KSCALE_RES_H

#include <stdint.h>

#include "../kernel/lockstat.h"

struct kscale_run;

/* Every thread's lockstat counts at a snapshot, and what the hooks took. */
struct res_snapshot {
	struct lockstat_acc acc[LOCKSTAT_MAX_CLASSES];
	uint64_t cost;
};

/* res_<class>_* and lockstat_ns_per_op of the ops between r0 and r1. */
void res_counters(struct kscale_run *run, double ops,
		  const struct res_snapshot *r0, const struct res_snapshot *r1);

/*
 * Simulated runs: res_<class>_transfers, the misses of each class's
 * lines (lockstat_class_lines_sum()) per op, t1 less t0 over ops.
 */
void res_transfers(struct kscale_run *run, double ops, const uint64_t *t0,
		   const uint64_t *t1);

#endif
