// SPDX-License-Identifier: GPL-2.0
/*
 * fio (the seed's load, seed 004): every thread is a job doing random
 * I/O of --bs on one shared file (--size of memory standing in for an
 * NVDIMM), --rwmixread percent reads, with fio's option names.
 *
 * The I/O path is v4.6 XFS on DAX, where the contended rwsem is the
 * inode's ILOCK: a read takes the IOLOCK shared, then dax_do_io() counts
 * the I/O in i_dio_count and maps the blocks under the ILOCK shared
 * (__xfs_get_blocks -> xfs_bmapi_read, --map-ns of work), then copies; a
 * write takes the IOLOCK shared (4.6 sends an aligned DAX write through
 * xfs_file_dio_aio_write(); --iolock-write=exclusive for the buffered
 * path of today's kernels), the ILOCK exclusive to update the file time
 * (file_update_time -> xfs_vn_update_time, a transaction modelled as
 * --update-time-ns of work), then maps and copies as a read does.  Both
 * locks are the variant's rw_semaphore, or glibc's pthread_rwlock_t.
 * The rest of an I/O (the syscall, the VFS, fio's own work) is
 * --io-path-ns of uncontended work.  `fio` and `fio_xfs` run the real
 * fio with the same job (lib/harness/fio.h), on tmpfs and on a fresh XFS
 * (lib/harness/xfs_loop.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../lib/harness/calibrate.h"
#include "../lib/harness/fio.h"
#include "../lib/harness/kscale.h"
#include "../lib/harness/options.h"
#include "../lib/harness/tmpfs.h"
#include "../lib/harness/xfs_loop.h"
#include "../lib/kernel/delay.h"
#include "../lib/kernel/lockstat.h"
#include "../models/rwsem/rwsem.h"

/*
 * Offsets in v4.6's struct xfs_inode: i_lock after i_mount .. i_itemp,
 * i_iolock 40 bytes on (the counts of both in one cache line);
 * i_vnode.i_dio_count about 690 bytes in (config-dependent; estimated).
 */
#define XFS_I_LOCK_OFFSET	144
#define XFS_I_DIO_COUNT_OFFSET	692

#define XFS_IOLOCK_EXCL		(1 << 0)
#define XFS_IOLOCK_SHARED	(1 << 1)
#define XFS_ILOCK_EXCL		(1 << 2)
#define XFS_ILOCK_SHARED	(1 << 3)

/* A sparse file in /dev/shm: room for fio's largest --size, twice. */
#define XFS_LOOP_SIZE		(32UL << 30)

/* The lock is the variant's struct rw_semaphore, in 40 bytes as both are. */
typedef struct {
	struct rwsem_storage mr_lock;
} mrlock_t;

/*
 * v4.6 struct xfs_inode (x86_64, no lockdep, no XFS_DEBUG), cache-line
 * aligned as xfs_inode_zone (KM_ZONE_HWALIGN) allocates it: the fields
 * the I/O path does not touch are padding here.
 */
struct xfs_inode {
	char i_mount_to_itemp[XFS_I_LOCK_OFFSET];
	mrlock_t i_lock;		/* inode lock */
	mrlock_t i_iolock;		/* inode IO lock */
	char i_mmaplock_to_vnode[XFS_I_DIO_COUNT_OFFSET - XFS_I_LOCK_OFFSET -
				 2 * sizeof(mrlock_t)];
	atomic_t i_dio_count;		/* i_vnode.i_dio_count */
} ____cacheline_aligned;

/* The bench's side of a row (variant.h): the model's, or a host row's. */
struct fio_kind {
	bool pthread;			/* glibc's rwlock instead of rwsem */
	bool real;			/* the real fio */
	bool on_xfs;			/* ... on XFS rather than tmpfs */
};

