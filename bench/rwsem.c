// SPDX-License-Identifier: GPL-2.0
/*
 * fio (the seed's load, seed 004): every thread is a job doing random
 * I/O of --bs on one shared file (--size of memory standing in for an
 * NVDIMM), --rwmixread percent reads, with fio's option names.
 *
 * The I/O path is v4.6 XFS on DAX (models/rwsem/xfs_dax.c), where the
 * contended rwsem is the inode's ILOCK; --iolock-write=exclusive for the
 * buffered path of today's kernels, --map-ns of xfs_bmapi_read() and
 * --update-time-ns of the timestamp transaction under the ILOCK.  Both
 * locks are the variant's rw_semaphore, or glibc's pthread_rwlock_t.
 * The rest of an I/O (the syscall, the VFS, fio's own work) is
 * --io-path-ns of uncontended work; the `auto` values are calibrated in
 * rwsem_calibrate.c.  `fio` and `fio_xfs` run the real fio with the same
 * job (lib/harness/fio.h), on tmpfs and on a fresh XFS
 * (lib/harness/xfs_loop.h).
 *
 * locktest (the rwsem series' microbenchmark): --readers of the threads
 * read and the others write, each looping on one rwsem with --hold-ns of
 * work inside and --think-ns after; the window counts each class apart.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../lib/harness/calibrate.h"
#include "../lib/harness/options.h"
#include "../lib/harness/tmpfs.h"
#include "../lib/harness/xfs_loop.h"
#include "../lib/kernel/delay.h"
#include "../lib/kernel/lockstat.h"
#include "rwsem.h"

/* A sparse file in /dev/shm: room for fio's largest --size, twice. */
#define XFS_LOOP_SIZE		(32UL << 30)

/*
 * The bench's side of a row (variant.h): the model's, or a host row's,
 * with its locks or the real fio.
 */
struct fio_kind {
	const struct rwsem_ops *ops;	/* the pthread row's */
	bool real;			/* the real fio */
	bool on_xfs;			/* ... on XFS rather than tmpfs */
};

static struct tmpfs_dirs fio_dir;
static struct xfs_loop xfs;
static char xfs_why[256];		/* why there is no XFS, or "" */
static unsigned long map_auto_ns;

/*
 * The pthread row: glibc's rwlocks behind the XFS path's lock vector.
 * A pthread_rwlock_t does not fit a struct rwsem_storage: the storage
 * holds a pointer to one of fio_run's, bound before init.
 */
static pthread_rwlock_t *pthread_rwlock_of(struct rwsem_storage *s)
{
	pthread_rwlock_t *prw;

	memcpy(&prw, s->__opaque, sizeof(prw));
	return prw;
}

static void pthread_rwsem_bind(struct rwsem_storage *s, pthread_rwlock_t *prw)
{
	memcpy(s->__opaque, &prw, sizeof(prw));
}

static void pthread_rwsem_init(struct rwsem_storage *s)
{
	pthread_rwlock_init(pthread_rwlock_of(s), NULL);
}

static void pthread_down_read(struct rwsem_storage *s)
{
	pthread_rwlock_rdlock(pthread_rwlock_of(s));
}

static void pthread_down_write(struct rwsem_storage *s)
{
	pthread_rwlock_wrlock(pthread_rwlock_of(s));
}

static void pthread_up(struct rwsem_storage *s)
{
	pthread_rwlock_unlock(pthread_rwlock_of(s));
}

/* What xfs_dax.c takes; glibc's rwlocks are not lockstat's. */
static const struct rwsem_ops pthread_rwsem_ops = {
	.name		= "pthread",
	.init		= pthread_rwsem_init,
	.down_read	= pthread_down_read,
	.up_read	= pthread_up,
	.down_write	= pthread_down_write,
	.up_write	= pthread_up,
};

static void model_loop(struct kscale_thread *t)
{
	struct fio_run *fr = t->run->priv;
	struct fio_thread *ft = t->priv;

	while (kscale_running(t)) {
		fio_io(fr, ft, kscale_rand64(&ft->rng));
		kscale_count(t);
	}
	rwsem_task_save(&ft->task);
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
	struct fio_thread *ft = t->priv;

	ft->rng = 0x9e3779b97f4a7c15ULL * (t->id + 1);
	ft->buf = aligned_alloc(4096, (fr->file.bs + 4095) & ~4095UL);
	memset(ft->buf, t->id, fr->file.bs);
	osq_thread_init(&ft->osq_node, t->id);
	rwsem_task_start();
	return 0;
}

