// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: --placement and --cpus on a made-up machine, the way a bench
 * binary's main() takes them: placement_parse(), placement_order(),
 * placement_check(), placement_sweep(), cpulist_parse() with `all` and
 * `sweep`, placement_plan() for every count.  The input is three lines:
 *
 *   CPUS NODES SHAPE EMULATE OVERSUBSCRIBE   (numbers, clamped; see below)
 *   compact | spread | list:0,2,4 | anything
 *   1,2,4 | sweep | 1-all | all*2 | anything  (none: sweep)
 *
 * Beyond not crashing: compact and spread order every allowed CPU once
 * (compact node by node, spread a node at a time), a list as given or
 * refused for a CPU not allowed; the check refuses exactly a list naming
 * a CPU twice without --oversubscribe; sweep counts ascend from 1 to the
 * CPUs ordered; a plan puts thread i on order[i % n], on allowed CPUs,
 * distinct ones without --oversubscribe.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/sys/cpulist.c"
#include "../../lib/sys/placement.c"
#include "../../lib/sys/topology.c"
#include "fuzz.h"

#define MAX_CPUS	64
/* threads planned for one input, at most */
#define MAX_PLANNED	(1 << 16)

/*
 * SHAPE's bits: 1, CPU ids with holes (every other id); 2, nodes
 * interleaved (CPU i on node i % NODES) rather than in blocks; 4, sparse
 * node ids (0, 2, 4...).
 */
static void make_topology(const char *line, struct topology *t,
			  int *emulate, bool *oversubscribe)
{
	unsigned int nr = 4, nodes = 2, shape = 0, emu = 0, over = 0;
	int cpus[MAX_CPUS], node[MAX_CPUS], i, n;
	char err[256];

	sscanf(line, "%u %u %u %u %u", &nr, &nodes, &shape, &emu, &over);
	nr = nr % MAX_CPUS + 1;
	nodes = nodes % nr + 1;
	for (i = 0; i < (int)nr; i++) {
		cpus[i] = shape & 1 ? 2 * i + 1 : i;
		n = shape & 2 ? i % (int)nodes : (int)((long)i * nodes / nr);
		node[i] = shape & 4 ? 2 * n : n;
	}
	FUZZ_CHECK(!topology_init(t, cpus, node, nr, false, err, sizeof(err)));
	FUZZ_CHECK(t->nr_cpus == (int)nr && t->nr_nodes == (int)nodes);
	*emulate = emu % (nr + 2);
	*oversubscribe = over & 1;
}

static bool allowed(const struct topology *t, int cpu)
{
	return cpu >= 0 && cpu < t->nr_cpu_ids && t->cpu_node[cpu] >= 0;
}

static int node_index(const struct topology *t, int cpu)
{
	int i;

	for (i = 0; t->nodes[i] != t->cpu_node[cpu]; i++)
		;
	return i;
}

static void check_order(const struct topology *t, const struct placement *p,
			const int *order, int n)
{
	int *seen = calloc(t->nr_cpu_ids, sizeof(*seen)), i, j;

	for (i = 0; i < n; i++)
		FUZZ_CHECK(allowed(t, order[i]));
	if (p->policy == PLACEMENT_LIST) {
		FUZZ_CHECK(n == p->nr_list &&
			   !memcmp(order, p->list, n * sizeof(*order)));
		free(seen);
		return;
	}
	FUZZ_CHECK(n == t->nr_cpus);
	for (i = 0; i < n; i++)
		FUZZ_CHECK(!seen[order[i]]++);
	for (i = 1; p->policy == PLACEMENT_COMPACT && i < n; i++)
		FUZZ_CHECK(node_index(t, order[i - 1]) <=
			   node_index(t, order[i]));
	/* spread: the first thread of each node before any node's second */
	for (i = 0; p->policy == PLACEMENT_SPREAD && i < t->nr_nodes; i++)
		for (j = 0; j < i; j++)
			FUZZ_CHECK(t->cpu_node[order[i]] !=
				   t->cpu_node[order[j]]);
	free(seen);
}

static bool has_duplicate(const struct placement *p)
{
	int i, j;

	for (i = 0; i < p->nr_list; i++)
		for (j = 0; j < i; j++)
			if (p->list[i] == p->list[j])
				return true;
	return false;
}

