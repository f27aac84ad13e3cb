// SPDX-License-Identifier: GPL-2.0
/* kscale sim's engine: contexts, virtual time, the coherence model (sim.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "../kernel/sched.h"
#include "../kernel/tsc.h"
#include "sim.h"

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>
#endif

/* the engine's own copies are not the model's work (instrument.h) */
#undef memcpy
#undef memset

#define SIM_STACK_SIZE		(256 << 10)
#define SIM_GUARD_SIZE		(4 << 10)
#define SIM_WATCH		4	/* lines a spin watches */
#define SIM_GRACE		4	/* lines a CPU can be losing at once */
#define PS			1000ull	/* the clocks count picoseconds */
#define SIM_SPIN_TIMEOUT	(10000 * PS)	/* a spin looks again this often */
#define SIM_PAUSE		(10 * PS)	/* a cpu_relax() that does not park */
#define SIM_CLOCK_POLL		(500 * PS)	/* a spin that reads the clock */

enum { CPU_RUN, CPU_SPIN, CPU_IDLE };
enum { TASK_SIM_RUNNABLE, TASK_SIM_SLEEPING, TASK_SIM_DEAD };
enum { EV_CPU, EV_SPIN, EV_TIMER, EV_TICK };

struct sim_line;

struct sim_watch {
	struct sim_watch *next, *prev;
	struct sim_cpu *cpu;
	struct sim_line *line;
};

struct sim_line {
	uintptr_t tag;			/* line number + 1; 0: a free slot */
	uint64_t busy_until;		/* its last transfer ends */
	uint64_t version;		/* writes to it */
	uint64_t misses;		/* accesses that moved or filled it */
	int owner;			/* holds it Modified; -1: none */
	int home;			/* node of its memory */
	int nr_sharers;
	struct sim_watch *watchers;
	uint64_t sharers[];		/* holds it Shared */
};

struct sim_task {
	void *sp;
	void *stack;
	void (*fn)(void *);
	void *arg;
	struct sim_cpu *cpu;
	struct sim_task *rq_next;
	struct sim_task *all_next, **all_prev;	/* every task not freed */
	int state;
	int id;
	bool wake_pending;		/* woken on its way to sim_sleep() */
	uint64_t sleep_gen;
	uint64_t run_ns, since;		/* ps on a CPU */
	unsigned char *tls;
	struct task_struct ts;
};

struct sim_cpu {
	uint64_t clock;			/* ps */
	uint64_t idle, idle_since;	/* ps */
	uint64_t slice_start;
	int id, node, core;
	int state;
	int nr_queued;
	struct sim_task *curr;
	struct sim_task *rq_head, *rq_tail;
	struct sim_line *reads[SIM_WATCH];
	uint64_t read_version[SIM_WATCH];
	int nr_reads;
	bool read_clock;		/* since its last cpu_relax() */
	struct sim_watch watch[SIM_WATCH];
	struct {
		struct sim_line *line;	/* lost, but hit until until */
		uint64_t until;
	} grace[SIM_GRACE];
	uint64_t spin_gen, tick_gen;
};

struct sim_event {
	uint64_t t, tie, seq;
	uint64_t gen;
	void *p;
	int type;
};

struct sim_home {
	uintptr_t start, end;
	int node;
};

static struct sim {
	struct sim_machine m;
	int line_shift, words;
	uint64_t rand;
	struct sim_cpu *cpus;
	/* the event queue: a binary heap on (t, tie, seq) */
	struct sim_event *heap;
	size_t nr_events, heap_size;
	uint64_t seq;
	uint64_t horizon;		/* the earliest event not running */
	uint64_t ev_now;		/* the event being dispatched */
	/* lines: open addressing into chunks that never move */
	unsigned char **chunks;
	size_t line_size, nr_lines, nr_chunks;
	uint32_t *table;		/* 1 << table_bits slots */
	int table_bits;
	struct sim_home *homes;
	size_t nr_homes, homes_cap;
	int nr_tasks, next_id;
	void *sched_sp;
	struct sim_task *running;
	struct sim_task *tls_owner;
	struct sim_task host;
	size_t tls_size;
	struct sim_task *dead;
	struct sim_task *all;
	uint64_t code_mark;		/* sim_code_blocks() charged so far */
	struct sim_stats stats;
} sim;

/*
 * The scheduler's tick (sim_set_tick()): set once for every run, so not in
 * sim, which sim_exit() clears after each.
 */
static struct {
	void (*fn)(int cpu);
	uint64_t slice;			/* ps */
	uint64_t lone;			/* ps: a lone task's tick, or 0 */
} tick;

struct sim_cpu *sim_cpu_running;

extern void sim_switch(void **save, void *to);

/* The model's thread-locals (instrument.h puts every __thread here). */
extern unsigned char __start_kscale_tls[] __attribute__((weak));
extern unsigned char __stop_kscale_tls[] __attribute__((weak));

