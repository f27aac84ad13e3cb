// SPDX-License-Identifier: GPL-2.0
/* Thread -> CPU plans: compact, spread and explicit lists. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "topology.h"

int placement_parse(const char *s, struct placement *p, char *err,
		    size_t errlen)
{
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", s);
	if (!strcmp(s, "compact")) {
		p->policy = PLACEMENT_COMPACT;
		return 0;
	}
	if (!strcmp(s, "spread")) {
		p->policy = PLACEMENT_SPREAD;
		return 0;
	}
	if (!strncmp(s, "list:", 5)) {
		p->policy = PLACEMENT_LIST;
		return cpulist_parse(s + 5, 0, false, &p->list, &p->nr_list,
				     err, errlen);
	}
	snprintf(err, errlen, "--placement=%s: expected compact, spread or "
		 "list:CPUS (e.g. list:0,2,4)", s);
	return -1;
}

static int order_compact(const struct topology *t, int *order)
{
	int n = 0, i, j;

	for (i = 0; i < t->nr_nodes; i++)
		for (j = 0; j < t->nr_cpus; j++)
			if (t->cpu_node[t->cpus[j]] == t->nodes[i])
				order[n++] = t->cpus[j];
	return n;
}

static int order_spread(const struct topology *t, int *order)
{
	int *next = calloc(t->nr_nodes, sizeof(*next));
	int n = 0, i, j;

	while (n < t->nr_cpus) {
		for (i = 0; i < t->nr_nodes; i++) {
			for (j = next[i]; j < t->nr_cpus; j++)
				if (t->cpu_node[t->cpus[j]] == t->nodes[i])
					break;
			next[i] = j + 1;
			if (j < t->nr_cpus)
				order[n++] = t->cpus[j];
		}
	}
	free(next);
	return n;
}

static int order_list(const struct topology *t, const struct placement *p,
		      int *order, char *err, size_t errlen)
{
	int i, cpu;

	for (i = 0; i < p->nr_list; i++) {
		cpu = p->list[i];
		if (cpu >= t->nr_cpu_ids || t->cpu_node[cpu] < 0) {
			snprintf(err, errlen, "--placement=%s: CPU %d is "
				 "offline or not in this process's affinity "
				 "mask", p->name, cpu);
			return -1;
		}
		order[i] = cpu;
	}
	return p->nr_list;
}

/* Every usable CPU in the order threads are given them; returns how many. */
int placement_order(const struct topology *t, const struct placement *p,
		    int *order, char *err, size_t errlen)
{
	switch (p->policy) {
	case PLACEMENT_COMPACT:
		return order_compact(t, order);
	case PLACEMENT_SPREAD:
		return order_spread(t, order);
	default:
		return order_list(t, p, order, err, errlen);
	}
}

int placement_plan(const struct topology *t, const struct placement *p,
		   int nr_threads, bool oversubscribe, int *cpu_of_thread,
		   char *err, size_t errlen)
{
	int *order = malloc((t->nr_cpus + p->nr_list) * sizeof(*order));
	int n = placement_order(t, p, order, err, errlen), i;

	if (n > 0 && nr_threads > n && !oversubscribe) {
		snprintf(err, errlen, "%d threads but placement %s has only %d "
			 "CPUs (add --oversubscribe to share CPUs)",
			 nr_threads, p->name, n);
		n = -1;
	}
	for (i = 0; n > 0 && i < nr_threads; i++)
		cpu_of_thread[i] = order[i % n];
	free(order);
	return n < 0 ? -1 : 0;
}

/* 1, the CPU count at each node boundary (compact order), and all. */
int topology_default_counts(const struct topology *t, int *counts)
{
	int n = 0, i, sum = 0;

	counts[n++] = 1;
	for (i = 0; i < t->nr_nodes; i++) {
		sum += topology_cpus_on_node(t, t->nodes[i]);
		if (sum > counts[n - 1])
			counts[n++] = sum;
	}
	return n;
}
