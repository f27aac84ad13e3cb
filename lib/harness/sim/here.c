// SPDX-License-Identifier: GPL-2.0
/*
 * `--sim=here`: this machine as the simulator's machine, every figure
 * measured now (built without the simulator's instrumentation, so that
 * its loads and stores are the host's own):
 *  - line_ns_*: linelat's ping-pong (linelat.h), half a round trip;
 *  - hit_ns: what a load from a line in L1 adds to a loop of them: its
 *    throughput, not its latency, as a core overlaps the loads the
 *    simulator charges one after another;
 *  - atomic_ns: a locked add to a line this CPU holds, less a hit;
 *  - mem_ns_local: a chase through a random cycle of 64 MiB of lines;
 *  - wake_ns: what the model scheduler's wake-up costs here: a futex wake
 *    to a thread asleep on another CPU until it runs, half a round trip
 *    of two threads waking each other (lib/kernel/sched.c's
 *    wake_up_process() and sleep_until_woken()); and wake_curve, the
 *    same from the FUTEX_WAKE to the sleeper's first instruction after
 *    its CPU has idled 2 us to 1 ms (here, under haltpoll: 8 us after
 *    2 us, 30 us after 1 ms);
 *  - ctxsw_ns: one sched_yield() from one thread to another on one CPU
 *    (the model scheduler's switch at a preemption point);
 *  - for every machine, what the model's own instructions cost here
 *    (sim_host_work()): a 4 KiB memcpy from a random block of 64 MiB (the
 *    models' copies and clears: fio's blocks of its file, a fresh page),
 *    an ordered cycle-counter read (their profiling), a clock_gettime()
 *    (their jiffies).
 * Each is the median of HERE_ROUNDS rounds, and a figure of
 * --calibration's file (kscale_calibrated_figure()): "sim.here.NAME" and
 * "sim.host.NAME" ("sim.here.wake_ns.idle_ns=IDLE" for wake_curve),
 * reused when the file has it.  A machine with one node has no remote
 * figures ("none"); with more, the remote memory figure is the local one
 * plus the remote transfer's excess over the node's, an estimate.
 */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../../sys/affinity.h"
#include "../../sys/clock.h"
#include "../../sys/futex.h"
#include "../../sys/median.h"
#include "../calibrate.h"
#include "../kscale.h"
#include "../linelat.h"
#include "here.h"

#define HERE_ROUNDS	7

/* What a measure of here needs: CPUs, and figures measured before it. */
struct here {
	int a, b;		/* the CPU measured on, and another (or a) */
	int pair;		/* a's partner of the line_ns_* being measured */
	double hit_ns;		/* what atomic_ns leaves out */
	double idle_ns;		/* the wake-up's idle before it (wake_curve) */
	double (*once)(const struct here *h);	/* one round, or -1 */
	int rounds;		/* of once(): their median */
};

static double hit_ns(const struct here *h)
{
	static volatile int word __attribute__((aligned(64)));
	long i, n = 4000000;
	double t = thread_now_ns();

	for (i = 0; i < n; i++)
		(void)word;
	return (thread_now_ns() - t) / n;
}

static double atomic_ns(const struct here *h)
{
	static int word __attribute__((aligned(64)));
	long i, n = 2000000;
	double t = thread_now_ns();

	for (i = 0; i < n; i++)
		__asm__ __volatile__("lock; addl $1, %0" : "+m"(word) :: "memory");
	t = (thread_now_ns() - t) / n - h->hit_ns;
	return t > 0 ? t : 0;
}

/* A 4 KiB block from anywhere in 64 MiB into a buffer in L1. */
static double copy_ns_per_kib(const struct here *h)
{
	static char to[4096] __attribute__((aligned(64)));
	size_t size = 64 << 20, blocks = size / sizeof(to);
	char *from = aligned_alloc(4096, size);
	double v[HERE_ROUNDS], t;
	uint64_t x = 1;
	int i, j, n = 4000;

	if (!from)
		return -1;
	memset(from, 1, size);
	for (i = 0; i < HERE_ROUNDS; i++) {
		t = thread_now_ns();
		for (j = 0; j < n; j++) {
			x = x * 6364136223846793005ull + 1442695040888963407ull;
			memcpy(to, from + (x >> 33) % blocks * sizeof(to),
			       sizeof(to));
			__asm__ __volatile__("" :: "r"(to) : "memory");
		}
		v[i] = (thread_now_ns() - t) / n / (sizeof(to) / 1024);
	}
	free(from);
	return kscale_median(v, HERE_ROUNDS);
}