static uint64_t sim_rand(void)
{
	sim.rand ^= sim.rand << 13;
	sim.rand ^= sim.rand >> 7;
	sim.rand ^= sim.rand << 17;
	return sim.rand;
}

static void *out_of_memory(void *p)
{
	if (!p) {
		fprintf(stderr, "kscale sim: out of memory\n");
		abort();
	}
	return p;
}

static void *xcalloc(size_t n, size_t size)
{
	return out_of_memory(calloc(n, size));
}

static void *xrealloc(void *p, size_t n, size_t size)
{
	return out_of_memory(realloc(p, n * size));
}

/* --- events --------------------------------------------------------- */

static bool ev_before(const struct sim_event *a, const struct sim_event *b)
{
	if (a->t != b->t)
		return a->t < b->t;
	if (a->tie != b->tie)
		return a->tie < b->tie;
	return a->seq < b->seq;
}

static void ev_push(int type, uint64_t t, void *p, uint64_t gen)
{
	struct sim_event e = { t, sim_rand(), sim.seq++, gen, p, type };
	size_t i;

	if (sim.nr_events == sim.heap_size) {
		sim.heap_size = sim.heap_size ? 2 * sim.heap_size : 1024;
		sim.heap = xrealloc(sim.heap, sim.heap_size, sizeof(e));
	}
	for (i = sim.nr_events++; i; i = (i - 1) / 2) {
		if (!ev_before(&e, &sim.heap[(i - 1) / 2]))
			break;
		sim.heap[i] = sim.heap[(i - 1) / 2];
	}
	sim.heap[i] = e;
	if (t < sim.horizon)
		sim.horizon = t;
}

static struct sim_event ev_pop(void)
{
	struct sim_event top = sim.heap[0], last = sim.heap[--sim.nr_events];
	size_t i = 0, c;

	while ((c = 2 * i + 1) < sim.nr_events) {
		if (c + 1 < sim.nr_events && ev_before(&sim.heap[c + 1],
						       &sim.heap[c]))
			c++;
		if (!ev_before(&sim.heap[c], &last))
			break;
		sim.heap[i] = sim.heap[c];
		i = c;
	}
	sim.heap[i] = last;
	return top;
}

/* --- contexts ------------------------------------------------------- */

#ifdef __SANITIZE_ADDRESS__
static const void *host_stack_bottom;
static size_t host_stack_size;
#endif

static void tls_load(struct sim_task *t)
{
	if (sim.tls_owner == t || !sim.tls_size)
		return;
	memcpy(sim.tls_owner->tls, __start_kscale_tls, sim.tls_size);
	memcpy(__start_kscale_tls, t->tls, sim.tls_size);
	sim.tls_owner = t;
}

/* From the scheduler's context into t's, until t gives the CPU back. */
static void run_task(struct sim_task *t)
{
#ifdef __SANITIZE_ADDRESS__
	void *fake;
#endif

	tls_load(t);
	sim.running = t;
	sim.stats.switches++;
	sim.code_mark = sim_code_blocks();	/* the host's are not t's */
#ifdef __SANITIZE_ADDRESS__
	__sanitizer_start_switch_fiber(&fake, (char *)t->stack + SIM_GUARD_SIZE,
				       SIM_STACK_SIZE);
#endif
	sim_switch(&sim.sched_sp, t->sp);
#ifdef __SANITIZE_ADDRESS__
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
	sim.running = NULL;
}

/* Back to the scheduler's context; returns when the task runs again. */
static void to_sched(void)
{
	struct sim_task *t = sim.running;
#ifdef __SANITIZE_ADDRESS__
	void *fake;

	__sanitizer_start_switch_fiber(t->state == TASK_SIM_DEAD ? NULL : &fake,
				       host_stack_bottom, host_stack_size);
#endif
	sim_switch(&t->sp, sim.sched_sp);
#ifdef __SANITIZE_ADDRESS__
	__sanitizer_finish_switch_fiber(fake, NULL, NULL);
#endif
}

static void cpu_next(struct sim_cpu *c);
static void code_charge(struct sim_cpu *c);

static void task_entry(void)
{
	struct sim_task *t = sim.running;

#ifdef __SANITIZE_ADDRESS__
	__sanitizer_finish_switch_fiber(NULL, &host_stack_bottom,
					&host_stack_size);
#endif
	t->fn(t->arg);
	code_charge(t->cpu);
	t->state = TASK_SIM_DEAD;
	sim.nr_tasks--;
	cpu_next(t->cpu);
	t->rq_next = sim.dead;
	sim.dead = t;
	to_sched();
	abort();
}

/* --- CPUs and their queues ------------------------------------------ */

static void cpu_resume(struct sim_cpu *c, uint64_t at)
{
	if (c->state == CPU_IDLE)
		c->idle += at > c->idle_since ? at - c->idle_since : 0;
	if (at > c->clock)
		c->clock = at;
	c->state = CPU_RUN;
	ev_push(EV_CPU, c->clock, c, 0);
}

