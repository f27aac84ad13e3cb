// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "../kernel/percpu.h"
#include "../kernel/sched.h"
#include "../sys/clock.h"
#include "../sys/affinity.h"
#include "../sys/median.h"
#include "../sys/process.h"
#include "kscale.h"
#include "calibrate.h"

static int calibrate_on = -1;

void kscale_calibrate_cpu(int cpu)
{
	calibrate_on = cpu;
}

/* The lowest CPU of a saved mask (the default calibration CPU), or -1. */
static int first_cpu(const struct affinity *a)
{
	int cpu;

	for (cpu = 0; cpu < (int)a->size * 8; cpu++)
		if (CPU_ISSET_S(cpu, a->size, a->set))
			return cpu;
	return -1;
}

/* The calling thread's voluntary context switches: its waits so far. */
static long waits(void)
{
	struct rusage ru;

	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_nvcsw;
}

/*
 * One round, checked: ns per operation, or -1 with the reason in err.  A
 * round that never waited (no voluntary switch: the path's own work) is
 * timed on the thread's CPU clock, so that what the host's other tasks
 * take of the CPU is not counted (shmem_fault's fault work read 40,701 ns
 * beside two builds against 2,614 ns quiet, on the wall clock); one that
 * waited (for I/O, a server, a lock's sleep) on the wall clock, as its
 * waits are the path's.
 */
static double one_round(kscale_round_fn *round, struct kscale_round *r,
			const char *which, char *err, size_t len)
{
	double t0, cpu0;
	long ops, waited;

	r->ns = 0;
	r->err[0] = '\0';
	errno = 0;
	waited = waits();
	t0 = now_ns();
	cpu0 = thread_now_ns();
	ops = round(r);
	if (!r->ns)
		r->ns = waits() == waited ? thread_now_ns() - cpu0 :
					    now_ns() - t0;
	if (ops > 0)
		return r->ns / ops;
	if (!ops)
		snprintf(err, len, "%s did no operations", which);
	else
		snprintf(err, len, "%s failed: %s", which,
			 r->err[0] ? r->err : strerror(errno));
	return -1;
}

/* Pinned, with the affinity saved already: the median into *ns. */
static int rounds(kscale_round_fn *round, struct kscale_round *r,
		  double warmup_ns, double *ns, char *err, size_t len)
{
	double sample[CALIBRATE_ROUNDS], t0 = now_ns();
	char which[32];
	int i;

	do {
		if (one_round(round, r, "a warm-up round", err, len) < 0)
			return -1;
	} while (now_ns() - t0 < warmup_ns);
	for (i = 0; i < CALIBRATE_ROUNDS; i++) {
		snprintf(which, sizeof(which), "round %d of %d", i + 1,
			 CALIBRATE_ROUNDS);
		sample[i] = one_round(round, r, which, err, len);
		if (sample[i] < 0)
			return -1;
	}
	*ns = kscale_median(sample, CALIBRATE_ROUNDS);
	return 0;
}

int kscale_calibrate_warmup(kscale_round_fn *round, void *arg,
			    double warmup_ns, double *ns, char *err,
			    size_t len)
{
	int this_cpu = kscale_this_cpu, this_node = kscale_this_node;
	struct kscale_round r = { .arg = arg };
	int cpu, ret, restored, saved_errno;
	struct affinity a;

	ret = affinity_save(&a);
	if (ret) {
		snprintf(err, len, "cannot read the CPU affinity: %s",
			 strerror(-ret));
		return -1;
	}
	cpu = calibrate_on >= 0 ? calibrate_on : first_cpu(&a);
	ret = sched_migrate_task(cpu);
	if (ret)
		snprintf(err, len, "cannot run on CPU %d: %s", cpu,
			 strerror(-ret));
	else
		ret = rounds(round, &r, warmup_ns, ns, err, len);
	saved_errno = errno;
	kscale_this_cpu = this_cpu;
	kscale_this_node = this_node;
	restored = affinity_restore(&a);
	/* a failed round's reason first: it is why there is no value */
	if (restored && !ret) {
		snprintf(err, len, "cannot restore the CPU affinity: %s",
			 strerror(-restored));
		return -1;
	}
	errno = saved_errno;
	return ret ? -1 : 0;
}

