// SPDX-License-Identifier: GPL-2.0
/*
 * Per-CPU and per-node memory (lib/kernel/percpu.c) on made-up machines:
 * interleaved CPU numbering, sparse CPU and node ids, 512 CPUs on 16
 * nodes; one block per node, each CPU's slot on its own cache lines; a
 * node that refuses its binding leaves memory unbound, and says why.  On
 * the machine it runs on, each node's block and kzalloc_node() memory is
 * on that node as the kernel reports it (move_pages(2)): on one node a
 * formality, in the many-node guest (scripts/kscale vm-test) the check,
 * and there again with CPU 1 offline.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <numaif.h>
#include <unistd.h>

#include "../lib/sys/topology.h"
#include "../lib/kernel/percpu.h"

static char err[256];

struct slot {
	long value;
};

/* cpus[i] on node[i]; memory bound when bind says so. */
static void machine(struct topology *t, const int *cpu, const int *node,
		    int nr, bool bind)
{
	assert_int_equal(topology_init(t, cpu, node, nr, bind, err,
				       sizeof(err)), 0);
	percpu_setup(t);
}

/*
 * Every CPU a distinct zeroed slot, aligned to two cache lines, inside its
 * node's one block: consecutive CPUs of a node are one stride apart.
 */
static void check_slots(const struct topology *t)
{
	struct slot __percpu *p = alloc_percpu(struct slot);
	char *prev_on_node[64] = { NULL };
	int cpu, node;

	for_each_possible_cpu(cpu) {
		char *s = (char *)per_cpu_ptr(p, cpu);

		node = cpu_to_node(cpu);
		assert_int_equal((uintptr_t)s % (2 * SMP_CACHE_BYTES), 0);
		assert_int_equal(per_cpu_ptr(p, cpu)->value, 0);
		per_cpu_ptr(p, cpu)->value = cpu + 1;
		if (prev_on_node[node])
			assert_ptr_equal(s, prev_on_node[node] +
					 2 * SMP_CACHE_BYTES);
		prev_on_node[node] = s;
	}
	for_each_possible_cpu(cpu)
		assert_int_equal(per_cpu_ptr(p, cpu)->value, cpu + 1);
	free_percpu(p);
}

static void test_interleaved_numbering(void **state)
{
	int cpu[8], node[8], i;
	struct topology t;

	for (i = 0; i < 8; i++) {
		cpu[i] = i;
		node[i] = i % 2;
	}
	machine(&t, cpu, node, 8, false);
	assert_int_equal(t.nr_nodes, 2);
	assert_int_equal(topology_cpus_on_node(&t, 1), 4);
	check_slots(&t);
	topology_free(&t);
}

/*
 * Holes in the CPU and node ids (a cpuset, an offline CPU, a memoryless
 * node): arrays indexed by id, the run queues among them, are sized by
 * the highest id + 1, not by the count.
 */
static void test_sparse_node_ids(void **state)
{
	int cpu[] = { 0, 1, 4, 5 }, node[] = { 0, 0, 5, 5 };
	struct topology t;

	machine(&t, cpu, node, 4, false);
	assert_int_equal(t.nr_nodes, 2);
	assert_int_equal(t.nr_node_ids, 6);
	assert_int_equal(t.nr_cpu_ids, 6);
	check_slots(&t);
	topology_free(&t);
}

static void test_512_cpus_16_nodes(void **state)
{
	int *cpu = malloc(512 * sizeof(int)), *node = malloc(512 * sizeof(int));
	struct topology t;
	int i;

	for (i = 0; i < 512; i++) {
		cpu[i] = i;
		node[i] = i / 32;
	}
	machine(&t, cpu, node, 512, false);
	check_slots(&t);
	topology_free(&t);
	free(cpu);
	free(node);
}

/* Node 0 exists wherever this runs; node 63 does not. */
static void test_a_refused_binding_unbinds_and_says_why(void **state)
{
	int cpu[] = { 0, 1 }, node[] = { 0, 63 };
	struct topology t;

	machine(&t, cpu, node, 2, true);
	assert_false(t.bind_memory);
	assert_non_null(strstr(t.bind_why, "mbind to node 63"));
	check_slots(&t);
	topology_free(&t);
}

static void test_node_zero_binds(void **state)
{
	int cpu[] = { 0, 1 }, node[] = { 0, 0 };
	struct topology t;

	machine(&t, cpu, node, 2, true);
	assert_true(t.bind_memory);
	assert_string_equal(t.bind_why, "");
	check_slots(&t);
	topology_free(&t);
}

/* The node the kernel placed the page of p on (touched already). */
static int node_of(const void *p)
{
	long page = sysconf(_SC_PAGESIZE);
	void *pages[] = { (void *)((uintptr_t)p & ~(uintptr_t)(page - 1)) };
	int status = -1;

	assert_int_equal(move_pages(0, 1, pages, NULL, &status, 0), 0);
	return status;
}

static void test_the_system_s_nodes_hold_their_slots(void **state)
{
	struct slot __percpu *p;
	struct topology t;
	int cpu, i;

	assert_int_equal(topology_from_system(&t, err, sizeof(err)), 0);
	/* in the guest's checklist, once with CPU 1 offline */
	assert_int_equal(t.nr_cpu_ids, t.cpus[t.nr_cpus - 1] + 1);
	percpu_setup(&t);
	if (t.nr_nodes > 1 && !t.bind_memory)
		fail_msg("%d nodes, memory not bound: %s", t.nr_nodes,
			 t.bind_why);
	p = alloc_percpu(struct slot);
	for_each_possible_cpu(cpu) {
		per_cpu_ptr(p, cpu)->value = cpu;
		if (node_of(per_cpu_ptr(p, cpu)) != cpu_to_node(cpu))
			fail_msg("cpu %d's slot is on node %d, not %d", cpu,
				 node_of(per_cpu_ptr(p, cpu)),
				 cpu_to_node(cpu));
	}
	free_percpu(p);
	for (i = 0; i < t.nr_nodes; i++) {
		long *q = kzalloc_node(sizeof(*q), t.nodes[i]);

		if (node_of(q) != t.nodes[i])
			fail_msg("kzalloc_node(%d) is on node %d", t.nodes[i],
				 node_of(q));
		kfree_node(q);
	}
	topology_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_interleaved_numbering),
		cmocka_unit_test(test_sparse_node_ids),
		cmocka_unit_test(test_512_cpus_16_nodes),
		cmocka_unit_test(test_a_refused_binding_unbinds_and_says_why),
		cmocka_unit_test(test_node_zero_binds),
		cmocka_unit_test(test_the_system_s_nodes_hold_their_slots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
