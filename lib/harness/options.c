// SPDX-License-Identifier: GPL-2.0
/* The flags every bench binary takes, and the model's knobs. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define MAX_SECONDS	3600.0

static const char *flag_value(const char *arg, const char *flag)
{
	size_t n = strlen(flag);

	if (strncmp(arg, flag, n))
		return NULL;
	if (arg[n] == '=')
		return arg + n + 1;
	return arg[n] ? NULL : "";
}

/* "0.5", "2s", "250ms": seconds, finite, within (min, MAX_SECONDS]. */
static int parse_seconds(const char *flag, const char *s, double min_excl,
			 double *out, char *err, size_t len)
{
	char *end;
	double v, scale = 1.0;

	errno = 0;
	v = strtod(s, &end);
	if (!strcmp(end, "ms"))
		scale = 1e-3;
	else if (*end && strcmp(end, "s"))
		end = NULL;
	v *= scale;
	if (!*s || !end || errno || !isfinite(v) || v <= min_excl ||
	    v > MAX_SECONDS) {
		snprintf(err, len, "%s=%s: expected seconds above %g and at "
			 "most %g (e.g. 0.5, 2s, 250ms)", flag, s, min_excl,
			 MAX_SECONDS);
		return -1;
	}
	*out = v;
	return 0;
}

static void knob_values_free(struct knob_values *kv)
{
	while (kv->nr > 0)
		free(kv->value[--kv->nr]);
	free(kv->value);
	kv->value = NULL;
}

/*
 * "1,2" -> "1", "2", replacing what kv had (a knob's default, or the
 * same flag given earlier).  An empty item ("1,,2", ",1", "1,", "") is
 * refused, not skipped: it is a slip of the keyboard, and the run would
 * silently lack the value the user meant.
 */
static int split_list(const char *s, struct knob_values *kv)
{
	const char *end;

	knob_values_free(kv);
	kv->value = calloc(strlen(s) + 1, sizeof(char *));
	for (;;) {
		end = strchrnul(s, ',');
		if (end == s)
			return -1;
		kv->value[kv->nr++] = strndup(s, end - s);
		if (!*end)
			return 0;
		s = end + 1;
	}
}

/* --mounts=2 or --path-work-ns=auto: '-' in flags stands for '_'. */
static void knob_flag(char *flag, size_t len, const char *name)
{
	size_t i;

	snprintf(flag, len, "--%s", name);
	for (i = 2; flag[i]; i++)
		if (flag[i] == '_')
			flag[i] = '-';
}

static int set_knob(const struct kscale_knob *k, struct knob_values *kv,
		    const char *value, char *err, size_t len)
{
	int i;

	char flag[96], why[160];

	knob_flag(flag, sizeof(flag), k->name);
	if (split_list(value, kv)) {
		snprintf(err, len, "%s: empty value", flag);
		return -1;
	}
	for (i = 0; i < kv->nr; i++) {
		if (k->check(kv->value[i], why, sizeof(why))) {
			snprintf(err, len, "%s=%s: %s", flag, kv->value[i],
				 why);
			return -1;
		}
	}
	return 0;
}

static const char *knob_flag_value(const char *arg, const char *name)
{
	char flag[96];

	knob_flag(flag, sizeof(flag), name);
	return flag_value(arg, flag);
}

static int parse_knob(struct kscale_options *o, const struct kscale_model *m,
		      const char *arg, char *err, size_t len, bool *matched)
{
	const char *v;
	int i;

	for (i = 0; i < m->nr_knobs; i++) {
		v = knob_flag_value(arg, m->knobs[i].name);
		if (!v)
			continue;
		*matched = true;
		if (!*v && strchr(arg, '=')) {
			snprintf(err, len, "%s needs a value", arg);
			return -1;
		}
		/* a bare boolean flag, e.g. --migrate */
		return set_knob(&m->knobs[i], &o->knobs[i], *v ? v : "1",
				err, len);
	}
	*matched = false;
	return 0;
}

