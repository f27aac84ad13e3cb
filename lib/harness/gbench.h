/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Google Benchmark from C.  Two ways to register a benchmark:
 *
 * - kb_register_batch(): a classic iteration benchmark.  The body is one C
 *   call per run that loops over the run's iteration count itself, so no
 *   cross-language call happens per iteration.
 * - kb_register_threads(): a threaded run whose every thread makes one C
 *   call; the C side runs its own fixed window and reports the seconds
 *   measured (manual time) and, from thread 0, the run's counters.
 *
 * kb_run() returns the number of runs that failed: Google Benchmark itself
 * exits 0 after SkipWithError, the caller must not.  It sets *nr_run to the
 * benchmarks that ran: 0 when --benchmark_filter matched none, and why in
 * why[len] (Google Benchmark's words, not printed).
 */
#ifndef KSCALE_GBENCH_H
#define KSCALE_GBENCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KB_MAX_COUNTERS	96

struct kb_counter {
	const char *name;
	double value;
};

struct kb_result {
	double seconds;			/* the window this thread measured */
	const char *error;		/* non-NULL: the run failed */
	int nr_counters;		/* thread 0 only: the run's counters */
	struct kb_counter counters[KB_MAX_COUNTERS];
};

typedef void (*kb_thread_fn)(void *arg, int thread, struct kb_result *res);
typedef void (*kb_batch_fn)(void *arg, uint64_t iterations);

void kb_register_threads(const char *name, int threads, kb_thread_fn fn,
			 void *arg);
void kb_register_batch(const char *name, kb_batch_fn fn, void *arg);
void kb_add_context(const char *key, const char *value);
/*
 * Parses and removes Google Benchmark's flags; -1 if any is left over,
 * why in why[len] (its words, not printed).
 */
int kb_initialize(int *argc, char **argv, char *why, size_t len);
int kb_run(int *nr_run, char *why, size_t len);

#ifdef __cplusplus
}
#endif

#endif
