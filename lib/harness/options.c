// SPDX-License-Identifier: GPL-2.0
/* The flags every bench binary takes, and the model's knobs. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "options.h"

#define MAX_SECONDS	3600.0
#define MAX_INT		(1 << 20)

static const char *const preempt_models[] = { "none", "full", NULL };

/*
 * The flags every bench binary takes, then the model's knobs: one table,
 * the knobs' values in o->knobs (if o has them: --help needs no values).
 * nr_common: where the knobs start.
 */
static struct kscale_flag *options_flags(struct kscale_options *o,
					 const struct kscale_model *m,
					 int *nr_common)
{
	const struct kscale_flag common[] = {
		KSCALE_FLAG_STRING("cpus", "LIST", &o->cpus, NULL, "sweep",
			"thread counts, e.g. 1,2,4 | 1-8 | sweep | all | all*2 |\n"
			"1-all | 1,sweep,all*2. sweep: 1, 2, 4... below all,\n"
			"each node boundary of the placement, all. all: the\n"
			"usable CPUs; all*K: K times as many (needs\n"
			"--oversubscribe)"),
		KSCALE_FLAG_STRING("placement", "POLICY", &o->placement,
			"compact", NULL,
			"compact (fill a node first), spread (round-robin\n"
			"over nodes), list:0,2,4 (a CPU listed twice needs\n"
			"--oversubscribe)"),
		KSCALE_FLAG_STRING("workloads", "LIST", &o->workloads, NULL,
			"all", "workloads to run"),
		KSCALE_FLAG_STRING("variants", "LIST", &o->variants, NULL,
			"all", "variants to run"),
		KSCALE_FLAG_SECONDS("duration", "SECONDS", &o->duration,
			KSCALE_ABOVE(0, MAX_SECONDS), "1",
			"measurement window per run"),
		KSCALE_FLAG_SECONDS("warmup", "SECONDS", &o->warmup,
			KSCALE_FROM(0, MAX_SECONDS), "0.2",
			"warm-up before the window"),
		KSCALE_FLAG_SECONDS("window-until-counted", "SECONDS",
			&o->until_counted, KSCALE_FROM(0, MAX_SECONDS), "0",
			"go on past the window, up to SECONDS more, until\n"
			"every thread has an operation in it, the window as\n"
			"long as it lasted (a check that no thread is starved\n"
			"or uncounted: kscale vm-test); model rows only, each\n"
			"row's in its until_counted_s; names on stderr up to\n"
			"8 threads it gave up on, with where the host and the\n"
			"model scheduler have them"),
		KSCALE_FLAG_SECONDS("watchdog", "SECONDS", &o->watchdog,
			KSCALE_ABOVE(0, MAX_SECONDS), "30",
			"fail a run whose threads do not reach the window,\n"
			"or leave it, within SECONDS"),
		KSCALE_FLAG_INT("numa-emulate", "N", &o->numa_emulate,
			KSCALE_FROM(1, MAX_INT), "the real nodes",
			"split the allowed CPUs into N pretend nodes\n"
			"(memory not bound)"),
		KSCALE_FLAG_STRING("sim", "MACHINE", &o->sim, NULL, "off",
			"run the model variants simulated, in virtual time, on\n"
			"MACHINE's virtual CPUs: a configs/machines name, a\n"
			".conf path, or here (this machine, measured);\n"
			"--cpus and --placement then count its CPUs\n"
			"(docs/sim.md)"),
		KSCALE_FLAG_INT("sim-seed", "N", &o->sim_seed,
			KSCALE_FROM(1, MAX_INT), "1",
			"the simulation's seed, the next one for each\n"
			"repetition: the same seed, the same result"),
		KSCALE_FLAG_BOOL("oversubscribe", &o->oversubscribe, "0",
			"allow more threads than CPUs"),
		KSCALE_FLAG_INT("slice-us", "N", &o->slice_us,
			KSCALE_FROM(1, MAX_INT),
			"CFS's 0.75 ms x (1 + log2 CPUs)",
			"model tasks' time slice"),
		KSCALE_FLAG_CHOICE("preempt", "MODEL", &o->preempt_full,
			preempt_models, "none",
			"none (a task yields only at preemption points)\n"
			"or full (also at preempt_enable() back to 0)"),
		KSCALE_FLAG_BOOL("perf", &o->perf, "1",
			"perf record -e cpu-clock -g over host variants'\n"
			"windows, kernel_<function>_{children,self}_pct\n"
			"(where perf works)"),
		KSCALE_FLAG_BOOL("profile", &o->profile, "0",
			"lockstat of the models' shared resources,\n"
			"res_<class>_* counters, and cache-line transfer\n"
			"latencies in the context (off by default: timing\n"
			"every lock perturbs tight loops)"),
		KSCALE_FLAG_STRING("calibration", "FILE", &o->calibration,
			NULL, "none",
			"reuse the `auto` values FILE has, measure the\n"
			"others and save them all in FILE (runs on two\n"
			"kernels at the same work)"),
		KSCALE_FLAG_BOOL("dry-run", &o->dry_run, "0",
			"print the thread counts, variants, knob values and\n"
			"the thread -> CPU -> node plan, and exit"),
		KSCALE_FLAG_ACTION("list", 0, &o->list,
			"list workloads, variants, knobs and flags"),
		KSCALE_FLAG_ACTION("help", 'h', &o->help, "this text"),
	};
	struct kscale_flag *f = calloc(ARRAY_SIZE(common) + m->nr_knobs,
				       sizeof(*f));
	const struct kscale_knob *k;
	int i;

	if (!f)
		abort();
	memcpy(f, common, sizeof(common));
	for (i = 0; i < m->nr_knobs; i++) {
		k = &m->knobs[i];
		/* a boolean knob is a list too: --migrate=0,1 runs both */
		f[ARRAY_SIZE(common) + i] = (struct kscale_flag){
			.name = k->name, .type = KSCALE_FLAG_T_LIST,
			.metavar = k->check == kscale_check_bool ? "[=0|1]" :
				   "=LIST",
			.value = o->knobs ? &o->knobs[i] : NULL,
			.def = k->def, .doc = k->doc, .check = k->check,
			.bare = k->check == kscale_check_bool,
		};
	}
	*nr_common = ARRAY_SIZE(common);
	return f;
}

