// SPDX-License-Identifier: GPL-2.0
/*
 * lockstat.h's registry and accumulators.  Registration happens in a
 * run's set-up, before its threads start, and the tables are only read
 * after: the lookups take no lock.  A lock's address finds its class and
 * instance in an open-addressing hash (at most half full); a thread
 * keeps the registered locks it holds on a small stack, so a release
 * needs no lookup, and marks the instances it visits in the window in a
 * bitmap of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "delay.h"
#include "lockstat.h"
#include "spinlock.h"

#define BITS_PER_LONG	(8 * sizeof(unsigned long))
#define NO_INSTANCE	(~0U)
#define COST_ROUNDS	1001

struct lockstat_state lockstat;

/* An address (or, for instances, a line of a class) and where it counts. */
struct lockstat_slot {
	uintptr_t key;			/* 0: free */
	unsigned int class;
	unsigned int instance;
};

struct lockstat_table {
	struct lockstat_slot *slot;
	unsigned long mask;		/* size - 1, size a power of two */
	unsigned long nr;
};

struct lockstat_held {
	const void *lock;
	uint64_t start;			/* the call, then the acquisition */
	uint64_t cost;			/* the thread's ->cost then */
	uint64_t wait;
	unsigned int class, instance;
	bool read;
};

/* One thread's: written by it alone, read by the harness's snapshots. */
struct lockstat_thread {
	struct lockstat_acc acc[LOCKSTAT_MAX_CLASSES];
	uint64_t cost;			/* cycles the hooks took, estimated */
	struct lockstat_held held[LOCKSTAT_MAX_HELD];
	int nr_held;
	unsigned long *seen;		/* [instances]: visited in the window */
} ____cacheline_aligned;

static struct lockstat_class classes[LOCKSTAT_MAX_CLASSES];
static int nr_classes;
static struct lockstat_table by_addr;	/* address -> class, instance */
static struct lockstat_table by_line;	/* line and class -> instance */
static unsigned int *instance_class;	/* [nr_instances] */
static unsigned long nr_instances, instance_room;
static struct lockstat_thread *threads;
static int nr_threads;
static unsigned long seen_words;
static __thread struct lockstat_thread *self;

/*
 * The hooks' own cycles: in an empty hold and an uncontended wait, and
 * in all of a lock's visit, a line's, and a lock lockstat does not count.
 */
static uint64_t hold_floor, wait_floor;
static uint64_t lock_cost, line_cost, miss_cost;

static unsigned long slot_hash(const struct lockstat_table *t, uintptr_t key,
			       unsigned int class)
{
	uint64_t h = (key ^ class) * 0x9e3779b97f4a7c15ULL;

	return h >> (64 - __builtin_ctzl(t->mask + 1));
}

/* The slot of key (and class, if match_class), or the free one it needs. */
static struct lockstat_slot *slot_find(const struct lockstat_table *t,
				       uintptr_t key, unsigned int class,
				       bool match_class)
{
	unsigned long i = slot_hash(t, key, match_class ? class : 0);
	struct lockstat_slot *s;

	for (;; i = (i + 1) & t->mask) {
		s = &t->slot[i];
		if (!s->key || (s->key == key &&
				(!match_class || s->class == class)))
			return s;
	}
}

static int table_grow(struct lockstat_table *t, bool match_class)
{
	struct lockstat_table old = *t;
	unsigned long i, size = old.slot ? 2 * (old.mask + 1) : 64;

	t->slot = calloc(size, sizeof(*t->slot));
	if (!t->slot) {
		*t = old;
		return -1;
	}
	t->mask = size - 1;
	for (i = 0; old.slot && i <= old.mask; i++)
		if (old.slot[i].key)
			*slot_find(t, old.slot[i].key, old.slot[i].class,
				   match_class) = old.slot[i];
	free(old.slot);
	return 0;
}

/* The slot for key, made if need be; NULL when out of memory. */
static struct lockstat_slot *slot_add(struct lockstat_table *t, uintptr_t key,
				      unsigned int class, bool match_class)
{
	struct lockstat_slot *s;

	if (2 * (t->nr + 1) > t->mask + 1 && table_grow(t, match_class))
		return NULL;
	s = slot_find(t, key, class, match_class);
	if (!s->key) {
		s->key = key;
		s->class = class;
		s->instance = NO_INSTANCE;
		t->nr++;
	}
	return s;
}