struct value {
	char *name;
	char *text;	/* as FILE has it: what it is saved as */
	double v;	/* strtod(text): what a run uses */
};

static struct {
	const char *path;	/* NULL without --calibration */
	struct value *v;
	int nr, alloc;
	int reused, measured;
	char summary[4200];
} file;

static struct value *find(const char *name)
{
	int i;

	for (i = 0; i < file.nr; i++)
		if (!strcmp(file.v[i].name, name))
			return &file.v[i];
	return NULL;
}

static int add(const char *name, const char *text)
{
	struct value *v = file.v;

	if (file.nr == file.alloc) {
		file.alloc = file.alloc ? 2 * file.alloc : 16;
		v = realloc(file.v, file.alloc * sizeof(*v));
		if (!v)
			return -1;
		file.v = v;
	}
	v[file.nr].name = strdup(name);
	v[file.nr].text = strdup(text);
	v[file.nr].v = strtod(text, NULL);
	if (!v[file.nr].name || !v[file.nr].text) {
		free(v[file.nr].name);
		free(v[file.nr].text);
		return -1;
	}
	file.nr++;
	return 0;
}

/*
 * A number FILE may hold: up to 15 digits (a double keeps them exactly),
 * then, for a figure, '.' and up to 6 more; at most KSCALE_MAX_NS, as a
 * knob's ns (no figure of the host is larger).
 */
static bool number(const char *s)
{
	size_t whole = strspn(s, "0123456789"), part;

	if (!whole || whole > 15)
		return false;
	if (s[whole]) {
		part = strspn(s + whole + 1, "0123456789");
		if (s[whole] != '.' || !part || part > 6 ||
		    s[whole + 1 + part])
			return false;
	}
	return strtod(s, NULL) <= KSCALE_MAX_NS;
}

/* "NAME VALUE": 0, or -1 with what is wrong with it in err. */
static int parse_line(char *line, char *err, size_t len)
{
	char *name = line, *value;

	value = name + strcspn(name, " \t");
	if (value == name || !*value) {
		snprintf(err, len, "expected NAME VALUE");
		return -1;
	}
	*value++ = '\0';
	value += strspn(value, " \t");
	if (!number(value)) {
		snprintf(err, len, "%s: expected a number from 0 to %d such "
			 "as 12 or 0.345, got '%.40s'", name, KSCALE_MAX_NS,
			 value);
		return -1;
	}
	if (find(name)) {
		snprintf(err, len, "%s: a second value", name);
		return -1;
	}
	if (add(name, value)) {
		snprintf(err, len, "out of memory");
		return -1;
	}
	return 0;
}

int kscale_calibration_load(const char *path, char *err, size_t len)
{
	FILE *f = fopen(path, "r");
	char *line = NULL, why[200];
	size_t size = 0;
	int nr = 0, ret = 0;
	ssize_t n;

	file.path = path;
	remove_dead_tmp(path);
	if (!f) {
		if (errno == ENOENT)
			return 0;
		snprintf(err, len, "--calibration=%s: %s", path,
			 strerror(errno));
		return -1;
	}
	while (!ret && (n = getline(&line, &size, f)) >= 0) {
		nr++;
		if (line[n - 1] == '\n') {
			line[--n] = '\0';
		} else {
			/* save() ends every line: this one was cut short */
			snprintf(err, len, "--calibration=%s: line %d: no "
				 "newline at its end (the file cut short?)",
				 path, nr);
			ret = -1;
			break;
		}
		if (!n || line[0] == '#')
			continue;
		ret = parse_line(line, why, sizeof(why));
		if (ret)
			snprintf(err, len, "--calibration=%s: line %d: %s",
				 path, nr, why);
	}
	if (!ret && ferror(f)) {
		snprintf(err, len, "--calibration=%s: %s", path,
			 strerror(errno));
		ret = -1;
	}
	free(line);
	fclose(f);
	return ret;
}

