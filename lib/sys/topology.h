/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CPUs this process may run on, the node of each, and thread placement.
 * Sizes are dynamic: nothing here assumes a CPU or node count.
 */
#ifndef KSCALE_TOPOLOGY_H
#define KSCALE_TOPOLOGY_H

#include <stdbool.h>
#include <stddef.h>

struct topology {
	int nr_cpus;		/* allowed CPUs */
	int *cpus;		/* their ids, ascending */
	int nr_cpu_ids;		/* highest allowed CPU id + 1 */
	int *cpu_node;		/* [nr_cpu_ids]: node of a CPU, -1 if not allowed */
	int nr_nodes;		/* nodes holding allowed CPUs */
	int *nodes;		/* their ids, ascending */
	int nr_node_ids;	/* highest node id + 1 */
	int emulated;		/* --numa-emulate=N, 0 for the real nodes */
	bool bind_memory;	/* per-node memory really lands on its node */
	char bind_why[128];	/* why not, when a node refused a binding */
};

enum placement_policy {
	PLACEMENT_COMPACT,	/* fill one node, then the next */
	PLACEMENT_SPREAD,	/* round-robin over nodes */
	PLACEMENT_LIST,		/* explicit CPUs, in the order given */
};

struct placement {
	enum placement_policy policy;
	int *list;		/* PLACEMENT_LIST: the CPUs as given */
	int nr_list;
	char name[64];		/* as it appears in results */
};

int topology_init(struct topology *t, const int *cpus, const int *node,
		  int nr, bool bind_memory, char *err, size_t errlen);
int topology_from_system(struct topology *t, char *err, size_t errlen);
int topology_emulate(struct topology *t, int nr_nodes, char *err,
		     size_t errlen);
void topology_free(struct topology *t);
int topology_cpus_on_node(const struct topology *t, int node);

int placement_parse(const char *s, struct placement *p, char *err,
		    size_t errlen);
int placement_order(const struct topology *t, const struct placement *p,
		    int *order, char *err, size_t errlen);
int placement_plan(const struct topology *t, const struct placement *p,
		   int nr_threads, bool oversubscribe, int *cpu_of_thread,
		   char *err, size_t errlen);
/* 0, or -1 when the placement itself shares a CPU without oversubscribe. */
int placement_check(const struct placement *p, bool oversubscribe, char *err,
		    size_t errlen);
int placement_sweep(const struct topology *t, const struct placement *p,
		    const int *order, int nr, int *counts);

#endif
