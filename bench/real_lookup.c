// SPDX-License-Identifier: GPL-2.0
/*
 * open_by_inode (the seed's load, seed 003): each thread opens
 * <magic dir>/<ino> with ino drawn uniformly from --files, through a
 * dentry cache bounded to --dcache unused dentries, so the hit rate is
 * about dcache/files.  A miss goes to the variant's slow path.  `sharded`
 * spreads requests round-robin over --dirs identical magic directories,
 * as the seed's application did (each name is then cached per directory),
 * each thread's round starting at its own directory: the application's
 * one sequence of requests had them on different directories at once,
 * where rounds all starting at the first would queue every thread on its
 * i_mutex together.
 *
 * `real` makes the running kernel look up names that are not in its
 * dcache (unique negative lookups, fstatat() -> ENOENT) in one tmpfs
 * directory (--dirs=1) or spread round-robin over --dirs directories.
 * `fuse_serial` and `fuse_parallel` do the same in the directories of a
 * FUSE filesystem this process serves (lib/harness/fuse_server.h), whose
 * LOOKUP costs --fs-lookup-ns and sleeps --fs-io-us: without and with
 * FUSE_CAP_PARALLEL_DIROPS, the running kernel's own serialised lookups.
 * open_by_handle_at(), which needs no lookup at all, is timed once at
 * start-up where the process is permitted, and the output says when not.
 * These host rows and --fs-lookup-ns=auto are in real_lookup_host.c.
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/harness/fuse_server.h"
#include "../lib/kernel/tsc.h"
#include "../models/real_lookup/sunrpc.h"
#include "real_lookup.h"

#define MAX_DIRS	1000

static void model_loop(struct kscale_thread *t)
{
	struct lookup_run *lr = t->run->priv;
	struct lookup_thread *lt = t->priv;
	char name[DNAME_INLINE_LEN];
	struct qstr q = { .name = name };
	struct dentry *dentry;

	while (kscale_running(t)) {
		q.len = snprintf(name, sizeof(name), "%lu",
				 (unsigned long)(kscale_rand64(&lt->rng) %
						 lr->files));
		q.hash = full_name_hash(name, q.len);
		dentry = lr->ops->lookup(lr->dirs[pick_dir(lr, lt)], &q);
		dput(dentry);
		rcu_quiescent_state();
		kscale_count(t);
	}
	lt->stats = lookup_stats;
	rcu_unregister_thread();
}

static void lookup_loop(struct kscale_thread *t)
{
	struct lookup_run *lr = t->run->priv;

	lr->kind->loop(t);
}

static const struct lookup_kind model_kind = { .loop = model_loop };

static int lookup_setup(struct kscale_run *run)
{
	const struct kscale_variant *v = kscale_row(run);
	struct lookup_run *lr = calloc(1, sizeof(*lr));
	bool nfs;

	run->priv = lr;
	lr->ops = v->ops;
	lr->kind = v->host ?: &model_kind;
	lr->files = kscale_knob_long(run, "files");
	lr->nr_dirs = (!lr->ops || lr->ops == &real_lookup_sharded) ?
		      (int)kscale_knob_long(run, "dirs") : 1;
	lr->dirs = calloc(lr->nr_dirs, sizeof(*lr->dirs));
	lr->dirfd = calloc(lr->nr_dirs, sizeof(*lr->dirfd));
	if (lr->kind->dirs_open)
		return lr->kind->dirs_open(run, lr);
	nfs = !strcmp(kscale_knob(run, "fs"), "nfs");
	fs_lookup_ns = kscale_knob_ns(run, "fs_lookup_ns", fs_lookup_auto_ns);
	/* the disks are ext3's; on NFS the time is the server's */
	fs_io_ns = nfs ? 0 : kscale_knob_long(run, "fs_io_us") * 1000;
	magic_fs_init(lr->ops, &(struct magic_fs){
		.dcache = kscale_knob_long(run, "dcache"),
		.icache = kscale_knob_long(run, "icache"),
		/* what cached dentries and each thread's lookup hold */
		.pinned = kscale_knob_long(run, "dcache") + run->nr_threads,
		.disks = kscale_knob_long(run, "disks"),
		.io_depth = kscale_knob_long(run, "fs_io_depth"),
		.nfs = nfs,
		.rpc_slots = kscale_knob_long(run, "rpc_slots"),
		.nfsd_threads = kscale_knob_long(run, "nfsd_threads"),
		.nfs_rtt_ns = kscale_knob_long(run, "nfs_rtt_us") * 1000,
		.nfsd_ns = kscale_knob_long(run, "nfsd_us") * 1000,
	}, lr->dirs, lr->nr_dirs);
	return 0;
}

