// SPDX-License-Identifier: GPL-2.0
/*
 * openbench (the seed's benchmark, sr71.net/~dave/linux/openbench.c): each
 * thread loops open -> write 3 bytes -> close on its own file, on one
 * mount or alternating between two (the seed's worst case).
 *
 * Model variants: 2.6.26's open and close around the writer count, with
 * --path-work-ns of uncontended busy work for the rest of the syscalls
 * (models/mnt_writers/open_2_6.h; --shared-path=0 leaves the 2.6.2x
 * path's shared lines out; with --write-update-time, 2.6.26's
 * file_update_time() takes and drops write access on every write).
 * The 2.6.2x designs walk 2.6.22's path (namei_2_6.h) to a file named as
 * --o-creat, --dir-per-thread, --abs-path and --cross-mount say:
 * openbench's flags, which the seed does not give.
 * `upstream` is today's path, which has none of the 2.6.2x extras.
 * `real` makes the real syscalls on tmpfs files.  With --migrate each
 * close runs on the next CPU of the placement (the thread really moves),
 * so counts taken on one CPU are dropped on another.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../lib/harness/calibrate.h"
#include "../lib/harness/kscale.h"
#include "../lib/harness/options.h"
#include "../lib/sys/process.h"
#include "../lib/harness/tmpfs.h"
#include "../models/mnt_writers/mnt_writers.h"
#include "../models/mnt_writers/open_2_6.h"

#define MAX_MOUNTS	2
#define CALIBRATION_OPS	2000

/* The step vector (variant.h): the model's, or a host row's. */
struct openbench_kind {
	int (*open_write)(struct kscale_thread *t, int m);
	void (*close)(struct kscale_thread *t, int m);
};

struct openbench {
	struct mnt_writers_path path;		/* .ops NULL on a host row */
	const struct openbench_kind *kind;
	struct vfsmount *mnt[MAX_MOUNTS];
	struct tree_2_6 *tree;			/* the 2.6.2x path's names */
	int mounts;
	bool migrate;
	unsigned long underflows;	/* coalesced before the run */
};

struct openbench_thread {
	struct file file[MAX_MOUNTS];
	struct walk_2_6 walk[MAX_MOUNTS];
	struct thread_tree_2_6 own[MAX_MOUNTS];
	char path[MAX_MOUNTS][320];
	int fd;
	int partner_cpu;		/* where --migrate closes */
};

static struct tmpfs_dirs real_dirs;
static unsigned long path_work_auto_ns;

static void do_migrate(struct kscale_thread *t, int cpu)
{
	struct openbench *ob = t->run->priv;

	if (ob->migrate)
		kscale_migrate(t, cpu);
}

static int model_open_write(struct kscale_thread *t, int m)
{
	struct openbench_thread *ot = t->priv;
	struct openbench *ob = t->run->priv;
	int ret = __dentry_open(&ob->path, &ot->walk[m], &ot->file[m]);

	if (unlikely(ret))
		return kscale_fail(t->run, "mnt_want_write: %s", strerror(-ret));
	vfs_write(&ob->path, &ot->file[m], "abc", 3);
	return 0;
}

static void model_close(struct kscale_thread *t, int m)
{
	struct openbench_thread *ot = t->priv;
	struct openbench *ob = t->run->priv;

	__fput(&ob->path, &ot->file[m]);
}

static int real_open_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT, 0600);

	if (fd >= 0 && write(fd, "abc", 3) != 3) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static int real_open_write_thread(struct kscale_thread *t, int m)
{
	struct openbench_thread *ot = t->priv;

	ot->fd = real_open_write(ot->path[m]);
	if (unlikely(ot->fd < 0))
		return kscale_fail(t->run, "%s: %s", ot->path[m],
				   strerror(errno));
	return 0;
}

static void real_close(struct kscale_thread *t, int m)
{
	struct openbench_thread *ot = t->priv;

	close(ot->fd);
}

static const struct openbench_kind model_kind = {
	.open_write = model_open_write,
	.close = model_close,
};

static const struct openbench_kind real_kind = {
	.open_write = real_open_write_thread,
	.close = real_close,
};