struct fio_run {
	struct xfs_inode *ip;
	const struct rwsem_variant *v;	/* NULL on a host row */
	const struct rwsem_ops *ops;	/* v->ops */
	pthread_rwlock_t pthread_iolock;
	pthread_rwlock_t pthread_ilock;
	unsigned long i_mtime;
	char *data;
	size_t size, bs;
	bool pthread;			/* glibc's rwlock instead of rwsem */
	bool real;			/* `fio` or `fio_xfs` */
	unsigned int rwmixread;		/* percent */
	unsigned int iolock_write;	/* XFS_IOLOCK_SHARED or _EXCL */
	unsigned long update_time_ns, map_ns, io_path_ns[2];
	struct fio_proc fio;
};

/* Cache-line aligned, as the kernel's per-CPU OSQ nodes are. */
struct fio_thread {
	struct optimistic_spin_node osq_node;
	struct rwsem_profile profile;
	unsigned long nvcsw, nivcsw;
	uint64_t rng;
	unsigned long reads, writes;
	char *buf;
} ____cacheline_aligned;

static struct tmpfs_dirs fio_dir;
static struct xfs_loop xfs;
static char xfs_why[256];		/* why there is no XFS, or "" */
static unsigned long map_auto_ns;

static void xfs_lock_one(struct fio_run *fr, struct rwsem_storage *sem,
			 pthread_rwlock_t *prw, bool excl)
{
	if (fr->pthread)
		excl ? pthread_rwlock_wrlock(prw) : pthread_rwlock_rdlock(prw);
	else
		excl ? fr->ops->down_write(sem) : fr->ops->down_read(sem);
}

static void xfs_unlock_one(struct fio_run *fr, struct rwsem_storage *sem,
			   pthread_rwlock_t *prw, bool excl)
{
	if (fr->pthread)
		pthread_rwlock_unlock(prw);
	else
		excl ? fr->ops->up_write(sem) : fr->ops->up_read(sem);
}

static void xfs_ilock(struct fio_run *fr, unsigned int mode)
{
	struct xfs_inode *ip = fr->ip;

	if (mode & (XFS_IOLOCK_EXCL | XFS_IOLOCK_SHARED))
		xfs_lock_one(fr, &ip->i_iolock.mr_lock, &fr->pthread_iolock,
			     mode & XFS_IOLOCK_EXCL);
	if (mode & (XFS_ILOCK_EXCL | XFS_ILOCK_SHARED))
		xfs_lock_one(fr, &ip->i_lock.mr_lock, &fr->pthread_ilock,
			     mode & XFS_ILOCK_EXCL);
}

static void xfs_iunlock(struct fio_run *fr, unsigned int mode)
{
	struct xfs_inode *ip = fr->ip;

	if (mode & (XFS_ILOCK_EXCL | XFS_ILOCK_SHARED))
		xfs_unlock_one(fr, &ip->i_lock.mr_lock, &fr->pthread_ilock,
			       mode & XFS_ILOCK_EXCL);
	if (mode & (XFS_IOLOCK_EXCL | XFS_IOLOCK_SHARED))
		xfs_unlock_one(fr, &ip->i_iolock.mr_lock, &fr->pthread_iolock,
			       mode & XFS_IOLOCK_EXCL);
}

/* __xfs_get_blocks(): xfs_bmapi_read() under the ILOCK shared. */
static void xfs_get_blocks(struct fio_run *fr)
{
	xfs_ilock(fr, XFS_ILOCK_SHARED);
	ndelay(fr->map_ns);
	xfs_iunlock(fr, XFS_ILOCK_SHARED);
}

/* dax_do_io() with DIO_LOCKING off: count the I/O, map, copy. */
static void dax_do_io(struct fio_run *fr, char *buf, size_t off, bool write)
{
	lockstat_visit(&fr->ip->i_dio_count);
	atomic_inc(&fr->ip->i_dio_count);	/* inode_dio_begin() */
	xfs_get_blocks(fr);
	if (write)
		memcpy(fr->data + off, buf, fr->bs);
	else
		memcpy(buf, fr->data + off, fr->bs);
	lockstat_visit(&fr->ip->i_dio_count);
	atomic_dec(&fr->ip->i_dio_count);	/* inode_dio_end() */
}

