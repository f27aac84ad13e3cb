/* SPDX-License-Identifier: GPL-2.0 */
/* What the validation tests share: a made-up machine, threads to race. */
#ifndef KSCALE_TEST_HELPERS_H
#define KSCALE_TEST_HELPERS_H

#include "../lib/harness/topology.h"

/* nr CPUs in nr_nodes nodes becomes the model's machine (percpu_setup). */
void test_machine(struct topology *t, int nr_cpus, int nr_nodes);

struct test_thread {
	int id;
	void *arg;
};

/*
 * Threads that can race without sharing a CPU: a ticket lock whose next
 * waiter is descheduled stalls everyone (userspace cannot disable
 * preemption), which tests time rather than correctness.
 */
int test_racers(int max);

/* Run fn on nr threads, thread i as CPU i of the test machine. */
void test_race(int nr, void (*fn)(struct test_thread *), void *arg);

#endif
