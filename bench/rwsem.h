/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rwsem bench's files: its workload (rwsem.c), a model row's
 * counters (rwsem_counters.c) and the calibration of its `auto` knobs
 * (rwsem_calibrate.c).
 */
#ifndef KSCALE_BENCH_RWSEM_H
#define KSCALE_BENCH_RWSEM_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "../lib/harness/fio.h"
#include "../lib/harness/kscale.h"
#include "../models/rwsem/rwsem.h"
#include "../models/rwsem/xfs_dax.h"

/*
 * The glibc rwlocks of the pthread row come first: their words share
 * lines with the file's fields every I/O reads, as they did beside them.
 */
struct fio_run {
	pthread_rwlock_t pthread_iolock;
	pthread_rwlock_t pthread_ilock;
	struct xfs_dax_file file;
	const struct rwsem_variant *v;	/* NULL on a host row */
	bool real;			/* `fio` or `fio_xfs` */
	unsigned int rwmixread;		/* percent */
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

/* One I/O at the offset and in the direction r draws. */
static inline void fio_io(struct fio_run *fr, struct fio_thread *ft,
			  uint64_t r)
{
	struct xfs_dax_file *f = &fr->file;
	size_t off = (r >> 8) % (f->size / f->bs) * f->bs;
	bool write = r % 100 >= fr->rwmixread;

	xfs_dax_io(f, ft->buf, off, write);
	if (write)
		ft->writes++;
	else
		ft->reads++;
}

/* rwsem_counters.c: a model row's counters, at its teardown. */
void fio_model_counters(struct kscale_run *run, struct fio_run *fr);

/*
 * rwsem_calibrate.c: --io-path-ns (auto or not) into fr and counters;
 * auto runs fio on its file in dir, a file system named fs.
 */
int set_io_path(struct kscale_run *run, struct fio_run *fr, const char *dir,
		const char *fs);

/* rwsem_calibrate.c: --map-ns=auto, on the XFS mounted at arg. */
int measure_map_work(void *arg, double *ns, char *err, size_t len);

#endif
