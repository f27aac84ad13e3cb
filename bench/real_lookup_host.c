// SPDX-License-Identifier: GPL-2.0
/*
 * The real_lookup bench's host side: the rows that make the running kernel
 * look up names (`real` on tmpfs, `fuse_serial` and `fuse_parallel` in the
 * directories of a FUSE filesystem this process serves), and at start-up
 * the calibration of --fs-lookup-ns=auto and the time of
 * open_by_handle_at().  bench/real_lookup.c runs them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/harness/calibrate.h"
#include "../lib/harness/fuse_server.h"
#include "../lib/harness/options.h"
#include "../lib/harness/tmpfs.h"
#include "real_lookup.h"

#define CALIBRATION_OPS	5000

static struct tmpfs_dirs real_dirs;
unsigned long fs_lookup_auto_ns;

static void real_loop(struct kscale_thread *t)
{
	struct lookup_run *lr = t->run->priv;
	struct lookup_thread *lt = t->priv;
	char name[64];
	struct stat st;
	int dir;

	while (kscale_running(t)) {
		dir = pick_dir(lr, lt);
		snprintf(name, sizeof(name), "%d.%lu", t->id, lt->next++);
		if (unlikely(!fstatat(lr->dirfd[dir], name, &st, 0))) {
			kscale_fail(t->run, "%s: exists", name);
			return;
		}
		kscale_count(t);
	}
}

/* d000 .. dNNN under the tmpfs scratch directory, fresh for each run. */
static int real_dirs_open(struct kscale_run *run, struct lookup_run *lr)
{
	static unsigned long generation;
	char path[400];
	int i;

	generation++;
	for (i = 0; i < lr->nr_dirs; i++) {
		snprintf(path, sizeof(path), "%s/g%lu.d%03d", real_dirs.path[0],
			 generation, i);
		if (mkdir(path, 0700) ||
		    (lr->dirfd[i] = open(path, O_RDONLY | O_DIRECTORY)) < 0)
			return kscale_fail(run, "%s: %s", path, strerror(errno));
	}
	return 0;
}

/* A FUSE server for this run, its --dirs directories opened. */
static int fuse_dirs_open(struct kscale_run *run, struct lookup_run *lr)
{
	struct fuse_server_config cfg = {
		.dirs = lr->nr_dirs,
		.parallel_dirops = lr->kind->parallel_dirops,
		.io_us = kscale_knob_long(run, "fs_io_us"),
		.lookup_ns = kscale_knob_ns(run, "fs_lookup_ns",
					    fs_lookup_auto_ns),
		.max_threads = run->nr_threads + 2,
	};
	char err[160];
	int i;

	lr->fuse = fuse_server_start(&cfg, err, sizeof(err));
	if (!lr->fuse)
		return kscale_fail(run, "%s", err);
	if (fuse_server_parallel_dirops(lr->fuse) != cfg.parallel_dirops)
		return kscale_fail(run, "the kernel would not %s parallel "
				   "lookups", cfg.parallel_dirops ? "grant" :
				   "drop");
	for (i = 0; i < lr->nr_dirs; i++) {
		lr->dirfd[i] = open(fuse_server_dir(lr->fuse, i),
				    O_RDONLY | O_DIRECTORY);
		if (lr->dirfd[i] < 0)
			return kscale_fail(run, "%s: %s",
					   fuse_server_dir(lr->fuse, i),
					   strerror(errno));
	}
	return 0;
}

const struct lookup_kind real_kind = {
	.loop = real_loop,
	.dirs_open = real_dirs_open,
};

const struct lookup_kind fuse_serial_kind = {
	.loop = real_loop,
	.dirs_open = fuse_dirs_open,
};

const struct lookup_kind fuse_parallel_kind = {
	.loop = real_loop,
	.dirs_open = fuse_dirs_open,
	.parallel_dirops = true,
};

/*
 * Calibration: --fs-lookup-ns=auto, negative lookups of names the running
 * kernel has not seen; and open_by_handle_at(), the running kernel's.
 */
struct lookup_calibration {
	int dirfd;
	unsigned long next;		/* a fresh name, across rounds */
};