/* arg's value if it is FLAG=VALUE, else NULL. */
static const char *gbench_value(const char *arg, const char *flag)
{
	size_t n = strlen(flag);

	return strncmp(arg, flag, n) || arg[n] != '=' ? NULL : arg + n + 1;
}

/*
 * Google Benchmark's flags go to it, but --benchmark_out, written via a
 * temporary file (main.c).  A format it does not know is refused here:
 * it would print its usage and exit 0.  1: arg is one, -1: refused.
 */
static int parse_gbench(struct kscale_options *o, char *arg, char *err,
			size_t len)
{
	static const char *const formats[] = {
		"--benchmark_format", "--benchmark_out_format",
	};
	const char *v;
	size_t i;

	if (strncmp(arg, "--benchmark_", 12) && strncmp(arg, "--v=", 4))
		return 0;
	for (i = 0; i < ARRAY_SIZE(formats); i++) {
		v = gbench_value(arg, formats[i]);
		if (v && strcmp(v, "console") && strcmp(v, "json") &&
		    strcmp(v, "csv")) {
			snprintf(err, len, "%s: expected console, json or csv",
				 arg);
			return -1;
		}
	}
	if (!strncmp(arg, "--benchmark_out", 15) && (!arg[15] || arg[15] == '=')) {
		v = gbench_value(arg, "--benchmark_out");
		if (!v || !*v) {
			snprintf(err, len, "%s needs a file name "
				 "(--benchmark_out=FILE)", arg);
			return -1;
		}
		o->out = v;
		return 1;
	}
	v = gbench_value(arg, "--benchmark_repetitions");
	if (v)
		o->repetitions = atoi(v) > 0 ? atoi(v) : 1;
	o->gb_argv[o->gb_argc++] = arg;
	return 1;
}

