// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: options_parse() and options_select(), a bench binary's
 * command line: --duration/--warmup/--watchdog seconds, whole numbers,
 * --preempt, --perf, --profile, Google Benchmark's flags and the knobs'
 * comma lists through kscale_check_long/bool/ns_or_auto and a model's
 * own check, all through the flag table (flags.c).  The input is the command line, an argument a line.
 * Beyond not crashing: what parses is in range (seconds finite, within
 * their bounds; every knob value non-empty, without a comma, passing
 * its check and given once), a refusal says why, a knob's values and a duration printed
 * back parse to the same, a selected list turns on what it names.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/harness/flags.c"
#include "../../lib/harness/options.c"
#include "../../lib/kernel/kernel_locks.c"
#include "fuzz.h"

#define MAX_ARGS	64

/* A model's check of its own, as rwsem's --rw has. */
static int check_rw(const char *v, char *err, size_t len)
{
	if (!strcmp(v, "randrw") || !strcmp(v, "randread"))
		return 0;
	snprintf(err, len, "expected randrw or randread");
	return -1;
}

static int check_mounts(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 1, 64, err, len);
}

static const struct kscale_workload workloads[] = {
	{ .name = "openbench" }, { .name = "stat" },
};

static const int impl;

KSCALE_VARIANT_TABLE(fuzz_variants,
	{ "atomic", "", &impl, .kernel = "2.6.22" },
	{ "percpu", "", &impl, .kernel = "2.6.26" },
);

static const struct kscale_variant host_variants[] = {
	{ "real", "", .host = &impl },
};

static const struct kscale_knob knobs[] = {
	{ "mounts", "1,2", "mounts", check_mounts },
	{ "path_work_ns", "0,auto", "work", kscale_check_ns_or_auto },
	{ "migrate", "0", "migrate", kscale_check_bool },
	{ "rw", "randrw", "pattern", check_rw },
};

KSCALE_MODEL("fuzz", "options_parse() under libFuzzer", NULL,
	     &fuzz_variants);

/* options.c's kscale_skip_variant() adds context: not called here. */
void kscale_add_context(const char *key, const char *fmt, ...)
{
}

static void options_free(struct kscale_options *o)
{
	int i, j;

	for (i = 0; i < kscale_model.nr_knobs; i++) {
		for (j = 0; j < o->knobs[i].nr; j++)
			free(o->knobs[i].value[j]);
		free(o->knobs[i].value);
	}
	free(o->knobs);
	free(o->gb_argv);
}

static int parse(struct kscale_options *o, int argc, char **argv)
{
	char err[512];
	int ret;

	err[0] = '\0';
	ret = options_parse(o, &kscale_model, argc, argv, err, sizeof(err));
	FUZZ_CHECK(ret == 0 || ret == -1);
	FUZZ_CHECK(ret == 0 || err[0]);
	return ret;
}

/* --duration=D printed back (%.17g) is D again. */
static void check_seconds(const char *flag, double v)
{
	struct kscale_options o;
	char arg[64], *argv[] = { "fuzz", arg, NULL };

	snprintf(arg, sizeof(arg), "%s=%.17g", flag, v);
	FUZZ_CHECK(!parse(&o, 2, argv));
	if (!strcmp(flag, "--duration"))
		FUZZ_CHECK(o.duration == v);
	else if (!strcmp(flag, "--warmup"))
		FUZZ_CHECK(o.warmup == v);
	else
		FUZZ_CHECK(o.watchdog == v);
	options_free(&o);
}