static void xfs_file_dax_read(struct fio_run *fr, char *buf, size_t off)
{
	xfs_ilock(fr, XFS_IOLOCK_SHARED);
	dax_do_io(fr, buf, off, false);
	xfs_iunlock(fr, XFS_IOLOCK_SHARED);
}

/* file_update_time() -> xfs_vn_update_time(): a transaction under ILOCK. */
static void xfs_vn_update_time(struct fio_run *fr)
{
	xfs_ilock(fr, XFS_ILOCK_EXCL);
	WRITE_ONCE(fr->i_mtime, fr->i_mtime + 1);
	ndelay(fr->update_time_ns);
	xfs_iunlock(fr, XFS_ILOCK_EXCL);
}

static void xfs_file_dax_write(struct fio_run *fr, char *buf, size_t off)
{
	xfs_ilock(fr, fr->iolock_write);
	xfs_vn_update_time(fr);
	dax_do_io(fr, buf, off, true);
	xfs_iunlock(fr, fr->iolock_write);
}

/* One I/O, with --io-path-ns of the rest of the syscall before it. */
static void fio_io(struct fio_run *fr, struct fio_thread *ft, uint64_t r)
{
	size_t off = (r >> 8) % (fr->size / fr->bs) * fr->bs;
	bool write = r % 100 >= fr->rwmixread;

	ndelay(fr->io_path_ns[write]);
	if (write) {
		xfs_file_dax_write(fr, ft->buf, off);
		ft->writes++;
	} else {
		xfs_file_dax_read(fr, ft->buf, off);
		ft->reads++;
	}
}

static void model_loop(struct kscale_thread *t)
{
	struct fio_run *fr = t->run->priv;
	struct fio_thread *ft = t->priv;

	while (kscale_running(t)) {
		fio_io(fr, ft, kscale_rand64(&ft->rng));
		kscale_count(t);
	}
	ft->profile = rwsem_profile;
	ft->nvcsw = current->nvcsw;
	ft->nivcsw = current->nivcsw;
}

/* The real fio runs as a child; the threads only wait for the window. */
static void fio_workload_loop(struct kscale_thread *t)
{
	struct fio_run *fr = t->run->priv;

	if (!fr->real)
		return model_loop(t);
	while (kscale_running(t))
		usleep(1000);
}

static int fio_thread_init(struct kscale_thread *t)
{
	struct fio_run *fr = t->run->priv;
	struct fio_thread *ft = aligned_alloc(SMP_CACHE_BYTES, sizeof(*ft));

	if (!ft)
		return kscale_fail(t->run, "out of memory");
	memset(ft, 0, sizeof(*ft));
	t->priv = ft;
	ft->rng = 0x9e3779b97f4a7c15ULL * (t->id + 1);
	ft->buf = aligned_alloc(4096, (fr->bs + 4095) & ~4095UL);
	memset(ft->buf, t->id, fr->bs);
	osq_thread_init(&ft->osq_node, t->id);
	memset(&rwsem_profile, 0, sizeof(rwsem_profile));
	current->nvcsw = current->nivcsw = 0;
	return 0;
}

/* A size with its k/m/g suffix; SIZE_MAX where it overflows (refused). */
static size_t parse_size(const char *v)
{
	unsigned int shift;
	char *end;
	size_t n;

	errno = 0;
	n = strtoul(v, &end, 10);
	switch (*end) {
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	default:
		shift = 0;
		break;
	}
	if (errno || n > SIZE_MAX >> shift)
		return SIZE_MAX;
	return n << shift;
}

/* fio's file for this size, laid out (and cached) the first time. */
static int fio_file(struct kscale_run *run, struct fio_run *fr,
		    struct fio_job *job, const char *dir)
{
	struct stat st;
	char err[300];

	snprintf(job->filename, sizeof(job->filename), "%s/fio.%zu", dir,
		 fr->size);
	if (!stat(job->filename, &st) && (size_t)st.st_size == fr->size)
		return 0;
	if (fio_layout(job->filename, fr->size, err, sizeof(err)))
		return kscale_fail(run, "%s", err);
	return 0;
}

