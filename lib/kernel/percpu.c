// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <numaif.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../sys/topology.h"
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

/* mmap()ed memory bound to node; -errno of mbind(), the memory stays. */
static int bind_to_node(void *p, size_t size, int node)
{
	size_t bits = 8 * sizeof(unsigned long);
	unsigned long *mask = calloc(node / bits + 1, sizeof(*mask));
	int ret;

	if (!mask)
		return -ENOMEM;
	mask[node / bits] = 1UL << (node % bits);
	/* maxnode counts one bit more than the mask holds (mbind(2)) */
	ret = mbind(p, size, MPOL_BIND, mask, (node / bits + 1) * bits + 1, 0);
	free(mask);
	return ret ? -errno : 0;
}

void percpu_setup(struct topology *t)
{
	size_t page = sysconf(_SC_PAGESIZE);
	void *p;
	int i, ret;

	kscale_topology = t;
	nr_node_ids = t->nr_node_ids;
	for (i = 0; t->bind_memory && i < t->nr_nodes; i++) {
		p = mmap(NULL, page, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		ret = p == MAP_FAILED ? -errno : bind_to_node(p, page,
							      t->nodes[i]);
		if (p != MAP_FAILED)
			munmap(p, page);
		if (ret) {
			snprintf(t->bind_why, sizeof(t->bind_why), "mbind to "
				 "node %d: %s", t->nodes[i], strerror(-ret));
			t->bind_memory = false;
		}
	}
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
	if (numa) {
		b = mmap(NULL, total, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (b == MAP_FAILED)
			abort();
		/* the nodes passed percpu_setup()'s probe: loud if one fails */
		WARN_ON(bind_to_node(b, total, node));
	} else {
		b = aligned_alloc(SMP_CACHE_BYTES,
				  (total + SMP_CACHE_BYTES - 1) &
				  ~(size_t)(SMP_CACHE_BYTES - 1));
		if (!b)
			abort();
	}
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
		munmap(b, b->size);
	else
		free(b);
}

#define PERCPU_SLOT_ALIGN	(2 * SMP_CACHE_BYTES)

/* One block per node, its CPUs' slots in CPU order. */
void *__alloc_percpu(size_t size)
{
	const struct topology *t = kscale_topology;
	size_t stride = (size + PERCPU_SLOT_ALIGN - 1) &
			~(size_t)(PERCPU_SLOT_ALIGN - 1);
	struct percpu_area *a = calloc(1, sizeof(*a) +
				       t->nr_cpu_ids * sizeof(void *));
	int i, node, cpu, n;
	char *block;

	if (!a)
		abort();
	a->node_block = calloc(t->nr_node_ids, sizeof(void *));
	if (!a->node_block)
		abort();
	for (i = 0; i < t->nr_nodes; i++) {
		node = t->nodes[i];
		/* the block's header line, then aligned slots */
		block = kzalloc_node(topology_cpus_on_node(t, node) * stride +
				     PERCPU_SLOT_ALIGN, node);
		a->node_block[node] = block;
		block = (char *)(((uintptr_t)block + PERCPU_SLOT_ALIGN - 1) &
				 ~(uintptr_t)(PERCPU_SLOT_ALIGN - 1));
		n = 0;
		for_each_possible_cpu(cpu)
			if (cpu_to_node(cpu) == node)
				a->ptr[cpu] = block + n++ * stride;
	}
	return a;
}

void free_percpu(void __percpu *ptr)
{
	struct percpu_area *a = ptr;
	int i;

	if (!a)
		return;
	for (i = 0; i < kscale_topology->nr_node_ids; i++)
		kfree_node(a->node_block[i]);
	free(a->node_block);
	free(a);
}