static int parse_gbench(struct kscale_options *o, char *arg)
{
	const char *v;

	if (strncmp(arg, "--benchmark_", 12) && strncmp(arg, "--v=", 4))
		return 0;
	v = flag_value(arg, "--benchmark_out");
	if (v) {
		o->out = v;
		return 1;
	}
	v = flag_value(arg, "--benchmark_repetitions");
	if (v)
		o->repetitions = atoi(v) > 0 ? atoi(v) : 1;
	o->gb_argv[o->gb_argc++] = arg;
	return 1;
}

static int parse_int(const char *flag, const char *s, int min, int *out,
		     char *err, size_t len)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || v < min || v > (1 << 20)) {
		snprintf(err, len, "%s=%s: expected a whole number from %d",
			 flag, s, min);
		return -1;
	}
	*out = (int)v;
	return 0;
}

static int parse_flag(struct kscale_options *o, const char *arg, char *err,
		      size_t len)
{
	const char *v;

	if ((v = flag_value(arg, "--cpus")))
		o->cpus = v;
	else if ((v = flag_value(arg, "--placement")))
		o->placement = v;
	else if ((v = flag_value(arg, "--workloads")))
		o->workloads = v;
	else if ((v = flag_value(arg, "--variants")))
		o->variants = v;
	else if ((v = flag_value(arg, "--duration")))
		return parse_seconds("--duration", v, 0, &o->duration, err, len);
	else if ((v = flag_value(arg, "--warmup")))
		return parse_seconds("--warmup", v, -1e-9, &o->warmup, err, len);
	else if ((v = flag_value(arg, "--watchdog")))
		return parse_seconds("--watchdog", v, 0, &o->watchdog, err,
				     len);
	else if ((v = flag_value(arg, "--calibration")))
		o->calibration = v;
	else if ((v = flag_value(arg, "--numa-emulate")))
		return parse_int("--numa-emulate", v, 1, &o->numa_emulate, err,
				 len);
	else if ((v = flag_value(arg, "--slice-us")))
		return parse_int("--slice-us", v, 1, &o->slice_us, err, len);
	else if ((v = flag_value(arg, "--preempt"))) {
		if (strcmp(v, "none") && strcmp(v, "full")) {
			snprintf(err, len, "--preempt=%s: expected none or "
				 "full", v);
			return -1;
		}
		o->preempt_full = !strcmp(v, "full");
	} else if ((v = flag_value(arg, "--perf"))) {
		if (strcmp(v, "true") && strcmp(v, "false")) {
			snprintf(err, len, "--perf=%s: expected true or false",
				 v);
			return -1;
		}
		o->perf = !strcmp(v, "true");
	} else if ((v = flag_value(arg, "--profile"))) {
		/* bare, as a boolean knob may be */
		if (*v && strcmp(v, "true") && strcmp(v, "false")) {
			snprintf(err, len, "--profile=%s: expected true or "
				 "false", v);
			return -1;
		}
		o->profile = strcmp(v, "false");
		return 0;
	} else if (!strcmp(arg, "--dry-run"))
		o->dry_run = true;
	else if (!strcmp(arg, "--list"))
		o->list = true;
	else if (!strcmp(arg, "--oversubscribe"))
		o->oversubscribe = true;
	else if (!strcmp(arg, "--help") || !strcmp(arg, "-h"))
		o->help = true;
	else {
		snprintf(err, len, "unknown option '%s' (see --help)", arg);
		return -1;
	}
	if (v && !*v) {
		snprintf(err, len, "%s needs a value", arg);
		return -1;
	}
	return 0;
}

struct kscale_variant_table kscale_variants;

/* The model's rows, then the bench's host rows, each checked. */
static int join_variants(const struct kscale_model *m, char *err, size_t len)
{
	int nr_model = m->variants->nr, nr = nr_model + m->nr_host_variants;
	struct kscale_variant *all = malloc(nr * sizeof(*all));
	char why[192] = "";
	int i, j;

	if (!all)
		abort();
	memcpy(all, m->variants->rows, nr_model * sizeof(*all));
	memcpy(all + nr_model, m->host_variants,
	       m->nr_host_variants * sizeof(*all));
	for (i = 0; i < nr && !why[0]; i++) {
		if (kscale_variant_check(&all[i], i < nr_model, why,
					 sizeof(why)))
			break;
		for (j = 0; j < i; j++)
			if (!strcmp(all[j].name, all[i].name))
				snprintf(why, sizeof(why), "variant '%s': two "
					 "rows", all[i].name);
	}
	if (why[0]) {
		snprintf(err, len, "the variant table is wrong: %s", why);
		free(all);
		return -1;
	}
	free((void *)kscale_variants.rows);	/* a parse before (the fuzzer) */
	kscale_variants.rows = all;
	kscale_variants.nr = nr;
	return 0;
}