static int fio_real_start(struct kscale_run *run, struct fio_run *fr,
			  bool on_xfs)
{
	struct fio_job job = {
		.rw = kscale_knob(run, "rw"),
		.bs = fr->bs,
		.size = fr->size,
		.rwmixread = fr->rwmixread,
	};

	if (fio_file(run, fr, &job, on_xfs ? xfs.dir : fio_dir.path[0]))
		return -1;
	return fio_start(run, &job, &fr->fio);
}

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

static const char *reference_dir(void)
{
	return xfs_why[0] ? fio_dir.path[0] : xfs.dir;
}

/* What io_path_ns is measured with, for one file and work. */
struct io_path_measure {
	struct kscale_run *run;
	struct fio_run *fr;
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
	    fio_file(m->run, m->fr, &m->job, reference_dir())) {
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
	own->io_path_ns[write] = 0;
	if (kscale_calibrate(model_io_round, &m->c, &none, err, len))
		return -1;
	*ns = real - none;
	if (*ns <= 0)
		return 0;
	own->io_path_ns[write] = (unsigned long)*ns;
	if (kscale_calibrate(model_io_round, &m->c, &some, err, len))
		return -1;
	/* a slope far from 1 is the timing's noise, not the work's */
	slope = (some - none) / own->io_path_ns[write];
	if (slope > 0.5 && slope < 2)
		*ns /= slope;
	return 0;
}

static bool same_calibration(const struct io_calibration *ic,
			     const struct fio_run *fr)
{
	return ic->size == fr->size && ic->bs == fr->bs &&
	       ic->map_ns == fr->map_ns &&
	       ic->update_time_ns == fr->update_time_ns &&
	       ic->iolock_write == fr->iolock_write;
}

/*
 * Once per file and work: every variant then runs the same work, timed
 * with v4.6's rwsem (uncontended, the versions differ by a few atomics).
 */
static struct io_calibration *calibrate_io(struct kscale_run *run,
					   struct fio_run *fr)
{
	struct io_calibration *ic = calibrations;
	struct fio_run own = *fr;
	struct io_path_measure m = {
		.run = run,
		.fr = fr,
		.job = { .bs = fr->bs, .size = fr->size },
		.c = { .size = fr->size, .rng = 1, .model = &own },
	};
	char name[200], err[600];
	int w;

	for (; ic < calibrations + nr_calibrations; ic++)
		if (same_calibration(ic, fr))
			return ic;
	if (nr_calibrations == MAX_CALIBRATIONS) {
		kscale_fail(run, "more than %d file and work settings with "
			    "--io-path-ns=auto", MAX_CALIBRATIONS);
		return NULL;
	}
	own.pthread = false;
	own.ops = &rwsem_v4_6_ops;
	own.ip = aligned_alloc(SMP_CACHE_BYTES, sizeof(*own.ip));
	m.c.buf = aligned_alloc(4096, (fr->bs + 4095) & ~4095UL);
	if (!own.ip || !m.c.buf) {
		kscale_fail(run, "out of memory");
		goto out;
	}
	own.ops->init(&own.ip->i_iolock.mr_lock);
	own.ops->init(&own.ip->i_lock.mr_lock);
	for (w = 0; w < 2; w++) {
		snprintf(name, sizeof(name), "rwsem.io_path_ns.%s.size=%zu,"
			 "bs=%zu,map=%lu,update=%lu,iolock=%s",
			 w ? "write" : "read", fr->size, fr->bs, fr->map_ns,
			 fr->update_time_ns, fr->iolock_write ==
			 XFS_IOLOCK_EXCL ? "exclusive" : "shared");
		m.c.write = w;
		if (kscale_calibrated(name, &ic->io_path_ns[w],
				      measure_io_path, &m, err, sizeof(err))) {
			kscale_fail(run, "%s", err);
			goto out;
		}
		if (m.real_ns[w])
			fprintf(stderr, "rwsem: %s: %lu (a fio job on %s: "
				"%.0f ns)\n", name, ic->io_path_ns[w],
				xfs_why[0] ? "tmpfs" : "XFS", m.real_ns[w]);
		else
			fprintf(stderr, "rwsem: %s: %lu (from --calibration)"
				"\n", name, ic->io_path_ns[w]);
	}
	ic->size = fr->size;
	ic->bs = fr->bs;
	ic->map_ns = fr->map_ns;
	ic->update_time_ns = fr->update_time_ns;
	ic->iolock_write = fr->iolock_write;
	nr_calibrations++;
out:
	free(m.c.buf);
	free(own.ip);
	return run->failed ? NULL : ic;
}

