// SPDX-License-Identifier: GPL-2.0
/* Machine files for the simulator (machine.h). */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine.h"

/* the engine's own clear is not the model's work (instrument.h) */
#undef memset

struct key {
	const char *name;
	size_t off;
	bool integer;
	bool none_ok;		/* "none": no such pair on this machine */
	double min, max;
};

#define KEY(n, integer, none_ok, lo, hi)				\
	{ #n, offsetof(struct sim_machine, n), integer, none_ok, lo, hi }
#define NUM(n, lo, hi)	KEY(n, false, false, lo, hi)
#define INT(n, lo, hi)	KEY(n, true, false, lo, hi)
#define NONE(n, lo, hi)	KEY(n, false, true, lo, hi)

/* Every figure the simulator reads; each needs a source.KEY line. */
static const struct key keys[] = {
	INT(cpus, 1, SIM_MAX_CPUS),
	INT(nodes, 1, SIM_MAX_NODES),
	INT(threads_per_core, 1, 8),
	INT(line_bytes, 16, SIM_LINE_BYTES_MAX),
	NUM(ghz, 0.01, 100),
	NUM(hit_ns, 0, 1000),
	NONE(line_ns_smt, 0, 100000),
	NUM(line_ns_node, 0, 100000),
	NONE(line_ns_remote, 0, 100000),
	NUM(mem_ns_local, 0, 100000),
	NONE(mem_ns_remote, 0, 100000),
	NUM(atomic_ns, 0, 10000),
	NUM(wake_ns, 0, 1e7),
	NUM(ctxsw_ns, 0, 1e7),
	NUM(ipc, 0.05, 16),
	NONE(smt_throughput, 1, 2),
};

#define NR_KEYS	(sizeof(keys) / sizeof(keys[0]))

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/*
 * A figure as a machine file writes it: decimal digits, a '.' and more
 * digits, an exponent; *d finite.  strtod() alone takes "nan", "inf",
 * hex and a number cut after its '.' or 'e'.
 */
static bool number(const char *v, double *d)
{
	const char *p = v + (*v == '-' || *v == '+');
	size_t n = strspn(p, "0123456789");

	if (!n)
		return false;
	p += n;
	if (*p == '.') {
		n = strspn(++p, "0123456789");
		if (!n)
			return false;
		p += n;
	}
	if (*p == 'e' || *p == 'E') {
		p += p[1] == '-' || p[1] == '+';
		n = strspn(++p, "0123456789");
		if (!n)
			return false;
		p += n;
	}
	if (*p)
		return false;
	errno = 0;
	*d = strtod(v, NULL);
	return !errno && isfinite(*d);
}

/* The key's index in keys[], or NR_KEYS. */
static unsigned int key_index(const char *k)
{
	unsigned int i;

	for (i = 0; i < NR_KEYS && strcmp(k, keys[i].name); i++)
		;
	return i;
}

/*
 * Every line "key = value" of a key the simulator reads, the name, the
 * optional wake_curve or a source.KEY of one of them, each once; the
 * last line ends in a newline (a file cut short does not).
 */
static int parse(FILE *f, const char *path, struct sim_machine *m,
		 char *err, size_t len)
{
	bool seen[NR_KEYS] = { false }, sourced[NR_KEYS] = { false };
	bool named = false, curved = false, curve_sourced = false, *once;
	char line[4096], *k, *v;
	unsigned int i, lineno = 0;
	size_t n;
	double d;

	while (fgets(line, sizeof(line), f)) {
		lineno++;
		n = strlen(line);
		if (!n || line[n - 1] != '\n') {
			snprintf(err, len, "%s:%u: %s", path, lineno,
				 n == sizeof(line) - 1 ? "a line of over 4094 "
				 "characters" : "no newline at the end (the "
				 "file cut short?)");
			return -1;
		}
		line[strcspn(line, "#\n")] = '\0';
		k = trim(line);
		if (!*k)
			continue;
		v = strchr(k, '=');
		if (!v) {
			snprintf(err, len, "%s:%u: not 'key = value'", path,
				 lineno);
			return -1;
		}
		*v++ = '\0';
		k = trim(k);
		v = trim(v);
		if (!strcmp(k, "name"))
			once = &named;
		else if (!strcmp(k, "wake_curve"))
			once = &curved;
		else if (!strcmp(k, "source.wake_curve"))
			once = &curve_sourced;
		else if (!strncmp(k, "source.", 7) &&
			 key_index(k + 7) < NR_KEYS)
			once = &sourced[key_index(k + 7)];
		else if (key_index(k) < NR_KEYS)
			once = &seen[key_index(k)];
		else
			once = NULL;
		if (!once || *once) {
			snprintf(err, len, once ? "%s:%u: %s given twice" :
				 "%s:%u: unknown key '%s' "
				 "(configs/machines/README)", path, lineno, k);
			return -1;
		}
		*once = true;
		if (!strcmp(k, "name")) {
			snprintf(m->name, sizeof(m->name), "%s", v);
			continue;
		}
		if (!strncmp(k, "source.", 7)) {
			if (!*v) {
				snprintf(err, len, "%s:%u: %s is empty", path,
					 lineno, k);
				return -1;
			}
			continue;
		}
		if (!strcmp(k, "wake_curve")) {
			if (sim_machine_wake_curve(m, v)) {
				snprintf(err, len, "%s:%u: wake_curve = '%s': not "
					 "IDLE_NS:WAKE_NS,... with IDLE_NS "
					 "ascending, at most %d points", path,
					 lineno, v, SIM_WAKE_POINTS);
				return -1;
			}
			continue;
		}
		i = key_index(k);
		if (keys[i].none_ok && !strcmp(v, "none")) {
			d = NAN;
		} else {
			if (!number(v, &d) || d < keys[i].min ||
			    d > keys[i].max ||
			    (keys[i].integer && d != floor(d))) {
				snprintf(err, len, "%s:%u: %s = '%s': not %s "
					 "from %g to %g", path, lineno, k, v,
					 keys[i].integer ? "an integer" :
					 "a number", keys[i].min, keys[i].max);
				return -1;
			}
		}
		if (keys[i].integer)
			*(int *)((char *)m + keys[i].off) = (int)d;
		else
			*(double *)((char *)m + keys[i].off) = d;
	}
	if (ferror(f)) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		return -1;
	}
	for (i = 0; i < NR_KEYS; i++) {
		if (!seen[i]) {
			snprintf(err, len, "%s: no %s (the simulator needs it: "
				 "configs/machines/README)", path,
				 keys[i].name);
			return -1;
		}
		if (!sourced[i]) {
			snprintf(err, len, "%s: %s has no source.%s line",
				 path, keys[i].name, keys[i].name);
			return -1;
		}
	}
	return 0;
}

