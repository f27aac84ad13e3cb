// SPDX-License-Identifier: GPL-2.0
/*
 * A registered benchmark's own resources (bench.h): the controller's CPU,
 * the gate's lock and the barriers its threads meet at.
 */
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "../kernel/percpu.h"
#include "../sys/topology.h"
#include "bench.h"

static bool runs_a_thread(const struct kscale_bench *b, int cpu)
{
	int i;

	for (i = 0; i < b->nr_threads; i++)
		if (b->cpu_of_thread[i] == cpu)
			return true;
	return false;
}

int kscale_bench_init(struct kscale_bench *b)
{
	const struct topology *t = kscale_topology;
	pthread_condattr_t attr;
	int i;

	b->controller_cpu = -1;
	for (i = t->nr_cpus - 1; i >= 0 && b->controller_cpu < 0; i--)
		if (!runs_a_thread(b, t->cpus[i]))
			b->controller_cpu = t->cpus[i];
	b->arrived = calloc(b->nr_threads, sizeof(*b->arrived));
	b->left = calloc(b->nr_threads, sizeof(*b->left));
	if (!b->arrived || !b->left ||
	    pthread_condattr_init(&attr) ||
	    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC) ||
	    pthread_cond_init(&b->gate_cond, &attr) ||
	    pthread_mutex_init(&b->gate_lock, NULL) ||
	    pthread_barrier_init(&b->threads_met, NULL, b->nr_threads) ||
	    pthread_barrier_init(&b->window_met, NULL, b->nr_threads + 1))
		return -1;
	return 0;
}
