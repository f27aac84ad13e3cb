// SPDX-License-Identifier: GPL-2.0
/*
 * lib/harness/calibrate.h on this machine: the median of the rounds, on
 * the calibration CPU, a failed or empty round failing the calibration,
 * the caller's affinity put back; --calibration's file, reused and
 * rewritten.
 */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "../lib/sys/affinity.h"
#include "../lib/harness/calibrate.h"
#include "../lib/sys/topology.h"
#include "../lib/kernel/percpu.h"

static struct topology machine;
static char err[512];

/* What the rounds saw: how many ran, on which CPU, and what to do. */
struct probe {
	long calls;
	long off_cpu;		/* rounds not on the calibration CPU */
	int cpu;
	long fail_at;		/* this call fails (-1 with errno), 0: none */
	long empty_at;		/* this call does no operations, 0: none */
};

/* ns per operation, in turn: median 25, mean 217, minimum 10. */
static const double sample_ns[CALIBRATE_ROUNDS] = { 10, 20, 30, 1000, 25 };

static long probe_round(struct kscale_round *r)
{
	struct probe *p = r->arg;

	p->calls++;
	p->off_cpu += sched_getcpu() != p->cpu;
	if (p->calls == p->fail_at) {
		errno = EIO;
		return -1;
	}
	if (p->calls == p->empty_at)
		return 0;
	/* any CALIBRATE_ROUNDS calls in a row see every sample once */
	r->ns = 4 * sample_ns[p->calls % CALIBRATE_ROUNDS];
	return 4;
}

/* 200 us of spinning, 100 operations: the helper's own clock times it. */
/*
 * 200 us of this thread's CPU a round, 100 operations: a round that never
 * waits is timed on the thread's CPU clock, so the host taking the CPU
 * away mid-round (beside busy loops) moves neither end of it.
 */
static long spin_round(struct kscale_round *r)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000L +
	       (t.tv_nsec - t0.tv_nsec) < 200000);
	return 100;
}

static int last_allowed_cpu(void)
{
	return machine.cpus[machine.nr_cpus - 1];
}

/* The calling thread's mask equals a's (read with a mask of its size). */
static void assert_affinity(const struct affinity *a)
{
	cpu_set_t *now = CPU_ALLOC(affinity_possible_cpus());

	assert_non_null(now);
	assert_int_equal(sched_getaffinity(0, a->size, now), 0);
	assert_true(CPU_EQUAL_S(a->size, now, a->set));
	CPU_FREE(now);
}

static void test_median_on_the_calibration_cpu(void **state)
{
	struct probe p = { .cpu = last_allowed_cpu() };
	double ns;

	kscale_calibrate_cpu(p.cpu);
	assert_int_equal(kscale_calibrate(probe_round, &p, &ns, err,
					  sizeof(err)), 0);
	assert_true(ns == 25);
	assert_true(p.calls > CALIBRATE_ROUNDS);
	assert_int_equal(p.off_cpu, 0);
	assert_int_equal(kscale_calibrate(spin_round, NULL, &ns, err,
					  sizeof(err)), 0);
	/* per operation, not per round (200000 ns) */
	assert_true(ns >= 2000 && ns < 100000);
}

static void test_failed_round_fails(void **state)
{
	/* warm-up 0: one warm-up round, then calls 2..6 are timed */
	struct probe p = { .cpu = last_allowed_cpu(), .fail_at = 4 };
	double ns = -1;

	kscale_calibrate_cpu(p.cpu);
	assert_int_equal(kscale_calibrate_warmup(probe_round, &p, 0, &ns, err,
						 sizeof(err)), -1);
	assert_int_equal(errno, EIO);
	assert_non_null(strstr(err, "round 3 of 5 failed"));
	assert_non_null(strstr(err, strerror(EIO)));
	assert_int_equal(p.calls, 4);
	assert_true(ns == -1);
	p = (struct probe){ .cpu = p.cpu, .fail_at = 1 };
	assert_int_equal(kscale_calibrate(probe_round, &p, &ns, err,
					  sizeof(err)), -1);
	assert_non_null(strstr(err, "a warm-up round failed"));
}

static void test_empty_round_fails(void **state)
{
	struct probe p = { .cpu = last_allowed_cpu(), .empty_at = 3 };
	double ns = -1;

	kscale_calibrate_cpu(p.cpu);
	assert_int_equal(kscale_calibrate_warmup(probe_round, &p, 0, &ns, err,
						 sizeof(err)), -1);
	assert_non_null(strstr(err, "round 2 of 5 did no operations"));
	assert_true(ns == -1);
}

/* A narrower mask than the process's, and "this CPU", come back. */
static void test_affinity_restored(void **state)
{
	struct probe p = { .cpu = last_allowed_cpu() };
	struct affinity all, one;
	double ns;

	assert_int_equal(affinity_save(&all), 0);
	one.size = all.size;
	one.set = CPU_ALLOC(affinity_possible_cpus());
	assert_non_null(one.set);
	CPU_ZERO_S(one.size, one.set);
	CPU_SET_S(machine.cpus[0], one.size, one.set);
	assert_int_equal(sched_setaffinity(0, one.size, one.set), 0);
	kscale_set_cpu(machine.cpus[0]);

	kscale_calibrate_cpu(p.cpu);
	assert_int_equal(kscale_calibrate(probe_round, &p, &ns, err,
					  sizeof(err)), 0);
	assert_int_equal(p.off_cpu, 0);
	assert_affinity(&one);
	assert_int_equal(smp_processor_id(), machine.cpus[0]);
	p = (struct probe){ .cpu = p.cpu, .fail_at = 2 };
	assert_int_equal(kscale_calibrate(probe_round, &p, &ns, err,
					  sizeof(err)), -1);
	assert_affinity(&one);
	assert_int_equal(smp_processor_id(), machine.cpus[0]);

	CPU_FREE(one.set);
	assert_int_equal(affinity_restore(&all), 0);
}

