// SPDX-License-Identifier: GPL-2.0
/*
 * fio (the seed's load, seed 004): every thread is a job doing random
 * I/O of --bs on one shared file (--size of memory standing in for an
 * NVDIMM), --rwmixread percent reads, with fio's option names.
 *
 * The I/O path is v4.6 XFS on DAX, where the contended rwsem is the
 * inode's ILOCK: a read takes the IOLOCK shared and the ILOCK shared to
 * map blocks (xfs_ilock_data_map_shared), then copies; a write takes the
 * IOLOCK shared (4.6 sends an aligned DAX write through
 * xfs_file_dio_aio_write(); --iolock-write=exclusive for later kernels),
 * the ILOCK exclusive to update the file time
 * (file_update_time -> xfs_vn_update_time, a transaction modelled as
 * --update-time-ns of work), the ILOCK shared to map blocks, then copies.
 * Both locks are the variant's rw_semaphore, or glibc's
 * pthread_rwlock_t.  The rest of an I/O (the syscall, the VFS, fio's own
 * work) is --io-path-ns of uncontended work; `auto` measures a real 4 KiB
 * pread/pwrite on tmpfs.  `fio` runs the real fio with the same job on a
 * tmpfs file.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../lib/harness/kscale.h"
#include "../lib/harness/tmpfs.h"
#include "../lib/kernel/delay.h"
#include "../models/rwsem/rwsem.h"

#define XFS_IOLOCK_EXCL		(1 << 0)
#define XFS_IOLOCK_SHARED	(1 << 1)
#define XFS_ILOCK_EXCL		(1 << 2)
#define XFS_ILOCK_SHARED	(1 << 3)

extern char **environ;

struct xfs_inode {
	struct rw_semaphore i_iolock;	/* mrlock_t */
	struct rw_semaphore i_lock;	/* mrlock_t: the ILOCK */
	pthread_rwlock_t pthread_iolock;
	pthread_rwlock_t pthread_ilock;
	unsigned long i_mtime;
	char *data;
	size_t size;
};

struct fio_run {
	struct xfs_inode ip;
	bool pthread;			/* glibc's rwlock instead of rwsem */
	bool real;			/* the `fio` variant */
	unsigned int rwmixread;		/* percent */
	size_t bs;
	unsigned int iolock_write;	/* XFS_IOLOCK_SHARED or _EXCL */
	unsigned long update_time_ns;
	unsigned long io_path_ns;
	pid_t fio;
	char fio_json[400];
};

struct fio_thread {
	struct optimistic_spin_node osq_node;
	struct rwsem_profile profile;
	uint64_t rng;
	unsigned long reads, writes;
	char *buf;
};

static struct tmpfs_dirs fio_dir;
static unsigned long io_path_auto_ns;

static void xfs_lock_one(struct fio_run *fr, struct rw_semaphore *sem,
			 pthread_rwlock_t *prw, bool excl)
{
	if (fr->pthread)
		excl ? pthread_rwlock_wrlock(prw) : pthread_rwlock_rdlock(prw);
	else
		excl ? down_write(sem) : down_read(sem);
}

static void xfs_unlock_one(struct fio_run *fr, struct rw_semaphore *sem,
			   pthread_rwlock_t *prw, bool excl)
{
	if (fr->pthread)
		pthread_rwlock_unlock(prw);
	else
		excl ? up_write(sem) : up_read(sem);
}

static void xfs_ilock(struct fio_run *fr, unsigned int mode)
{
	struct xfs_inode *ip = &fr->ip;

	if (mode & (XFS_IOLOCK_EXCL | XFS_IOLOCK_SHARED))
		xfs_lock_one(fr, &ip->i_iolock, &ip->pthread_iolock,
			     mode & XFS_IOLOCK_EXCL);
	if (mode & (XFS_ILOCK_EXCL | XFS_ILOCK_SHARED))
		xfs_lock_one(fr, &ip->i_lock, &ip->pthread_ilock,
			     mode & XFS_ILOCK_EXCL);
}

