// SPDX-License-Identifier: GPL-2.0
/*
 * The rwsem bench's counters of a model row (bench/rwsem.c): fio's I/O
 * rates, and either workload's rwsem profile (rwsem_profile.h) under the
 * names the real profile gives the kernel's functions, with each sleep's
 * and each queueing's reason per operation.
 */
#include <stddef.h>
#include <stdio.h>

#include "rwsem.h"

/* A share of the run's CPU time, as perf -C over its CPUs counts it. */
static double pct_of_cpu_time(struct kscale_run *run, uint64_t cycles)
{
	return 100 * cycles_to_ns(cycles) /
	       (run->elapsed * 1e9 * kscale_nr_distinct_cpus(run));
}

/* the real profile's names of one function's shares (perf.c) */
#define PROFILE_NAMES(fn)						\
	((const char *const[]){ "kernel_" fn "_children_pct",		\
				"kernel_" fn "_self_pct",		\
				"kernel_" fn "_children_busy_pct",	\
				"kernel_" fn "_self_busy_pct" })

/*
 * children and self of one function: of all the CPUs' time, and of their
 * busy time (cpu_busy_pct, set by the window before the teardown), as
 * perf report gives a workload's samples without the idle task's.
 */
static void set_profile(struct kscale_run *run, const char *const *name,
			uint64_t all, uint64_t callees)
{
	double busy = kscale_counter(run, "cpu_busy_pct") / 100;
	double children = pct_of_cpu_time(run, all);
	double self = pct_of_cpu_time(run, all - callees);

	kscale_set_counter(run, name[0], children);
	kscale_set_counter(run, name[1], self);
	kscale_set_counter(run, name[2], busy > 0 ? children / busy : 0);
	kscale_set_counter(run, name[3], busy > 0 ? self / busy : 0);
}

/*
 * Each reason's count per operation (rwsem_profile.h):
 * sleeps_<reason>_per_<per>, queued_<reason>_per_<per>, and
 * switches_per_<per>.  The harness keeps a counter's name, not a copy.
 */
static char reason_counter[RWSEM_SLEEP_NR + RWSEM_QUEUE_NR][64];
static char switches_counter[64];

static void set_reasons(struct kscale_run *run, char (*counter)[64],
			const char *what, const char *const *names,
			const unsigned long *n, int nr, double ops,
			const char *per)
{
	int i;

	for (i = 0; i < nr; i++) {
		snprintf(counter[i], sizeof(counter[i]), "%s_%s_per_%s", what,
			 names[i], per);
		kscale_set_counter(run, counter[i], ops ? n[i] / ops : 0);
	}
}

void rwsem_task_counters(struct kscale_run *run, size_t offset, double ops,
			 const char *per, bool model)
{
	struct rwsem_profile sum = { 0 };
	double switches = 0;
	int i, j;

	for (i = 0; i < run->nr_threads; i++) {
		const struct rwsem_task *rt =
			(void *)((char *)run->threads[i].priv + offset);

		switches += rt->nvcsw + rt->nivcsw;
		sum.write_failed += rt->profile.write_failed;
		sum.write_failed_callees += rt->profile.write_failed_callees;
		sum.read_failed += rt->profile.read_failed;
		sum.read_failed_callees += rt->profile.read_failed_callees;
		sum.spin_on_owner += rt->profile.spin_on_owner;
		sum.osq += rt->profile.osq;
		sum.spin_acquired += rt->profile.spin_acquired;
		sum.spin_abandoned += rt->profile.spin_abandoned;
		for (j = 0; j < RWSEM_SLEEP_NR; j++)
			sum.slept[j] += rt->profile.slept[j];
		for (j = 0; j < RWSEM_QUEUE_NR; j++)
			sum.queued[j] += rt->profile.queued[j];
	}
	snprintf(switches_counter, sizeof(switches_counter), "switches_per_%s",
		 per);
	kscale_set_counter(run, switches_counter, ops ? switches / ops : 0);
	if (!model)
		return;
	set_profile(run, PROFILE_NAMES("rwsem_down_write_slowpath"),
		    sum.write_failed, sum.write_failed_callees);
	set_profile(run, PROFILE_NAMES("rwsem_down_read_slowpath"),
		    sum.read_failed, sum.read_failed_callees);
	set_profile(run, PROFILE_NAMES("rwsem_spin_on_owner"),
		    sum.spin_on_owner, 0);
	set_profile(run, PROFILE_NAMES("osq_lock"), sum.osq, 0);
	kscale_set_counter(run, "spin_acquired", sum.spin_acquired);
	kscale_set_counter(run, "spin_abandoned", sum.spin_abandoned);
	set_reasons(run, reason_counter, "sleeps", rwsem_sleep_name,
		    sum.slept, RWSEM_SLEEP_NR, ops, per);
	set_reasons(run, reason_counter + RWSEM_SLEEP_NR, "queued",
		    rwsem_queue_name, sum.queued, RWSEM_QUEUE_NR, ops, per);
}

void fio_model_counters(struct kscale_run *run, struct fio_run *fr)
{
	double reads = 0, writes = 0;
	double iops = kscale_counter(run, "ops_per_sec");
	double read_share, mb = (double)fr->file.bs / (1 << 20);
	int i;

	for (i = 0; i < run->nr_threads; i++) {
		struct fio_thread *ft = run->threads[i].priv;

		reads += ft->reads;
		writes += ft->writes;
	}
	read_share = reads + writes ? reads / (reads + writes) : 0;
	kscale_set_counter(run, "iops", iops);
	kscale_set_counter(run, "read_MBps", iops * read_share * mb);
	kscale_set_counter(run, "write_MBps", iops * (1 - read_share) * mb);
	kscale_set_counter(run, "total_MBps", iops * mb);
	rwsem_task_counters(run, offsetof(struct fio_thread, task),
			    reads + writes, "io", fr->v);
}