static void table_free(struct lockstat_table *t)
{
	free(t->slot);
	memset(t, 0, sizeof(*t));
}

static int class_of(const char *name, unsigned int lines, unsigned int flags)
{
	struct lockstat_class *c;
	int i;

	for (i = 0; i < nr_classes; i++) {
		c = &classes[i];
		if (!strcmp(c->name, name)) {
			WARN_ON(c->lines != lines || c->flags != flags);
			return i;
		}
	}
	if (WARN_ON(nr_classes == LOCKSTAT_MAX_CLASSES))
		return -1;
	classes[nr_classes] = (struct lockstat_class){ name, lines, flags, 0 };
	return nr_classes++;
}

/* The instance of addr's line in class c, made if need be. */
static unsigned int instance_of(const void *addr, int c)
{
	uintptr_t line = (uintptr_t)addr & ~(uintptr_t)(SMP_CACHE_BYTES - 1);
	struct lockstat_slot *s = slot_add(&by_line, line, c, true);
	unsigned int *more;

	if (!s)
		return NO_INSTANCE;
	if (s->instance != NO_INSTANCE)
		return s->instance;
	if (nr_instances == instance_room) {
		instance_room = instance_room ? 2 * instance_room : 64;
		more = realloc(instance_class,
			       instance_room * sizeof(*instance_class));
		if (!more)
			return NO_INSTANCE;
		instance_class = more;
	}
	instance_class[nr_instances] = c;
	classes[c].nr_instances++;
	s->instance = nr_instances++;
	return s->instance;
}

void lockstat_register(const void *addr, const char *name, unsigned int lines,
		       unsigned int flags)
{
	struct lockstat_slot *s;
	int c;

	if (!lockstat.enabled && !lockstat.lines)
		return;
	c = class_of(name, lines, flags);
	if (c < 0)
		return;
	s = slot_add(&by_addr, (uintptr_t)addr, c, false);
	if (s && s->instance == NO_INSTANCE)
		s->instance = instance_of(addr, c);
	WARN_ON(!s || s->instance == NO_INSTANCE);
}

static const struct lockstat_slot *lookup(const void *addr)
{
	const struct lockstat_slot *s;

	if (!by_addr.nr)
		return NULL;
	s = slot_find(&by_addr, (uintptr_t)addr, 0, false);
	return s->key ? s : NULL;
}

static void mark_seen(struct lockstat_thread *t, unsigned int instance)
{
	unsigned long *word, bit = 1UL << (instance % BITS_PER_LONG);

	if (!READ_ONCE(lockstat.window) || instance / BITS_PER_LONG >=
	    seen_words)
		return;
	word = &t->seen[instance / BITS_PER_LONG];
	if (!(*word & bit))
		WRITE_ONCE(*word, *word | bit);
}

#define acc_add(field, n)	WRITE_ONCE(field, (field) + (n))

static uint64_t less(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0;
}

#ifdef KSCALE_TORTURE
/* kscale torture's acquisitions in progress (nested: a slow path's lock). */
static __thread struct lockstat_held torture_held[LOCKSTAT_MAX_HELD];
static __thread int torture_nr_held;
#endif

struct lockstat_held *lock_acquire(const void *lock, bool read)
{
	struct lockstat_thread *t = self;
	const struct lockstat_slot *s;
	struct lockstat_held *h;

#ifdef KSCALE_TORTURE
	if (!lockstat.enabled) {
		if (torture_nr_held == LOCKSTAT_MAX_HELD)
			return NULL;
		h = &torture_held[torture_nr_held++];
		h->start = rdtsc_ordered();
		return h;
	}
#endif
	if (!t || t->nr_held == LOCKSTAT_MAX_HELD)
		return NULL;
	s = lookup(lock);
	if (!s) {
		acc_add(t->cost, miss_cost);
		return NULL;
	}
	h = &t->held[t->nr_held++];
	h->lock = lock;
	h->class = s->class;
	h->instance = s->instance;
	h->read = read;
	h->cost = t->cost;
	h->start = rdtsc();
	return h;
}

/*
 * A wait and a hold leave out the hooks' own cycles: their floor, and
 * what other locks' hooks cost meanwhile (a nested one's, the lookups
 * of a slow path's wait_lock).
 */
