// SPDX-License-Identifier: GPL-2.0
/*
 * Topology and placement plans on made-up machines up to 512 CPUs and 16
 * nodes, on emulated nodes, and on this machine.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../lib/sys/topology.h"

static char err[256];

/* nr CPUs numbered 0.., in nr_nodes contiguous blocks, minus `hole`. */
static void fake(struct topology *t, int nr, int nr_nodes, int hole)
{
	int *cpu = malloc(nr * sizeof(int)), *node = malloc(nr * sizeof(int));
	int i, n = 0;

	for (i = 0; i < nr; i++) {
		if (i == hole)
			continue;
		cpu[n] = i;
		node[n++] = i / (nr / nr_nodes);
	}
	assert_int_equal(topology_init(t, cpu, node, n, false, err,
				       sizeof(err)), 0);
	free(cpu);
	free(node);
}

static void plan(struct topology *t, const char *policy, int threads,
		 bool over, int *cpu, int want_ret)
{
	struct placement p;

	assert_int_equal(placement_parse(policy, &p, err, sizeof(err)), 0);
	assert_int_equal(placement_plan(t, &p, threads, over, cpu, err,
					sizeof(err)), want_ret);
}

static void test_compact_fills_a_node_first(void **state)
{
	struct topology t;
	int cpu[512], i;

	fake(&t, 512, 16, -1);
	assert_int_equal(t.nr_nodes, 16);
	assert_int_equal(topology_cpus_on_node(&t, 15), 32);
	plan(&t, "compact", 64, false, cpu, 0);
	for (i = 0; i < 64; i++)
		assert_int_equal(t.cpu_node[cpu[i]], i / 32);
	topology_free(&t);
}

static void test_spread_round_robins_nodes(void **state)
{
	struct topology t;
	int cpu[512], i, seen[512] = { 0 };

	fake(&t, 512, 16, -1);
	plan(&t, "spread", 512, false, cpu, 0);
	for (i = 0; i < 512; i++) {
		assert_int_equal(t.cpu_node[cpu[i]], i % 16);
		assert_int_equal(seen[cpu[i]]++, 0);
	}
	topology_free(&t);
}