/*
 * The running task's next tick: at the end of its slice with others
 * queued, after lone (if set) alone, as the host's tick (sched.c).
 */
static void cpu_tick_arm(struct sim_cpu *c)
{
	uint64_t period = c->nr_queued ? tick.slice : tick.lone;

	if (tick.fn && c->curr && period)
		ev_push(EV_TICK, c->slice_start + period, c, c->tick_gen);
}

static void cpu_switch_in(struct sim_cpu *c, struct sim_task *t)
{
	t->since = c->clock;
	c->curr = t;
	c->slice_start = c->clock;
	c->tick_gen++;
	cpu_tick_arm(c);
}

static void rq_add(struct sim_cpu *c, struct sim_task *t)
{
	t->rq_next = NULL;
	if (c->rq_tail)
		c->rq_tail->rq_next = t;
	else
		c->rq_head = t;
	c->rq_tail = t;
	if (!c->nr_queued++) {
		c->tick_gen++;		/* the lone tick, if armed, is not it */
		cpu_tick_arm(c);
	}
}

static struct sim_task *rq_pop(struct sim_cpu *c)
{
	struct sim_task *t = c->rq_head;

	if (t) {
		c->rq_head = t->rq_next;
		if (!c->rq_head)
			c->rq_tail = NULL;
		c->nr_queued--;
	}
	return t;
}

/* c's running task left it: the next queued one, or idle. */
static void cpu_next(struct sim_cpu *c)
{
	struct sim_task *t = rq_pop(c);

	if (c->curr)
		c->curr->run_ns += c->clock - c->curr->since;

	if (!t) {
		c->curr = NULL;
		c->state = CPU_IDLE;
		c->idle_since = c->clock;
		return;
	}
	c->clock += (uint64_t)(sim.m.ctxsw_ns * PS);
	cpu_resume(c, c->clock);
	cpu_switch_in(c, t);
}

/* Before an event: a CPU ahead of the earliest other one gives way. */
static void sim_sync(struct sim_cpu *c)
{
	if (c->clock > sim.horizon) {
		ev_push(EV_CPU, c->clock, c, 0);
		to_sched();
	}
}

/*
 * What a CPU's work and code take against its solo speed: the hardware
 * threads of a core share it, each at smt_throughput / 2 of its solo
 * speed while another of them is busy (not idle) at its clock: it gives
 * way first, so that they are where they are at that time.
 */
static double smt_slowdown(struct sim_cpu *c)
{
	int first = c->core * sim.m.threads_per_core, i;

	if (!(sim.m.smt_throughput > 0) || sim.m.threads_per_core < 2)
		return 1;
	sim_sync(c);
	for (i = first; i < first + sim.m.threads_per_core; i++) {
		const struct sim_cpu *s = &sim.cpus[i];

		if (i != c->id && (s->state != CPU_IDLE ||
				   s->idle_since > c->clock))
			return 2 / sim.m.smt_throughput;
	}
	return 1;
}

/* At an event: the model's basic blocks since the last one (code.c). */
static void code_charge(struct sim_cpu *c)
{
	uint64_t n = sim_code_blocks() - sim.code_mark;

	sim.code_mark += n;
	c->clock += (uint64_t)(n * sim.m.block_ns * smt_slowdown(c) * PS +
			       0.5);
}

uint64_t sim_now(void)
{
	if (sim_cpu_running)
		code_charge(sim_cpu_running);
	return (sim_cpu_running ? sim_cpu_running->clock : sim.ev_now) / PS;
}

/* --- the coherence model -------------------------------------------- */

#define LINE_CHUNK	4096

static struct sim_line *line_at(size_t i)
{
	return (struct sim_line *)(sim.chunks[i / LINE_CHUNK] +
				   (i % LINE_CHUNK) * sim.line_size);
}

static size_t line_hash(uintptr_t tag)
{
	return (tag * 0x9e3779b97f4a7c15ull) >> (64 - sim.table_bits);
}

static int home_of(uintptr_t addr, int cpu_node)
{
	size_t lo = 0, hi = sim.nr_homes, mid;

	while (lo < hi) {
		mid = (lo + hi) / 2;
		if (addr < sim.homes[mid].start)
			hi = mid;
		else if (addr >= sim.homes[mid].end)
			lo = mid + 1;
		else
			return sim.homes[mid].node;
	}
	return cpu_node;	/* first touch */
}

static void table_grow(void)
{
	size_t cap, i, h;
	uint32_t *table;

	sim.table_bits = sim.table_bits ? sim.table_bits + 1 : 16;
	cap = (size_t)1 << sim.table_bits;
	table = xcalloc(cap, sizeof(*table));
	for (i = 0; i < sim.nr_lines; i++) {
		h = line_hash(line_at(i)->tag);
		while (table[h])
			h = (h + 1) & (cap - 1);
		table[h] = i + 1;
	}
	free(sim.table);
	sim.table = table;
}