static int fio_real_start(struct kscale_run *run, struct fio_run *fr,
			  bool on_xfs)
{
	struct fio_job job = {
		.rw = kscale_knob(run, "rw"),
		.bs = fr->file.bs,
		.size = fr->file.size,
		.rwmixread = fr->rwmixread,
	};

	if (fio_file(run, &job, on_xfs ? xfs.dir : fio_dir.path[0]))
		return -1;
	return fio_start(run, &job, &fr->fio);
}

static int fio_setup(struct kscale_run *run)
{
	static const struct fio_kind model_kind;
	const struct kscale_variant *row = kscale_row(run);
	const struct fio_kind *k = row->host ?: &model_kind;
	struct fio_run *fr = calloc(1, sizeof(*fr));
	struct xfs_dax_file *f = &fr->file;
	const char *rw = kscale_knob(run, "rw");

	run->priv = fr;
	fr->real = k->real;
	fr->v = row->ops;
	f->ops = fr->v ? fr->v->ops : k->ops;
	rwsem_reader_owned_patch = fr->v && fr->v->reader_owned_patch;
	sched_wake_poll = strcmp(kscale_knob(run, "wake"), "futex");
	sched_wake_poll_ns = sched_wake_poll ? kscale_knob_long(run, "wake") :
					       0;
	f->bs = kscale_parse_size(kscale_knob(run, "bs"));
	f->size = kscale_parse_size(kscale_knob(run, "size")) / f->bs * f->bs;
	fr->rwmixread = !strcmp(rw, "randwrite") ? 0 :
			!strcmp(rw, "randread") ? 100 :
			(unsigned int)kscale_knob_long(run, "rwmixread");
	if (fr->real)
		return fio_real_start(run, fr, k->on_xfs);
	f->iolock_write = strcmp(kscale_knob(run, "iolock_write"),
				 "exclusive") ? XFS_IOLOCK_SHARED :
					      XFS_IOLOCK_EXCL;
	f->update_time_ns = kscale_knob_long(run, "update_time_ns");
	f->map_ns = kscale_knob_ns(run, "map_ns", map_auto_ns);
	f->ip = xfs_inode_alloc();
	f->data = aligned_alloc(4096, f->size);
	if (!f->ip || !f->data)
		return kscale_fail(run, "out of memory");
	memset(f->data, 0, f->size);
	if (!fr->v) {
		pthread_rwsem_bind(&f->ip->i_iolock.mr_lock,
				   &fr->pthread_iolock);
		pthread_rwsem_bind(&f->ip->i_lock.mr_lock, &fr->pthread_ilock);
	}
	xfs_inode_init_locks(f->ip, f->ops);
	lockstat_register_inode(f, fr->v);
	return set_io_path(run, fr, xfs_why[0] ? fio_dir.path[0] : xfs.dir,
			   xfs_why[0] ? "tmpfs" : "XFS");
}

/* Every lock released: each count back to 0, each wait list empty. */
static void check_rwsem(struct kscale_run *run, const struct rwsem_variant *v,
			struct rwsem_storage *sem, const char *name)
{
	struct rwsem_state st;

	v->state(sem, &st);
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
	} else if (fr->file.ip) {
		if (fr->v) {
			check_rwsem(run, fr->v, &fr->file.ip->i_iolock.mr_lock,
				    "i_iolock");
			check_rwsem(run, fr->v, &fr->file.ip->i_lock.mr_lock,
				    "i_lock");
		}
		fio_model_counters(run, fr);
	}
	for (i = 0; i < run->nr_threads; i++) {
		struct fio_thread *ft = run->threads[i].priv;

		if (ft)
			free(ft->buf);
	}
	free(fr->file.ip);
	free(fr->file.data);
	free(fr);
	return run->failed ? -1 : 0;
}