void lock_acquired(struct lockstat_held *h)
{
	uint64_t now, cost;

#ifdef KSCALE_TORTURE
	if (h >= torture_held && h < torture_held + LOCKSTAT_MAX_HELD) {
		torture_nr_held--;
		torture_hooks->lock_acquired(h->start);
		return;
	}
#endif
	now = rdtsc();
	cost = self->cost;

	h->wait = less(now - h->start, wait_floor + cost - h->cost);
	h->start = now;
	h->cost = cost;
}

void lock_acquired_try(const void *lock, bool read)
{
	struct lockstat_held *h = lock_acquire(lock, read);

	if (!h)
		return;
	lock_acquired(h);
	h->wait = 0;
}

void lock_release(const void *lock)
{
	struct lockstat_thread *t = self;
	struct lockstat_held *h;
	struct lockstat_acc *a;
	uint64_t hold;
	int i;

	if (!t)
		return;
	for (i = t->nr_held - 1; i >= 0 && t->held[i].lock != lock; i--)
		;
	if (i < 0)
		return;
	h = &t->held[i];
	hold = less(rdtsc() - h->start, hold_floor + t->cost - h->cost);
	a = &t->acc[h->class];
	if (h->read) {
		acc_add(a->read_visits, 1);
		acc_add(a->read_hold, hold);
		acc_add(a->read_wait, h->wait);
	} else {
		acc_add(a->visits, 1);
		acc_add(a->hold, hold);
		acc_add(a->wait, h->wait);
	}
	acc_add(t->cost, lock_cost);
	mark_seen(t, h->instance);
	for (t->nr_held--; i < t->nr_held; i++)
		t->held[i] = t->held[i + 1];
}

void lock_visit(const void *addr)
{
	struct lockstat_thread *t = self;
	const struct lockstat_slot *s;

	if (!t)
		return;
	acc_add(t->cost, line_cost);
	s = lookup(addr);
	if (!s)
		return;
	acc_add(t->acc[s->class].visits, 1);
	mark_seen(t, s->instance);
}

