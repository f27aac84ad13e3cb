// SPDX-License-Identifier: GPL-2.0
#include <numa.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../kernel/compiler.h"
#include "../sys/clock.h"
#include "../sys/affinity.h"
#include "../sys/cpulist.h"
#include "../sys/median.h"
#include "kscale.h"
#include "linelat.h"

/*
 * A pair that has not finished in this long gives up ("none (timed
 * out)"): a vCPU the hypervisor does not run stalls the other side.  The
 * three pairs take some 5 ms here; 64 vCPUs on one thread of qemu's TCG,
 * which runs the other side only when this side pauses, take longer.
 */
#define PINGPONG_BUDGET_NS	1e9

/*
 * A side that has spun this many loads for the other's value is not
 * seeing a transfer (some 100 ns) but a CPU the other side is not running
 * on: it pauses once, which lets a hypervisor run the other (KVM's
 * pause-loop exiting; single-threaded TCG runs its next vCPU only then).
 */
#define PINGPONG_PATIENCE	1024

struct pingpong {
	uint32_t value ____cacheline_aligned;	/* the line bounced */
	int cpu[2] ____cacheline_aligned;	/* initiator, partner */
	bool ready, stop, failed;
	double sample[PINGPONG_ROUNDS];		/* ns one way */
};

/*
 * Spin without cpu_relax() but every PINGPONG_PATIENCE loads: a pause
 * would add its own latency (some 140 cycles on recent x86) to every
 * transfer seen.
 */
static void *partner(void *arg)
{
	struct pingpong *p = arg;
	unsigned long spins = 0;
	uint32_t want = 1;

	if (affinity_pin(p->cpu[1])) {
		WRITE_ONCE(p->failed, true);
		return NULL;
	}
	__atomic_store_n(&p->ready, true, __ATOMIC_RELEASE);
	for (;;) {
		while (__atomic_load_n(&p->value, __ATOMIC_ACQUIRE) != want) {
			if (READ_ONCE(p->stop))
				return NULL;
			if (!(++spins % PINGPONG_PATIENCE))
				cpu_relax();
		}
		__atomic_store_n(&p->value, want + 1, __ATOMIC_RELEASE);
		want += 2;
	}
}

/* Wait for value, giving up at the deadline (checked now and then). */
static bool await(struct pingpong *p, uint32_t value, double deadline)
{
	unsigned long spins = 0;

	while (__atomic_load_n(&p->value, __ATOMIC_ACQUIRE) != value) {
		if (++spins % PINGPONG_PATIENCE)
			continue;
		if (now_ns() > deadline || READ_ONCE(p->failed))
			return false;
		cpu_relax();
	}
	return true;
}

static void *initiator(void *arg)
{
	struct pingpong *p = arg;
	double deadline = now_ns() + PINGPONG_BUDGET_NS, t0;
	uint32_t v = 0;
	int r, i;

	if (affinity_pin(p->cpu[0]))
		goto failed;
	while (!__atomic_load_n(&p->ready, __ATOMIC_ACQUIRE)) {
		if (READ_ONCE(p->failed) || now_ns() > deadline)
			goto failed;
		cpu_relax();
	}
	for (r = -1; r < PINGPONG_ROUNDS; r++) {
		t0 = now_ns();
		for (i = 0; i < PINGPONG_TRIPS; i++, v += 2) {
			__atomic_store_n(&p->value, v + 1, __ATOMIC_RELEASE);
			if (!await(p, v + 2, deadline))
				goto failed;
		}
		if (r >= 0)
			p->sample[r] = (now_ns() - t0) / (2.0 * PINGPONG_TRIPS);
	}
	WRITE_ONCE(p->stop, true);
	return NULL;
failed:
	WRITE_ONCE(p->failed, true);
	WRITE_ONCE(p->stop, true);
	return NULL;
}