static double rdtsc_once(const struct here *h)
{
	uint32_t lo, hi, sum = 0;
	int j, n = 200000;
	double t = thread_now_ns();

	for (j = 0; j < n; j++) {
		__asm__ __volatile__("lfence; rdtsc" : "=a"(lo), "=d"(hi) ::
				     "memory");
		sum += lo ^ hi;
	}
	__asm__ __volatile__("" :: "r"(sum));
	return (thread_now_ns() - t) / n;
}

static double clock_once(const struct here *h)
{
	struct timespec ts;
	int j, n = 200000;
	double t = thread_now_ns();

	for (j = 0; j < n; j++)
		clock_gettime(CLOCK_MONOTONIC, &ts);
	return (thread_now_ns() - t) / n;
}

/* kscale_calibrated_figure()'s measure: the median of h's rounds. */
static int measure(void *arg, double *v, char *err, size_t len)
{
	const struct here *h = arg;
	double sample[HERE_ROUNDS];
	int i;

	for (i = 0; i < h->rounds; i++) {
		sample[i] = h->once(h);
		if (sample[i] < 0) {
			snprintf(err, len, "out of memory or a CPU refused");
			return -1;
		}
	}
	*v = kscale_median(sample, h->rounds);
	return 0;
}

/* The figure "sim.<name>" into *v: of the file, or the median of rounds. */
static int figure(const char *name, double (*once)(const struct here *),
		  int rounds, struct here *h, double *v, char *err,
		  size_t len)
{
	char key[128];

	snprintf(key, sizeof(key), "sim.%s", name);
	h->once = once;
	h->rounds = rounds;
	return kscale_calibrated_figure(key, v, measure, h, err, len);
}

int sim_host_work(struct sim_machine *m, char *err, size_t len)
{
	struct here h = { 0 };

	/* copy_ns_per_kib() takes its own median */
	return figure("host.copy_ns_per_kib", copy_ns_per_kib, 1, &h,
		      &m->copy_ns_per_kib, err, len) ||
	       figure("host.rdtsc_ns", rdtsc_once, HERE_ROUNDS, &h,
		      &m->rdtsc_ns, err, len) ||
	       figure("host.clock_ns", clock_once, HERE_ROUNDS, &h,
		      &m->clock_ns, err, len) ? -1 : 0;
}

static double mem_ns(const struct here *h)
{
	size_t lines = (64 << 20) / 64, i, j, *perm;
	char *buf = aligned_alloc(64, lines * 64);
	long n = 2000000, k;
	void **p;
	double t;

	perm = malloc(lines * sizeof(*perm));
	if (!buf || !perm) {
		free(buf);
		free(perm);
		return -1;
	}
	for (i = 0; i < lines; i++)
		perm[i] = i;
	srand(1);
	for (i = lines - 1; i > 0; i--) {
		j = (size_t)rand() % (i + 1);
		k = perm[i];
		perm[i] = perm[j];
		perm[j] = k;
	}
	for (i = 0; i < lines; i++)
		*(void **)(buf + perm[i] * 64) = buf + perm[(i + 1) % lines] * 64;
	p = (void **)(buf + perm[0] * 64);
	t = thread_now_ns();
	for (k = 0; k < n; k++)
		p = *p;
	t = (thread_now_ns() - t) / n;
	__asm__ __volatile__("" :: "r"(p));
	free(perm);
	free(buf);
	return t;
}

struct pair {
	int cpu[2];
	uint32_t turn __attribute__((aligned(64)));
	long rounds;
	bool yield;
	int failed;
};

static void *pair_side(struct pair *p, int me)
{
	long i;

	if (affinity_pin(p->cpu[me])) {
		__atomic_store_n(&p->failed, 1, __ATOMIC_RELEASE);
		return NULL;
	}
	for (i = 0; i < p->rounds; i++) {
		while (__atomic_load_n(&p->turn, __ATOMIC_ACQUIRE) !=
		       (uint32_t)me) {
			if (__atomic_load_n(&p->failed, __ATOMIC_ACQUIRE))
				return NULL;
			if (p->yield)
				sched_yield();
			else
				futex(&p->turn, FUTEX_WAIT_BITSET, !me, NULL);
		}
		__atomic_store_n(&p->turn, !me, __ATOMIC_RELEASE);
		if (!p->yield)
			futex(&p->turn, FUTEX_WAKE, 1, NULL);
	}
	return NULL;
}

static void *pair_partner(void *arg)
{
	return pair_side(arg, 1);
}