static int lookup_thread_init(struct kscale_thread *t)
{
	struct lookup_run *lr = t->run->priv;
	struct lookup_thread *lt = t->priv;

	lt->rng = 0x9e3779b97f4a7c15ULL * (t->id + 1);
	lt->next = t->id;
	if (!lr->ops)
		return 0;
	memset(&lookup_stats, 0, sizeof(lookup_stats));
	rcu_register_thread(&lt->rcu);
	return 0;
}

/*
 * The NFS line: calls that slept for a slot, requests that found every
 * server thread busy, a call's mean time, and the calls in flight on
 * average (Little's law: calls a second times that time).
 */
static void rpc_counters(struct kscale_run *run, const struct rpc_xprt *xprt,
			 unsigned long lookups)
{
	unsigned long calls = xprt->nr_calls ? xprt->nr_calls : 1;
	double call_s = xprt->call_ns * 1e-9 / calls;

	kscale_set_counter(run, "rpc_backlog_pct",
			   100.0 * xprt->nr_backlogged / calls);
	kscale_set_counter(run, "nfsd_queued_pct",
			   100.0 * xprt->serv.nr_queued / calls);
	kscale_set_counter(run, "rpc_call_us", call_s * 1e6);
	kscale_set_counter(run, "rpc_in_flight", call_s *
			   kscale_counter(run, "lookups_per_sec") *
			   xprt->nr_calls / (lookups ? lookups : 1));
}

static void model_counters(struct kscale_run *run, struct lookup_run *lr)
{
	struct lookup_stats sum = { 0 };
	unsigned long reads = 0, queued = 0;
	struct dcache_stats st;
	unsigned int d;
	int i;

	for (i = 0; i < run->nr_threads; i++)
		lookup_stats_add(&sum, &((struct lookup_thread *)
					 run->threads[i].priv)->stats);
	dcache_stats(&st);
	kscale_set_counter(run, "dcache_hit_ratio", (double)sum.hits /
			   (sum.hits + sum.misses ? sum.hits + sum.misses : 1));
	kscale_set_counter(run, "dir_lock_wait_pct",
			   kscale_loop_pct(run, cycles_to_ns(sum.lock_wait)));
	kscale_set_counter(run, "duplicate_dentries", st.duplicates);
	if (lr->ops->vfs_scale)
		kscale_set_counter(run, "in_lookup_waits", sum.in_lookup_waits);
	if (kscale_knob_long(run, "icache"))
		kscale_set_counter(run, "icache_hit_ratio", (double)
				   sum.icache_hits / (sum.misses ? sum.misses : 1));
	for (d = 0; d < nr_magic_disks; d++) {
		reads += magic_disks[d].nr_reads;
		queued += magic_disks[d].nr_queued;
	}
	if (fs_io_ns) {
		kscale_set_counter(run, "fs_io_queued_pct", 100.0 * queued /
				   (reads ? reads : 1));
		/* kscale predict: a read per dcache miss the icache misses */
		kscale_set_counter(run, "io_sleep_ns_per_op", fs_io_ns *
				   (1 - kscale_counter(run, "dcache_hit_ratio")) *
				   (1 - kscale_counter(run, "icache_hit_ratio")));
		kscale_set_counter(run, "io_read_ns", fs_io_ns);
	}
	if (magic_xprt)
		rpc_counters(run, magic_xprt, sum.hits + sum.misses);
	if (lr->ops->one_dentry_per_name &&
	    (st.duplicates || st.names_with_duplicates))
		kscale_fail(run, "%s: %lu duplicate dentries (%lu names)",
			    kscale_row(run)->name, st.duplicates,
			    st.names_with_duplicates);
}

static int lookup_teardown(struct kscale_run *run)
{
	struct lookup_run *lr = run->priv;
	int i;

	kscale_set_counter(run, "lookups_per_sec",
			   kscale_counter(run, "ops_per_sec"));
	if (lr->ops) {
		model_counters(run, lr);
		magic_fs_exit(lr->dirs, lr->nr_dirs);
	}
	for (i = 0; i < lr->nr_dirs; i++)
		if (lr->dirfd[i] > 0)
			close(lr->dirfd[i]);
	if (lr->fuse) {
		kscale_set_counter(run, "fuse_lookups",
				   fuse_server_lookups(lr->fuse));
		fuse_server_stop(lr->fuse);
	}
	free(lr->dirs);
	free(lr->dirfd);
	free(lr);
	return run->failed ? -1 : 0;
}
static int check_files(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 1, 1L << 30, err, len);
}

