// SPDX-License-Identifier: GPL-2.0
/*
 * The litmus engine (litmus.h): coroutines (ucontext) that give way at
 * every shared access, and a depth-first walk of the choices between
 * them, each execution replayed from the start along the choices made so
 * far and the next alternative at the deepest point that has one.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <cmocka.h>

#include "../lib/kernel/percpu.h"
#include "../lib/kernel/sched.h"
#include "litmus.h"

#define STACK_SIZE	(256 * 1024)
#define MAX_STEPS	1024	/* choices an execution; more is a test bug */
#define BUFFERED	16	/* stores a thread's buffer holds */
#define WORD		8	/* the widest access */
#define WATCHED		8	/* locations a spin iteration reads */

struct entry {
	const volatile void *p;
	size_t size;
	unsigned char old[WORD];	/* what others read until the flush */
};

struct lthread {
	ucontext_t ctx;
	void *stack;
	bool done;
	/*
	 * What it loaded since it last spun; once it spins, it waits until
	 * one of them changes for it (spinning), or for anything if it read
	 * more than WATCHED of them.
	 */
	const volatile void *read[WATCHED];
	int nr_read;
	bool spinning;
	int preempt_count;		/* its __preempt_count */
	struct entry buf[BUFFERED];	/* oldest first */
	int nr_buf;
};

static struct {
	const struct litmus *l;
	ucontext_t sched;
	struct lthread t[LITMUS_THREADS];
	int cur;			/* the running thread, -1: the walk */
	int choice[MAX_STEPS], nr_choices[MAX_STEPS];
	int depth, replay;
	char trace[1024];
	size_t trace_len;
} lm;

static void die(const char *what)
{
	fprintf(stderr, "litmus %s: %s\n", lm.l->name, what);
	abort();
}

/* Outside the threads (set-up, check, teardown) an access is plain. */
static void step(void)
{
	if (lm.cur >= 0)
		swapcontext(&lm.t[lm.cur].ctx, &lm.sched);
}

/* Another thread's buffered store to p: what it read before, else NULL. */
static const struct entry *buffered_elsewhere(const volatile void *p,
					      size_t size)
{
	const struct entry *found = NULL;
	int i, j, writer = -1;

	for (i = 0; i < lm.l->nr_threads; i++) {
		for (j = 0; i != lm.cur && j < lm.t[i].nr_buf; j++) {
			if (lm.t[i].buf[j].p != p)
				continue;
			if (lm.t[i].buf[j].size != size)
				die("a buffered store read at another size");
			if (writer >= 0 && writer != i)
				die("two threads store to one location");
			if (!found)
				found = &lm.t[i].buf[j];
			writer = i;
		}
	}
	return found;
}

/* A store of thread w's to p became visible to the others: spins look. */
static void visible(const volatile void *p, int w)
{
	int i, j;

	for (i = 0; i < lm.l->nr_threads; i++) {
		struct lthread *t = &lm.t[i];

		if (!t->spinning || i == w)
			continue;
		if (t->nr_read > WATCHED)
			t->spinning = false;
		for (j = 0; t->spinning && j < t->nr_read; j++)
			if (t->read[j] == p)
				t->spinning = false;
	}
}

static void flush_one(int w)
{
	struct lthread *t = &lm.t[w];
	const volatile void *p = t->buf[0].p;

	memmove(t->buf, t->buf + 1, --t->nr_buf * sizeof(*t->buf));
	visible(p, w);
}

static void drain(int w)
{
	while (lm.t[w].nr_buf)
		flush_one(w);
}

void litmus_load(const volatile void *p, void *v, size_t size)
{
	const struct entry *e;

	step();
	if (lm.cur >= 0) {
		struct lthread *t = &lm.t[lm.cur];

		if (t->nr_read < WATCHED)
			t->read[t->nr_read] = p;
		t->nr_read++;
	}
	e = buffered_elsewhere(p, size);
	memcpy(v, e ? e->old : (const void *)p, size);
}

static void store(volatile void *p, const void *v, size_t size)
{
	struct lthread *t = lm.cur >= 0 ? &lm.t[lm.cur] : NULL;
	struct entry *e;

	if (size > WORD)
		die("an access wider than 8 bytes");
	if (buffered_elsewhere(p, size))
		die("two threads store to one location");
	if (t && lm.l->tso) {
		if (t->nr_buf == BUFFERED)
			die("a store buffer overflowed");
		e = &t->buf[t->nr_buf++];
		e->p = p;
		e->size = size;
		memcpy(e->old, (const void *)p, size);
		memcpy((void *)p, v, size);
		return;
	}
	memcpy((void *)p, v, size);
	visible(p, lm.cur);
}

void litmus_store(volatile void *p, const void *v, size_t size)
{
	step();
	store(p, v, size);
}

long litmus_add(volatile void *p, long delta, size_t size, bool locked)
{
	long old = 0, new;

	step();
	if (locked && lm.cur >= 0)
		drain(lm.cur);
	/* little-endian: the low bytes of a long are the narrower value */
	memcpy(&old, (const void *)p, size);
	if (size == 4)
		old = (int)old;
	new = old + delta;
	store(p, &new, size);
	if (locked && lm.cur >= 0)
		drain(lm.cur);
	return old;
}