struct kscale_variant_table kscale_variants;

/* The model's rows, then the bench's host rows, each checked. */
static int join_variants(const struct kscale_model *m, char *err, size_t len)
{
	int nr_model = m->variants->nr, nr = nr_model + m->nr_host_variants;
	struct kscale_variant *all = malloc(nr * sizeof(*all));
	char why[192];

	if (!all)
		abort();
	memcpy(all, m->variants->rows, nr_model * sizeof(*all));
	memcpy(all + nr_model, m->host_variants,
	       m->nr_host_variants * sizeof(*all));
	if (kscale_variant_rows_check(all, nr, nr_model, why, sizeof(why))) {
		snprintf(err, len, "the variant table is wrong: %s", why);
		free(all);
		return -1;
	}
	free((void *)kscale_variants.rows);	/* a parse before (the fuzzer) */
	kscale_variants.rows = all;
	kscale_variants.nr = nr;
	return 0;
}

/* Each knob of one workload names one of the model's. */
static int check_knob_workloads(const struct kscale_model *m, char *err,
				size_t len)
{
	int i, w;

	for (i = 0; i < m->nr_knobs; i++) {
		for (w = 0; w < m->nr_workloads &&
		     !kscale_knob_of(&m->knobs[i], &m->workloads[w]); w++)
			;
		if (w == m->nr_workloads) {
			snprintf(err, len, "knob %s: no workload %s",
				 m->knobs[i].name, m->knobs[i].workload);
			return -1;
		}
	}
	return 0;
}

static void options_defaults(struct kscale_options *o,
			     const struct kscale_model *m, int argc, char **argv)
{
	memset(o, 0, sizeof(*o));
	o->prog = m->name;
	o->repetitions = 1;
	o->knobs = calloc(m->nr_knobs, sizeof(*o->knobs));
	o->gb_argv = calloc(argc + 1, sizeof(char *));
	o->gb_argv[o->gb_argc++] = argv[0];
}

int options_parse(struct kscale_options *o, const struct kscale_model *m,
		  int argc, char **argv, char *err, size_t len)
{
	struct kscale_flag *flags;
	int i, nr, ret;

	options_defaults(o, m, argc, argv);
	if (join_variants(m, err, len) || check_knob_workloads(m, err, len))
		return -1;
	flags = options_flags(o, m, &nr);
	nr += m->nr_knobs;
	ret = kscale_flags_defaults(flags, nr, err, len);
	for (i = 1; ret >= 0 && i < argc; i++) {
		ret = parse_gbench(o, argv[i], err, len);
		if (!ret)
			ret = kscale_flags_parse(flags, nr, argv[i], err, len);
		if (!ret) {
			snprintf(err, len, "unknown option '%s' (see --help)",
				 argv[i]);
			ret = -1;
		}
	}
	free(flags);
	return ret < 0 ? -1 : 0;
}

