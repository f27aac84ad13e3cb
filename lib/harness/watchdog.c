// SPDX-License-Identifier: GPL-2.0
/*
 * Where a run's threads and its controller meet, the controller's waits
 * bounded by --watchdog (watchdog.h).
 */
#include <errno.h>
#include <stdio.h>

#include "../sys/clock.h"
#include "../sys/futex.h"
#include "fatal.h"
#include "watchdog.h"
#include "bench.h"
#include "window_run.h"

static void name_thread(const struct kscale_bench *b, int i, const char *what,
			long window_ops)
{
	const struct kscale_thread *t = &b->run.threads[i];

	fprintf(stderr, "kscale: watchdog: %s: thread %d (CPU %d, tid %d) "
		"%s", b->name, i, t->cpu, (int)t->tid, what);
	if (window_ops >= 0)
		fprintf(stderr, ", %ld ops in the window%s", window_ops,
			window_ops ? "" : ": no progress");
	fputc('\n', stderr);
}

/*
 * Threads that never reach the window (a stuck thread_init) or never
 * leave it (a lost wake-up, a thread that ignores the stop flag) cannot
 * be torn down: name them, undo what the run set up, exit 1.
 */
static __attribute__((noreturn)) void watchdog_fire(struct kscale_bench *b,
						     const char *phase,
						     const struct snapshot *start,
						     const struct snapshot *end)
{
	int i;

	fprintf(stderr, "kscale: watchdog: %s: threads still %s %.0f s "
		"later\n", b->name, phase, b->watchdog);
	for (i = 0; i < b->nr_threads; i++) {
		if (!start && !b->arrived[i])
			name_thread(b, i, "never reached the window", -1);
		else if (start && !READ_ONCE(b->left[i]))
			name_thread(b, i, "is still in its loop",
				    (long)(end[i].ops - start[i].ops));
	}
	fatal_exit(1);
}

static struct timespec deadline(double s)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)s;
	ts.tv_nsec += (long)((s - (time_t)s) * 1e9);
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

/*
 * The threads wait on a futex word, not on gate_cond: a condition
 * variable's waiters take gate_lock again one by one, and with several
 * model tasks a CPU each of them queued for it behind the task running
 * there until that one's tick, so that at 64 tasks on 2 CPUs the last
 * left the gate after the window, and did nothing in it.
 */
void gate_arrive(struct kscale_bench *b, int id)
{
	pthread_mutex_lock(&b->gate_lock);
	b->arrived[id] = true;
	b->nr_arrived++;
	pthread_cond_broadcast(&b->gate_cond);
	pthread_mutex_unlock(&b->gate_lock);
	while (!__atomic_load_n(&b->gate_open, __ATOMIC_ACQUIRE))
		futex(&b->gate_open, FUTEX_WAIT_BITSET, 0, NULL);
}

void gate_open(struct kscale_bench *b)
{
	struct timespec until = deadline(b->watchdog);

	pthread_mutex_lock(&b->gate_lock);
	while (b->nr_arrived < b->nr_threads)
		if (pthread_cond_timedwait(&b->gate_cond, &b->gate_lock,
					   &until) == ETIMEDOUT &&
		    b->nr_arrived < b->nr_threads)
			watchdog_fire(b, "setting up", NULL, NULL);
	pthread_mutex_unlock(&b->gate_lock);
	__atomic_store_n(&b->gate_open, 1, __ATOMIC_RELEASE);
	futex(&b->gate_open, FUTEX_WAKE, INT32_MAX, NULL);
}

void wait_threads_left(struct kscale_bench *b, const struct snapshot *start,
		       const struct snapshot *end)
{
	double until = now() + b->watchdog;

	while (READ_ONCE(b->nr_done) < b->nr_threads) {
		if (now() >= until)
			watchdog_fire(b, "in the loop after the window ended",
				      start, end);
		sleep_until(now() + 0.01);
	}
}
