// SPDX-License-Identifier: GPL-2.0
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "../kernel/sched.h"
#include "disturb.h"
#include "kscale.h"

static bool listed(int cpu, const int *cpus, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (cpus[i] == cpu)
			return true;
	return false;
}

/* cpuN user nice system idle iowait irq softirq steal: the listed CPUs. */
static void read_stat(const int *cpus, int nr, struct disturb_snapshot *s)
{
	unsigned long long v[8];
	char line[512];
	FILE *f = fopen("/proc/stat", "r");
	int cpu, i;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "cpu%d %llu %llu %llu %llu %llu %llu %llu %llu",
			   &cpu, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5],
			   &v[6], &v[7]) != 9 || !listed(cpu, cpus, nr))
			continue;
		for (i = 0; i < 8; i++)
			s->total += v[i];
		s->steal += v[7];
	}
	if (f)
		fclose(f);
}

static unsigned long long nonvoluntary(pid_t tid)
{
	unsigned long long n = 0;
	char path[64], line[256];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "nonvoluntary_ctxt_switches: %llu", &n) == 1)
			break;
	if (f)
		fclose(f);
	return n;
}

void disturb_snapshot(const struct kscale_run *run, const int *cpus,
		      int nr_cpus, struct disturb_snapshot *s)
{
	int i;

	memset(s, 0, sizeof(*s));
	read_stat(cpus, nr_cpus, s);
	for (i = 0; i < run->nr_threads; i++)
		s->nivcsw += nonvoluntary(run->threads[i].tid);
	s->host_sleeps = sched_host_sleeps();
}

void disturb_counters(struct kscale_run *run, const struct disturb_snapshot *a,
		      const struct disturb_snapshot *b, double late_s)
{
	unsigned long long total = b->total - a->total;

	kscale_set_counter(run, "steal_pct",
			   total ? 100.0 * (b->steal - a->steal) / total : 0);
	kscale_set_counter(run, "involuntary_switches",
			   (double)(b->nivcsw - a->nivcsw));
	kscale_set_counter(run, "host_sleeps",
			   (double)(b->host_sleeps - a->host_sleeps));
	kscale_set_counter(run, "snapshot_late_us", late_s * 1e6);
}