static int set_io_path(struct kscale_run *run, struct fio_run *fr)
{
	struct io_calibration *ic = NULL;
	int w;

	if (!strcmp(kscale_knob(run, "io_path_ns"), "auto")) {
		ic = calibrate_io(run, fr);
		if (!ic)
			return -1;
	}
	for (w = 0; w < 2; w++)
		fr->io_path_ns[w] = kscale_knob_ns(run, "io_path_ns",
						   ic ? ic->io_path_ns[w] : 0);
	kscale_set_counter(run, "io_path_read_ns", fr->io_path_ns[0]);
	kscale_set_counter(run, "io_path_write_ns", fr->io_path_ns[1]);
	return 0;
}

/*
 * For lockstat, as xfs_inode lays them out: i_lock whole on the line its
 * count shares with i_iolock's, one line a visit (a write hold also
 * stores i_mtime, on fio_run's line every I/O reads: not counted);
 * i_iolock's count there and its owner on the next line, two; the dio
 * count alone on its line.  glibc's rwlocks are not counted.
 */
static void lockstat_register_inode(struct fio_run *fr)
{
	if (!fr->pthread) {
		lockstat_register(&fr->ip->i_lock.mr_lock, "i_lock", 1,
				  LOCKSTAT_RWSEM);
		lockstat_register(&fr->ip->i_iolock.mr_lock, "i_iolock", 2,
				  LOCKSTAT_RWSEM);
	}
	lockstat_register(&fr->ip->i_dio_count, "i_dio_count", 1,
			  LOCKSTAT_LINE);
}

static int fio_setup(struct kscale_run *run)
{
	static const struct fio_kind model_kind;
	const struct kscale_variant *row = kscale_row(run);
	const struct fio_kind *k = row->host ?: &model_kind;
	struct fio_run *fr = calloc(1, sizeof(*fr));
	const char *rw = kscale_knob(run, "rw");

	run->priv = fr;
	fr->real = k->real;
	fr->pthread = k->pthread;
	fr->v = row->ops;
	fr->ops = fr->v ? fr->v->ops : NULL;
	rwsem_reader_owned_patch = fr->v && fr->v->reader_owned_patch;
	sched_wake_poll = strcmp(kscale_knob(run, "wake"), "futex");
	sched_wake_poll_ns = sched_wake_poll ? kscale_knob_long(run, "wake") :
					       0;
	fr->bs = parse_size(kscale_knob(run, "bs"));
	fr->size = parse_size(kscale_knob(run, "size")) / fr->bs * fr->bs;
	fr->rwmixread = !strcmp(rw, "randwrite") ? 0 :
			!strcmp(rw, "randread") ? 100 :
			(unsigned int)kscale_knob_long(run, "rwmixread");
	if (fr->real)
		return fio_real_start(run, fr, k->on_xfs);
	fr->iolock_write = strcmp(kscale_knob(run, "iolock_write"),
				  "exclusive") ? XFS_IOLOCK_SHARED :
					       XFS_IOLOCK_EXCL;
	fr->update_time_ns = kscale_knob_long(run, "update_time_ns");
	fr->map_ns = kscale_knob_ns(run, "map_ns", map_auto_ns);
	fr->ip = aligned_alloc(SMP_CACHE_BYTES, sizeof(*fr->ip));
	fr->data = aligned_alloc(4096, fr->size);
	if (!fr->ip || !fr->data)
		return kscale_fail(run, "out of memory");
	memset(fr->ip, 0, sizeof(*fr->ip));
	memset(fr->data, 0, fr->size);
	if (fr->ops) {
		fr->ops->init(&fr->ip->i_iolock.mr_lock);
		fr->ops->init(&fr->ip->i_lock.mr_lock);
	}
	pthread_rwlock_init(&fr->pthread_iolock, NULL);
	pthread_rwlock_init(&fr->pthread_ilock, NULL);
	lockstat_register_inode(fr);
	return set_io_path(run, fr);
}