static void test_list_keeps_order_and_refuses_absent_cpus(void **state)
{
	struct topology t;
	struct placement p;
	int cpu[4];

	fake(&t, 8, 2, 5);
	plan(&t, "list:6,0,3", 3, false, cpu, 0);
	assert_int_equal(cpu[0], 6);
	assert_int_equal(cpu[1], 0);
	assert_int_equal(cpu[2], 3);
	plan(&t, "list:1,5", 1, false, cpu, -1);
	assert_non_null(strstr(err, "CPU 5 is offline or not in this "
				    "process's affinity mask"));
	plan(&t, "list:1,64", 1, false, cpu, -1);
	assert_int_equal(placement_parse("list:", &p, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--placement=list:"));
	assert_int_equal(placement_parse("list:1,,2", &p, err, sizeof(err)),
			 -1);
	assert_non_null(strstr(err, "--placement=list:1,,2: malformed"));
	assert_int_equal(placement_parse("fill", &p, err, sizeof(err)), -1);
	topology_free(&t);
}

static void test_oversubscription(void **state)
{
	struct topology t;
	int cpu[6];

	fake(&t, 4, 2, -1);
	plan(&t, "compact", 6, false, cpu, -1);
	assert_non_null(strstr(err, "--oversubscribe"));
	plan(&t, "spread", 6, true, cpu, 0);
	assert_int_equal(cpu[4], cpu[0]);
	assert_int_equal(cpu[5], cpu[1]);
	topology_free(&t);
}

static void test_emulated_nodes(void **state)
{
	struct topology t;
	int cpu[6], i;

	fake(&t, 6, 1, -1);
	assert_int_equal(topology_emulate(&t, 3, err, sizeof(err)), 0);
	assert_int_equal(t.nr_nodes, 3);
	assert_int_equal(t.emulated, 3);
	assert_false(t.bind_memory);
	for (i = 0; i < 3; i++)
		assert_int_equal(topology_cpus_on_node(&t, i), 2);
	plan(&t, "spread", 3, false, cpu, 0);
	assert_int_equal(t.cpu_node[cpu[0]], 0);
	assert_int_equal(t.cpu_node[cpu[1]], 1);
	assert_int_equal(t.cpu_node[cpu[2]], 2);
	assert_int_equal(topology_emulate(&t, 7, err, sizeof(err)), -1);
	assert_int_equal(topology_emulate(&t, 0, err, sizeof(err)), -1);
	topology_free(&t);
}

/* CPUs 0..nr-1, CPU i on node[i]. */
static void fake_nodes(struct topology *t, const int *node, int nr)
{
	int *cpu = malloc(nr * sizeof(int)), i;

	for (i = 0; i < nr; i++)
		cpu[i] = i;
	assert_int_equal(topology_init(t, cpu, node, nr, false, err,
				       sizeof(err)), 0);
	free(cpu);
}

/* --cpus=sweep under a placement is exactly want[]. */
static void expect_sweep(const struct topology *t, const char *policy,
			 const int *want, int nr_want)
{
	struct placement p;
	int order[1024], counts[1024], nr, n, i;

	assert_int_equal(placement_parse(policy, &p, err, sizeof(err)), 0);
	nr = placement_order(t, &p, order, err, sizeof(err));
	assert_true(nr > 0);
	n = placement_sweep(t, &p, order, nr, counts);
	assert_int_equal(n, nr_want);
	for (i = 0; i < n; i++)
		assert_int_equal(counts[i], want[i]);
}

/*
 * compact: the powers of two, every node's CPUs in turn (32, 64 ... 480)
 * and 512; spread: the powers of two, 16 (a thread on every node), 512.
 */
static void test_sweep_512_cpus_16_nodes(void **state)
{
	struct topology t;
	int want[32], n = 0, i;

	fake(&t, 512, 16, -1);
	for (i = 1; i < 32; i *= 2)
		want[n++] = i;
	for (i = 32; i <= 512; i += 32)
		want[n++] = i;
	expect_sweep(&t, "compact", want, n);
	expect_sweep(&t, "spread", (int[]){ 1, 2, 4, 8, 16, 32, 64, 128, 256,
					    512 }, 10);
	topology_free(&t);
}

static void test_sweep_6_cpus_3_nodes(void **state)
{
	struct topology t;

	fake(&t, 6, 3, -1);
	expect_sweep(&t, "compact", (int[]){ 1, 2, 4, 6 }, 4);
	expect_sweep(&t, "spread", (int[]){ 1, 2, 3, 4, 6 }, 5);
	topology_free(&t);
}

static void test_sweep_1_and_2_cpus(void **state)
{
	struct topology t;

	fake(&t, 1, 1, -1);
	expect_sweep(&t, "compact", (int[]){ 1 }, 1);
	expect_sweep(&t, "spread", (int[]){ 1 }, 1);
	topology_free(&t);
	fake(&t, 2, 1, -1);
	expect_sweep(&t, "compact", (int[]){ 1, 2 }, 2);
	expect_sweep(&t, "spread", (int[]){ 1, 2 }, 2);
	topology_free(&t);
	fake(&t, 2, 2, -1);
	expect_sweep(&t, "compact", (int[]){ 1, 2 }, 2);
	expect_sweep(&t, "spread", (int[]){ 1, 2 }, 2);
	topology_free(&t);
}

/* Node boundaries follow the placement order, not the CPU ids. */
static void test_sweep_interleaved_numbering(void **state)
{
	struct topology t;
	int node[12], i;

	for (i = 0; i < 12; i++)
		node[i] = i % 2;
	fake_nodes(&t, node, 12);
	/* 0,2,4,6,8,10 then 1,3,...: node 0 ends after 6 */
	expect_sweep(&t, "compact", (int[]){ 1, 2, 4, 6, 8, 12 }, 6);
	expect_sweep(&t, "spread", (int[]){ 1, 2, 4, 8, 12 }, 5);
	/* a list's boundaries are where it changes node: after 3 */
	expect_sweep(&t, "list:0,2,4,1", (int[]){ 1, 2, 3, 4 }, 4);
	topology_free(&t);
}

static void test_sweep_sparse_node_ids(void **state)
{
	struct topology t;

	fake_nodes(&t, (int[]){ 0, 0, 0, 5, 5, 5, 5, 5, 5, 5 }, 10);
	assert_int_equal(t.nr_nodes, 2);
	expect_sweep(&t, "compact", (int[]){ 1, 2, 3, 4, 8, 10 }, 6);
	expect_sweep(&t, "spread", (int[]){ 1, 2, 4, 8, 10 }, 5);
	topology_free(&t);
}

/* A CPU listed twice is oversubscription: refused unless asked for. */
static void test_list_with_a_cpu_twice(void **state)
{
	struct placement p;

	assert_int_equal(placement_parse("list:0,0", &p, err, sizeof(err)), 0);
	assert_int_equal(placement_check(&p, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "--placement=list:0,0: CPU 0 is listed "
				    "twice"));
	assert_non_null(strstr(err, "--oversubscribe"));
	assert_null(strchr(err, '\n'));
	assert_int_equal(placement_check(&p, true, err, sizeof(err)), 0);
	assert_int_equal(placement_parse("list:3,1-4", &p, err, sizeof(err)),
			 0);
	assert_int_equal(placement_check(&p, false, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "CPU 3 is listed twice"));
	assert_int_equal(placement_parse("list:1,0", &p, err, sizeof(err)), 0);
	assert_int_equal(placement_check(&p, false, err, sizeof(err)), 0);
	assert_int_equal(placement_parse("compact", &p, err, sizeof(err)), 0);
	assert_int_equal(placement_check(&p, false, err, sizeof(err)), 0);
}

static void test_this_machine(void **state)
{
	struct topology t;
	int i;

	assert_int_equal(topology_from_system(&t, err, sizeof(err)), 0);
	assert_true(t.nr_cpus >= 1);
	assert_true(t.nr_nodes >= 1);
	for (i = 0; i < t.nr_cpus; i++)
		assert_true(t.cpu_node[t.cpus[i]] >= 0);
	topology_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_compact_fills_a_node_first),
		cmocka_unit_test(test_spread_round_robins_nodes),
		cmocka_unit_test(test_list_keeps_order_and_refuses_absent_cpus),
		cmocka_unit_test(test_oversubscription),
		cmocka_unit_test(test_emulated_nodes),
		cmocka_unit_test(test_sweep_512_cpus_16_nodes),
		cmocka_unit_test(test_sweep_6_cpus_3_nodes),
		cmocka_unit_test(test_sweep_1_and_2_cpus),
		cmocka_unit_test(test_sweep_interleaved_numbering),
		cmocka_unit_test(test_sweep_sparse_node_ids),
		cmocka_unit_test(test_list_with_a_cpu_twice),
		cmocka_unit_test(test_this_machine),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