static void options_defaults(struct kscale_options *o,
			     const struct kscale_model *m, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	o->prog = m->name;
	o->placement = "compact";
	o->duration = 1.0;
	o->warmup = 0.2;
	o->watchdog = 30;
	o->perf = true;
	o->repetitions = 1;
	o->knobs = calloc(m->nr_knobs, sizeof(*o->knobs));
	o->gb_argv = calloc(argc + 1, sizeof(char *));
	o->gb_argv[o->gb_argc++] = argv[0];
}

int options_parse(struct kscale_options *o, const struct kscale_model *m,
		  int argc, char **argv, char *err, size_t len)
{
	bool matched;
	int i;

	options_defaults(o, m, argc, argv);
	if (join_variants(m, err, len))
		return -1;
	for (i = 0; i < m->nr_knobs; i++)
		if (set_knob(&m->knobs[i], &o->knobs[i], m->knobs[i].def,
			     err, len))
			return -1;
	for (i = 1; i < argc; i++) {
		if (parse_gbench(o, argv[i]))
			continue;
		if (parse_knob(o, m, argv[i], err, len, &matched))
			return -1;
		if (!matched && parse_flag(o, argv[i], err, len))
			return -1;
	}
	return 0;
}

int options_select(const char *list, const char *what, const char **names,
		   int nr, bool *on, char *err, size_t len)
{
	struct knob_values kv = { 0 };
	int i, j, ret = 0;

	for (i = 0; i < nr; i++)
		on[i] = !list;
	if (!list)
		return 0;
	if (split_list(list, &kv)) {
		snprintf(err, len, "--%ss=%s: an empty name in the list", what,
			 list);
		ret = -1;
	}
	for (j = 0; !ret && j < kv.nr; j++) {
		for (i = 0; i < nr && strcmp(names[i], kv.value[j]); i++)
			;
		if (i == nr) {
			snprintf(err, len, "unknown %s '%s' (see --list)",
				 what, kv.value[j]);
			ret = -1;
		} else {
			on[i] = true;
		}
	}
	knob_values_free(&kv);
	return ret;
}

void options_usage(const struct kscale_model *m)
{
	char flag[96];
	int i;

	printf("usage: %s [OPTION]... [--benchmark_*...]\n%s\n\n", m->name,
	       m->doc);
	printf("Common options:\n"
	       "  --cpus=LIST          thread counts, e.g. 1,2,4 | 1-8 | "
	       "sweep | all | all*2 | 1-all |\n"
	       "                       1,sweep,all*2. sweep (default): 1, 2, "
	       "4... below all, each\n"
	       "                       node boundary of the placement, all. "
	       "all: the usable CPUs;\n"
	       "                       all*K: K times as many (needs "
	       "--oversubscribe)\n"
	       "  --placement=POLICY   compact (fill a node first), spread "
	       "(round-robin over nodes), list:0,2,4\n"
	       "                       (a CPU listed twice needs "
	       "--oversubscribe)\n"
	       "  --workloads=LIST     workloads to run (default all)\n"
	       "  --variants=LIST      variants to run (default all)\n"
	       "  --duration=SECONDS   measurement window per run (default 1)\n"
	       "  --warmup=SECONDS     warm-up before the window (default 0.2)\n"
	       "  --watchdog=SECONDS   fail a run whose threads do not reach "
	       "the window, or leave\n"
	       "                       it, within SECONDS (default 30)\n"
	       "  --numa-emulate=N     split the allowed CPUs into N pretend "
	       "nodes (memory not bound)\n"
	       "  --oversubscribe      allow more threads than CPUs\n"
	       "  --slice-us=N         model tasks' time slice (default: CFS's "
	       "0.75 ms x (1 + log2 CPUs))\n"
	       "  --preempt=MODEL      none (a task yields only at preemption "
	       "points, default)\n"
	       "                       or full (also at preempt_enable() back "
	       "to 0)\n"
	       "  --perf=BOOL          true (default, where perf works): perf "
	       "record -e cpu-clock -g\n"
	       "                       over host variants' windows, "
	       "kernel_<function>_{children,self}_pct\n"
	       "  --profile[=BOOL]     lockstat of the models' shared "
	       "resources, res_<class>_* counters,\n"
	       "                       and cache-line transfer latencies in "
	       "the context (default\n"
	       "                       false: timing every lock perturbs tight "
	       "loops)\n"
	       "  --calibration=FILE   reuse the `auto` values FILE has, "
	       "measure the others and\n"
	       "                       save them all in FILE (runs on two "
	       "kernels at the same work)\n"
	       "  --dry-run            print the thread -> CPU -> node plan and "
	       "exit\n"
	       "  --list               list workloads, variants and knobs\n"
	       "  --help               this text\n"
	       "  --benchmark_*        Google Benchmark's own flags, e.g. "
	       "--benchmark_repetitions=9\n"
	       "                       --benchmark_out=FILE "
	       "(written whole or not at all)\n\nModel knobs (comma lists "
	       "run every value):\n");
	for (i = 0; i < m->nr_knobs; i++) {
		knob_flag(flag, sizeof(flag), m->knobs[i].name);
		printf("  %-21s%s (default %s)\n", flag, m->knobs[i].doc,
		       m->knobs[i].def);
	}
}