/* A share of the run's CPU time, as perf -C over its CPUs counts it. */
static double pct_of_cpu_time(struct kscale_run *run, uint64_t cycles)
{
	return 100 * cycles_to_ns(cycles) /
	       (run->elapsed * 1e9 * kscale_nr_distinct_cpus(run));
}

/* children and self of one function, under the real profile's names */
static void set_profile(struct kscale_run *run, const char *children,
			const char *self, uint64_t all, uint64_t callees)
{
	kscale_set_counter(run, children, pct_of_cpu_time(run, all));
	kscale_set_counter(run, self, pct_of_cpu_time(run, all - callees));
}

/*
 * Each reason's count per I/O (rwsem_profile.h): sleeps_<reason>_per_io,
 * queued_<reason>_per_io.  The harness keeps a counter's name, not a copy.
 */
static char reason_counter[RWSEM_SLEEP_NR + RWSEM_QUEUE_NR][64];

static void set_reasons(struct kscale_run *run, char (*counter)[64],
			const char *what, const char *const *names,
			const unsigned long *n, int nr, double ios)
{
	int i;

	for (i = 0; i < nr; i++) {
		snprintf(counter[i], sizeof(counter[i]), "%s_%s_per_io", what,
			 names[i]);
		kscale_set_counter(run, counter[i], ios ? n[i] / ios : 0);
	}
}

static void model_counters(struct kscale_run *run, struct fio_run *fr)
{
	struct rwsem_profile sum = { 0 };
	double reads = 0, writes = 0, switches = 0;
	double iops = kscale_counter(run, "ops_per_sec");
	double read_share, mb = (double)fr->bs / (1 << 20);
	int i, j;

	for (i = 0; i < run->nr_threads; i++) {
		struct fio_thread *ft = run->threads[i].priv;

		reads += ft->reads;
		writes += ft->writes;
		switches += ft->nvcsw + ft->nivcsw;
		sum.write_failed += ft->profile.write_failed;
		sum.write_failed_callees += ft->profile.write_failed_callees;
		sum.read_failed += ft->profile.read_failed;
		sum.read_failed_callees += ft->profile.read_failed_callees;
		sum.spin_on_owner += ft->profile.spin_on_owner;
		sum.osq += ft->profile.osq;
		sum.spin_acquired += ft->profile.spin_acquired;
		sum.spin_abandoned += ft->profile.spin_abandoned;
		for (j = 0; j < RWSEM_SLEEP_NR; j++)
			sum.slept[j] += ft->profile.slept[j];
		for (j = 0; j < RWSEM_QUEUE_NR; j++)
			sum.queued[j] += ft->profile.queued[j];
	}
	read_share = reads + writes ? reads / (reads + writes) : 0;
	kscale_set_counter(run, "iops", iops);
	kscale_set_counter(run, "read_MBps", iops * read_share * mb);
	kscale_set_counter(run, "write_MBps", iops * (1 - read_share) * mb);
	kscale_set_counter(run, "total_MBps", iops * mb);
	kscale_set_counter(run, "switches_per_io",
			   reads + writes ? switches / (reads + writes) : 0);
	if (fr->pthread)
		return;
	set_profile(run, "kernel_rwsem_down_write_slowpath_children_pct",
		    "kernel_rwsem_down_write_slowpath_self_pct",
		    sum.write_failed, sum.write_failed_callees);
	set_profile(run, "kernel_rwsem_down_read_slowpath_children_pct",
		    "kernel_rwsem_down_read_slowpath_self_pct",
		    sum.read_failed, sum.read_failed_callees);
	set_profile(run, "kernel_rwsem_spin_on_owner_children_pct",
		    "kernel_rwsem_spin_on_owner_self_pct",
		    sum.spin_on_owner, 0);
	set_profile(run, "kernel_osq_lock_children_pct",
		    "kernel_osq_lock_self_pct", sum.osq, 0);
	kscale_set_counter(run, "spin_acquired", sum.spin_acquired);
	kscale_set_counter(run, "spin_abandoned", sum.spin_abandoned);
	set_reasons(run, reason_counter, "sleeps", rwsem_sleep_name,
		    sum.slept, RWSEM_SLEEP_NR, reads + writes);
	set_reasons(run, reason_counter + RWSEM_SLEEP_NR, "queued",
		    rwsem_queue_name, sum.queued, RWSEM_QUEUE_NR,
		    reads + writes);
}