static void xfs_iunlock(struct fio_run *fr, unsigned int mode)
{
	struct xfs_inode *ip = &fr->ip;

	if (mode & (XFS_ILOCK_EXCL | XFS_ILOCK_SHARED))
		xfs_unlock_one(fr, &ip->i_lock, &ip->pthread_ilock,
			       mode & XFS_ILOCK_EXCL);
	if (mode & (XFS_IOLOCK_EXCL | XFS_IOLOCK_SHARED))
		xfs_unlock_one(fr, &ip->i_iolock, &ip->pthread_iolock,
			       mode & XFS_IOLOCK_EXCL);
}

/* dax_do_io() -> xfs_get_blocks(): map the blocks under the ILOCK. */
static void xfs_map_blocks(struct fio_run *fr)
{
	xfs_ilock(fr, XFS_ILOCK_SHARED);
	xfs_iunlock(fr, XFS_ILOCK_SHARED);
}

static void xfs_file_dax_read(struct fio_run *fr, char *buf, size_t off)
{
	xfs_ilock(fr, XFS_IOLOCK_SHARED);
	xfs_map_blocks(fr);
	memcpy(buf, fr->ip.data + off, fr->bs);
	xfs_iunlock(fr, XFS_IOLOCK_SHARED);
}

/* file_update_time() -> xfs_vn_update_time(): a transaction under ILOCK. */
static void xfs_vn_update_time(struct fio_run *fr)
{
	xfs_ilock(fr, XFS_ILOCK_EXCL);
	WRITE_ONCE(fr->ip.i_mtime, fr->ip.i_mtime + 1);
	ndelay(fr->update_time_ns);
	xfs_iunlock(fr, XFS_ILOCK_EXCL);
}

static void xfs_file_dax_write(struct fio_run *fr, const char *buf, size_t off)
{
	xfs_ilock(fr, fr->iolock_write);
	xfs_vn_update_time(fr);
	xfs_map_blocks(fr);
	memcpy(fr->ip.data + off, buf, fr->bs);
	xfs_iunlock(fr, fr->iolock_write);
}

static void model_loop(struct kscale_thread *t)
{
	struct fio_run *fr = t->run->priv;
	struct fio_thread *ft = t->priv;
	size_t blocks = fr->ip.size / fr->bs, off;
	uint64_t r;

	while (kscale_running(t)) {
		r = kscale_rand64(&ft->rng);
		off = (r >> 8) % blocks * fr->bs;
		ndelay(fr->io_path_ns);
		if (r % 100 < fr->rwmixread) {
			xfs_file_dax_read(fr, ft->buf, off);
			ft->reads++;
		} else {
			xfs_file_dax_write(fr, ft->buf, off);
			ft->writes++;
		}
		kscale_count(t);
	}
	ft->profile = rwsem_profile;
}

/* The real fio runs as a child; the threads only wait for the window. */
static void fio_loop(struct kscale_thread *t)
{
	while (kscale_running(t))
		usleep(1000);
}

static void fio_workload_loop(struct kscale_thread *t)
{
	struct fio_run *fr = t->run->priv;

	if (fr->real)
		fio_loop(t);
	else
		model_loop(t);
}

static int fio_thread_init(struct kscale_thread *t)
{
	struct fio_run *fr = t->run->priv;
	struct fio_thread *ft = calloc(1, sizeof(*ft));

	t->priv = ft;
	ft->rng = 0x9e3779b97f4a7c15ULL * (t->id + 1);
	ft->buf = aligned_alloc(4096, (fr->bs + 4095) & ~4095UL);
	memset(ft->buf, t->id, fr->bs);
	osq_thread_init(&ft->osq_node, t->id);
	memset(&rwsem_profile, 0, sizeof(rwsem_profile));
	return 0;
}

static size_t parse_size(const char *v)
{
	char *end;
	size_t n = strtoul(v, &end, 10);

	switch (*end) {
	case 'k': case 'K':
		return n << 10;
	case 'm': case 'M':
		return n << 20;
	case 'g': case 'G':
		return n << 30;
	default:
		return n;
	}
}

static const char *fio_cpus(struct kscale_run *run, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	for (i = 0; i < run->nr_threads && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%d", i ? "," : "",
				run->threads[i].cpu);
	return buf;
}