/* Every value into a new file, renamed over FILE. */
static int save(char *err, size_t len)
{
	char tmp[4200];
	FILE *f;
	int i, bad;

	snprintf(tmp, sizeof(tmp), TMP_PATH_FMT, file.path, (int)getpid());
	f = fopen(tmp, "w");
	if (!f) {
		snprintf(err, len, "--calibration=%s: cannot write %s: %s",
			 file.path, tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "# kscale --calibration: NAME VALUE, `auto` work in "
		"whole ns, --sim's host figures\n");
	for (i = 0; i < file.nr; i++)
		fprintf(f, "%s %s\n", file.v[i].name, file.v[i].text);
	bad = fflush(f) || ferror(f) || fsync(fileno(f));
	if (fclose(f) || bad || rename(tmp, file.path)) {
		snprintf(err, len, "--calibration=%s: cannot write it: %s",
			 file.path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/*
 * FILE's value `name` into *v (*reused), or measure()'s, truncated to
 * whole ns or rounded to 3 decimals as FILE would keep it (so that the
 * run that measures uses what the next one reads), which then goes into
 * FILE: 0, or -1 with the reason in err.
 */
static int calibrated(const char *name, double *v, bool whole,
		      int (*measure)(void *arg, double *v, char *err,
				     size_t len),
		      void *arg, bool *reused, char *err, size_t len)
{
	struct value *found = find(name);
	char why[512], text[64];
	double m;

	*reused = found;
	if (found) {
		*v = found->v;
		file.reused++;
		return 0;
	}
	if (measure(arg, &m, why, sizeof(why))) {
		snprintf(err, len, "calibrating %s: %s", name, why);
		return -1;
	}
	if (!(m > 0))
		m = 0;
	if (m > KSCALE_MAX_NS) {
		snprintf(err, len, "calibrating %s: measured %g, more than "
			 "the %d a value may be", name, m, KSCALE_MAX_NS);
		return -1;
	}
	if (whole)
		snprintf(text, sizeof(text), "%lu", (unsigned long)m);
	else
		snprintf(text, sizeof(text), "%.3f", m);
	*v = strtod(text, NULL);
	file.measured++;
	if (!file.path)
		return 0;
	if (add(name, text)) {
		snprintf(err, len, "calibrating %s: out of memory", name);
		return -1;
	}
	return save(err, len);
}

int kscale_calibrated(const char *name, unsigned long *ns,
		      int (*measure)(void *arg, double *ns, char *err,
				     size_t len),
		      void *arg, char *err, size_t len)
{
	bool reused;
	double v;

	if (calibrated(name, &v, true, measure, arg, &reused, err, len))
		return -1;
	if (v != (unsigned long)v) {
		snprintf(err, len, "--calibration=%s: %s: expected a whole "
			 "number of ns, got %s", file.path, name,
			 find(name)->text);
		return -1;
	}
	*ns = v;
	return 0;
}

int kscale_calibrated_figure(const char *name, double *v,
			     int (*measure)(void *arg, double *v, char *err,
					    size_t len),
			     void *arg, char *err, size_t len)
{
	bool reused;

	if (calibrated(name, v, false, measure, arg, &reused, err, len))
		return -1;
	kscale_add_context(name, "%.3f (%s)", *v,
			   reused ? "reused" : "measured");
	return 0;
}

int kscale_auto(const char *name, const char *how, unsigned long *ns,
		int (*measure)(void *arg, double *ns, char *err, size_t len),
		void *arg, char *err, size_t len)
{
	const char *knob = strchr(name, '.');
	char key[96];

	if (kscale_calibrated(name, ns, measure, arg, err, len))
		return -1;
	snprintf(key, sizeof(key), "%s_auto", knob ? knob + 1 : name);
	kscale_add_context(key, "%lu%s%s%s", *ns, how ? " (" : "",
			   how ? how : "", how ? ")" : "");
	return 0;
}

int kscale_calibrate_less(kscale_round_fn *round, void *arg,
			  kscale_round_fn *base, void *base_arg, double *ns,
			  double *round_ns, double *base_ns, char *err,
			  size_t len)
{
	double r, b;

	if (kscale_calibrate(round, arg, &r, err, len) ||
	    kscale_calibrate(base, base_arg, &b, err, len))
		return -1;
	*ns = r - b;
	if (round_ns)
		*round_ns = r;
	if (base_ns)
		*base_ns = b;
	return 0;
}

const char *kscale_calibration_summary(void)
{
	if (!file.path)
		return NULL;
	snprintf(file.summary, sizeof(file.summary),
		 "%s: %d values reused, %d measured", file.path, file.reused,
		 file.measured);
	return file.summary;
}