/* Every lock released: each count back to 0, each wait list empty. */
static void check_rwsem(struct kscale_run *run, struct fio_run *fr,
			struct rwsem_storage *sem, const char *name)
{
	struct rwsem_state st;

	fr->v->state(sem, &st);
	if (!st.unlocked || st.nr_waiters)
		kscale_fail(run, "%s: count %#lx, %d waiters after the run",
			    name, st.count, st.nr_waiters);
}

static int fio_teardown(struct kscale_run *run)
{
	struct fio_run *fr = run->priv;
	int i;

	if (fr->real) {
		fio_finish(run, &fr->fio);
	} else if (fr->ip) {
		if (fr->v) {
			check_rwsem(run, fr, &fr->ip->i_iolock.mr_lock,
				    "i_iolock");
			check_rwsem(run, fr, &fr->ip->i_lock.mr_lock, "i_lock");
		}
		model_counters(run, fr);
	}
	for (i = 0; i < run->nr_threads; i++) {
		struct fio_thread *ft = run->threads[i].priv;

		if (ft)
			free(ft->buf);
		free(ft);
	}
	free(fr->ip);
	free(fr->data);
	free(fr);
	return run->failed ? -1 : 0;
}

/* lseek(SEEK_DATA) less lseek(SEEK_CUR) on a file of the XFS. */
static int measure_map_work(void *arg, double *ns, char *err, size_t len)
{
	struct calibration c = { .size = 16 << 20, .rng = 1 }, null;
	char path[400];
	int ret;

	snprintf(path, sizeof(path), "%s/calibrate", xfs.dir);
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

static int rwsem_init_model(const struct kscale_options *o, char *err,
			    size_t len)
{
	if (tmpfs_dirs_create(&fio_dir, 1, err, len))
		return -1;
	/* mkfs.xfs and a mount only for runs that use the XFS */
	if (!kscale_variant_selected(o, "fio_xfs") &&
	    !kscale_knob_has_value(o, "map_ns", "auto") &&
	    !kscale_knob_has_value(o, "io_path_ns", "auto"))
		snprintf(xfs_why, sizeof(xfs_why), "not mounted: no fio_xfs "
			 "run and no auto calibration");
	else if (xfs_loop_mount(&xfs, XFS_LOOP_SIZE, xfs_why, sizeof(xfs_why)))
		kscale_skip_variant(o, "fio_xfs", xfs_why);
	else
		kscale_add_context("fio_xfs_device", "%s", xfs.dev);
	kscale_add_context("fio_xfs", "%s", xfs_why[0] ? xfs_why :
			   "XFS on a loop device over /dev/shm, buffered "
			   "I/O through the page cache (not DAX)");
	if (xfs_why[0]) {
		kscale_add_context("map_ns_auto", "0 (no XFS: %s)", xfs_why);
		return 0;
	}
	if (!kscale_knob_has_value(o, "map_ns", "auto"))
		return 0;
	return kscale_auto("rwsem.map_ns", "lseek SEEK_DATA less SEEK_CUR on "
			   "XFS", &map_auto_ns, measure_map_work, NULL, err,
			   len);
}

static int check_rw(const char *v, char *err, size_t len)
{
	if (!strcmp(v, "randrw") || !strcmp(v, "randwrite") ||
	    !strcmp(v, "randread"))
		return 0;
	snprintf(err, len, "expected randrw, randwrite or randread");
	return -1;
}

static int check_size_value(const char *v, size_t min, size_t max,
			    char *err, size_t len)
{
	size_t n = parse_size(v);
	const char *p = v + strspn(v, "0123456789");

	if (p == v || (*p && (strchr("kKmMgG", *p) == NULL || p[1])) ||
	    n < min || n > max) {
		snprintf(err, len, "expected a size from %zu to %zu bytes "
			 "(e.g. 4k, 64m)", min, max);
		return -1;
	}
	return 0;
}

static int check_bs(const char *v, char *err, size_t len)
{
	return check_size_value(v, 512, 1 << 24, err, len);
}

static int check_size(const char *v, char *err, size_t len)
{
	return check_size_value(v, 1 << 16, 1UL << 34, err, len);
}

static int check_mix(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 0, 100, err, len);
}