static struct sim_line *line_get(uintptr_t addr, int node)
{
	uintptr_t tag = (addr >> sim.line_shift) + 1;
	struct sim_line *l;
	size_t h, mask;

	if (2 * (sim.nr_lines + 1) > (size_t)1 << sim.table_bits)
		table_grow();
	mask = ((size_t)1 << sim.table_bits) - 1;
	h = line_hash(tag);
	for (; sim.table[h]; h = (h + 1) & mask) {
		l = line_at(sim.table[h] - 1);
		if (l->tag == tag)
			return l;
	}
	if (sim.nr_lines == sim.nr_chunks * LINE_CHUNK) {
		sim.chunks = xrealloc(sim.chunks, sim.nr_chunks + 1,
				      sizeof(*sim.chunks));
		sim.chunks[sim.nr_chunks++] = xcalloc(LINE_CHUNK,
						      sim.line_size);
	}
	l = line_at(sim.nr_lines);
	memset(l, 0, sim.line_size);
	l->tag = tag;
	l->owner = -1;
	l->home = home_of(addr & ~(((uintptr_t)1 << sim.line_shift) - 1),
			  node);
	sim.table[h] = ++sim.nr_lines;
	sim.stats.lines = sim.nr_lines;
	return l;
}

static bool sharer(const struct sim_line *l, int cpu)
{
	return l->sharers[cpu / 64] >> (cpu % 64) & 1;
}

static void sharer_set(struct sim_line *l, int cpu)
{
	if (!sharer(l, cpu)) {
		l->sharers[cpu / 64] |= 1ull << (cpu % 64);
		l->nr_sharers++;
	}
}

/* The farthest sharer other than cpu: what invalidating them all costs. */
static double invalidate_ns(const struct sim_line *l, int cpu)
{
	double worst = 0, d;
	uint64_t w;
	int i, b;

	if (!l->nr_sharers || (l->nr_sharers == 1 && sharer(l, cpu)))
		return 0;
	for (i = 0; i < sim.words; i++) {
		for (w = l->sharers[i]; w; w &= w - 1) {
			b = i * 64 + __builtin_ctzll(w);
			if (b == cpu)
				continue;
			d = sim_machine_line_ns(&sim.m, cpu, b);
			if (d > worst)
				worst = d;
		}
	}
	return worst;
}

static double memory_ns(const struct sim_cpu *c, const struct sim_line *l)
{
	return l->home == c->node ? sim.m.mem_ns_local : sim.m.mem_ns_remote;
}

static void unpark(struct sim_cpu *c, uint64_t at)
{
	int i;

	for (i = 0; i < SIM_WATCH; i++) {
		struct sim_watch *w = &c->watch[i];

		if (!w->line)
			continue;
		if (w->prev)
			w->prev->next = w->next;
		else
			w->line->watchers = w->next;
		if (w->next)
			w->next->prev = w->prev;
		w->line = NULL;
	}
	c->spin_gen++;
	c->nr_reads = 0;
	cpu_resume(c, at);
}

static void line_written(struct sim_line *l, uint64_t at)
{
	l->version++;
	while (l->watchers)
		unpark(l->watchers->cpu, at);
}

/* The nearest CPU holding l Shared, as a source: -1 if none. */
static double nearest_sharer_ns(const struct sim_line *l, int cpu)
{
	double best = -1, d;
	uint64_t w;
	int i, b;

	for (i = 0; i < sim.words; i++) {
		for (w = l->sharers[i]; w; w &= w - 1) {
			b = i * 64 + __builtin_ctzll(w);
			d = sim_machine_line_ns(&sim.m, cpu, b);
			if (best < 0 || d < best)
				best = d;
		}
	}
	return best;
}

/* c is losing l to a request that reaches it at until: it hits l till then. */
static void grace_give(struct sim_cpu *c, struct sim_line *l, uint64_t until)
{
	int i, slot = 0;

	for (i = 0; i < SIM_GRACE; i++) {
		if (c->grace[i].line == l) {
			slot = i;
			break;
		}
		if (c->grace[i].until < c->grace[slot].until)
			slot = i;
	}
	c->grace[slot].line = l;
	c->grace[slot].until = until;
}

static bool grace_hit(const struct sim_cpu *c, const struct sim_line *l)
{
	int i;

	for (i = 0; i < SIM_GRACE; i++)
		if (c->grace[i].line == l && c->clock < c->grace[i].until)
			return true;
	return false;
}