static int check(const char *path, struct sim_machine *m, char *err,
		 size_t len)
{
	const char *why = NULL;

	if (m->cpus % m->nodes)
		why = "cpus is not a multiple of nodes";
	else if ((m->cpus / m->nodes) % m->threads_per_core)
		why = "a node's CPUs are not a multiple of threads_per_core";
	else if (m->line_bytes & (m->line_bytes - 1))
		why = "line_bytes is not a power of two";
	else if (m->threads_per_core > 1 && isnan(m->line_ns_smt))
		why = "line_ns_smt is none with threads_per_core > 1";
	else if (m->threads_per_core > 1 && isnan(m->smt_throughput))
		why = "smt_throughput is none with threads_per_core > 1";
	else if (m->nodes > 1 && (isnan(m->line_ns_remote) ||
				  isnan(m->mem_ns_remote)))
		why = "line_ns_remote or mem_ns_remote is none with nodes > 1";
	if (why) {
		snprintf(err, len, "%s: %s", path, why);
		return -1;
	}
	if (!m->name[0])
		snprintf(err, len, "%s: no name", path), why = "";
	return why ? -1 : 0;
}

int sim_machine_load(const char *name, const char *dir,
		     struct sim_machine *m, char *err, size_t len)
{
	char path[4096];
	FILE *f;
	int ret;

	if (strchr(name, '/') || strstr(name, ".conf"))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "%s/%s.conf", dir, name);
	f = fopen(path, "r");
	if (!f) {
		snprintf(err, len, "machine %s: cannot read %s: %s", name,
			 path, strerror(errno));
		return -1;
	}
	memset(m, 0, sizeof(*m));
	ret = parse(f, path, m, err, len);
	fclose(f);
	if (!ret)
		ret = check(path, m, err, len);
	return ret;
}

int sim_machine_core(const struct sim_machine *m, int cpu)
{
	return cpu / m->threads_per_core;
}

int sim_machine_node(const struct sim_machine *m, int cpu)
{
	return cpu / (m->cpus / m->nodes);
}

int sim_machine_wake_curve(struct sim_machine *m, const char *text)
{
	const char *p = text;
	char *end;
	double idle, wake;
	int n = 0;

	while (*p) {
		idle = strtod(p, &end);
		if (end == p || *end != ':' || !isfinite(idle) || idle < 0)
			return -1;
		p = end + 1;
		wake = strtod(p, &end);
		if (end == p || !isfinite(wake) || wake < 0 ||
		    n == SIM_WAKE_POINTS ||
		    (n && idle <= m->wake_idle_ns[n - 1]))
			return -1;
		m->wake_idle_ns[n] = idle;
		m->wake_at_ns[n++] = wake;
		p = end;
		if (*p == ',')
			p++;
		else if (*p)
			return -1;
	}
	if (!n)
		return -1;
	m->nr_wake = n;
	return 0;
}

double sim_machine_wake_ns(const struct sim_machine *m, double idle_ns)
{
	int i;

	if (!m->nr_wake)
		return m->wake_ns;
	if (idle_ns <= m->wake_idle_ns[0])
		return m->wake_at_ns[0];
	for (i = 1; i < m->nr_wake; i++)
		if (idle_ns <= m->wake_idle_ns[i])
			return m->wake_at_ns[i - 1] +
			       (m->wake_at_ns[i] - m->wake_at_ns[i - 1]) *
			       (idle_ns - m->wake_idle_ns[i - 1]) /
			       (m->wake_idle_ns[i] - m->wake_idle_ns[i - 1]);
	return m->wake_at_ns[m->nr_wake - 1];
}

double sim_machine_line_ns(const struct sim_machine *m, int a, int b)
{
	if (sim_machine_core(m, a) == sim_machine_core(m, b))
		return m->line_ns_smt;
	if (sim_machine_node(m, a) == sim_machine_node(m, b))
		return m->line_ns_node;
	return m->line_ns_remote;
}