static int check_iolock(const char *v, char *err, size_t len)
{
	if (!strcmp(v, "shared") || !strcmp(v, "exclusive"))
		return 0;
	snprintf(err, len, "expected shared or exclusive");
	return -1;
}

static int check_wake(const char *v, char *err, size_t len)
{
	if (!strcmp(v, "futex") ||
	    !kscale_check_long(v, 0, 10 * 1000 * 1000, err, len))
		return 0;
	snprintf(err, len, "expected futex or ns from 0 to 10000000");
	return -1;
}

static int check_update_time(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 0, 10 * 1000 * 1000, err, len);
}

static const struct kscale_workload workloads[] = {
	{
		.name = "fio",
		.doc = "fio-like random I/O jobs on one shared file (XFS on "
		       "DAX, v4.6 locking)",
		.setup = fio_setup,
		.thread_init = fio_thread_init,
		.loop = fio_workload_loop,
		.teardown = fio_teardown,
	},
};

static const struct fio_kind pthread_kind = { .pthread = true };
static const struct fio_kind fio_kind = { .real = true };
static const struct fio_kind fio_xfs_kind = { .real = true, .on_xfs = true };

static const struct kscale_variant host_variants[] = {
	{ "pthread", "glibc's pthread_rwlock_t, for reference",
	  .host = &pthread_kind },
	{ "fio", "the real fio, same job, on a tmpfs file", .host = &fio_kind },
	{ "fio_xfs", "the real fio, same job, on a fresh XFS (loop device "
		     "over /dev/shm), buffered", .host = &fio_xfs_kind },
};

static const struct kscale_knob knobs[] = {
	{ "rw", "randrw", "randrw, randwrite or randread (fio's --rw)",
	  check_rw },
	{ "bs", "4k", "block size of each I/O (fio's --bs)", check_bs },
	{ "size", "64m", "the file (fio's --size)", check_size },
	{ "rwmixread", "50", "percent reads with randrw (fio's --rwmixread)",
	  check_mix },
	{ "iolock_write", "shared", "IOLOCK mode of a write: shared (aligned "
	  "DAX in 4.6) or exclusive", check_iolock },
	{ "update_time_ns", "500", "ns of the timestamp transaction under "
	  "the ILOCK", check_update_time },
	{ "map_ns", "auto", "ns of xfs_bmapi_read() under the ILOCK, or auto "
	  "(lseek SEEK_DATA on XFS, less SEEK_CUR)", kscale_check_ns_or_auto },
	{ "io_path_ns", "auto", "ns of each I/O outside the locks, or auto "
	  "(a real XFS pread/pwrite less the model's own I/O)",
	  kscale_check_ns_or_auto },
	{ "wake", "futex", "how the model scheduler wakes a sleeper: futex "
	  "(the host's), or NS: it polls and runs NS after its wake-up",
	  check_wake },
};

KSCALE_PRIMARY_METRIC("total_MBps");
KSCALE_PERF_SYMBOLS("rwsem_down_write_slowpath", "rwsem_down_read_slowpath",
		    "rwsem_spin_on_owner", "osq_lock");

KSCALE_MODEL("rwsem",
	     "rwsem optimistic spinning and the reader-owned state "
	     "(seed 004, v4.6 kernel/locking/rwsem-xadd.c)",
	     rwsem_init_model, &rwsem_variants);