/* Start fio on the same job: its ramp is our warm-up, its runtime our window. */
static int fio_start(struct kscale_run *run, struct fio_run *fr)
{
	static unsigned long generation;
	char file[400], rw[32], bs[32], size[32], mix[32], jobs[32], runtime[48],
	     ramp[48], cpus[4096], out[450];
	char *argv[] = { "fio", "--name=kscale", file, rw, bs, size, mix, jobs,
			 "--thread", "--ioengine=psync", "--time_based",
			 runtime, ramp, cpus, "--cpus_allowed_policy=split",
			 "--output-format=json", out, NULL };
	int err;

	generation++;
	/* one file per size, laid out by the first run that needs it */
	snprintf(file, sizeof(file), "--filename=%s/fio.%zu", fio_dir.path[0],
		 fr->ip.size);
	snprintf(rw, sizeof(rw), "--rw=%s", kscale_knob(run, "rw"));
	snprintf(bs, sizeof(bs), "--bs=%zu", fr->bs);
	snprintf(size, sizeof(size), "--size=%zu", fr->ip.size);
	snprintf(mix, sizeof(mix), "--rwmixread=%u", fr->rwmixread);
	snprintf(jobs, sizeof(jobs), "--numjobs=%d", run->nr_threads);
	snprintf(runtime, sizeof(runtime), "--runtime=%ldms",
		 (long)(kscale_window_seconds(run) * 1000));
	snprintf(ramp, sizeof(ramp), "--ramp_time=%ldms",
		 (long)(kscale_warmup_seconds(run) * 1000));
	snprintf(cpus, sizeof(cpus), "--cpus_allowed=");
	fio_cpus(run, cpus + strlen(cpus), sizeof(cpus) - strlen(cpus));
	snprintf(fr->fio_json, sizeof(fr->fio_json), "%s/fio.%lu.json",
		 fio_dir.path[0], generation);
	snprintf(out, sizeof(out), "--output=%s", fr->fio_json);
	err = posix_spawnp(&fr->fio, "fio", NULL, NULL, argv, environ);
	if (err)
		return kscale_fail(run, "cannot run fio: %s (install it: "
				   "sudo apt-get install fio)", strerror(err));
	return 0;
}

static int fio_setup(struct kscale_run *run)
{
	struct fio_run *fr = calloc(1, sizeof(*fr));
	const char *variant = kscale_variant(run);
	const char *rw = kscale_knob(run, "rw");

	run->priv = fr;
	fr->real = !strcmp(variant, "fio");
	fr->pthread = !strcmp(variant, "pthread");
	rwsem_reader_owned_patch = !strcmp(variant, "reader_owned");
	fr->bs = parse_size(kscale_knob(run, "bs"));
	fr->ip.size = parse_size(kscale_knob(run, "size")) / fr->bs * fr->bs;
	fr->rwmixread = !strcmp(rw, "randwrite") ? 0 :
			!strcmp(rw, "randread") ? 100 :
			(unsigned int)kscale_knob_long(run, "rwmixread");
	fr->iolock_write = strcmp(kscale_knob(run, "iolock_write"),
				  "exclusive") ? XFS_IOLOCK_SHARED :
					       XFS_IOLOCK_EXCL;
	fr->update_time_ns = kscale_knob_long(run, "update_time_ns");
	fr->io_path_ns = kscale_knob_ns(run, "io_path_ns", io_path_auto_ns);
	if (fr->real)
		return fio_start(run, fr);
	fr->ip.data = aligned_alloc(4096, fr->ip.size);
	memset(fr->ip.data, 0, fr->ip.size);
	init_rwsem(&fr->ip.i_iolock);
	init_rwsem(&fr->ip.i_lock);
	pthread_rwlock_init(&fr->ip.pthread_iolock, NULL);
	pthread_rwlock_init(&fr->ip.pthread_ilock, NULL);
	return 0;
}

struct fio_side {
	double io_bytes, bw_bytes, iops;
};

/* The number after the next `"<key>" : ` from p, or -1. */
static double fio_json_number(const char *p, const char *key)
{
	char k[32];

	snprintf(k, sizeof(k), "\"%s\" : ", key);
	p = strstr(p, k);
	return p ? strtod(p + strlen(k), NULL) : -1;
}

