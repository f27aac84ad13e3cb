/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What else happened on a run's CPUs during its window, for the analysis
 * to flag disturbed repetitions: the hypervisor's steal time of those
 * CPUs (/proc/stat), the worker threads' involuntary context switches
 * (/proc/self/task/TID/status), the sections the host slept in
 * (sched_host_sleeps()), and how late the controller took the window's
 * closing snapshot.
 */
#ifndef KSCALE_DISTURB_H
#define KSCALE_DISTURB_H

struct kscale_run;

struct disturb_snapshot {
	unsigned long long steal, total;	/* jiffies, the run's CPUs */
	unsigned long long nivcsw;		/* the workers' */
	unsigned long host_sleeps;		/* the model scheduler's */
};

/* cpus: the run's threads' CPUs (repeats allowed). */
void disturb_snapshot(const struct kscale_run *run, const int *cpus,
		      int nr_cpus, struct disturb_snapshot *s);
/*
 * steal_pct, involuntary_switches, host_sleeps and snapshot_late_us of
 * the window.
 */
void disturb_counters(struct kscale_run *run, const struct disturb_snapshot *a,
		      const struct disturb_snapshot *b, double late_s);

#endif
