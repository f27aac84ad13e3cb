// SPDX-License-Identifier: GPL-2.0
/*
 * The rwsem bench's calibration of --io-path-ns=auto and --map-ns=auto,
 * on the running kernel (bench/rwsem.c's fio workload runs with them).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/harness/calibrate.h"
#include "rwsem.h"

/*
 * --io-path-ns=auto and --map-ns=auto, calibrated on the running kernel:
 * a 1-job fio randread and randwrite on the reference file (XFS when
 * there is one) give what a real I/O costs a fio job; io_path_ns is the
 * work that makes the model's I/O (on the run's file, with its map and
 * update-time work) cost as much: one secant step from no work, as the
 * work's cost is not quite additive (a spin delays the copy's cache
 * misses).  The map work is lseek(SEEK_DATA), which maps a block under
 * the ILOCK shared, less lseek(SEEK_CUR), which does not.  All of it
 * through calibrate.h; --calibration's names are rwsem.map_ns and
 * rwsem.io_path_ns.{read,write}.size=N,bs=N,map=NS,update=NS,iolock=MODE.
 */
#define CALIBRATION_IOS		20000
/* a write's cost moves by 2x between fio runs: the median of short ones */
#define CALIBRATION_FIO_S	0.1
#define MAX_CALIBRATIONS	8

struct io_calibration {
	size_t size, bs;
	unsigned long map_ns, update_time_ns;
	unsigned int iolock_write;
	unsigned long io_path_ns[2];	/* [0] read, [1] write */
};

static struct io_calibration calibrations[MAX_CALIBRATIONS];
static int nr_calibrations;

struct calibration {
	int fd;
	size_t size;
	bool write;
	uint64_t rng;
	struct fio_run *model;
	char *buf;
};

static long model_io_round(struct kscale_round *r)
{
	struct calibration *c = r->arg;
	struct fio_thread ft = { .buf = c->buf };
	long i;

	for (i = 0; i < CALIBRATION_IOS; i++)
		fio_io(c->model, &ft, kscale_rand64(&c->rng) / 100 * 100 +
		       (c->write ? 99 : 0));
	return CALIBRATION_IOS;
}

static long seek_round(struct kscale_round *r)
{
	struct calibration *c = r->arg;
	long i;

	for (i = 0; i < CALIBRATION_IOS; i++) {
		off_t off = (off_t)(kscale_rand64(&c->rng) % (c->size / 4096)) *
			    4096;

		if (lseek(c->fd, c->write ? 0 : off,
			  c->write ? SEEK_CUR : SEEK_DATA) < 0)
			return -1;
	}
	return CALIBRATION_IOS;
}

/* One run of one fio job on this CPU (the calibration's), timed by fio. */
static long fio_round(struct kscale_round *r)
{
	struct fio_job *job = r->arg;
	struct fio_totals t;
	struct fio_proc p;

	snprintf(job->cpus, sizeof(job->cpus), "%d", sched_getcpu());
	if (fio_spawn(job, &p, r->err, sizeof(r->err)) ||
	    fio_wait(&p, &t, r->err, sizeof(r->err)))
		return -1;
	if (t.ios <= 0 || t.iops <= 0)
		return 0;
	r->ns = t.ios / t.iops * 1e9;
	return (long)t.ios;
}

/* What io_path_ns is measured with, for one file and work. */
struct io_path_measure {
	struct kscale_run *run;
	const char *dir;		/* of the reference file */
	struct fio_job job;		/* on the reference file, made once */
	struct calibration c;		/* the model's I/O with v4.6's rwsem */
	double real_ns[2];		/* a fio job's I/O, 0 if not measured */
};

/* The work that makes one uncontended model I/O cost what fio's did. */
static int measure_io_path(void *arg, double *ns, char *err, size_t len)
{
	struct io_path_measure *m = arg;
	struct fio_run *own = m->c.model;
	bool write = m->c.write;
	double real, none, some, slope;

	if (!m->job.filename[0] &&
	    fio_file(m->run, &m->job, m->dir)) {
		snprintf(err, len, "%s", m->run->error);
		return -1;
	}
	m->job.rw = write ? "randwrite" : "randread";
	m->job.nr_jobs = 1;
	m->job.runtime = CALIBRATION_FIO_S;
	m->job.ramp = CALIBRATION_FIO_S / 2;
	if (kscale_calibrate(fio_round, &m->job, &real, err, len))
		return -1;
	m->real_ns[write] = real;
	own->file.io_path_ns[write] = 0;
	if (kscale_calibrate(model_io_round, &m->c, &none, err, len))
		return -1;
	*ns = real - none;
	if (*ns <= 0)
		return 0;
	own->file.io_path_ns[write] = (unsigned long)*ns;
	if (kscale_calibrate(model_io_round, &m->c, &some, err, len))
		return -1;
	/* a slope far from 1 is the timing's noise, not the work's */
	slope = (some - none) / own->file.io_path_ns[write];
	if (slope > 0.5 && slope < 2)
		*ns /= slope;
	return 0;
}