/* The next `"<side>" : {` object's counters, from fio's JSON output. */
static const char *fio_json_side(const char *p, const char *side,
				 struct fio_side *s)
{
	char key[32];

	snprintf(key, sizeof(key), "\"%s\" : {", side);
	p = strstr(p, key);
	if (!p)
		return NULL;
	s->io_bytes = fio_json_number(p, "io_bytes");
	s->bw_bytes = fio_json_number(p, "bw_bytes");
	s->iops = fio_json_number(p, "iops");
	if (s->io_bytes < 0 || s->bw_bytes < 0 || s->iops < 0)
		return NULL;
	return p + strlen(key);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (f && getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	return buf;
}

/* Wait for fio and take its job totals as this run's counters. */
static void fio_finish(struct kscale_run *run, struct fio_run *fr)
{
	struct fio_side r, w, sum_r = { 0 }, sum_w = { 0 };
	double min = -1, max = 0, io, cpu_min = -1, cpu_max = 0, cpu;
	char *json, *p;
	int status, jobs = 0;

	if (waitpid(fr->fio, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		kscale_fail(run, "fio failed (status %d)", status);
		return;
	}
	json = slurp(fr->fio_json);
	p = json ? strstr(json, "\"jobs\"") : NULL;
	while (p && (p = (char *)fio_json_side(p, "read", &r)) &&
	       (p = (char *)fio_json_side(p, "write", &w))) {
		jobs++;
		sum_r.bw_bytes += r.bw_bytes;
		sum_w.bw_bytes += w.bw_bytes;
		sum_r.iops += r.iops + w.iops;
		io = r.io_bytes + w.io_bytes;
		min = min < 0 || io < min ? io : min;
		max = io > max ? io : max;
		/* the job's CPU time, as a share of its equal runtime */
		cpu = fio_json_number(p, "usr_cpu") +
		      fio_json_number(p, "sys_cpu");
		cpu_min = cpu_min < 0 || cpu < cpu_min ? cpu : cpu_min;
		cpu_max = cpu > cpu_max ? cpu : cpu_max;
	}
	free(json);
	unlink(fr->fio_json);
	if (jobs != run->nr_threads) {
		kscale_fail(run, "fio: %d jobs in %s", jobs, fr->fio_json);
		return;
	}
	kscale_set_counter(run, "read_MBps", sum_r.bw_bytes / (1 << 20));
	kscale_set_counter(run, "write_MBps", sum_w.bw_bytes / (1 << 20));
	kscale_set_counter(run, "total_MBps",
			   (sum_r.bw_bytes + sum_w.bw_bytes) / (1 << 20));
	kscale_set_counter(run, "iops", sum_r.iops);
	kscale_set_counter(run, "ops_per_sec", sum_r.iops);
	kscale_set_counter(run, "ops_per_sec_per_cpu",
			   sum_r.iops / kscale_nr_distinct_cpus(run));
	kscale_set_counter(run, "fairness", max > 0 ? min / max : 0);
	kscale_set_counter(run, "cpu_fairness",
			   cpu_max > 0 ? cpu_min / cpu_max : 0);
}

static double pct_of_thread_time(struct kscale_run *run, uint64_t cycles)
{
	return 100 * cycles_to_ns(cycles) /
	       (run->elapsed * 1e9 * run->nr_threads);
}

static void model_counters(struct kscale_run *run, struct fio_run *fr)
{
	struct rwsem_profile sum = { 0 };
	double reads = 0, writes = 0, iops = kscale_counter(run, "ops_per_sec");
	double read_share, mb = (double)fr->bs / (1 << 20);
	int i;

	for (i = 0; i < run->nr_threads; i++) {
		struct fio_thread *ft = run->threads[i].priv;

		reads += ft->reads;
		writes += ft->writes;
		sum.down_write_failed += ft->profile.down_write_failed;
		sum.write_asleep += ft->profile.write_asleep;
		sum.osq += ft->profile.osq;
		sum.spin_acquired += ft->profile.spin_acquired;
		sum.spin_abandoned += ft->profile.spin_abandoned;
		sum.sleeps += ft->profile.sleeps;
	}
	read_share = reads + writes ? reads / (reads + writes) : 0;
	kscale_set_counter(run, "iops", iops);
	kscale_set_counter(run, "read_MBps", iops * read_share * mb);
	kscale_set_counter(run, "write_MBps", iops * (1 - read_share) * mb);
	kscale_set_counter(run, "total_MBps", iops * mb);
	if (fr->pthread)
		return;
	kscale_set_counter(run, "down_write_failed_children_pct",
			   pct_of_thread_time(run, sum.down_write_failed));
	kscale_set_counter(run, "down_write_failed_self_pct",
			   pct_of_thread_time(run, sum.down_write_failed -
					      sum.write_asleep - sum.osq));
	kscale_set_counter(run, "spin_acquired", sum.spin_acquired);
	kscale_set_counter(run, "spin_abandoned", sum.spin_abandoned);
	kscale_set_counter(run, "sleeps", sum.sleeps);
}

/* Every lock released: each count back to 0, each wait list empty. */
static void check_rwsem(struct kscale_run *run, struct rw_semaphore *sem,
			const char *name)
{
	if (READ_ONCE(sem->count) || !list_empty(&sem->wait_list))
		kscale_fail(run, "%s: count %#lx%s after the run", name,
			    READ_ONCE(sem->count),
			    list_empty(&sem->wait_list) ? "" :
			    ", waiters left");
}

static int fio_teardown(struct kscale_run *run)
{
	struct fio_run *fr = run->priv;
	int i;

	if (fr->real) {
		fio_finish(run, fr);
	} else {
		check_rwsem(run, &fr->ip.i_iolock, "i_iolock");
		check_rwsem(run, &fr->ip.i_lock, "i_lock");
		model_counters(run, fr);
	}
	for (i = 0; i < run->nr_threads; i++) {
		struct fio_thread *ft = run->threads[i].priv;

		if (ft)
			free(ft->buf);
		free(ft);
	}
	free(fr->ip.data);
	free(fr);
	return run->failed ? -1 : 0;
}

/* ns of a real 4 KiB pread/pwrite at a random offset of a tmpfs file. */
static int measure_io_path(char *err, size_t len)
{
	const size_t file = 16 << 20, bs = 4096, ops = 20000;
	char path[400], *buf = aligned_alloc(4096, bs);
	uint64_t rng = 1;
	double t0;
	size_t i;
	int fd;

	snprintf(path, sizeof(path), "%s/calibrate", fio_dir.path[0]);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || ftruncate(fd, file)) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	memset(buf, 1, bs);
	t0 = kscale_now_ns();
	for (i = 0; i < ops; i++) {
		off_t off = (off_t)(kscale_rand64(&rng) % (file / bs)) * bs;

		if ((i & 1 ? pwrite(fd, buf, bs, off) : pread(fd, buf, bs, off)) < 0)
			break;
	}
	io_path_auto_ns = (unsigned long)((kscale_now_ns() - t0) / ops);
	close(fd);
	unlink(path);
	free(buf);
	return 0;
}

static int rwsem_init_model(const struct kscale_options *o, char *err,
			    size_t len)
{
	if (tmpfs_dirs_create(&fio_dir, 1, err, len) ||
	    measure_io_path(err, len))
		return -1;
	kscale_add_context("io_path_ns_auto", "%lu", io_path_auto_ns);
	return 0;
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

static const struct kscale_variant variants[] = {
	{ "v4.6", "rwsem-xadd as in v4.6: owner NULL for readers and for a "
		  "writer not yet set" },
	{ "reader_owned", "the seed (4.8): RWSEM_READER_OWNED, spinning stops "
			  "when readers own the lock" },
	{ "pthread", "glibc's pthread_rwlock_t, for reference", .host = true },
	{ "fio", "the real fio, same job, on a tmpfs file", .host = true },
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
	{ "io_path_ns", "auto", "ns of each I/O outside the locks, or auto "
	  "(a real tmpfs pread/pwrite, measured)", kscale_check_ns_or_auto },
};

KSCALE_MODEL("rwsem",
	     "rwsem optimistic spinning and the reader-owned state "
	     "(seed 004, v4.6 kernel/locking/rwsem-xadd.c)",
	     rwsem_init_model);