static void openbench_loop(struct kscale_thread *t)
{
	struct openbench *ob = t->run->priv;
	struct openbench_thread *ot = t->priv;
	unsigned long i = 0;
	int m;

	while (kscale_running(t)) {
		m = i++ % ob->mounts;
		if (unlikely(ob->kind->open_write(t, m)))
			return;
		do_migrate(t, ot->partner_cpu);
		ob->kind->close(t, m);
		do_migrate(t, t->cpu);
		kscale_count(t);
	}
}

static int openbench_setup(struct kscale_run *run)
{
	const struct kscale_variant *v = kscale_row(run);
	struct openbench *ob = calloc(1, sizeof(*ob));
	struct names_2_6 names;
	int i;

	run->priv = ob;
	ob->kind = v->host ?: &model_kind;
	ob->mounts = (int)kscale_knob_long(run, "mounts");
	ob->migrate = kscale_knob_long(run, "migrate");
	if (ob->migrate && kscale_nr_usable_cpus(run) < 2)
		return kscale_fail(run, "--migrate needs two usable CPUs");
	if (!v->ops)
		return 0;
	mnt_writers_path_init(&ob->path, v->ops,
			      kscale_knob_ns(run, "path_work_ns",
					     path_work_auto_ns),
			      kscale_knob_long(run, "shared_path"),
			      kscale_knob_long(run, "write_update_time"),
			      kscale_knob_long(run, "o_creat"));
	for (i = 0; i < ob->mounts; i++)
		ob->mnt[i] = ob->path.ops->alloc_vfsmnt("kscale");
	if (ob->path.path_2_6) {
		names.abs_path = kscale_knob_long(run, "abs_path");
		names.dir_per_thread = kscale_knob_long(run, "dir_per_thread");
		names.cross_mount = kscale_knob_long(run, "cross_mount");
		ob->tree = mnt_cache_zalloc(sizeof(*ob->tree));
		tree_2_6_init(ob->tree, &names, ob->mnt, ob->mounts);
	}
	ob->underflows = READ_ONCE(mnt_underflows_coalesced);
	return 0;
}

static int openbench_thread_init(struct kscale_thread *t)
{
	struct openbench *ob = t->run->priv;
	struct openbench_thread *ot = t->priv;
	int i;

	/*
	 * With 2 threads sharing them, perf (cpu-clock) put 9% of the samples
	 * on the file table's file_lock (alloc_fd, file_close_fd), and
	 * init_file/__fput/generic_permission went from 3% to 19% on the
	 * shared struct cred's reference count: costs of threads, not of
	 * mounts, which openbench's processes did not pay.
	 */
	if (!ob->path.ops && thread_as_process())
		return kscale_fail(t->run, "thread %d: private files or "
				   "credentials: %s", t->id, strerror(errno));
	ot->partner_cpu = kscale_partner_cpu(t);
	for (i = 0; i < ob->mounts; i++) {
		file_init(&ot->file[i], ob->mnt[i]);
		if (ob->tree)
			walk_2_6_init(&ot->walk[i], ob->tree, i, &ot->own[i]);
		snprintf(ot->path[i], sizeof(ot->path[i]), "%s/file.%d",
			 real_dirs.path[i % real_dirs.nr], t->id);
	}
	return 0;
}

/*
 * Every open was closed: each mount's writer count must be exactly zero,
 * or, for a design with a posted bug that moves counts between mounts,
 * their sum (the counts it moved: writers_misattributed); and every
 * reference the walks took on the tree's dentries and root mount was
 * dropped.
 */
static int openbench_teardown(struct kscale_run *run)
{
	struct openbench *ob = run->priv;
	const struct mnt_writers_ops *ops = ob->path.ops;
	long writers, sum = 0, moved = 0, refs;
	int i;

	if (ops)
		kscale_set_counter(run, "underflows_coalesced",
				   READ_ONCE(mnt_underflows_coalesced) -
				   ob->underflows);
	if (ob->tree) {
		refs = tree_2_6_exit(ob->tree);
		if (refs)
			kscale_fail(run, "%ld references the walks took on the "
				    "tree left taken or dropped twice", refs);
		free(ob->tree);
	}
	for (i = 0; ops && i < ob->mounts; i++) {
		writers = ops->mnt_writers(ob->mnt[i]);
		sum += writers;
		moved += labs(writers);
		if (writers && !ops->posted_bug)
			kscale_fail(run, "mount %d: %ld writers after the run, "
				    "expected 0", i, writers);
		ops->free_vfsmnt(ob->mnt[i]);
	}
	if (sum)
		kscale_fail(run, "%ld writers after the run over the mounts, "
			    "expected 0", sum);
	if (ops && ops->posted_bug)
		kscale_set_counter(run, "writers_misattributed", moved / 2);
	free(ob);
	return run->failed ? -1 : 0;
}

