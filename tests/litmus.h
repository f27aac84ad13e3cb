/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Litmus tests of a model's own code (tests/test_litmus_*.c), by stateless
 * model checking: a few threads, each a coroutine on one host thread, run
 * every interleaving of their shared accesses, one execution after
 * another, and each execution's outcome is checked.  Deterministic: no
 * host timing decides anything, and a forbidden outcome, if reachable, is
 * found on every run.
 *
 * A test includes the model's .c file after redefining its access macros
 * (READ_ONCE, WRITE_ONCE, smp_mb(), cpu_relax(), this_cpu_add(), the
 * atomics it uses) onto the calls below; each call is one step, the point
 * where another thread may run.  Plain accesses are not steps: a test
 * names only code whose shared data goes through the macros.
 *
 * With .tso, stores wait in a store buffer a thread (x86-TSO): another
 * thread reads the value from before a store until it is flushed, which
 * may happen at any step and must by a full fence (smp_mb(), a locked
 * operation); the thread itself reads its own latest.  A location is
 * written by one thread only (checked).  Without .tso every run is
 * sequentially consistent.  A spin (cpu_relax()) waits until another
 * thread's store becomes visible, so a spin loop costs one step a change.
 */
#ifndef KSCALE_TEST_LITMUS_H
#define KSCALE_TEST_LITMUS_H

#include <stdbool.h>
#include <stddef.h>

#define LITMUS_THREADS	4

struct litmus {
	const char *name;
	int nr_threads;
	bool tso;
	void *arg;
	void (*setup)(void *arg);		/* before each execution */
	void (*thread[LITMUS_THREADS])(void *arg);
	int cpu[LITMUS_THREADS];		/* smp_processor_id() of each */
	/* after each: NULL, or what forbidden outcome it reached */
	const char *(*check)(void *arg);
	void (*teardown)(void *arg);		/* after each execution */
};

struct litmus_result {
	unsigned long executions;
	unsigned long forbidden;	/* executions whose check failed */
	const char *first;		/* the first one's check */
	char trace[1024];		/* its steps: "T0 T1 F0 ..." */
};

/*
 * Every execution of l; 0, or -1 (with a line on stderr) if the test is
 * broken: an execution stuck with no step possible, too many steps, two
 * threads writing one location under TSO.
 */
int litmus_explore(const struct litmus *l, struct litmus_result *r);

/*
 * A cmocka test's check: every execution of l explored, their count
 * printed, the test failed with the first forbidden one's trace if any
 * (r holds the counts after).
 */
void litmus_assert_allowed(const struct litmus *l, struct litmus_result *r);

void litmus_load(const volatile void *p, void *v, size_t size);
void litmus_store(volatile void *p, const void *v, size_t size);
/* *p += delta in one step: a locked RMW (drains the buffer) or not. */
long litmus_add(volatile void *p, long delta, size_t size, bool locked);
void litmus_fence(void);
void litmus_spin(void);

#define LITMUS_READ_ONCE(x)						\
	({ union { __typeof__(x) v; unsigned char b[sizeof(x)]; } __u;	\
	   litmus_load(&(x), __u.b, sizeof(x)); __u.v; })
#define LITMUS_WRITE_ONCE(x, val)					\
	({ __typeof__(x) __v = (val); litmus_store(&(x), &__v, sizeof(x)); })

#endif