/* ns a hand-over between two threads on cpu a and b, or -1. */
static double handover_ns(int a, int b, bool yield)
{
	struct pair *p = aligned_alloc(64, sizeof(*p));
	pthread_t partner;
	double t;

	memset(p, 0, sizeof(*p));
	p->cpu[0] = a;
	p->cpu[1] = b;
	p->rounds = yield ? 20000 : 2000;
	p->yield = yield;
	if (pthread_create(&partner, NULL, pair_partner, p)) {
		free(p);
		return -1;
	}
	t = now_ns();
	pair_side(p, 0);
	pthread_join(partner, NULL);
	t = (now_ns() - t) / (2 * p->rounds);
	if (p->failed)
		t = -1;
	free(p);
	return t;
}

/* ctxsw_ns's round: sched_yield() between two threads on a. */
static double yield_once(const struct here *h)
{
	return handover_ns(h->a, h->a, true);
}

/* wake_ns's round: futex wake-ups between a thread on a and one on b. */
static double wake_once(const struct here *h)
{
	return handover_ns(h->a, h->b, false);
}

/* The wake-up after an idle of each of these (ns): wake_curve. */
static const double wake_idle_ns[] = { 2000, 10000, 50000, 200000, 1000000 };
#define WAKES_A_ROUND	50

struct waker {
	int cpu;
	uint32_t word __attribute__((aligned(64)));
	uint64_t woke;			/* ns, the sleeper's clock */
	bool asleep, stop, failed;
};

static void *wake_sleeper(void *arg)
{
	struct waker *w = arg;

	if (affinity_pin(w->cpu)) {
		__atomic_store_n(&w->failed, true, __ATOMIC_RELEASE);
		return NULL;
	}
	for (;;) {
		__atomic_store_n(&w->asleep, true, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&w->word, __ATOMIC_ACQUIRE))
			futex(&w->word, FUTEX_WAIT_BITSET, 0, NULL);
		__atomic_store_n(&w->woke, (uint64_t)now_ns(), __ATOMIC_RELEASE);
		__atomic_store_n(&w->word, 0, __ATOMIC_RELEASE);
		if (__atomic_load_n(&w->stop, __ATOMIC_ACQUIRE))
			return NULL;
	}
}

/*
 * What a futex wake-up of a thread asleep on CPU h->b costs, from the
 * FUTEX_WAKE to its first instruction, after its CPU has been idle for
 * h->idle_ns: a guest's idle loop may poll first (haltpoll), a machine's
 * go deeper the longer it waits.  The median of HERE_ROUNDS rounds, or -1
 * if a CPU refused.
 */
static double wake_after_idle(const struct here *h)
{
	struct waker *w = aligned_alloc(64, sizeof(*w));
	double v[HERE_ROUNDS], t, sent, sum;
	pthread_t sleeper;
	int i, j;

	memset(w, 0, sizeof(*w));
	w->cpu = h->b;
	if (pthread_create(&sleeper, NULL, wake_sleeper, w)) {
		free(w);
		return -1;
	}
	for (i = 0; i < HERE_ROUNDS && !w->failed; i++) {
		for (sum = 0, j = 0; j < WAKES_A_ROUND; j++) {
			while (!__atomic_load_n(&w->asleep, __ATOMIC_ACQUIRE) &&
			       !__atomic_load_n(&w->failed, __ATOMIC_ACQUIRE))
				;
			__atomic_store_n(&w->asleep, false, __ATOMIC_RELEASE);
			t = now_ns();
			while (now_ns() < t + h->idle_ns)
				;
			__atomic_store_n(&w->woke, 0, __ATOMIC_RELEASE);
			sent = now_ns();
			__atomic_store_n(&w->word, 1, __ATOMIC_RELEASE);
			futex(&w->word, FUTEX_WAKE, 1, NULL);
			while (!__atomic_load_n(&w->woke, __ATOMIC_ACQUIRE) &&
			       !__atomic_load_n(&w->failed, __ATOMIC_ACQUIRE))
				;
			sum += (double)w->woke - sent;
		}
		v[i] = sum / WAKES_A_ROUND;
	}
	while (!__atomic_load_n(&w->asleep, __ATOMIC_ACQUIRE) && !w->failed)
		;
	__atomic_store_n(&w->stop, true, __ATOMIC_RELEASE);
	__atomic_store_n(&w->word, 1, __ATOMIC_RELEASE);
	futex(&w->word, FUTEX_WAKE, 1, NULL);
	pthread_join(sleeper, NULL);
	t = w->failed ? -1 : kscale_median(v, HERE_ROUNDS);
	free(w);
	return t;
}