static int measured;

static int measure(void *arg, double *ns, char *why, size_t len)
{
	measured++;
	*ns = *(double *)arg;
	return 0;
}

static int measure_fails(void *arg, double *ns, char *why, size_t len)
{
	snprintf(why, len, "no disk");
	return -1;
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_int_equal(fputs(text, f) >= 0, 1);
	assert_int_equal(fclose(f), 0);
}

static void read_file(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	assert_non_null(f);
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/* The file's values are used, others measured; the file then has all. */
static void test_file_reused_and_rewritten(void **state)
{
	char dir[] = "/tmp/kscale-calibrate-XXXXXX", path[64], text[512];
	double v = 41.9;
	unsigned long ns;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cal", dir);
	write_file(path, "# a comment\na.work_ns 12\n\nb.work_ns 7\n");
	assert_int_equal(kscale_calibration_load(path, err, sizeof(err)), 0);
	assert_int_equal(kscale_calibrated("a.work_ns", &ns, measure, &v, err,
					   sizeof(err)), 0);
	assert_int_equal(ns, 12);
	assert_int_equal(measured, 0);
	assert_int_equal(kscale_calibrated("c.work_ns", &ns, measure, &v, err,
					   sizeof(err)), 0);
	assert_int_equal(ns, 41);
	assert_int_equal(measured, 1);
	read_file(path, text, sizeof(text));
	assert_non_null(strstr(text, "\na.work_ns 12\n"));
	assert_non_null(strstr(text, "\nb.work_ns 7\n"));
	assert_non_null(strstr(text, "\nc.work_ns 41\n"));
	assert_int_equal(kscale_calibrated("d.work_ns", &ns, measure_fails,
					   NULL, err, sizeof(err)), -1);
	assert_non_null(strstr(err, "d.work_ns: no disk"));
	read_file(path, text, sizeof(text));
	assert_null(strstr(text, "d.work_ns"));
	assert_string_equal(kscale_calibration_summary() + strlen(path),
			    ": 1 values reused, 1 measured");
	unlink(path);
	rmdir(dir);
}

/*
 * A figure keeps 3 decimals, and the run that measures it uses the value
 * the next one reads; a whole-ns value with decimals is refused at use.
 */
static void test_file_figures(void **state)
{
	char dir[] = "/tmp/kscale-calibrate-XXXXXX", path[64], text[512];
	double v = 2.59612345, got;
	unsigned long ns;

	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cal", dir);
	write_file(path, "sim.here.hit_ns 0.312\nx.work_ns 1.5\n");
	assert_int_equal(kscale_calibration_load(path, err, sizeof(err)), 0);
	measured = 0;
	assert_int_equal(kscale_calibrated_figure("sim.here.hit_ns", &got,
						  measure, &v, err,
						  sizeof(err)), 0);
	assert_true(got == 0.312);
	assert_int_equal(measured, 0);
	assert_int_equal(kscale_calibrated_figure("sim.host.tsc_per_ns", &got,
						  measure, &v, err,
						  sizeof(err)), 0);
	assert_true(got == 2.596);
	assert_int_equal(measured, 1);
	read_file(path, text, sizeof(text));
	assert_non_null(strstr(text, "\nsim.here.hit_ns 0.312\n"));
	assert_non_null(strstr(text, "\nsim.host.tsc_per_ns 2.596\n"));
	assert_int_equal(kscale_calibrated("x.work_ns", &ns, measure, &v, err,
					   sizeof(err)), -1);
	assert_non_null(strstr(err, "x.work_ns: expected a whole number"));
	unlink(path);
	rmdir(dir);
}

/* Each is refused with its line; names differ from those above. */
static void test_file_malformed(void **state)
{
	static const char *const bad[] = {
		"e.ns 1\ne.ns 2\n",	/* a name twice */
		"f.ns\n",		/* no value */
		"g.ns -3\n",
		"h.ns 12 ns\n",
		"i.ns 1.\n",
		"l.ns .5\n",
		"m.ns 1.2345678\n",
		"n.ns 1e3\n",
		" j.ns 4\n",
		"k.ns 99999999999999999999999\n",
	};
	char path[] = "/tmp/kscale-calibrate-XXXXXX";
	unsigned int i;
	int fd;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		fd = mkstemp(path);
		assert_true(fd >= 0);
		close(fd);
		write_file(path, bad[i]);
		assert_int_equal(kscale_calibration_load(path, err,
							 sizeof(err)), -1);
		assert_non_null(strstr(err, i ? "line 1: " : "line 2: "));
		assert_null(strchr(err, '\n'));
		unlink(path);
		strcpy(path, "/tmp/kscale-calibrate-XXXXXX");
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_median_on_the_calibration_cpu),
		cmocka_unit_test(test_failed_round_fails),
		cmocka_unit_test(test_empty_round_fails),
		cmocka_unit_test(test_affinity_restored),
		cmocka_unit_test(test_file_reused_and_rewritten),
		cmocka_unit_test(test_file_figures),
		cmocka_unit_test(test_file_malformed),
	};

	if (topology_from_system(&machine, err, sizeof(err)))
		return 1;
	percpu_setup(&machine);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