/*
 * One request for l by c at c's clock.  The line's owner, sharers and
 * busy_until are its state after every request queued so far: they price
 * the request and place it in the queue.  A miss is served by the owner
 * (Modified), else its nearest sharer, else memory at its home; a write
 * also waits for every other sharer's invalidation.  The line serves one
 * miss at a time, for as long as the transfer takes: N requests after a
 * write are served one after another.
 *
 * An access takes effect when the line serves it: a hit at once, a miss
 * at the end of its transfer, where c's clock goes and c gives way until
 * every earlier event has run.  So the host's operation that follows, and
 * the spinners its write wakes, come in the order the line serves them: a
 * CPU queued behind others reads and writes after them.  A CPU holding l
 * in the state above has been served (it waited for its request), but the
 * owner losing it goes on hitting it for half the transfer, until the
 * request reaches it, as a core goes on using a line it is about to lose
 * (which is what lets a few increments of one counter, or a failed
 * cmpxchg's retry, go by on one CPU between two transfers).  The window
 * is the CPU's, not the line's: a queue behind it does not end it.
 */
static void coherence(struct sim_cpu *c, struct sim_line *l, int kind)
{
	double x, src;
	uint64_t start;
	bool miss = false;

	if (kind == SIM_READ ? l->owner == c->id || sharer(l, c->id) :
	    l->owner == c->id) {
		x = sim.m.hit_ns;
	} else if (grace_hit(c, l)) {
		x = sim.m.hit_ns;
	} else {
		miss = true;
		if (l->owner >= 0)
			x = sim_machine_line_ns(&sim.m, c->id, l->owner);
		else if (kind != SIM_READ && sharer(l, c->id))
			x = sim.m.hit_ns;	/* an upgrade */
		else if ((src = nearest_sharer_ns(l, c->id)) >= 0)
			x = src;
		else
			x = memory_ns(c, l);
		if (kind != SIM_READ) {
			double inv = invalidate_ns(l, c->id);

			x = x > inv ? x : inv;
		}
		start = c->clock > l->busy_until ? c->clock : l->busy_until;
		l->busy_until = start + (uint64_t)(x * PS);
		if (l->owner >= 0)
			grace_give(&sim.cpus[l->owner], l,
				   start + (uint64_t)(x * PS / 2));
		x += (double)(start - c->clock) / PS;
		sim.stats.misses++;
		l->misses++;
		if (kind == SIM_READ) {
			if (l->owner >= 0)
				sharer_set(l, l->owner);
			l->owner = -1;
			sharer_set(l, c->id);
		} else {
			memset(l->sharers, 0, sim.words * sizeof(uint64_t));
			l->nr_sharers = 0;
			l->owner = c->id;
		}
	}
	if (kind == SIM_RMW)
		x += sim.m.atomic_ns;
	c->clock += (uint64_t)(x * PS + 0.5);
	if (miss)
		sim_sync(c);
	if (kind != SIM_READ)
		line_written(l, c->clock);
}

static void note_read(struct sim_cpu *c, struct sim_line *l)
{
	int i;

	for (i = 0; i < c->nr_reads; i++)
		if (c->reads[i] == l)
			break;
	if (i == SIM_WATCH) {
		memmove(c->reads, c->reads + 1,
			(SIM_WATCH - 1) * sizeof(c->reads[0]));
		memmove(c->read_version, c->read_version + 1,
			(SIM_WATCH - 1) * sizeof(c->read_version[0]));
		i = SIM_WATCH - 1;
	} else if (i == c->nr_reads) {
		c->nr_reads++;
	}
	c->reads[i] = l;
	c->read_version[i] = l->version;
}

uint64_t sim_line_misses(const void *p)
{
	uintptr_t tag = ((uintptr_t)p >> sim.line_shift) + 1;
	const struct sim_line *l;
	size_t h, mask;

	if (!sim.table_bits)
		return 0;
	mask = ((size_t)1 << sim.table_bits) - 1;
	for (h = line_hash(tag); sim.table[h]; h = (h + 1) & mask) {
		l = line_at(sim.table[h] - 1);
		if (l->tag == tag)
			return l->misses;
	}
	return 0;
}

void sim_access(const volatile void *p, size_t size, int kind)
{
	struct sim_cpu *c = sim_cpu_running;
	struct sim_line *l;

	if (!c)
		return;
	(void)size;
	sim.stats.events++;
	code_charge(c);
	sim_sync(c);
	l = line_get((uintptr_t)p, c->node);
	coherence(c, l, kind);
	if (kind != SIM_WRITE)
		note_read(c, l);
}

void sim_host_write(const volatile void *p)
{
	struct sim_line *l;

	if (sim_cpu_running) {
		sim_access(p, 1, SIM_WRITE);
		return;
	}
	if (!sim.cpus)
		return;
	l = line_get((uintptr_t)p, 0);
	line_written(l, sim.ev_now);
}

