// SPDX-License-Identifier: GPL-2.0
/*
 * What a workload calls on its run (kscale.h): its row and knob values,
 * failing it, its counters, moving a thread, the run's CPUs and timings,
 * the clock.  Below the
 * window and beside perf.c and disturb.c, which set counters and fail
 * runs through it too.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernel/sched.h"
#include "../sys/clock.h"
#include "kscale.h"
#include "bench.h"

const char *kscale_variant(const struct kscale_run *run)
{
	return run->bench->row->name;
}

const struct kscale_variant *kscale_row(const struct kscale_run *run)
{
	return run->bench->row;
}

const char *kscale_knob(const struct kscale_run *run, const char *name)
{
	const struct kscale_model *m = run->bench->model;
	int i;

	for (i = 0; i < m->nr_knobs; i++)
		if (!strcmp(m->knobs[i].name, name))
			return run->bench->knob_value[i];
	return NULL;
}

long kscale_knob_long(const struct kscale_run *run, const char *name)
{
	return strtol(kscale_knob(run, name), NULL, 10);
}

unsigned long kscale_knob_ns(const struct kscale_run *run, const char *name,
			     unsigned long measured)
{
	const char *v = kscale_knob(run, name);

	return strcmp(v, "auto") ? strtoul(v, NULL, 10) : measured;
}

int kscale_fail(struct kscale_run *run, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_exchange_n(&run->failed, 1, __ATOMIC_ACQ_REL))
		return -1;
	va_start(ap, fmt);
	vsnprintf(run->error, sizeof(run->error), fmt, ap);
	va_end(ap);
	WRITE_ONCE(run->stop, 1);
	return -1;
}

double kscale_counter(const struct kscale_run *run, const char *name)
{
	int i;

	for (i = 0; i < run->nr_counters; i++)
		if (!strcmp(run->counters[i].name, name))
			return run->counters[i].value;
	return 0;
}

void kscale_set_counter(struct kscale_run *run, const char *name, double v)
{
	int i;

	for (i = 0; i < run->nr_counters; i++)
		if (!strcmp(run->counters[i].name, name))
			break;
	if (i == KSCALE_MAX_COUNTERS) {
		kscale_fail(run, "counter %s: more than %d counters", name,
			    KSCALE_MAX_COUNTERS);
		return;
	}
	run->counters[i].name = name;
	run->counters[i].value = v;
	if (i == run->nr_counters)
		run->nr_counters++;
}

int kscale_migrate(struct kscale_thread *t, int cpu)
{
	if (sched_migrate_task(cpu))
		return kscale_fail(t->run, "cannot move thread %d to CPU %d",
				   t->id, cpu);
	return 0;
}

int kscale_partner_cpu(const struct kscale_thread *t)
{
	const struct kscale_bench *b = t->run->bench;
	int i;

	for (i = 0; i < b->nr_order && b->order[i] != t->cpu; i++)
		;
	return b->order[(i + 1) % b->nr_order];
}

int kscale_nr_usable_cpus(const struct kscale_run *run)
{
	return run->bench->nr_order;
}

int kscale_nr_distinct_cpus(const struct kscale_run *run)
{
	return run->bench->nr_distinct_cpus;
}

double kscale_window_seconds(const struct kscale_run *run)
{
	return run->bench->duration;
}

double kscale_warmup_seconds(const struct kscale_run *run)
{
	return run->bench->warmup;
}

double kscale_now_ns(void)
{
	return now() * 1e9;
}

void kscale_sum_threads(const struct kscale_run *run, size_t offset,
			unsigned long *sum, size_t nr)
{
	const unsigned long *v;
	size_t j;
	int i;

	memset(sum, 0, nr * sizeof(*sum));
	for (i = 0; i < run->nr_threads; i++) {
		v = (const void *)((const char *)run->threads[i].priv + offset);
		for (j = 0; j < nr; j++)
			sum[j] += v[j];
	}
}