/* line_ns_*'s round: linelat's ping-pong between a and its partner. */
static double line_once(const struct here *h)
{
	return linelat_pingpong(h->a, h->pair);
}

/* line_ns_*: the pair's, or NAN where this machine has no such pair. */
static int line_figure(const char *name, int pair, struct here *h,
		       double *v, char *err, size_t len)
{
	h->pair = pair;
	*v = NAN;
	/* linelat_pingpong() takes its own median */
	return pair < 0 ? 0 : figure(name, line_once, 1, h, v, err, len);
}

/* The figures measured pinned to a (wake-ups from a). */
static int pinned_figures(const struct topology *t, struct sim_machine *m,
			  struct here *h, char *err, size_t len)
{
	char name[64];
	size_t i;

	if (figure("here.hit_ns", hit_ns, HERE_ROUNDS, h, &m->hit_ns, err,
		   len))
		return -1;
	h->hit_ns = m->hit_ns;
	if (figure("here.atomic_ns", atomic_ns, HERE_ROUNDS, h,
		   &m->atomic_ns, err, len) ||
	    figure("here.mem_ns_local", mem_ns, 1, h, &m->mem_ns_local, err,
		   len) ||
	    figure("here.ctxsw_ns", yield_once, HERE_ROUNDS, h, &m->ctxsw_ns,
		   err, len) ||
	    figure("here.wake_ns", wake_once, HERE_ROUNDS, h, &m->wake_ns,
		   err, len))
		return -1;
	if (t->nr_cpus < 2)
		return 0;
	for (i = 0; i < ARRAY_SIZE(wake_idle_ns); i++) {
		h->idle_ns = wake_idle_ns[i];
		snprintf(name, sizeof(name), "here.wake_ns.idle_ns=%.0f",
			 wake_idle_ns[i]);
		m->wake_idle_ns[i] = wake_idle_ns[i];
		/* wake_after_idle() takes its own median */
		if (figure(name, wake_after_idle, 1, h, &m->wake_at_ns[i], err,
			   len))
			return -1;
	}
	m->nr_wake = i;
	return 0;
}

int sim_machine_here(const struct topology *t, struct sim_machine *m,
		     char *err, size_t len)
{
	int b[NR_PAIRS], ret;
	struct here h = { .a = t->cpus[0] };
	long l1 = sysconf(_SC_LEVEL1_DCACHE_LINESIZE);
	struct affinity saved;

	memset(m, 0, sizeof(*m));
	snprintf(m->name, sizeof(m->name), "here");
	m->cpus = t->nr_cpus;
	m->nodes = t->emulated ? 1 : t->nr_nodes;
	m->threads_per_core = linelat_threads_per_core(t);
	if (m->cpus % m->nodes || (m->cpus / m->nodes) % m->threads_per_core) {
		snprintf(err, len, "here: %d CPUs on %d nodes, %d threads a "
			 "core: not a machine the simulator can lay out",
			 m->cpus, m->nodes, m->threads_per_core);
		return -1;
	}
	m->line_bytes = l1 > 0 ? l1 : 64;
	h.b = t->nr_cpus > 1 ? t->cpus[1] : h.a;
	linelat_pairs(t, h.a, b);
	if (line_figure("here.line_ns_smt", b[PAIR_SMT], &h, &m->line_ns_smt,
			err, len) ||
	    line_figure("here.line_ns_node", b[PAIR_NODE], &h,
			&m->line_ns_node, err, len) ||
	    line_figure("here.line_ns_remote", b[PAIR_REMOTE], &h,
			&m->line_ns_remote, err, len))
		return -1;
	if (isnan(m->line_ns_node))
		m->line_ns_node = m->line_ns_smt;
	if (isnan(m->line_ns_node))
		m->line_ns_node = 0;	/* one CPU: no transfer ever happens */
	if (affinity_save(&saved) || affinity_pin(h.a)) {
		snprintf(err, len, "here: cannot pin to CPU %d", h.a);
		return -1;
	}
	ret = pinned_figures(t, m, &h, err, len);
	affinity_restore(&saved);
	if (ret)
		return -1;
	m->mem_ns_remote = isnan(m->line_ns_remote) ? NAN :
		m->mem_ns_local + m->line_ns_remote - m->line_ns_node;
	m->ghz = 0;	/* work is this machine's own: work_scale 1 */
	return 0;
}