void options_list(const struct kscale_model *m)
{
	int i;

	printf("model %s: %s\n", m->name, m->doc);
	for (i = 0; i < m->nr_workloads; i++)
		printf("  workload %-12s %s\n", m->workloads[i].name,
		       m->workloads[i].doc);
	for (i = 0; i < kscale_variants.nr; i++)
		printf("  variant  %-12s %s\n", kscale_variants.rows[i].name,
		       kscale_variants.rows[i].doc);
	for (i = 0; i < m->nr_knobs; i++)
		printf("  knob     %-12s %s (default %s)\n", m->knobs[i].name,
		       m->knobs[i].doc, m->knobs[i].def);
}

bool kscale_variant_selected(const struct kscale_options *o, const char *name)
{
	int i;

	for (i = 0; i < kscale_variants.nr; i++)
		if (!strcmp(kscale_variants.rows[i].name, name))
			return o->variant_on[i];
	return false;
}

bool kscale_knob_has_value(const struct kscale_options *o, const char *knob,
			   const char *value)
{
	const struct kscale_model *m = &kscale_model;
	int i, j;

	for (i = 0; i < m->nr_knobs; i++)
		if (!strcmp(m->knobs[i].name, knob))
			for (j = 0; j < o->knobs[i].nr; j++)
				if (!strcmp(o->knobs[i].value[j], value))
					return true;
	return false;
}

void kscale_skip_variant(const struct kscale_options *o, const char *name,
			 const char *why)
{
	const struct kscale_model *m = &kscale_model;
	char key[96];
	int i;

	for (i = 0; i < kscale_variants.nr; i++)
		if (!strcmp(kscale_variants.rows[i].name, name) &&
		    o->variant_on[i]) {
			o->variant_on[i] = false;
			fprintf(stderr, "%s: %s skipped: %s\n", m->name, name,
				why);
			snprintf(key, sizeof(key), "skipped_%s", name);
			kscale_add_context(key, "%s", why);
		}
}

int kscale_check_long(const char *value, long min, long max, char *err,
		      size_t len)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(value, &end, 10);
	if (!*value || *end || errno || v < min || v > max) {
		snprintf(err, len, "expected a whole number from %ld to %ld",
			 min, max);
		return -1;
	}
	return 0;
}

int kscale_check_bool(const char *value, char *err, size_t len)
{
	return kscale_check_long(value, 0, 1, err, len);
}

int kscale_check_ns_or_auto(const char *value, char *err, size_t len)
{
	if (!strcmp(value, "auto"))
		return 0;
	return kscale_check_long(value, 0, 10 * 1000 * 1000, err, len);
}
