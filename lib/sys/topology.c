// SPDX-License-Identifier: GPL-2.0
#include <numa.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpulist.h"
#include "topology.h"

static int max_of(const int *v, int n)
{
	int i, m = -1;

	for (i = 0; i < n; i++)
		if (v[i] > m)
			m = v[i];
	return m;
}

static void topology_index_nodes(struct topology *t)
{
	int i;
	bool *seen = calloc(t->nr_node_ids, sizeof(*seen));

	t->nr_nodes = 0;
	for (i = 0; i < t->nr_cpus; i++)
		seen[t->cpu_node[t->cpus[i]]] = true;
	for (i = 0; i < t->nr_node_ids; i++)
		if (seen[i])
			t->nodes[t->nr_nodes++] = i;
	free(seen);
}

int topology_init(struct topology *t, const int *cpus, const int *node,
		  int nr, bool bind_memory, char *err, size_t errlen)
{
	int i;

	memset(t, 0, sizeof(*t));
	if (nr <= 0) {
		snprintf(err, errlen, "no CPUs allowed for this process");
		return -1;
	}
	t->nr_cpus = nr;
	t->nr_cpu_ids = max_of(cpus, nr) + 1;
	t->nr_node_ids = max_of(node, nr) + 1;
	t->cpus = malloc(nr * sizeof(*t->cpus));
	t->cpu_node = malloc(t->nr_cpu_ids * sizeof(*t->cpu_node));
	t->nodes = malloc(t->nr_node_ids * sizeof(*t->nodes));
	for (i = 0; i < t->nr_cpu_ids; i++)
		t->cpu_node[i] = -1;
	for (i = 0; i < nr; i++) {
		t->cpus[i] = cpus[i];
		t->cpu_node[cpus[i]] = node[i];
	}
	t->bind_memory = bind_memory;
	topology_index_nodes(t);
	return 0;
}

void topology_free(struct topology *t)
{
	free(t->cpus);
	free(t->cpu_node);
	free(t->nodes);
	memset(t, 0, sizeof(*t));
}

/* Allowed CPUs from the affinity mask; nodes from libnuma, 0 without it. */
int topology_from_system(struct topology *t, char *err, size_t errlen)
{
	bool has_numa = numa_available() >= 0;
	int possible = numa_num_possible_cpus();
	struct bitmask *mask = numa_allocate_cpumask();
	int *cpus = malloc(possible * sizeof(int));
	int *node = malloc(possible * sizeof(int));
	int cpu, nr = 0, ret;

	if (numa_sched_getaffinity(0, mask) < 0) {
		snprintf(err, errlen, "cannot read this process's CPU affinity");
		nr = -1;
	}
	for (cpu = 0; nr >= 0 && cpu < possible; cpu++) {
		if (!numa_bitmask_isbitset(mask, cpu))
			continue;
		cpus[nr] = cpu;
		node[nr] = has_numa ? numa_node_of_cpu(cpu) : 0;
		if (node[nr] < 0)
			node[nr] = 0;
		nr++;
	}
	ret = nr < 0 ? -1 : topology_init(t, cpus, node, nr, false, err, errlen);
	if (!ret)
		t->bind_memory = has_numa && t->nr_nodes > 1;
	numa_free_cpumask(mask);
	free(cpus);
	free(node);
	return ret;
}

/*
 * Split the allowed CPUs, in id order, into nr_nodes pretend nodes of
 * near-equal size.  Memory is then not bound: the pretend nodes share
 * whatever real node the pages land on.
 */
int topology_emulate(struct topology *t, int nr_nodes, char *err,
		     size_t errlen)
{
	int i;

	if (nr_nodes < 1 || nr_nodes > t->nr_cpus) {
		snprintf(err, errlen, "--numa-emulate=%d: needs 1 to %d nodes "
			 "(one CPU at least per node)", nr_nodes, t->nr_cpus);
		return -1;
	}
	for (i = 0; i < t->nr_cpus; i++)
		t->cpu_node[t->cpus[i]] = (int)((long)i * nr_nodes / t->nr_cpus);
	free(t->nodes);
	t->nr_node_ids = nr_nodes;
	t->nodes = malloc(nr_nodes * sizeof(*t->nodes));
	topology_index_nodes(t);
	t->emulated = nr_nodes;
	t->bind_memory = false;
	return 0;
}

int topology_cpus_on_node(const struct topology *t, int node)
{
	int i, n = 0;

	for (i = 0; i < t->nr_cpus; i++)
		n += t->cpu_node[t->cpus[i]] == node;
	return n;
}