double linelat_pingpong(int a, int b)
{
	struct pingpong *p = aligned_alloc(SMP_CACHE_BYTES, sizeof(*p));
	pthread_t thread[2];
	double ns = -1;

	if (!p)
		return -1;
	memset(p, 0, sizeof(*p));
	p->cpu[0] = a;
	p->cpu[1] = b;
	if (pthread_create(&thread[1], NULL, partner, p)) {
		free(p);
		return -1;
	}
	if (pthread_create(&thread[0], NULL, initiator, p)) {
		WRITE_ONCE(p->failed, true);
		WRITE_ONCE(p->stop, true);
	} else {
		pthread_join(thread[0], NULL);
	}
	pthread_join(thread[1], NULL);
	if (!p->failed) {
		ns = kscale_median(p->sample, PINGPONG_ROUNDS);
	}
	free(p);
	return ns;
}

/* cpu's SMT siblings, itself included (sysfs); one if sysfs says nothing. */
static int siblings(int cpu, int **list)
{
	char path[96], buf[256], err[128];
	FILE *f;
	int nr;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/topology/"
		 "thread_siblings_list", cpu);
	f = fopen(path, "r");
	if (!f || !fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	if (f)
		fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	if (!buf[0] || cpulist_parse(buf, NULL, true, list, &nr, err,
				     sizeof(err))) {
		*list = malloc(sizeof(int));
		(*list)[0] = cpu;
		return 1;
	}
	return nr;
}

static bool listed(int cpu, const int *list, int nr)
{
	int i;

	for (i = 0; i < nr; i++)
		if (list[i] == cpu)
			return true;
	return false;
}

static int real_node(int cpu)
{
	int node = numa_available() >= 0 ? numa_node_of_cpu(cpu) : 0;

	return node < 0 ? 0 : node;
}

static const char *const pair_name[NR_PAIRS] = { "smt", "node", "remote" };

void linelat_pairs(const struct topology *t, int a, int *b)
{
	int *sib, nr_sib = siblings(a, &sib), i, cpu;

	for (i = 0; i < NR_PAIRS; i++)
		b[i] = -1;
	for (i = 0; i < t->nr_cpus; i++) {
		cpu = t->cpus[i];
		if (cpu == a)
			continue;
		if (listed(cpu, sib, nr_sib)) {
			if (b[PAIR_SMT] < 0)
				b[PAIR_SMT] = cpu;
		} else if (real_node(cpu) == real_node(a)) {
			if (b[PAIR_NODE] < 0)
				b[PAIR_NODE] = cpu;
		} else if (b[PAIR_REMOTE] < 0) {
			b[PAIR_REMOTE] = cpu;
		}
	}
	free(sib);
}

int linelat_threads_per_core(const struct topology *t)
{
	int i, nr, max = 1, *sib;

	for (i = 0; i < t->nr_cpus; i++) {
		nr = siblings(t->cpus[i], &sib);
		free(sib);
		max = nr > max ? nr : max;
	}
	return max;
}

void linelat_record(const struct topology *t, const char *prog)
{
	char key[32], value[64], pairs[128] = "", said[256] = "";
	int a = t->cpus[0], b[NR_PAIRS], i;
	size_t off = 0, told = 0;
	double ns;

	linelat_pairs(t, a, b);
	for (i = 0; i < NR_PAIRS; i++) {
		ns = -1;
		if (i == PAIR_REMOTE && t->emulated)
			snprintf(value, sizeof(value), "none (nodes emulated)");
		else if (b[i] < 0)
			snprintf(value, sizeof(value), "none");
		else if ((ns = linelat_pingpong(a, b[i])) < 0)
			snprintf(value, sizeof(value), "none (timed out)");
		else
			snprintf(value, sizeof(value), "%.1f", ns);
		snprintf(key, sizeof(key), "line_ns_%s", pair_name[i]);
		kscale_add_context(key, "%s", value);
		if (ns >= 0)
			off += snprintf(pairs + off, sizeof(pairs) - off,
					"%s%s %d-%d", off ? ", " : "",
					pair_name[i], a, b[i]);
		told += snprintf(said + told, sizeof(said) - told, "%s%s %s%s",
				 told ? ", " : "", pair_name[i], value,
				 ns >= 0 ? " ns" : "");
	}
	kscale_add_context("line_pairs", "%s", off ? pairs : "none");
	kscale_add_context("threads_per_core", "%d",
			   linelat_threads_per_core(t));
	fprintf(stderr, "%s: cache-line transfer, one way: %s\n", prog, said);
}
