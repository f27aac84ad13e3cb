/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KSCALE_OPTIONS_H
#define KSCALE_OPTIONS_H

#include <stdbool.h>
#include <string.h>

#include "flags.h"
#include "kscale.h"
#include "../sys/topology.h"

struct kscale_options {
	const char *prog;
	const char *cpus;		/* --cpus as given, NULL for the default */
	const char *placement;
	struct placement placement_policy;
	const char *workloads;
	const char *variants;
	double duration;
	double warmup;
	double until_counted;
	double watchdog;		/* --watchdog: s a run may hang */
	int numa_emulate;
	int slice_us;			/* model tasks' time slice, 0: CFS's */
	const char *sim;		/* --sim=MACHINE, or NULL */
	int sim_seed;			/* --sim-seed, 0: 1 */
	int preempt_full;		/* --preempt: 0 none, 1 full */
	bool perf;			/* --perf: profile host variants */
	bool profile;			/* --profile: lockstat (models) */
	bool dry_run;
	bool list;
	bool help;
	bool oversubscribe;
	bool *workload_on;		/* [nr_workloads] after --workloads */
	bool *variant_on;		/* [kscale_variants.nr] after --variants */
	struct knob_values *knobs;	/* [kscale_model.nr_knobs] */
	const char *calibration;	/* --calibration=FILE, or NULL */
	const char *out;		/* --benchmark_out, written via a temp file */
	int repetitions;		/* --benchmark_repetitions, for progress */
	int gb_argc;			/* Google Benchmark's own flags */
	char **gb_argv;
};

/* The model's rows then the bench's host rows, as options_parse() checked. */
extern struct kscale_variant_table kscale_variants;

/* Whether k is a knob of w: of its workload alone, or of every one. */
static inline bool kscale_knob_of(const struct kscale_knob *k,
				  const struct kscale_workload *w)
{
	return !k->workload || !strcmp(k->workload, w->name);
}

int options_parse(struct kscale_options *o, const struct kscale_model *m,
		  int argc, char **argv, char *err, size_t len);
void options_usage(const struct kscale_model *m);
void options_list(const struct kscale_model *m);
/* From init: whether any run will take this value of the knob. */
bool kscale_knob_has_value(const struct kscale_options *o, const char *knob,
			   const char *value);
/* From init: leave a selected variant out, saying why (stderr, context). */
void kscale_skip_variant(const struct kscale_options *o, const char *name,
			 const char *why);
bool kscale_variant_selected(const struct kscale_options *o,
			     const char *name);
bool kscale_workload_selected(const struct kscale_options *o,
			      const char *name);
int options_select(const char *list, const char *what, const char **names,
		   int nr, bool *on, char *err, size_t len);

#endif
