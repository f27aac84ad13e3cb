/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Calibration: what a model's `auto` work stands for, measured on the
 * running kernel, and --calibration=FILE, which keeps those values.
 *
 * kscale_calibrate() runs round(arg) untimed for CALIBRATE_WARMUP_NS (one
 * round warms nothing up: the kernel's page allocator and caches took
 * some 20 shmem passes to reach the benchmark's steady state), then
 * returns the median of CALIBRATE_ROUNDS rounds' ns per operation.  Every
 * round runs pinned to the calibration CPU, the one the run's thread 0
 * gets (kscale_calibrate_cpu()), so the value is what that CPU's caches
 * and clock give the run; the caller's affinity and "this CPU" are put
 * back after.  A round that fails or does nothing fails the calibration:
 * a median of fewer rounds, or of none, is not the value it claims to be.
 */
#ifndef KSCALE_CALIBRATE_H
#define KSCALE_CALIBRATE_H

#include <stddef.h>

#define CALIBRATE_ROUNDS	5
#define CALIBRATE_WARMUP_NS	1e8

struct kscale_round {
	void *arg;		/* the caller's */
	double ns;		/* the round's time if it timed itself, or 0 */
	char err[256];		/* why it failed, where errno does not say */
};

/*
 * One round: the operations it did, or -1 with errno or r->err set.  The
 * helper times it, unless it sets r->ns (fio times its own I/O, without
 * its start-up).
 */
typedef long kscale_round_fn(struct kscale_round *r);

/* Calibrate on cpu from now on; until then, on the first allowed CPU. */
void kscale_calibrate_cpu(int cpu);

/*
 * ns per operation of round into *ns, after warmup_ns of untimed rounds
 * (at least one): 0, or -1 with the reason in err and errno the failed
 * round's.
 */
int kscale_calibrate_warmup(kscale_round_fn *round, void *arg,
			    double warmup_ns, double *ns, char *err,
			    size_t len);

static inline int kscale_calibrate(kscale_round_fn *round, void *arg,
				   double *ns, char *err, size_t len)
{
	return kscale_calibrate_warmup(round, arg, CALIBRATE_WARMUP_NS, ns,
				       err, len);
}

/*
 * --calibration=FILE keeps the work `auto` stood for, so that runs on two
 * kernels (or builds) compare at the same work, and the figures a --sim
 * run measures on the host, so that it runs the same the next time.  One
 * "NAME VALUE" a line ending in a newline, VALUE digits and, for a figure,
 * a '.' and up to 6 more, at most KSCALE_MAX_NS; lines that are empty or
 * start with '#' are comments; a line cut short (no newline) is refused.
 * The temp files of writers that died before renaming theirs are removed.
 * NAME is the model and knob, then what the value depends on:
 * "mnt_writers.path_work_ns", "rwsem.io_path_ns.read.size=..."; or
 * "sim.host.*" and "sim.here.*" for --sim's figures.  What describes the
 * machine rather than a model's work (a native run's tsc_per_ns, the
 * running kernel's own timings such as real_lookup's open_by_handle_at)
 * is measured every time: another machine's figure would misstate this
 * one.  A missing FILE is an empty one.
 */
int kscale_calibration_load(const char *path, char *err, size_t len);

/*
 * The value `name` in whole ns: FILE's if it has it (one with decimals is
 * refused), else measure()'s (truncated to whole ns, at least 0), which
 * then goes into FILE with all the others (a new file renamed over the
 * old: never half-written).  0, or -1 with the reason in err.
 */
int kscale_calibrated(const char *name, unsigned long *ns,
		      int (*measure)(void *arg, double *ns, char *err,
				     size_t len),
		      void *arg, char *err, size_t len);

/*
 * A figure of the host a --sim run measures, as kscale_calibrated() but
 * kept to 3 decimals (ps of a ns), the measuring run using the rounded
 * value too; in the context as "<name>": "<value> (reused|measured)".
 */
int kscale_calibrated_figure(const char *name, double *v,
			     int (*measure)(void *arg, double *v, char *err,
					    size_t len),
			     void *arg, char *err, size_t len);

/*
 * A knob's `auto`: kscale_calibrated() under name ("<model>.<knob>"), the
 * value then in the context as "<knob>_auto", followed by how (" (...)")
 * when how is not NULL.
 */
int kscale_auto(const char *name, const char *how, unsigned long *ns,
		int (*measure)(void *arg, double *ns, char *err, size_t len),
		void *arg, char *err, size_t len);

/*
 * ns per operation of round(arg) less those of base(base_arg), what the
 * round does that the work does not stand for (the model's own share of
 * it, a null operation), each through kscale_calibrate(): 0, or -1 with
 * err.  The two into round_ns and base_ns unless NULL.
 */
int kscale_calibrate_less(kscale_round_fn *round, void *arg,
			  kscale_round_fn *base, void *base_arg, double *ns,
			  double *round_ns, double *base_ns, char *err,
			  size_t len);

/* "FILE: N values reused, M measured" so far; NULL without a FILE. */
const char *kscale_calibration_summary(void);

#endif