static int by_cycles(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

static uint64_t median(uint64_t *v, int nr)
{
	qsort(v, nr, sizeof(*v), by_cycles);
	return v[nr / 2];
}

static spinlock_t counted, uncounted;
static int counted_line;		/* only its address is used */

/*
 * A visit of each kind, its cycles into v[kind][i].  A line's hook alone:
 * its lookup overlaps the locked operation after it in a model's code.
 */
static void time_visits(uint64_t (*v)[COST_ROUNDS], int i)
{
	uint64_t t0 = rdtsc();

	spin_lock(&counted);
	spin_unlock(&counted);
	v[0][i] = rdtsc() - t0;
	t0 = rdtsc();
	lockstat_visit(&counted_line);
	v[1][i] = rdtsc() - t0;
	t0 = rdtsc();
	spin_lock(&uncounted);
	spin_unlock(&uncounted);
	v[2][i] = rdtsc() - t0;
}

/*
 * What the hooks themselves cost.  In a hold and in a wait: the median of
 * an empty critical section's, taken out of every visit's.  In all: the
 * median of a lock's visit, a line's and a lock's lockstat does not count
 * (a ticket spinlock's lock and unlock) less the same without the hooks,
 * which each thread adds up where it runs them (lockstat_sum()).  Hot,
 * with cache and predictors warm: never more than the cost.
 */
static void calibrate(void)
{
	static uint64_t hold[COST_ROUNDS], wait[COST_ROUNDS];
	static uint64_t on[3][COST_ROUNDS], off[3][COST_ROUNDS];
	static struct lockstat_thread t;
	struct lockstat_acc before;
	int i;

	hold_floor = wait_floor = lock_cost = line_cost = miss_cost = 0;
	lockstat_reset();
	lockstat_register(&counted, "counted", 0, LOCKSTAT_SPIN);
	lockstat_register(&counted_line, "line", 0, LOCKSTAT_LINE);
	self = &t;
	for (i = -COST_ROUNDS; i < COST_ROUNDS; i++) {
		before = t.acc[0];
		lock_acquired(lock_acquire(&counted, false));
		lock_release(&counted);
		if (i < 0)
			continue;
		hold[i] = t.acc[0].hold - before.hold;
		wait[i] = t.acc[0].wait - before.wait;
		time_visits(on, i);
		lockstat.enabled = false;
		time_visits(off, i);
		lockstat.enabled = true;
	}
	self = NULL;
	lockstat_reset();
	hold_floor = median(hold, COST_ROUNDS);
	wait_floor = median(wait, COST_ROUNDS);
	lock_cost = less(median(on[0], COST_ROUNDS),
			 median(off[0], COST_ROUNDS));
	line_cost = less(median(on[1], COST_ROUNDS),
			 median(off[1], COST_ROUNDS));
	miss_cost = less(median(on[2], COST_ROUNDS),
			 median(off[2], COST_ROUNDS));
}

void lockstat_enable(bool on)
{
	lockstat.enabled = on;
	if (on)
		calibrate();
}

void lockstat_register_lines(bool on)
{
	lockstat.lines = on;
}

void lockstat_floor_ns(double *hold_ns, double *wait_ns)
{
	*hold_ns = cycles_to_ns(hold_floor);
	*wait_ns = cycles_to_ns(wait_floor);
}

static void threads_free(void)
{
	int i;

	for (i = 0; i < nr_threads; i++)
		free(threads[i].seen);
	free(threads);
	threads = NULL;
	nr_threads = 0;
}

void lockstat_reset(void)
{
	threads_free();
	table_free(&by_addr);
	table_free(&by_line);
	free(instance_class);
	instance_class = NULL;
	nr_instances = instance_room = 0;
	memset(classes, 0, sizeof(classes));
	nr_classes = 0;
	lockstat.window = false;
}

int lockstat_threads_init(int nr)
{
	int i;

	threads_free();
	threads = aligned_alloc(SMP_CACHE_BYTES, nr * sizeof(*threads));
	if (!threads)
		return -1;
	memset(threads, 0, nr * sizeof(*threads));
	nr_threads = nr;
	seen_words = (nr_instances + BITS_PER_LONG - 1) / BITS_PER_LONG;
	for (i = 0; i < nr; i++) {
		threads[i].seen = calloc(seen_words ? seen_words : 1,
					 sizeof(unsigned long));
		if (!threads[i].seen) {
			threads_free();
			return -1;
		}
	}
	return 0;
}

void lockstat_thread_attach(int id)
{
	self = id < nr_threads ? &threads[id] : NULL;
}

void lockstat_thread_detach(void)
{
	self = NULL;
}

void lockstat_window(bool open)
{
	WRITE_ONCE(lockstat.window, open);
}

int lockstat_nr_classes(void)
{
	return nr_classes;
}

const struct lockstat_class *lockstat_class(int c)
{
	return &classes[c];
}

uint64_t lockstat_sum(struct lockstat_acc *sum)
{
	const struct lockstat_acc *a;
	uint64_t cost = 0;
	int c, i;

	memset(sum, 0, nr_classes * sizeof(*sum));
	for (i = 0; i < nr_threads; i++) {
		cost += READ_ONCE(threads[i].cost);
		for (c = 0; c < nr_classes; c++) {
			a = &threads[i].acc[c];
			sum[c].visits += READ_ONCE(a->visits);
			sum[c].hold += READ_ONCE(a->hold);
			sum[c].wait += READ_ONCE(a->wait);
			sum[c].read_visits += READ_ONCE(a->read_visits);
			sum[c].read_hold += READ_ONCE(a->read_hold);
			sum[c].read_wait += READ_ONCE(a->read_wait);
		}
	}
	return cost;
}

void lockstat_instances_seen(unsigned long *seen)
{
	unsigned long w, bits;
	int i;

	memset(seen, 0, nr_classes * sizeof(*seen));
	for (w = 0; w < seen_words; w++) {
		for (bits = 0, i = 0; i < nr_threads; i++)
			bits |= READ_ONCE(threads[i].seen[w]);
		for (; bits; bits &= bits - 1)
			seen[instance_class[w * BITS_PER_LONG +
					    __builtin_ctzl(bits)]]++;
	}
}

uint64_t lockstat_class_lines_sum(int c, uint64_t (*fn)(const void *line))
{
	uint64_t sum = 0;
	unsigned long i;

	for (i = 0; by_line.slot && i <= by_line.mask; i++)
		if (by_line.slot[i].key && (int)by_line.slot[i].class == c)
			sum += fn((const void *)by_line.slot[i].key);
	return sum;
}