void sim_set_home(const void *p, size_t len, int node)
{
	uintptr_t start = (uintptr_t)p, end = start + len;
	size_t i;

	if (!sim.cpus || !len)
		return;
	if (sim.nr_homes == sim.homes_cap) {
		sim.homes_cap = sim.homes_cap ? 2 * sim.homes_cap : 256;
		sim.homes = xrealloc(sim.homes, sim.homes_cap,
				     sizeof(*sim.homes));
	}
	for (i = sim.nr_homes; i && sim.homes[i - 1].start > start; i--)
		sim.homes[i] = sim.homes[i - 1];
	sim.homes[i] = (struct sim_home){ start, end, node };
	sim.nr_homes++;
}

/*
 * The code since the last event, then ns of this machine's work
 * (calibrated, or its own instructions'), scaled.
 */
static void host_work(double ns)
{
	struct sim_cpu *c = sim_cpu_running;

	if (!c)
		return;
	code_charge(c);
	c->clock += (uint64_t)(ns * sim.m.work_scale * smt_slowdown(c) * PS +
			       0.5);
}

void sim_delay(uint64_t ns)
{
	if (!sim_cpu_running)
		return;
	sim.stats.events++;
	host_work(ns);
}

static void copy_work(size_t n)
{
	host_work(n / 1024.0 * sim.m.copy_ns_per_kib);
}

void *sim_memcpy(void *dst, const void *src, size_t n)
{
	copy_work(n);
	return memcpy(dst, src, n);
}

void *sim_memset(void *dst, int c, size_t n)
{
	copy_work(n);
	return memset(dst, c, n);
}

void sim_relax(void)
{
	struct sim_cpu *c = sim_cpu_running;
	int i;

	if (!c)
		return;
	sim.stats.events++;
	code_charge(c);
	c->clock += SIM_PAUSE;
	for (i = 0; i < c->nr_reads; i++)
		if (c->reads[i]->version != c->read_version[i])
			break;
	if (!c->nr_reads || i < c->nr_reads) {
		c->nr_reads = 0;
		c->read_clock = false;
		return;
	}
	for (i = 0; i < c->nr_reads; i++) {
		struct sim_watch *w = &c->watch[i];

		w->cpu = c;
		w->line = c->reads[i];
		w->prev = NULL;
		w->next = w->line->watchers;
		if (w->next)
			w->next->prev = w;
		w->line->watchers = w;
	}
	c->state = CPU_SPIN;
	sim.stats.parks++;
	/* a spin on a deadline (sched_clock()) looks at its clock often */
	ev_push(EV_SPIN, c->clock + (c->read_clock ? SIM_CLOCK_POLL :
						     SIM_SPIN_TIMEOUT),
		c, ++c->spin_gen);
	c->read_clock = false;
	to_sched();
}

/* --- tasks ------------------------------------------------------------ */

struct sim_task *sim_spawn(int cpu, void (*fn)(void *), void *arg)
{
	struct sim_task *t = xcalloc(1, sizeof(*t));
	struct sim_cpu *c = &sim.cpus[cpu];
	uint64_t *sp;

