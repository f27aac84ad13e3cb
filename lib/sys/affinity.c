// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <numa.h>
#include <pthread.h>

#include "affinity.h"

int affinity_possible_cpus(void)
{
	return numa_num_possible_cpus();
}

int affinity_save(struct affinity *a)
{
	int nr = affinity_possible_cpus(), ret;

	a->size = 0;
	a->set = nr > 0 ? CPU_ALLOC(nr) : NULL;
	if (!a->set)
		return -ENOMEM;
	a->size = CPU_ALLOC_SIZE(nr);
	ret = pthread_getaffinity_np(pthread_self(), a->size, a->set);
	if (ret) {
		CPU_FREE(a->set);
		a->set = NULL;
		a->size = 0;
	}
	return -ret;
}

int affinity_pin(int cpu)
{
	size_t size = CPU_ALLOC_SIZE(cpu + 1);
	cpu_set_t *set = CPU_ALLOC(cpu + 1);
	int ret;

	if (!set)
		return -ENOMEM;
	CPU_ZERO_S(size, set);
	CPU_SET_S(cpu, size, set);
	ret = pthread_setaffinity_np(pthread_self(), size, set);
	CPU_FREE(set);
	return -ret;
}

int affinity_restore(struct affinity *a)
{
	int ret;

	if (!a->set)
		return -EINVAL;
	ret = pthread_setaffinity_np(pthread_self(), a->size, a->set);
	CPU_FREE(a->set);
	a->set = NULL;
	a->size = 0;
	return -ret;
}
