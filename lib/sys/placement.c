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
	char why[256];

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
		if (!cpulist_parse(s + 5, NULL, false, &p->list, &p->nr_list,
				   why, sizeof(why)))
			return 0;
		snprintf(err, errlen, "--placement=%s: %s", s, why);
		return -1;
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

/*
 * A list naming a CPU twice puts two threads on it, the oversubscription
 * --oversubscribe asks for; without it, it is more likely a typo.
 */
int placement_check(const struct placement *p, bool oversubscribe, char *err,
		    size_t errlen)
{
	int i, max = 0, ret = 0;
	bool *seen;

	if (p->policy != PLACEMENT_LIST || oversubscribe)
		return 0;
	for (i = 0; i < p->nr_list; i++)
		if (p->list[i] > max)
			max = p->list[i];
	seen = calloc(max + 1, sizeof(*seen));
	for (i = 0; i < p->nr_list && !ret; i++) {
		if (seen[p->list[i]]) {
			snprintf(err, errlen, "--placement=%s: CPU %d is "
				 "listed twice (add --oversubscribe to share "
				 "CPUs)", p->name, p->list[i]);
			ret = -1;
		}
		seen[p->list[i]] = true;
	}
	free(seen);
	return ret;
}

/*
 * --cpus=sweep, the default: 1, 2, 4... (the powers of two below nr), the
 * count at every node boundary of the placement order, and nr; ascending,
 * each once.  That is a few points a node and a doubling, where every
 * count 1..nr would be hundreds.  A node boundary is where the order
 * leaves a node for another: for compact, every node's CPUs in turn
 * (cumulative CPUs per node); for a list, wherever it changes node.
 * Spread changes node at every step, so its one boundary is the node
 * count, where every node has just got its first thread.  counts needs
 * room for nr.
 */
int placement_sweep(const struct topology *t, const struct placement *p,
		    const int *order, int nr, int *counts)
{
	bool *on = calloc(nr + 1, sizeof(*on));
	int i, n = 0;

	for (i = 1; i < nr; i *= 2)
		on[i] = true;
	if (p->policy == PLACEMENT_SPREAD)
		on[t->nr_nodes] = true;
	else
		for (i = 1; i < nr; i++)
			on[i] |= t->cpu_node[order[i - 1]] !=
				 t->cpu_node[order[i]];
	on[nr] = true;
	for (i = 1; i <= nr; i++)
		if (on[i])
			counts[n++] = i;
	free(on);
	return n;
}