	t->stack = mmap(NULL, SIM_STACK_SIZE + SIM_GUARD_SIZE,
			PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (t->stack == MAP_FAILED ||
	    mprotect(t->stack, SIM_GUARD_SIZE, PROT_NONE)) {
		fprintf(stderr, "kscale sim: no stack for a task: %s\n",
			strerror(errno));
		abort();
	}
	/* as sim_switch() leaves a stack: the entry returned to, aligned */
	sp = (uint64_t *)((char *)t->stack + SIM_GUARD_SIZE + SIM_STACK_SIZE);
	*--sp = 0;
	*--sp = (uint64_t)(uintptr_t)task_entry;
	sp -= 6;
	memset(sp, 0, 6 * sizeof(*sp));
	*--sp = 0x1f80 | (uint64_t)0x37f << 32;	/* MXCSR, x87 CW defaults */
	t->sp = sp;
	t->fn = fn;
	t->arg = arg;
	t->cpu = c;
	t->id = sim.next_id++;
	t->tls = xcalloc(1, sim.tls_size + 1);
	memcpy(t->tls, sim.host.tls, sim.tls_size);
	t->state = TASK_SIM_RUNNABLE;
	t->all_next = sim.all;
	t->all_prev = &sim.all;
	if (sim.all)
		sim.all->all_prev = &t->all_next;
	sim.all = t;
	sim.nr_tasks++;
	if (!c->curr) {
		cpu_resume(c, c->clock);
		cpu_switch_in(c, t);
	} else {
		rq_add(c, t);
	}
	return t;
}

static void task_free(struct sim_task *t)
{
	*t->all_prev = t->all_next;
	if (t->all_next)
		t->all_next->all_prev = t->all_prev;
#ifdef __SANITIZE_ADDRESS__
	/* a task that never ended left its frames' redzones for the next */
	ASAN_UNPOISON_MEMORY_REGION(t->stack, SIM_STACK_SIZE + SIM_GUARD_SIZE);
#endif
	munmap(t->stack, SIM_STACK_SIZE + SIM_GUARD_SIZE);
	free(t->tls);
	free(t);
}

struct sim_task *sim_task_current(void)
{
	return sim.running;
}

struct task_struct *sim_task_struct(struct sim_task *t)
{
	return &t->ts;
}

struct sim_task *sim_task_of(struct task_struct *p)
{
	return (struct sim_task *)((char *)p - offsetof(struct sim_task, ts));
}

uint64_t sim_task_cputime(const struct sim_task *t)
{
	const struct sim_cpu *c = t->cpu;

	return (t->run_ns + (c->curr == t ? c->clock - t->since : 0)) / PS;
}

/* The virtual clocks start here, so no jiffies comparison meets 0. */
#define SIM_EPOCH_NS	1000000000ull

/* The running CPU's clock read, at the cost of a read (this machine's). */
static uint64_t clock_read(double cost_ns)
{
	host_work(cost_ns);
	sim_cpu_running->read_clock = true;
	return sim_cpu_running->clock / PS + SIM_EPOCH_NS;
}

int sim_clock_gettime(clockid_t clock, struct timespec *ts)
{
	uint64_t ns;

	if (!sim_cpu_running || (clock != CLOCK_MONOTONIC &&
				 clock != CLOCK_MONOTONIC_RAW &&
				 clock != CLOCK_MONOTONIC_COARSE &&
				 clock != CLOCK_BOOTTIME))
		return (clock_gettime)(clock, ts);
	ns = clock_read(sim.m.clock_ns);
	ts->tv_sec = ns / 1000000000u;
	ts->tv_nsec = ns % 1000000000u;
	return 0;
}

uint64_t sim_rdtsc(void)
{
	if (!sim_cpu_running)
		return __builtin_ia32_rdtsc();
	return (uint64_t)(clock_read(sim.m.rdtsc_ns) * tsc_per_ns);
}

int sim_task_cpu(const struct sim_task *t)
{
	return t->cpu->id;
}

int sim_nr_tasks(void)
{
	return sim.nr_tasks;
}

void sim_set_tick(uint64_t slice_ns, uint64_t lone_ns, void (*fn)(int cpu))
{
	tick.slice = slice_ns * PS;
	tick.lone = lone_ns * PS;
	tick.fn = fn;
}

void sim_sleep(uint64_t timeout_ns)
{
	struct sim_task *t = sim.running;
	struct sim_cpu *c = t->cpu;

	sim.stats.events++;
	code_charge(c);
	if (t->wake_pending) {
		/*
		 * try_to_wake_up() waited for p->on_cpu and queued it: the
		 * task leaves the CPU and is queued again at once.
		 */
		t->wake_pending = false;
		rq_add(c, t);
		cpu_next(c);
		to_sched();
		return;
	}
	t->state = TASK_SIM_SLEEPING;
	t->sleep_gen++;
	if (timeout_ns)
		ev_push(EV_TIMER, c->clock + timeout_ns * PS, t, t->sleep_gen);
	cpu_next(c);
	to_sched();
}

int sim_wake(struct sim_task *t)
{
	struct sim_cpu *c = t->cpu;
	uint64_t now, idle, at;

	if (t->state == TASK_SIM_RUNNABLE) {
		/* between its decision to sleep and sim_sleep(): a yield */
		t->wake_pending = true;
		return 1;
	}
	if (t->state != TASK_SIM_SLEEPING)
		return 0;
	t->state = TASK_SIM_RUNNABLE;
	if (sim_cpu_running)
		code_charge(sim_cpu_running);
	now = sim_cpu_running ? sim_cpu_running->clock : sim.ev_now;
	if (c->curr) {
		rq_add(c, t);
		return 1;
	}
	/* an idle CPU: the longer it has slept, the longer it takes */
	idle = now > c->idle_since ? now - c->idle_since : 0;
	at = now + (uint64_t)(sim_machine_wake_ns(&sim.m,
						  (double)idle / PS) * PS);
	cpu_resume(c, at);
	cpu_switch_in(c, t);
	return 1;
}

void sim_yield_cpu(void)
{
	struct sim_task *t = sim.running;
	struct sim_cpu *c = t->cpu;

	sim.stats.events++;
	code_charge(c);
	if (!c->nr_queued)
		return;
	rq_add(c, t);
	cpu_next(c);
	to_sched();
}

void sim_migrate(int cpu)
{
	struct sim_task *t = sim.running;
	struct sim_cpu *from = t->cpu, *to = &sim.cpus[cpu];
	uint64_t now;

	code_charge(from);
	now = from->clock;
	if (from == to)
		return;
	cpu_next(from);
	t->cpu = to;
	if (to->curr) {
		rq_add(to, t);
	} else {
		cpu_resume(to, now);
		cpu_switch_in(to, t);
	}
	to_sched();
}

/* --- the scheduler's loop ----------------------------------------------- */

static void report_stuck(void)
{
	fprintf(stderr, "kscale sim: at %.6f s virtual, %d tasks asleep and "
		"nothing left to wake them: a lost wake-up\n",
		sim.ev_now * 1e-12, sim.nr_tasks);
}

int sim_run(uint64_t until_ns)
{
	uint64_t until = until_ns > UINT64_MAX / PS ? UINT64_MAX : until_ns * PS;
	struct sim_event e;
	struct sim_cpu *c;
	struct sim_task *t;

	while (sim.nr_tasks) {
		if (!sim.nr_events) {
			report_stuck();
			tls_load(&sim.host);
			return -1;
		}
		if (sim.heap[0].t >= until)
			break;
		e = ev_pop();
		sim.ev_now = e.t;
		switch (e.type) {
		case EV_CPU:
			c = e.p;
			sim.horizon = sim.nr_events && sim.heap[0].t < until ?
				      sim.heap[0].t : until;
			sim_cpu_running = c;
			run_task(c->curr);
			sim_cpu_running = NULL;
			break;
		case EV_SPIN:
			c = e.p;
			if (c->state == CPU_SPIN && c->spin_gen == e.gen)
				unpark(c, e.t);
			break;
		case EV_TIMER:
			t = e.p;
			if (t->state == TASK_SIM_SLEEPING &&
			    t->sleep_gen == e.gen)
				sim_wake(t);
			break;
		case EV_TICK:
			c = e.p;
			if (c->tick_gen == e.gen && c->curr) {
				tick.fn(c->id);
				c->slice_start = e.t;
				cpu_tick_arm(c);
			}
			break;
		}
		while (sim.dead) {
			t = sim.dead;
			sim.dead = t->rq_next;
			if (sim.tls_owner == t)
				tls_load(&sim.host);
			task_free(t);
		}
	}
	tls_load(&sim.host);
	return 0;
}

void sim_get_stats(struct sim_stats *s)
{
	uint64_t end = 0;
	int i;

	*s = sim.stats;
	for (i = 0; i < sim.m.cpus; i++)
		if (sim.cpus[i].clock > end)
			end = sim.cpus[i].clock;
	s->busy_ns = 0;
	for (i = 0; i < sim.m.cpus; i++) {
		const struct sim_cpu *c = &sim.cpus[i];
		uint64_t idle = c->idle;

		if (c->state == CPU_IDLE)
			idle += end - c->idle_since;
		s->busy_ns += (end - (idle < end ? idle : end)) / PS;
	}
	s->stack_bytes = SIM_STACK_SIZE + SIM_GUARD_SIZE;
	s->tls_bytes = sim.tls_size;
}

int sim_init(const struct sim_machine *m, uint64_t seed, char *err,
	     size_t len)
{
	int i;

	sim_exit();
	sim.m = *m;
	if (m->cpus < 1 || m->cpus > SIM_MAX_CPUS) {
		snprintf(err, len, "%d CPUs: the simulator takes 1 to %d",
			 m->cpus, SIM_MAX_CPUS);
		return -1;
	}
	for (sim.line_shift = 0; (1 << sim.line_shift) < m->line_bytes;)
		sim.line_shift++;
	sim.words = (m->cpus + 63) / 64;
	sim.line_size = (sizeof(struct sim_line) +
			 sim.words * sizeof(uint64_t) + 7) & ~(size_t)7;
	sim.rand = seed * 0x9e3779b97f4a7c15ull + 1;
	sim.horizon = UINT64_MAX;
	sim.cpus = xcalloc(m->cpus, sizeof(*sim.cpus));
	for (i = 0; i < m->cpus; i++) {
		struct sim_cpu *c = &sim.cpus[i];

		c->id = i;
		c->node = sim_machine_node(m, i);
		c->core = sim_machine_core(m, i);
		c->state = CPU_IDLE;
		/* the CPUs do not start in lockstep */
		c->clock = sim_rand() % (64 * PS);
		c->idle_since = c->clock;
	}
	sim.tls_size = __start_kscale_tls ?
		       (size_t)(__stop_kscale_tls - __start_kscale_tls) : 0;
	sim.host.tls = xcalloc(1, sim.tls_size + 1);
	/* what a new task's thread-locals start as: the host's now */
	memcpy(sim.host.tls, __start_kscale_tls, sim.tls_size);
	sim.tls_owner = &sim.host;
	return 0;
}

void sim_exit(void)
{
	if (!sim.cpus)
		return;
	tls_load(&sim.host);
	/* a failed run's tasks, never to run again */
	while (sim.all)
		task_free(sim.all);
	free(sim.cpus);
	free(sim.heap);
	while (sim.nr_chunks)
		free(sim.chunks[--sim.nr_chunks]);
	free(sim.chunks);
	free(sim.table);
	free(sim.homes);
	free(sim.host.tls);
	memset(&sim, 0, sizeof(sim));
}
