// SPDX-License-Identifier: GPL-2.0
#include <numa.h>
#include <stdlib.h>
#include <string.h>

#include "../harness/topology.h"
#include "percpu.h"
#include "sched.h"

__thread int kscale_this_cpu;
__thread int kscale_this_node;
const struct topology *kscale_topology;
int nr_node_ids;

/* Sits before every kzalloc_node() block so kfree_node() knows its origin. */
struct node_block {
	size_t size;
	bool numa;
} ____cacheline_aligned;

void percpu_setup(const struct topology *t)
{
	kscale_topology = t;
	nr_node_ids = t->nr_node_ids;
}

void kscale_set_cpu(int cpu)
{
	kscale_this_cpu = cpu;
	kscale_this_node = cpu_to_node(cpu);
}

int cpu_to_node(int cpu)
{
	return kscale_topology->cpu_node[cpu];
}

int kscale_nr_possible_cpus(void)
{
	return kscale_topology->nr_cpus;
}

int kscale_possible_cpu(int i)
{
	return kscale_topology->cpus[i];
}

int kscale_nr_online_nodes(void)
{
	return kscale_topology->nr_nodes;
}

int kscale_online_node(int i)
{
	return kscale_topology->nodes[i];
}

void *kzalloc_node(size_t size, int node)
{
	size_t total = sizeof(struct node_block) + size;
	bool numa = kscale_topology->bind_memory;
	struct node_block *b;

	might_sleep();
	if (numa)
		b = numa_alloc_onnode(total, node);
	else
		b = aligned_alloc(SMP_CACHE_BYTES,
				  (total + SMP_CACHE_BYTES - 1) &
				  ~(size_t)(SMP_CACHE_BYTES - 1));
	if (!b)
		abort();
	memset(b, 0, total);
	b->size = total;
	b->numa = numa;
	return b + 1;
}

void kfree_node(void *ptr)
{
	struct node_block *b = (struct node_block *)ptr - 1;

	if (!ptr)
		return;
	if (b->numa)
		numa_free(b, b->size);
	else
		free(b);
}

/* Each CPU's copy is its own cache-line-aligned block on the CPU's node. */
void *__alloc_percpu(size_t size)
{
	int n = kscale_topology->nr_cpu_ids, cpu;
	struct percpu_area *a = calloc(1, sizeof(*a) + n * sizeof(void *));

	if (!a)
		abort();
	a->size = size;
	for_each_possible_cpu(cpu)
		a->ptr[cpu] = kzalloc_node(size, cpu_to_node(cpu));
	return a;
}

void free_percpu(void __percpu *ptr)
{
	struct percpu_area *a = ptr;
	int cpu;

	if (!a)
		return;
	for_each_possible_cpu(cpu)
		kfree_node(a->ptr[cpu]);
	free(a);
}