static long real_lookup_round(struct kscale_round *r)
{
	struct lookup_calibration *c = r->arg;
	char name[64];
	struct stat st;
	int i;

	for (i = 0; i < CALIBRATION_OPS; i++) {
		snprintf(name, sizeof(name), "calibrate.%lu", c->next++);
		if (!fstatat(c->dirfd, name, &st, 0))
			errno = EEXIST;
		if (errno != ENOENT)
			return -1;
	}
	return CALIBRATION_OPS;
}

static int measure_fs_lookup(void *dir, double *ns, char *err, size_t len)
{
	struct lookup_calibration c = {
		.dirfd = open(dir, O_RDONLY | O_DIRECTORY),
	};
	int ret;

	if (c.dirfd < 0) {
		snprintf(err, len, "%s: %s", (char *)dir, strerror(errno));
		return -1;
	}
	ret = kscale_calibrate(real_lookup_round, &c, ns, err, len);
	close(c.dirfd);
	return ret;
}

struct handle_calibration {
	int mountfd;
	struct file_handle *fh;
};

static long open_by_handle_round(struct kscale_round *r)
{
	struct handle_calibration *c = r->arg;
	int i, fd;

	for (i = 0; i < CALIBRATION_OPS; i++) {
		fd = open_by_handle_at(c->mountfd, c->fh, O_RDONLY);
		if (fd < 0 || close(fd))
			return -1;
	}
	return CALIBRATION_OPS;
}

/*
 * ns per open_by_handle_at() + close(): 0, or -1 with the reason in err
 * and errno set.  Measured every time, never kept in --calibration's file:
 * it is the running kernel's own figure, not work of the model's.
 */
static int time_open_by_handle(const char *dir, double *ns, char *err,
			       size_t len)
{
	struct handle_calibration c = {
		.fh = malloc(sizeof(*c.fh) + MAX_HANDLE_SZ),
	};
	int mount_id, fd, ret = -1, saved_errno;
	char path[400];

	if (!c.fh) {
		snprintf(err, len, "out of memory");
		errno = ENOMEM;
		return -1;
	}
	c.fh->handle_bytes = MAX_HANDLE_SZ;
	snprintf(path, sizeof(path), "%s/handle", dir);
	fd = open(path, O_CREAT | O_WRONLY, 0600);
	c.mountfd = open(dir, O_RDONLY | O_DIRECTORY);
	if (fd < 0 || close(fd) || c.mountfd < 0 ||
	    name_to_handle_at(AT_FDCWD, path, c.fh, &mount_id, 0) < 0)
		snprintf(err, len, "%s: %s", path, strerror(errno));
	else
		ret = kscale_calibrate(open_by_handle_round, &c, ns, err, len);
	saved_errno = errno;
	if (c.mountfd >= 0)
		close(c.mountfd);
	unlink(path);
	free(c.fh);
	errno = saved_errno;
	return ret;
}

static void report_open_by_handle(void)
{
	char why[600];
	const char *note;
	double ns;

	if (!time_open_by_handle(real_dirs.path[0], &ns, why, sizeof(why))) {
		kscale_add_context("real_open_by_handle_ns", "%.0f", ns);
		fprintf(stderr, "real_lookup: real: open_by_handle_at + close "
			"%.0f ns, negative lookup %lu ns (one thread)\n", ns,
			fs_lookup_auto_ns);
		return;
	}
	note = errno == EPERM ? " (needs CAP_DAC_READ_SEARCH)" : "";
	kscale_add_context("real_open_by_handle_ns", "not measured: %s%s",
			   why, note);
	fprintf(stderr, "real_lookup: real: open_by_handle_at not measured: "
		"%s%s\n", why, note);
}

int real_lookup_init(const struct kscale_options *o, char *err, size_t len)
{
	if (tmpfs_dirs_create(&real_dirs, 1, err, len))
		return -1;
	if (kscale_auto("real_lookup.fs_lookup_ns", NULL, &fs_lookup_auto_ns,
			measure_fs_lookup, real_dirs.path[0], err, len))
		return -1;
	if (kscale_variant_selected(o, "real"))
		report_open_by_handle();
	if (fuse_server_unavailable()) {
		kscale_skip_variant(o, "fuse_serial", fuse_server_unavailable());
		kscale_skip_variant(o, "fuse_parallel",
				    fuse_server_unavailable());
	}
	return 0;
}