static long open_write_close_round(struct kscale_round *r)
{
	int i, fd;

	for (i = 0; i < CALIBRATION_OPS; i++) {
		fd = real_open_write(r->arg);
		if (fd < 0 || close(fd))
			return -1;
	}
	return CALIBRATION_OPS;
}

/* A real open/write/close on tmpfs, calibrated (calibrate.h). */
static int measure_path_work(void *path, double *ns, char *err, size_t len)
{
	int ret = kscale_calibrate(open_write_close_round, path, ns, err, len);

	unlink(path);
	return ret;
}

static int mnt_writers_init(const struct kscale_options *o, char *err,
			    size_t len)
{
	char path[320];

	if (tmpfs_dirs_create(&real_dirs, MAX_MOUNTS, err, len))
		return -1;
	snprintf(path, sizeof(path), "%s/calibrate", real_dirs.path[0]);
	if (kscale_auto("mnt_writers.path_work_ns", NULL, &path_work_auto_ns,
			measure_path_work, path, err, len))
		return -1;
	if (kscale_variant_selected(o, "real")) {
		kscale_add_context("real_mounts", "%s", real_dirs.how);
		fprintf(stderr, "mnt_writers: real: %s\n", real_dirs.how);
	}
	return 0;
}

static int check_mounts(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 1, MAX_MOUNTS, err, len);
}

static const struct kscale_workload workloads[] = {
	{
		.name = "openbench",
		.doc = "open -> write 3 bytes -> close, one file per thread "
		       "per mount",
		.setup = openbench_setup,
		.thread_init = openbench_thread_init,
		.loop = openbench_loop,
		.teardown = openbench_teardown,
		.thread_size = sizeof(struct openbench_thread),
	},
};

static const struct kscale_variant host_variants[] = {
	{ "real", "the running kernel's open/write/close on tmpfs files "
		  "(path work ignored)", .host = &real_kind },
};

static const struct kscale_knob knobs[] = {
	{ "mounts", "1", "1, or 2 to alternate files on two mounts (the "
	  "seed's worst case)", check_mounts },
	{ "path_work_ns", "0", "ns of uncontended work per open/close, or "
	  "auto (a real tmpfs open/write/close, measured)",
	  kscale_check_ns_or_auto },
	{ "migrate", "0", "1: close on another CPU than the open "
	  "(writer-count imbalance)", kscale_check_bool },
	{ "shared_path", "1", "0: leave out the 2.6.2x path's shared lines "
	  "(files_lock, s_files, the cwd), for lines of the counts alone",
	  kscale_check_bool },
	{ "write_update_time", "0", "1: 2.6.26's file_update_time() takes "
	  "and drops write access on every write (0: the seed's 2.6.22 "
	  "tmpfs set the times without)", kscale_check_bool },
	{ "o_creat", "0", "1: open with O_CREAT (the file exists): "
	  "open_namei() looks it up under its directory's i_mutex",
	  kscale_check_bool },
	{ "dir_per_thread", "0", "1: each thread's files in a directory of "
	  "its own (0: every file in one)", kscale_check_bool },
	{ "abs_path", "0", "1: absolute paths, walked from / through one "
	  "more directory (0: relative to the cwd)", kscale_check_bool },
	{ "cross_mount", "0", "1: the walk crosses the file's mount point "
	  "from the root mount, lookup_mnt() under vfsmount_lock",
	  kscale_check_bool },
};

KSCALE_PRIMARY_METRIC("ops_per_sec");
KSCALE_PERF_SYMBOLS("mnt_get_write_access");

KSCALE_MODEL("mnt_writers",
	     "r/o bind mount writer counts (seed 000, 2.6.26 "
	     "fs/namespace.c)",
	     mnt_writers_init, &mnt_writers_variants);