int options_select(const char *list, const char *what, const char **names,
		   int nr, bool *on, char *err, size_t len)
{
	struct knob_values kv = { 0 };
	char why[160];
	int i, j, ret = 0;

	for (i = 0; i < nr; i++)
		on[i] = !list;
	if (!list)
		return 0;
	if (kscale_list_split(list, &kv, why, sizeof(why))) {
		snprintf(err, len, "--%ss=%s: %s", what, list, why);
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
	kscale_list_free(&kv);
	return ret;
}

void options_usage(const struct kscale_model *m)
{
	struct kscale_options none = { 0 };
	struct kscale_flag *flags;
	int nr;

	flags = options_flags(&none, m, &nr);
	printf("usage: %s [OPTION]... [--benchmark_*...]\n%s\n\n"
	       "Common options:\n", m->name, m->doc);
	kscale_flags_help(stdout, flags, nr);
	printf("  %-21sGoogle Benchmark's own flags, e.g.\n"
	       "  %-21s--benchmark_repetitions=9, --benchmark_out=FILE\n"
	       "  %-21s(written whole or not at all)\n\n"
	       "Model knobs (comma lists run every value):\n",
	       "--benchmark_*", "", "");
	kscale_flags_help(stdout, flags + nr, m->nr_knobs);
	free(flags);
}

/* --list's flag lines, after the knobs'. */
static void options_list_flags(const struct kscale_model *m)
{
	struct kscale_options none = { 0 };
	struct kscale_flag *flags;
	int nr;

	flags = options_flags(&none, m, &nr);
	kscale_flags_list(stdout, "flag", flags, nr);
	free(flags);
}

void options_list(const struct kscale_model *m)
{
	int i;

	printf("model %s: %s\n", m->name, m->doc);
	for (i = 0; i < m->nr_workloads; i++)
		printf("  workload %-12s %s\n", m->workloads[i].name,
		       m->workloads[i].doc);
	for (i = 0; i < kscale_variants.nr; i++) {
		const struct kscale_variant *v = &kscale_variants.rows[i];
		int kind = spin_lock_kind_of(v->kernel);

		printf("  variant  %-12s %s", v->name, v->doc);
		if (v->kernel)
			printf(" (kernel %s, lock %s)", v->kernel,
			       spin_lock_kind_name(kind));
		printf("\n");
	}
	for (i = 0; i < m->nr_knobs; i++)
		printf("  knob     %-12s %s%s%s%s (default %s)\n",
		       m->knobs[i].name, m->knobs[i].workload ? "(" : "",
		       m->knobs[i].workload ?: "",
		       m->knobs[i].workload ? " only) " : "",
		       m->knobs[i].doc, m->knobs[i].def);
	options_list_flags(m);
}

bool kscale_workload_selected(const struct kscale_options *o,
			      const char *name)
{
	const struct kscale_model *m = &kscale_model;
	int i;

	for (i = 0; i < m->nr_workloads; i++)
		if (!strcmp(m->workloads[i].name, name))
			return o->workload_on[i];
	return false;
}

bool kscale_variant_selected(const struct kscale_options *o, const char *name)
{
	int i;

	for (i = 0; i < kscale_variants.nr; i++)
		if (!strcmp(kscale_variants.rows[i].name, name))
			return o->variant_on[i];
	return false;
}

/* Whether a selected workload takes knob k. */
static bool knob_workload_on(const struct kscale_options *o,
			     const struct kscale_knob *k)
{
	const struct kscale_model *m = &kscale_model;
	int w;

	for (w = 0; w < m->nr_workloads; w++)
		if (o->workload_on[w] && kscale_knob_of(k, &m->workloads[w]))
			return true;
	return false;
}

bool kscale_knob_has_value(const struct kscale_options *o, const char *knob,
			   const char *value)
{
	const struct kscale_model *m = &kscale_model;
	int i, j;

	for (i = 0; i < m->nr_knobs; i++)
		if (!strcmp(m->knobs[i].name, knob) &&
		    knob_workload_on(o, &m->knobs[i]))
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
	return kscale_check_long(value, 0, KSCALE_MAX_NS, err, len);
}

size_t kscale_parse_size(const char *value)
{
	unsigned int shift;
	char *end;
	size_t n;

	errno = 0;
	n = strtoul(value, &end, 10);
	switch (*end) {
	case 'k': case 'K':
		shift = 10;
		break;
	case 'm': case 'M':
		shift = 20;
		break;
	case 'g': case 'G':
		shift = 30;
		break;
	default:
		shift = 0;
		break;
	}
	if (errno || n > SIZE_MAX >> shift)
		return SIZE_MAX;
	return n << shift;
}

int kscale_check_size(const char *value, size_t min, size_t max, char *err,
		      size_t len)
{
	size_t n = kscale_parse_size(value);
	const char *p = value + strspn(value, "0123456789");

	if (p == value || (*p && (strchr("kKmMgG", *p) == NULL || p[1])) ||
	    n < min || n > max) {
		snprintf(err, len, "expected a size from %zu to %zu bytes "
			 "(e.g. 4k, 64m)", min, max);
		return -1;
	}
	return 0;
}