void litmus_fence(void)
{
	step();
	if (lm.cur >= 0)
		drain(lm.cur);
}

void litmus_spin(void)
{
	if (lm.cur < 0)
		die("a spin outside the test's threads");
	lm.t[lm.cur].spinning = true;
	step();
	lm.t[lm.cur].nr_read = 0;	/* the next iteration's */
}

static void entry(int i)
{
	lm.l->thread[i](lm.l->arg);
	lm.t[i].done = true;
}

static void note(char what, int i)
{
	int n = snprintf(lm.trace + lm.trace_len,
			 sizeof(lm.trace) - lm.trace_len, "%c%d ", what, i);

	if (n > 0 && lm.trace_len + n < sizeof(lm.trace))
		lm.trace_len += n;
}

/* Run thread i to its next shared access (or its end). */
static void run(int i)
{
	struct lthread *t = &lm.t[i];

	t->spinning = false;
	kscale_set_cpu(lm.l->cpu[i]);
	__preempt_count = t->preempt_count;
	lm.cur = i;
	swapcontext(&lm.sched, &t->ctx);
	lm.cur = -1;
	t->preempt_count = __preempt_count;
	__preempt_count = 0;
}

/* One execution along lm.choice[0 .. replay - 1], then the first choices. */
static int execute(void)
{
	const struct litmus *l = lm.l;
	int i, n, c, act[2 * LITMUS_THREADS];
	bool done;

	l->setup(l->arg);
	lm.depth = 0;
	lm.trace_len = 0;
	lm.trace[0] = 0;
	for (i = 0; i < l->nr_threads; i++) {
		struct lthread *t = &lm.t[i];

		t->done = t->spinning = false;
		t->nr_buf = t->nr_read = t->preempt_count = 0;
		getcontext(&t->ctx);
		t->ctx.uc_stack.ss_sp = t->stack;
		t->ctx.uc_stack.ss_size = STACK_SIZE;
		t->ctx.uc_link = &lm.sched;
		makecontext(&t->ctx, (void (*)(void))entry, 1, i);
		run(i);		/* to its first shared access */
	}
	for (;;) {
		n = 0;
		done = true;
		for (i = 0; i < l->nr_threads; i++) {
			done &= lm.t[i].done;
			if (!lm.t[i].done && !lm.t[i].spinning)
				act[n++] = i;
		}
		if (done)
			break;
		for (i = 0; i < l->nr_threads; i++)
			if (lm.t[i].nr_buf)
				act[n++] = LITMUS_THREADS + i;
		if (!n) {
			fprintf(stderr, "litmus %s: stuck, every thread "
				"spinning: %s\n", l->name, lm.trace);
			return -1;
		}
		c = 0;
		if (n > 1) {
			if (lm.depth == MAX_STEPS) {
				fprintf(stderr, "litmus %s: over %d choices: "
					"%s\n", l->name, MAX_STEPS, lm.trace);
				return -1;
			}
			if (lm.depth < lm.replay) {
				c = lm.choice[lm.depth];
			} else {
				lm.choice[lm.depth] = 0;
				lm.nr_choices[lm.depth] = n;
			}
			lm.depth++;
		}
		if (act[c] < LITMUS_THREADS) {
			note('T', act[c]);
			run(act[c]);
		} else {
			note('F', act[c] - LITMUS_THREADS);
			flush_one(act[c] - LITMUS_THREADS);
		}
	}
	for (i = 0; i < l->nr_threads; i++)
		drain(i);
	return 0;
}

/* The next execution's choices: false when every one has been made. */
static bool next(void)
{
	int d;

	for (d = lm.depth - 1; d >= 0; d--) {
		if (lm.choice[d] + 1 < lm.nr_choices[d]) {
			lm.choice[d]++;
			lm.replay = d + 1;
			return true;
		}
	}
	return false;
}

int litmus_explore(const struct litmus *l, struct litmus_result *r)
{
	const char *bad;
	int i, ret = 0;

	memset(r, 0, sizeof(*r));
	memset(&lm, 0, sizeof(lm));
	lm.l = l;
	lm.cur = -1;
	for (i = 0; i < l->nr_threads; i++) {
		lm.t[i].stack = malloc(STACK_SIZE);
		if (!lm.t[i].stack)
			die("out of memory");
	}
	do {
		if (execute()) {
			ret = -1;
			break;
		}
		r->executions++;
		bad = l->check(l->arg);
		if (bad && !r->forbidden++) {
			r->first = bad;
			snprintf(r->trace, sizeof(r->trace), "%s", lm.trace);
		}
		if (l->teardown)
			l->teardown(l->arg);
	} while (next());
	for (i = 0; i < l->nr_threads; i++)
		free(lm.t[i].stack);
	return ret;
}

void litmus_assert_allowed(const struct litmus *l, struct litmus_result *r)
{
	assert_int_equal(litmus_explore(l, r), 0);
	print_message("%lu executions, %lu forbidden\n", r->executions,
		      r->forbidden);
	if (r->forbidden)
		fail_msg("%s, in %lu of %lu executions; the first: %s",
			 r->first, r->forbidden, r->executions, r->trace);
}