/* A knob's values, joined by commas, parse to the same values. */
static void check_knob(const struct kscale_knob *k,
		       const struct knob_values *kv)
{
	struct kscale_options o;
	char *arg, *p, *argv[3] = { "fuzz", NULL, NULL }, why[256];
	size_t len = strlen(k->name) + 4;
	int i, j;

	FUZZ_CHECK(kv->nr >= 1);
	for (i = 0; i < kv->nr; i++) {
		FUZZ_CHECK(kv->value[i][0]);
		for (j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(kv->value[i], kv->value[j]));
		FUZZ_CHECK(!strchr(kv->value[i], ','));
		FUZZ_CHECK(!k->check(kv->value[i], why, sizeof(why)));
		len += strlen(kv->value[i]) + 1;
	}
	arg = p = malloc(len);
	p += sprintf(p, "--");
	for (i = 0; k->name[i]; i++)
		*p++ = k->name[i] == '_' ? '-' : k->name[i];
	for (i = 0; i < kv->nr; i++)
		p += sprintf(p, "%c%s", i ? ',' : '=', kv->value[i]);
	argv[1] = arg;
	FUZZ_CHECK(!parse(&o, 2, argv));
	for (j = 0; j < kscale_model.nr_knobs && &knobs[j] != k; j++)
		;
	FUZZ_CHECK(o.knobs[j].nr == kv->nr);
	for (i = 0; i < kv->nr; i++)
		FUZZ_CHECK(!strcmp(o.knobs[j].value[i], kv->value[i]));
	options_free(&o);
	free(arg);
}

static void check_select(const char *list, const char *what,
			 const char **names, int nr)
{
	bool on[8];
	char err[512] = "";
	int i, nr_on = 0;

	if (options_select(list, what, names, nr, on, err, sizeof(err))) {
		FUZZ_CHECK(list && err[0]);
		return;
	}
	for (i = 0; i < nr; i++)
		nr_on += on[i];
	FUZZ_CHECK(list ? nr_on >= 1 : nr_on == nr);
	for (i = 0; list && i < nr; i++)
		FUZZ_CHECK(!on[i] || strstr(list, names[i]));
	/* each name given once: as many on as commas + 1 */
	for (i = 0; list && list[i]; i++)
		nr_on -= list[i] == ',';
	FUZZ_CHECK(!list || nr_on == 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *wl[] = { "openbench", "stat" };
	const char *var[] = { "atomic", "percpu", "real" };
	char *text = malloc(size + 1), *argv[MAX_ARGS + 2], *p;
	struct kscale_options o;
	int argc = 0, i;

	memcpy(text, data, size);
	text[size] = '\0';
	argv[argc++] = "fuzz";
	for (p = text; argc <= MAX_ARGS; p++) {
		argv[argc++] = p;
		p = strchrnul(p, '\n');
		if (!*p)
			break;
		*p = '\0';
	}
	argv[argc] = NULL;
	if (!parse(&o, argc, argv)) {
		FUZZ_CHECK(isfinite(o.duration) && o.duration > 0 &&
			   o.duration <= 3600);
		FUZZ_CHECK(isfinite(o.warmup) && o.warmup > -1e-9 &&
			   o.warmup <= 3600);
		FUZZ_CHECK(isfinite(o.watchdog) && o.watchdog > 0 &&
			   o.watchdog <= 3600);
		FUZZ_CHECK(o.numa_emulate >= 0 && o.numa_emulate <= 1 << 20);
		FUZZ_CHECK(o.slice_us >= 0 && o.slice_us <= 1 << 20);
		FUZZ_CHECK(o.repetitions >= 1);
		FUZZ_CHECK(o.gb_argc >= 1 && o.gb_argc <= argc);
		FUZZ_CHECK(o.placement && (!o.cpus || o.cpus[0]));
		check_seconds("--duration", o.duration);
		check_seconds("--watchdog", o.watchdog);
		if (o.warmup > 0)
			check_seconds("--warmup", o.warmup);
		for (i = 0; i < kscale_model.nr_knobs; i++)
			check_knob(&knobs[i], &o.knobs[i]);
		check_select(o.workloads, "workload", wl, 2);
		check_select(o.variants, "variant", var, 3);
	}
	options_free(&o);
	free(text);
	return 0;
}