/*
 * locktest: the rwsem microbenchmark posted with the rwsem series (Waiman
 * Long's, configs/validation/README): each thread a reader or a writer
 * for the whole run, looping down_read()/down_write() on one rwsem,
 * --hold-ns of work, up_read()/up_write(), --think-ns of work.
 */
struct locktest_run {
	struct rwsem_storage sem;
	const struct rwsem_ops *ops;
	const struct rwsem_variant *v;	/* NULL on the pthread row */
	unsigned long hold_ns, think_ns;
	pthread_rwlock_t pthread_sem;
};

struct locktest_thread {
	struct optimistic_spin_node osq_node;
	struct rwsem_task task;
};

enum { LOCKTEST_READER, LOCKTEST_WRITER };

static const char *const locktest_classes[] = { "reader", "writer", NULL };

/* --readers of nr threads: N, or P% of them rounded down; -1 if too many. */
static int locktest_readers(const char *v, int nr)
{
	long n = strtol(v, NULL, 10);

	if (strchr(v, '%'))
		return (int)(n * nr / 100);
	return n <= nr ? (int)n : -1;
}

static int locktest_setup(struct kscale_run *run)
{
	static const struct fio_kind model_kind;
	const struct kscale_variant *row = kscale_row(run);
	const struct fio_kind *k = row->host ?: &model_kind;
	struct locktest_run *lr;
	int i, readers = locktest_readers(kscale_knob(run, "readers"),
					   run->nr_threads);

	if (readers < 0)
		return kscale_fail(run, "--readers=%s: more than the run's %d "
				   "threads", kscale_knob(run, "readers"),
				   run->nr_threads);
	lr = aligned_alloc(SMP_CACHE_BYTES, sizeof(*lr));
	if (!lr)
		return kscale_fail(run, "out of memory");
	memset(lr, 0, sizeof(*lr));
	run->priv = lr;
	lr->v = row->ops;
	lr->ops = lr->v ? lr->v->ops : k->ops;
	rwsem_reader_owned_patch = lr->v && lr->v->reader_owned_patch;
	sched_wake_poll = strcmp(kscale_knob(run, "wake"), "futex");
	sched_wake_poll_ns = sched_wake_poll ? kscale_knob_long(run, "wake") :
					       0;
	lr->hold_ns = kscale_knob_long(run, "hold_ns");
	lr->think_ns = kscale_knob_long(run, "think_ns");
	if (!lr->v)
		pthread_rwsem_bind(&lr->sem, &lr->pthread_sem);
	lr->ops->init(&lr->sem);
	if (lr->v)
		lockstat_register(&lr->sem, "rwsem", 1, LOCKSTAT_RWSEM);
	/* the readers spread evenly among the writers, in placement order */
	for (i = 0; i < run->nr_threads; i++)
		run->threads[i].class =
			(long)(i + 1) * readers / run->nr_threads >
			(long)i * readers / run->nr_threads ?
			LOCKTEST_READER : LOCKTEST_WRITER;
	return 0;
}

static int locktest_thread_init(struct kscale_thread *t)
{
	struct locktest_thread *lt = t->priv;

	osq_thread_init(&lt->osq_node, t->id);
	rwsem_task_start();
	return 0;
}

static void locktest_loop(struct kscale_thread *t)
{
	struct locktest_run *lr = t->run->priv;
	struct locktest_thread *lt = t->priv;
	const struct rwsem_ops *ops = lr->ops;

	if (t->class == LOCKTEST_READER) {
		while (kscale_running(t)) {
			ops->down_read(&lr->sem);
			ndelay(lr->hold_ns);
			ops->up_read(&lr->sem);
			kscale_count(t);
			ndelay(lr->think_ns);
		}
	} else {
		while (kscale_running(t)) {
			ops->down_write(&lr->sem);
			ndelay(lr->hold_ns);
			ops->up_write(&lr->sem);
			kscale_count(t);
			ndelay(lr->think_ns);
		}
	}
	rwsem_task_save(&lt->task);
}

