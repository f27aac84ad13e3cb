// SPDX-License-Identifier: GPL-2.0
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>

#include "../kernel/percpu.h"
#include "../kernel/sched.h"
#include "calibrate.h"
#include "kscale.h"
#include "topology.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* ns per operation, or -1 if a round failed. */
double kscale_calibrate(long (*round)(void *arg), void *arg)
{
	size_t size = CPU_ALLOC_SIZE(kscale_topology->nr_cpu_ids);
	cpu_set_t *saved = CPU_ALLOC(kscale_topology->nr_cpu_ids);
	double ns[CALIBRATE_ROUNDS], t0, ret = -1;
	long ops;
	int i;

	pthread_getaffinity_np(pthread_self(), size, saved);
	sched_migrate_task(sched_getcpu());
	t0 = kscale_now_ns();
	do {
		if (round(arg) < 0)
			goto out;
	} while (kscale_now_ns() - t0 < CALIBRATE_WARMUP_NS);
	for (i = 0; i < CALIBRATE_ROUNDS; i++) {
		t0 = kscale_now_ns();
		ops = round(arg);
		if (ops <= 0)
			goto out;
		ns[i] = (kscale_now_ns() - t0) / ops;
	}
	qsort(ns, CALIBRATE_ROUNDS, sizeof(ns[0]), cmp_double);
	ret = ns[CALIBRATE_ROUNDS / 2];
out:
	pthread_setaffinity_np(pthread_self(), size, saved);
	CPU_FREE(saved);
	return ret;
}
