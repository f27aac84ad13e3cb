// SPDX-License-Identifier: GPL-2.0
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../lib/kernel/percpu.h"
#include "../lib/kernel/sched.h"
#include "../lib/kernel/tsc.h"
#include "helpers.h"

static void rw_read_data(struct test_rw_check *c)
{
	if (c->data & 1)
		test_note(&c->violations);
}

void test_rw_read(struct test_rw_check *c)
{
	rw_read_data(c);
	__atomic_fetch_add(&c->readers, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&c->writers, __ATOMIC_SEQ_CST))
		test_note(&c->violations);
	cpu_relax();
	__atomic_fetch_sub(&c->readers, 1, __ATOMIC_SEQ_CST);
	rw_read_data(c);
}

void test_rw_write(struct test_rw_check *c)
{
	c->data++;
	if (__atomic_fetch_add(&c->writers, 1, __ATOMIC_SEQ_CST) ||
	    __atomic_load_n(&c->readers, __ATOMIC_SEQ_CST))
		test_note(&c->violations);
	cpu_relax();
	__atomic_fetch_sub(&c->writers, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&c->writes, 1, __ATOMIC_RELAXED);
	c->data++;
}

double test_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

void test_machine(struct topology *t, int nr_cpus, int nr_nodes)
{
	int *cpu = malloc(nr_cpus * sizeof(int));
	int *node = malloc(nr_cpus * sizeof(int));
	char err[128];
	int i;

	for (i = 0; i < nr_cpus; i++) {
		cpu[i] = i;
		node[i] = (int)((long)i * nr_nodes / nr_cpus);
	}
	if (topology_init(t, cpu, node, nr_cpus, false, err, sizeof(err)))
		abort();
	percpu_setup(t);
	kscale_set_cpu(0);
	if (tsc_calibrate(err, sizeof(err)))
		abort();
	sched_init();
	free(cpu);
	free(node);
}

int test_racers(int max)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return cpus < 2 ? 2 : cpus > max ? max : (int)cpus;
}

struct race {
	struct test_thread t;
	void (*fn)(struct test_thread *);
	pthread_barrier_t *start;
};

static void *race_thread(void *arg)
{
	struct race *r = arg;

	kscale_set_cpu(r->t.id);
	pthread_barrier_wait(r->start);
	r->fn(&r->t);
	return NULL;
}

void test_race(int nr, void (*fn)(struct test_thread *), void *arg)
{
	struct race *r = calloc(nr, sizeof(*r));
	pthread_t *tid = calloc(nr, sizeof(*tid));
	pthread_barrier_t start;
	int i;

	pthread_barrier_init(&start, NULL, nr);
	for (i = 0; i < nr; i++) {
		r[i] = (struct race){ { i, arg }, fn, &start };
		if (pthread_create(&tid[i], NULL, race_thread, &r[i]))
			abort();
	}
	for (i = 0; i < nr; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&start);
	free(r);
	free(tid);
}

struct task_race {
	struct test_thread t;
	int cpu;
	void (*fn)(struct test_thread *);
	pthread_barrier_t *start;
};

static void *task_thread(void *arg)
{
	struct task_race *r = arg;

	if (sched_task_start(r->cpu))
		abort();
	pthread_barrier_wait(r->start);
	sched_task_run();
	r->fn(&r->t);
	sched_task_exit();
	return NULL;
}

int test_task_cpus(void)
{
	cpu_set_t set;
	int n = 0;

	if (sched_getaffinity(0, sizeof(set), &set))
		abort();
	while (n < CPU_SETSIZE && CPU_ISSET(n, &set) &&
	       n < kscale_topology->nr_cpu_ids)
		n++;
	return n;
}

void test_race_tasks(int nr, int cpus, void (*fn)(struct test_thread *),
		     void *arg)
{
	struct task_race *r = calloc(nr, sizeof(*r));
	pthread_t *tid = calloc(nr, sizeof(*tid));
	pthread_barrier_t start;
	pthread_attr_t attr;
	int i;

	if (cpus < 1 || cpus > test_task_cpus())
		abort();
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 256 * 1024);
	pthread_barrier_init(&start, NULL, nr);
	for (i = 0; i < nr; i++) {
		r[i] = (struct task_race){ { i, arg }, i % cpus, fn, &start };
		if (pthread_create(&tid[i], &attr, task_thread, &r[i]))
			abort();
	}
	for (i = 0; i < nr; i++)
		pthread_join(tid[i], NULL);
	pthread_barrier_destroy(&start);
	pthread_attr_destroy(&attr);
	free(r);
	free(tid);
}

int test_variant_table(const struct kscale_variant_table *t)
{
	char err[256];

	if (kscale_variant_table_check(t, err, sizeof(err)))
		fail_msg("%s", err);
	return 0;
}