static int locktest_teardown(struct kscale_run *run)
{
	struct locktest_run *lr = run->priv;
	double ops = 0;
	int i;

	if (!lr)
		return run->failed ? -1 : 0;
	for (i = 0; i < run->nr_threads; i++)
		ops += run->threads[i].ops;
	if (lr->v)
		check_rwsem(run, lr->v, &lr->sem, "rwsem");
	rwsem_task_counters(run, offsetof(struct locktest_thread, task), ops,
			    "op", lr->v);
	if (!lr->v)
		pthread_rwlock_destroy(&lr->pthread_sem);
	free(lr);
	return run->failed ? -1 : 0;
}

/* The model rows and the pthread row: not the real fio's. */
static bool locktest_runs(const struct kscale_variant *row)
{
	return row->ops || ((const struct fio_kind *)row->host)->ops;
}

static int rwsem_init_model(const struct kscale_options *o, char *err,
			    size_t len)
{
	if (tmpfs_dirs_create(&fio_dir, 1, err, len))
		return -1;
	/* mkfs.xfs and a mount only for runs that use the XFS */
	if (!kscale_workload_selected(o, "fio") ||
	    (!kscale_variant_selected(o, "fio_xfs") &&
	    !kscale_knob_has_value(o, "map_ns", "auto") &&
	     !kscale_knob_has_value(o, "io_path_ns", "auto")))
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
			   "XFS", &map_auto_ns, measure_map_work, xfs.dir, err,
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

static int check_bs(const char *v, char *err, size_t len)
{
	return kscale_check_size(v, 512, 1 << 24, err, len);
}

static int check_size(const char *v, char *err, size_t len)
{
	return kscale_check_size(v, 1 << 16, 1UL << 34, err, len);
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

static int check_ns(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 0, KSCALE_MAX_NS, err, len);
}

static int check_readers(const char *v, char *err, size_t len)
{
	size_t n = strlen(v);
	char num[16];

	if (n && v[n - 1] == '%' && n < sizeof(num)) {
		memcpy(num, v, n - 1);
		num[n - 1] = '\0';
		if (!kscale_check_long(num, 0, 100, err, len))
			return 0;
	} else if (!kscale_check_long(v, 0, 1 << 16, err, len)) {
		return 0;
	}
	snprintf(err, len, "expected a count from 0 to 65536 or a share "
		 "from 0%% to 100%%");
	return -1;
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
		.thread_size = sizeof(struct fio_thread),
	},
	{
		.name = "locktest",
		.doc = "reader and writer threads looping lock, hold, unlock, "
		       "think on one rwsem (the rwsem series' microbenchmark)",
		.setup = locktest_setup,
		.thread_init = locktest_thread_init,
		.loop = locktest_loop,
		.teardown = locktest_teardown,
		.thread_size = sizeof(struct locktest_thread),
		.classes = locktest_classes,
		.runs = locktest_runs,
	},
};

static const struct fio_kind pthread_kind = { .ops = &pthread_rwsem_ops };
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
	  check_rw, "fio" },
	{ "bs", "4k", "block size of each I/O (fio's --bs)", check_bs, "fio" },
	{ "size", "64m", "the file (fio's --size)", check_size, "fio" },
	{ "rwmixread", "50", "percent reads with randrw (fio's --rwmixread)",
	  check_mix, "fio" },
	{ "iolock_write", "shared", "IOLOCK mode of a write: shared (aligned "
	  "DAX in 4.6) or exclusive", check_iolock, "fio" },
	{ "update_time_ns", "500", "ns of the timestamp transaction under "
	  "the ILOCK", check_ns, "fio" },
	{ "map_ns", "auto", "ns of xfs_bmapi_read() under the ILOCK, or auto "
	  "(lseek SEEK_DATA on XFS, less SEEK_CUR)", kscale_check_ns_or_auto,
	  "fio" },
	{ "io_path_ns", "auto", "ns of each I/O outside the locks, or auto "
	  "(a real XFS pread/pwrite less the model's own I/O)",
	  kscale_check_ns_or_auto, "fio" },
	{ "readers", "50%", "reader threads: N, or P% of the run's threads "
	  "rounded down; the others are writers", check_readers, "locktest" },
	{ "hold_ns", "0", "ns of work holding the rwsem", check_ns,
	  "locktest" },
	{ "think_ns", "0", "ns of work after each unlock (outside the rwsem)",
	  check_ns, "locktest" },
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
