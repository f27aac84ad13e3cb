/* SPDX-License-Identifier: GPL-2.0 */
/*
 * CLOCK_MONOTONIC, in seconds for the harness's own timings (the window's
 * snapshots and its sleeps, the watchdog's bounds, progress ETAs, perf's
 * time-outs) and in ns for calibrations; the thread's CPU time for the
 * costs measured on one thread.  Inline: the window reads it around its
 * snapshots.
 */
#ifndef KSCALE_CLOCK_H
#define KSCALE_CLOCK_H

#include <time.h>

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * The harness's own spans (a thread's time in its loop), ns: the monotonic
 * clock; the simulator's build reads the running CPU's virtual clock at
 * no cost (lib/sim/arch.h), so that the model's time does not move by it.
 */
#ifndef span_clock_ns
static inline double span_clock_ns(void)
{
	return now_ns();
}
#endif

/*
 * The calling thread's CPU time, in ns: what a measure of a cost on one
 * thread reads, so that the time the host's other tasks take the CPU
 * away is not counted (beside busy loops and builds, an ordered rdtsc
 * read 18.5-884 ns a read on the wall clock, 18.5-20.3 ns on this one).
 */
static inline double thread_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static inline void sleep_until(double t)
{
	struct timespec ts = { (time_t)t, (long)((t - (time_t)t) * 1e9) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
		;
}

#endif