static bool same_calibration(const struct io_calibration *ic,
			     const struct xfs_dax_file *f)
{
	return ic->size == f->size && ic->bs == f->bs &&
	       ic->map_ns == f->map_ns &&
	       ic->update_time_ns == f->update_time_ns &&
	       ic->iolock_write == f->iolock_write;
}

/*
 * Once per file and work: every variant then runs the same work, timed
 * with v4.6's rwsem (uncontended, the versions differ by a few atomics).
 */
static struct io_calibration *calibrate_io(struct kscale_run *run,
					   struct fio_run *fr, const char *dir,
					   const char *fs)
{
	struct io_calibration *ic = calibrations;
	const struct xfs_dax_file *f = &fr->file;
	struct fio_run own = *fr;
	struct io_path_measure m = {
		.run = run,
		.dir = dir,
		.job = { .bs = f->bs, .size = f->size },
		.c = { .size = f->size, .rng = 1, .model = &own },
	};
	char name[200], err[600];
	int w;

	for (; ic < calibrations + nr_calibrations; ic++)
		if (same_calibration(ic, f))
			return ic;
	if (nr_calibrations == MAX_CALIBRATIONS) {
		kscale_fail(run, "more than %d file and work settings with "
			    "--io-path-ns=auto", MAX_CALIBRATIONS);
		return NULL;
	}
	own.file.ops = &rwsem_v4_6_ops;
	own.file.ip = xfs_inode_alloc();
	m.c.buf = aligned_alloc(4096, (f->bs + 4095) & ~4095UL);
	if (!own.file.ip || !m.c.buf) {
		kscale_fail(run, "out of memory");
		goto out;
	}
	xfs_inode_init_locks(own.file.ip, own.file.ops);
	for (w = 0; w < 2; w++) {
		snprintf(name, sizeof(name), "rwsem.io_path_ns.%s.size=%zu,"
			 "bs=%zu,map=%lu,update=%lu,iolock=%s",
			 w ? "write" : "read", f->size, f->bs, f->map_ns,
			 f->update_time_ns, f->iolock_write ==
			 XFS_IOLOCK_EXCL ? "exclusive" : "shared");
		m.c.write = w;
		if (kscale_calibrated(name, &ic->io_path_ns[w],
				      measure_io_path, &m, err, sizeof(err))) {
			kscale_fail(run, "%s", err);
			goto out;
		}
		if (m.real_ns[w])
			fprintf(stderr, "rwsem: %s: %lu (a fio job on %s: "
				"%.0f ns)\n", name, ic->io_path_ns[w], fs,
				m.real_ns[w]);
		else
			fprintf(stderr, "rwsem: %s: %lu (from --calibration)"
				"\n", name, ic->io_path_ns[w]);
	}
	ic->size = f->size;
	ic->bs = f->bs;
	ic->map_ns = f->map_ns;
	ic->update_time_ns = f->update_time_ns;
	ic->iolock_write = f->iolock_write;
	nr_calibrations++;
out:
	free(m.c.buf);
	free(own.file.ip);
	return run->failed ? NULL : ic;
}

int set_io_path(struct kscale_run *run, struct fio_run *fr, const char *dir,
		const char *fs)
{
	struct io_calibration *ic = NULL;
	int w;

	if (!strcmp(kscale_knob(run, "io_path_ns"), "auto")) {
		ic = calibrate_io(run, fr, dir, fs);
		if (!ic)
			return -1;
	}
	for (w = 0; w < 2; w++)
		fr->file.io_path_ns[w] = kscale_knob_ns(run, "io_path_ns",
						   ic ? ic->io_path_ns[w] : 0);
	kscale_set_counter(run, "io_path_read_ns", fr->file.io_path_ns[0]);
	kscale_set_counter(run, "io_path_write_ns", fr->file.io_path_ns[1]);
	return 0;
}

/* lseek(SEEK_DATA) less lseek(SEEK_CUR) on a file of the XFS at arg. */
int measure_map_work(void *arg, double *ns, char *err, size_t len)
{
	const char *dir = arg;
	struct calibration c = { .size = 16 << 20, .rng = 1 }, null;
	char path[400];
	int ret;

	snprintf(path, sizeof(path), "%s/calibrate", dir);
	if (fio_layout(path, c.size, err, len))
		return -1;
	c.fd = open(path, O_RDONLY);
	if (c.fd < 0) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		ret = -1;
	} else {
		null = c;
		null.write = true;
		ret = kscale_calibrate_less(seek_round, &c, seek_round, &null,
					    ns, NULL, NULL, err, len);
		close(c.fd);
	}
	unlink(path);
	return ret;
}
