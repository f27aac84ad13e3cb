/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The real_lookup bench's two files: its workload (real_lookup.c) and
 * its host side (real_lookup_host.c): the rows that run the running
 * kernel, their tmpfs and FUSE directories, and the calibration of
 * --fs-lookup-ns=auto.
 */
#ifndef KSCALE_BENCH_REAL_LOOKUP_H
#define KSCALE_BENCH_REAL_LOOKUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../lib/harness/kscale.h"
#include "../models/real_lookup/real_lookup.h"

struct lookup_run;

/* The step vector (variant.h): the model's, or a host row's. */
struct lookup_kind {
	void (*loop)(struct kscale_thread *t);
	/* a host row's directories: 0 or kscale_fail() */
	int (*dirs_open)(struct kscale_run *run, struct lookup_run *lr);
	bool parallel_dirops;	/* FUSE_CAP_PARALLEL_DIROPS */
};

struct lookup_run {
	const struct real_lookup_ops *ops;	/* NULL on a host row */
	const struct lookup_kind *kind;
	struct fuse_server *fuse;
	struct dentry **dirs;
	int *dirfd;
	int nr_dirs;
	unsigned long files;
};

struct lookup_thread {
	struct rcu_thread rcu;
	struct lookup_stats stats;
	uint64_t rng;
	unsigned long next;		/* round-robin over dirs; real names */
};

static inline int pick_dir(struct lookup_run *lr, struct lookup_thread *lt)
{
	return lr->nr_dirs > 1 ? (int)(lt->next++ % lr->nr_dirs) : 0;
}

/* real_lookup_host.c: the host rows' steps. */
extern const struct lookup_kind real_kind;
extern const struct lookup_kind fuse_serial_kind;
extern const struct lookup_kind fuse_parallel_kind;

/* real_lookup_host.c: --fs-lookup-ns=auto, measured by the init. */
extern unsigned long fs_lookup_auto_ns;

/*
 * real_lookup_host.c: the tmpfs scratch directory, --fs-lookup-ns=auto,
 * open_by_handle_at()'s time and whether FUSE rows can run.
 */
int real_lookup_init(const struct kscale_options *o, char *err, size_t len);

#endif