static int check_dcache(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 1, 1L << 26, err, len);
}

static int check_icache(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 0, 1L << 26, err, len);
}

static int check_dirs(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 1, MAX_DIRS, err, len);
}

static int check_fs_io_us(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 0, 1000 * 1000, err, len);
}

static int check_disks(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 1, 1024, err, len);
}

static int check_fs_io_depth(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 1, 1 << 16, err, len);
}

static int check_fs(const char *v, char *err, size_t len)
{
	if (!strcmp(v, "ext3") || !strcmp(v, "nfs"))
		return 0;
	snprintf(err, len, "expected ext3 or nfs");
	return -1;
}

static int check_nfs_us(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 0, 1000 * 1000, err, len);
}

static int check_nfsd_threads(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 1, 1024, err, len);
}

/* 2.6.32's RPC_MIN_SLOT_TABLE..RPC_MAX_SLOT_TABLE */
static int check_rpc_slots(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 2, 128, err, len);
}

static const struct kscale_workload workloads[] = {
	{
		.name = "open_by_inode",
		.doc = "look up <magic dir>/<ino>, ino uniform over --files",
		.setup = lookup_setup,
		.thread_init = lookup_thread_init,
		.loop = lookup_loop,
		.teardown = lookup_teardown,
		.thread_size = sizeof(struct lookup_thread),
	},
};

static const struct kscale_variant host_variants[] = {
	{ "real", "the running kernel: unique negative lookups on tmpfs in "
		  "--dirs directories", .host = &real_kind },
	{ "fuse_serial", "the running kernel on a FUSE filesystem of ours "
			 "without FUSE_CAP_PARALLEL_DIROPS: LOOKUP under the "
			 "directory's mutex", .host = &fuse_serial_kind },
	{ "fuse_parallel", "the same with FUSE_CAP_PARALLEL_DIROPS: lookups "
			   "in a directory overlap", .host = &fuse_parallel_kind },
};

static const struct kscale_knob knobs[] = {
	{ "files", "100000", "distinct names drawn from", check_files },
	{ "dcache", "10000", "unused dentries the cache keeps (hit ratio "
	  "about dcache/files)", check_dcache },
	{ "dirs", "100", "magic directories for sharded (and real)",
	  check_dirs },
	{ "fs_lookup_ns", "0", "ns of filesystem ->lookup() work, or auto "
	  "(a real tmpfs lookup, measured)", kscale_check_ns_or_auto },
	{ "fs_io_us", "0", "us a miss's ->lookup() sleeps on a read from the "
	  "model disk (0: no I/O)", check_fs_io_us },
	{ "disks", "1", "model disks the magic filesystem's inodes are spread "
	  "over, by inode number", check_disks },
	{ "fs_io_depth", "32", "reads each model disk services at once, FIFO "
	  "beyond", check_fs_io_depth },
	{ "icache", "0", "inodes kept in core: a miss on a name whose inode is "
	  "there reads nothing (0: every miss reads)", check_icache },
	{ "fs", "ext3", "ext3: a miss reads the model disks; nfs: a miss is a "
	  "round trip to a model NFS server (the disk knobs unused)", check_fs },
	{ "nfs_rtt_us", "100", "us of network round trip a --fs=nfs call "
	  "takes", check_nfs_us },
	{ "nfsd_us", "100", "us a server thread serves a --fs=nfs request",
	  check_nfs_us },
	{ "nfsd_threads", "8", "NFS server threads, each serving one request "
	  "at a time, FIFO beyond", check_nfsd_threads },
	{ "rpc_slots", "16", "the client transport's RPC slots: calls in "
	  "flight at once, the rest asleep for one", check_rpc_slots },
};

KSCALE_PRIMARY_METRIC("lookups_per_sec");
KSCALE_PERF_SYMBOLS("__lookup_slow", "d_alloc_parallel", "fuse_lookup");

KSCALE_MODEL("real_lookup",
	     "dcache misses and the directory lock (seed 003, 2.6.32 "
	     "fs/namei.c)",
	     real_lookup_init, &real_lookup_variants);
