/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The real fio, run as a child for a run's window: jobs = the run's
 * threads, each on its CPU (--cpus_allowed_policy=split), fio's ramp as
 * the warm-up and its runtime as the window, psync, --thread, and the
 * file left in the page cache (--invalidate=0).  Its JSON totals become
 * the run's counters: read_MBps, write_MBps, total_MBps, iops,
 * ops_per_sec(_per_cpu), fairness and thread_ops_per_sec_min/mean/max
 * (each job's IOPS), cpu_fairness (each job's usr+sys) and
 * switches_per_io (the jobs' context switches per I/O) and cpu_busy_pct
 * (their usr+sys time, a share of the CPUs').
 */
#ifndef KSCALE_FIO_H
#define KSCALE_FIO_H

#include <sys/types.h>

#include "kscale.h"

struct fio_job {
	char filename[400];
	const char *rw;			/* randrw, randwrite, randread */
	size_t bs, size;
	unsigned int rwmixread;		/* percent */
	int nr_jobs;
	char cpus[4096];		/* job i on the i-th CPU listed */
	double runtime, ramp;		/* s */
};

struct fio_proc {
	pid_t pid;
	char json[450];
};

/* fio's JSON, summed over its jobs. */
struct fio_totals {
	int jobs;
	double read_bw, write_bw;	/* bytes/s */
	double iops, ios;
	double iops_min, iops_max;	/* of the least and most busy job */
	double ctx;			/* the jobs' context switches */
	double io_min, io_max;		/* bytes of the least and most busy */
	double cpu_min, cpu_max;	/* usr+sys % of the least and most busy */
	double cpu;			/* usr+sys %, summed */
};

/* Write the file whole and sync it, so fio finds it laid out and cached. */
int fio_layout(const char *path, size_t size, char *err, size_t len);
/*
 * job->filename: fio's file of job->size bytes in dir, laid out the
 * first time and left in the page cache for the next run; 0, or
 * kscale_fail().
 */
int fio_file(struct kscale_run *run, struct fio_job *job, const char *dir);
int fio_spawn(const struct fio_job *job, struct fio_proc *p, char *err,
	      size_t len);
/* Wait for it and read its totals; 0, or -1 with the reason in err. */
int fio_wait(struct fio_proc *p, struct fio_totals *t, char *err, size_t len);

/* fio for a run's window: its threads' CPUs, warm-up and window. */
int fio_start(struct kscale_run *run, struct fio_job *job, struct fio_proc *p);
/* Wait, and set the run's counters from the totals. */
void fio_finish(struct kscale_run *run, struct fio_proc *p);

#endif
