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
#include <string.h>

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

/* What a model task's slow paths did, at the end of its loop. */
struct rwsem_task {
	struct rwsem_profile profile;
	unsigned long nvcsw, nivcsw;
};

/* A model task's start: its profile and switch counts from 0. */
static inline void rwsem_task_start(void)
{
	memset(&rwsem_profile, 0, sizeof(rwsem_profile));
	current->nvcsw = current->nivcsw = 0;
}

/* Its loop's end: what they came to. */
static inline void rwsem_task_save(struct rwsem_task *rt)
{
	rt->profile = rwsem_profile;
	rt->nvcsw = current->nvcsw;
	rt->nivcsw = current->nivcsw;
}

/* Cache-line aligned, as the kernel's per-CPU OSQ nodes are. */
struct fio_thread {
	struct optimistic_spin_node osq_node;
	struct rwsem_task task;
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
 * rwsem_counters.c: the profile of each thread's struct rwsem_task at
 * offset in its t->priv, as counters per `per` (each of its ops, one of
 * a workload's operations): switches_per_<per> of every row, and for a
 * model row (model) the slow paths' shares, spin_acquired,
 * spin_abandoned, sleeps_<reason>_per_<per>, queued_<reason>_per_<per>.
 */
void rwsem_task_counters(struct kscale_run *run, size_t offset, double ops,
			 const char *per, bool model);

/*
 * rwsem_calibrate.c: --io-path-ns (auto or not) into fr and counters;
 * auto runs fio on its file in dir, a file system named fs.
 */
int set_io_path(struct kscale_run *run, struct fio_run *fr, const char *dir,
		const char *fs);

/* rwsem_calibrate.c: --map-ns=auto, on the XFS mounted at arg. */
int measure_map_work(void *arg, double *ns, char *err, size_t len);

#endif