static void check_sweep(const int *counts, int nr, int n)
{
	int i;

	FUZZ_CHECK(nr >= 1 && nr <= n);
	FUZZ_CHECK(counts[0] == 1 && counts[nr - 1] == n);
	for (i = 1; i < nr; i++)
		FUZZ_CHECK(counts[i - 1] < counts[i]);
}

static void check_plan(const struct topology *t, const struct placement *p,
		       const int *order, int n, int threads,
		       bool oversubscribe)
{
	int *cpu = malloc(threads * sizeof(*cpu)), i, j, ret;
	char err[512] = "";

	ret = placement_plan(t, p, threads, oversubscribe, cpu, err,
			     sizeof(err));
	FUZZ_CHECK(ret == (threads > n && !oversubscribe ? -1 : 0));
	FUZZ_CHECK(!ret || err[0]);
	for (i = 0; !ret && i < threads; i++) {
		FUZZ_CHECK(cpu[i] == order[i % n] && allowed(t, cpu[i]));
		for (j = 0; !oversubscribe && j < i; j++)
			FUZZ_CHECK(cpu[i] != cpu[j]);
	}
	free(cpu);
}

static void fuzz_one(char *lines[3])
{
	int *order, *sweep, *counts, n, nr_sweep, nr_counts, emulate, i;
	int max, planned = 0;
	struct cpulist_names names;
	struct placement p;
	struct topology t;
	bool oversubscribe;
	char err[512];

	make_topology(lines[0], &t, &emulate, &oversubscribe);
	err[0] = '\0';
	if (emulate && topology_emulate(&t, emulate, err, sizeof(err))) {
		FUZZ_CHECK(err[0] && emulate > t.nr_cpus);
		goto out_topology;
	}
	if (placement_parse(lines[1], &p, err, sizeof(err))) {
		FUZZ_CHECK(err[0] && !p.list);
		goto out_topology;
	}
	order = malloc((t.nr_cpus + p.nr_list) * sizeof(*order));
	n = placement_order(&t, &p, order, err, sizeof(err));
	if (n < 0) {
		FUZZ_CHECK(n == -1 && err[0] && p.policy == PLACEMENT_LIST);
		for (i = 0; i < p.nr_list && allowed(&t, p.list[i]); i++)
			;
		FUZZ_CHECK(i < p.nr_list);
		goto out_order;
	}
	check_order(&t, &p, order, n);
	if (placement_check(&p, oversubscribe, err, sizeof(err))) {
		FUZZ_CHECK(err[0] && !oversubscribe && has_duplicate(&p));
		goto out_order;
	}
	FUZZ_CHECK(oversubscribe || !has_duplicate(&p));
	sweep = malloc(n * sizeof(*sweep));
	nr_sweep = placement_sweep(&t, &p, order, n, sweep);
	check_sweep(sweep, nr_sweep, n);
	names = (struct cpulist_names){ .all = n, .sweep = sweep,
					.nr_sweep = nr_sweep };
	if (cpulist_parse(lines[2], &names, true, &counts, &nr_counts, err,
			  sizeof(err)))
		goto out_sweep;
	/* main()'s limits on the counts */
	max = oversubscribe ? 1 << 16 : n;
	for (i = 0; i < nr_counts; i++)
		if (counts[i] < 1 || counts[i] > max)
			goto out_counts;
	for (i = 0; i < nr_counts && planned <= MAX_PLANNED; i++) {
		check_plan(&t, &p, order, n, counts[i], oversubscribe);
		planned += counts[i];
	}
out_counts:
	free(counts);
out_sweep:
	free(sweep);
out_order:
	free(order);
	free(p.list);
out_topology:
	topology_free(&t);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), *lines[3] = { "", "", "sweep" }, *p;
	int i;

	memcpy(text, data, size);
	text[size] = '\0';
	for (i = 0, p = text; i < 3; i++) {
		lines[i] = p;
		p = strchrnul(p, '\n');
		if (!*p)
			break;
		*p++ = '\0';
	}
	fuzz_one(lines);
	free(text);
	return 0;
}
