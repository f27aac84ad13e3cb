// SPDX-License-Identifier: GPL-2.0
/*
 * main() of every bench binary: options, topology, one registered
 * benchmark per workload x variant x knob value x thread count, then
 * Google Benchmark runs them.  A results file is written whole or not at
 * all: Google Benchmark writes a temporary file that is renamed only when
 * every run succeeded.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <unistd.h>

#include "../kernel/lockstat.h"
#include "../kernel/percpu.h"
#include "../kernel/sched.h"
#include "../kernel/tsc.h"
#include "bench.h"
#include "calibrate.h"
#include "context.h"
#include "../sys/cpulist.h"
#include "../sys/process.h"
#include "fatal.h"
#include "linelat.h"
#include "options.h"
#include "perf.h"
#include "progress.h"
#include "window.h"
#ifdef KSCALE_SIM
#include "sim/setup.h"
#endif

struct registry {
	const struct kscale_model *m;
	struct kscale_options *o;
	const struct topology *t;
	int *counts, nr_counts;
	int *order, nr_order;
	int nr_benches;
	const struct sim_setup *sim;	/* --sim's, or NULL */
};

static char err[512];

static __attribute__((noreturn)) void die(const char *prog, const char *msg)
{
	fprintf(stderr, "%s: %s\n", prog, msg);
	exit(2);
}

static char *bench_name(const struct registry *r, int w, int v,
			const char **knob)
{
	size_t len = 4096, off;
	char *name = malloc(len);
	int i;

	off = snprintf(name, len, "%s/%s/%s", r->m->name,
		       r->m->workloads[w].name, kscale_variants.rows[v].name);
	for (i = 0; i < r->m->nr_knobs; i++)
		if (knob[i])
			off += snprintf(name + off, len - off, "/%s:%s",
					r->m->knobs[i].name, knob[i]);
	snprintf(name + off, len - off, "/placement:%s", r->o->placement);
	return name;
}

static int distinct(const int *v, int n)
{
	int i, j, d = 0;

	for (i = 0; i < n; i++) {
		for (j = 0; j < i && v[j] != v[i]; j++)
			;
		d += j == i;
	}
	return d;
}

static void register_one(struct registry *r, int w, int v, const char **knob,
			 int threads)
{
	/* run.stop owns its cache line: the whole struct is aligned */
	struct kscale_bench *b = aligned_alloc(SMP_CACHE_BYTES, sizeof(*b));

	if (!b)
		die(r->m->name, "out of memory");
	memset(b, 0, sizeof(*b));
	b->model = r->m;
	b->workload = &r->m->workloads[w];
	b->row = &kscale_variants.rows[v];
	b->knob_value = malloc(r->m->nr_knobs * sizeof(char *));
	memcpy(b->knob_value, knob, r->m->nr_knobs * sizeof(char *));
	b->nr_threads = threads;
	b->cpu_of_thread = malloc(threads * sizeof(int));
	if (placement_plan(r->t, &r->o->placement_policy, threads,
			   r->o->oversubscribe, b->cpu_of_thread, err,
			   sizeof(err)))
		die(r->m->name, err);
	b->nr_distinct_cpus = distinct(b->cpu_of_thread, threads);
	b->order = r->order;
	b->nr_order = r->nr_order;
	b->duration = r->o->duration;
	b->warmup = r->o->warmup;
	b->until_counted = r->o->until_counted;
	b->watchdog = r->o->watchdog;
	b->sim = r->sim;
	b->name = bench_name(r, w, v, knob);
	if (kscale_bench_init(b))
		die(r->m->name, "cannot create the run's barriers");
	kb_register_threads(b->name, threads, kscale_bench_thread, b);
	r->nr_benches++;
}

/* Every combination of knob values, the first knob varying slowest. */
static void register_knobs(struct registry *r, int w, int v, const char **knob,
			   int k)
{
	int i;

	if (k == r->m->nr_knobs) {
		for (i = 0; i < r->nr_counts; i++)
			register_one(r, w, v, knob, r->counts[i]);
		return;
	}
	/* another workload's knob: not in this one's names, not swept */
	if (!kscale_knob_of(&r->m->knobs[k], &r->m->workloads[w])) {
		knob[k] = NULL;
		register_knobs(r, w, v, knob, k + 1);
		return;
	}
	for (i = 0; i < r->o->knobs[k].nr; i++) {
		knob[k] = r->o->knobs[k].value[i];
		register_knobs(r, w, v, knob, k + 1);
	}
}

static void register_all(struct registry *r)
{
	const char **knob = calloc(r->m->nr_knobs + 1, sizeof(char *));
	int w, v;

	for (w = 0; w < r->m->nr_workloads; w++)
		for (v = 0; v < kscale_variants.nr; v++)
			if (r->o->workload_on[w] && r->o->variant_on[v] &&
			    (!r->m->workloads[w].runs ||
			     r->m->workloads[w].runs(&kscale_variants.rows[v])))
				register_knobs(r, w, v, knob, 0);
	free(knob);
}

/*
 * --sim: the model rows.  A host row named is refused; `all` leaves the
 * host rows out, saying so in the context.
 */
static void select_sim_variants(struct registry *r)
{
	bool named = r->o->variants && strcmp(r->o->variants, "all");
	int i;

	for (i = 0; i < kscale_variants.nr; i++) {
		if (!r->o->variant_on[i] || !kscale_variants.rows[i].host)
			continue;
		if (named) {
			snprintf(err, sizeof(err), "--sim: variant %s runs the "
				 "host's own path, which cannot be simulated "
				 "(the model variants can)",
				 kscale_variants.rows[i].name);
			die(r->m->name, err);
		}
		r->o->variant_on[i] = false;
	}
}

static void select_names(struct registry *r)
{
	const struct kscale_model *m = r->m;
	const char **names = malloc((m->nr_workloads + kscale_variants.nr) *
				    sizeof(char *));
	int i;

	r->o->workload_on = calloc(m->nr_workloads, sizeof(bool));
	r->o->variant_on = calloc(kscale_variants.nr, sizeof(bool));
	for (i = 0; i < m->nr_workloads; i++)
		names[i] = m->workloads[i].name;
	if (options_select(r->o->workloads, "workload", names,
			   m->nr_workloads, r->o->workload_on, err, sizeof(err)))
		die(m->name, err);
	for (i = 0; i < kscale_variants.nr; i++)
		names[i] = kscale_variants.rows[i].name;
	if (options_select(r->o->variants, "variant", names, kscale_variants.nr,
			   r->o->variant_on, err, sizeof(err)))
		die(m->name, err);
	free(names);
	if (r->o->sim)
		select_sim_variants(r);
}

/* --cpus, `sweep` without it; the placement is refused here, before init. */
static void select_counts(struct registry *r)
{
	const char *cpus = r->o->cpus ? r->o->cpus : "sweep";
	int i, max = r->o->oversubscribe ? 1 << 16 : r->nr_order;
	int *sweep = malloc(r->nr_order * sizeof(int));
	struct cpulist_names names = { .all = r->nr_order, .sweep = sweep };
	char why[256];

	if (placement_check(&r->o->placement_policy, r->o->oversubscribe, err,
			    sizeof(err)))
		die(r->m->name, err);
	names.nr_sweep = placement_sweep(r->t, &r->o->placement_policy,
					 r->order, r->nr_order, sweep);
	if (cpulist_parse(cpus, &names, true, &r->counts, &r->nr_counts, why,
			  sizeof(why))) {
		snprintf(err, sizeof(err), "--cpus: %s", why);
		die(r->m->name, err);
	}
	free(sweep);
	for (i = 0; i < r->nr_counts; i++) {
		if (r->counts[i] < 1)
			die(r->m->name, "--cpus: thread counts start at 1");
		if (r->counts[i] > max) {
			snprintf(err, sizeof(err), "--cpus: %d threads but only "
				 "%d CPUs are usable with placement %s (add "
				 "--oversubscribe to share CPUs)",
				 r->counts[i], r->nr_order, r->o->placement);
			die(r->m->name, err);
		}
	}
}

static void dry_run(const struct registry *r)
{
	int *cpu, i, j;

	printf("%s: %d CPUs allowed on %d node(s)%s; placement %s\n",
	       r->m->name, r->t->nr_cpus, r->t->nr_nodes,
	       r->t->emulated ? " (emulated, memory not bound)" : "",
	       r->o->placement);
	/* the counts first: a sweep's plans run to thousands of lines */
	printf("thread counts (--cpus=%s):", r->o->cpus ? r->o->cpus : "sweep");
	for (i = 0; i < r->nr_counts; i++)
		printf("%s%d", i ? "," : " ", r->counts[i]);
	/* what the run's names will hold: kscale run --check reads them */
	printf("\nvariants:");
	for (i = j = 0; i < kscale_variants.nr; i++)
		if (r->o->variant_on[i])
			printf("%s%s", j++ ? "," : " ",
			       kscale_variants.rows[i].name);
	printf("\n");
	for (i = 0; i < r->m->nr_knobs; i++) {
		printf("knob %s:", r->m->knobs[i].name);
		for (j = 0; j < r->o->knobs[i].nr; j++)
			printf("%s%s", j ? "," : " ", r->o->knobs[i].value[j]);
		printf("\n");
	}
	for (i = 0; i < r->nr_counts; i++) {
		cpu = malloc(r->counts[i] * sizeof(int));
		if (placement_plan(r->t, &r->o->placement_policy, r->counts[i],
				   r->o->oversubscribe, cpu, err, sizeof(err)))
			die(r->m->name, err);
		printf("threads %d:\n", r->counts[i]);
		for (j = 0; j < r->counts[i]; j++)
			printf("  thread %d -> cpu %d -> node %d\n", j, cpu[j],
			       r->t->cpu_node[cpu[j]]);
		free(cpu);
	}
}

static void setup_topology(struct registry *r, struct topology *t,
			   struct kscale_options *o)
{
#ifdef KSCALE_SIM
	if (o->numa_emulate)
		die(r->m->name, "--sim: the machine has its own nodes "
		    "(--numa-emulate is for the host's)");
	r->sim = kscale_sim_setup(o, t, err, sizeof(err));
	if (!r->sim)
		die(r->m->name, err);
#else
	if (topology_from_system(t, err, sizeof(err)))
		die(r->m->name, err);
#endif
	if (o->numa_emulate && topology_emulate(t, o->numa_emulate, err,
						sizeof(err)))
		die(r->m->name, err);
	percpu_setup(t);
	if (placement_parse(o->placement, &o->placement_policy, err,
			    sizeof(err)))
		die(r->m->name, err);
	r->order = malloc((t->nr_cpus + o->placement_policy.nr_list) *
			  sizeof(int));
	r->nr_order = placement_order(t, &o->placement_policy, r->order, err,
				      sizeof(err));
	if (r->nr_order < 0)
		die(r->m->name, err);
}

static char *out_tmp;

static void unlink_out_tmp(void)
{
	unlink(out_tmp);
}

/*
 * Google Benchmark writes a temporary file, renamed on success.  It is
 * created here, before any run, so that a file that cannot be written
 * is said at once: Google Benchmark would exit 1 without a word.
 */
static char *redirect_out(struct kscale_options *o)
{
	char *tmp, *flag;
	int fd;

	if (!o->out)
		return NULL;
	remove_dead_tmp(o->out);
	if (asprintf(&tmp, TMP_PATH_FMT, o->out, (int)getpid()) < 0 ||
	    asprintf(&flag, "--benchmark_out=%s", tmp) < 0)
		die(o->prog, "out of memory");
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
	if (fd < 0) {
		snprintf(err, sizeof(err), "cannot write %s: %s", o->out,
			 strerror(errno));
		die(o->prog, err);
	}
	close(fd);
	o->gb_argv[o->gb_argc++] = flag;
	out_tmp = tmp;
	fatal_undo(unlink_out_tmp);
	return tmp;
}

/*
 * Google Benchmark's stream errors go unreported: a file cut short (a full
 * disk) would still be renamed into place.  Its JSON ends "]\n}\n".
 */
static int out_complete(const char *path)
{
	char tail[16] = "";
	int fd = open(path, O_RDONLY), ok = 0;
	off_t size;
	ssize_t n;

	if (fd < 0)
		return 0;
	size = lseek(fd, 0, SEEK_END);
	if (size >= (off_t)sizeof(tail) - 1) {
		n = pread(fd, tail, sizeof(tail) - 1, size - (sizeof(tail) - 1));
		ok = n == sizeof(tail) - 1 && strstr(tail, "]\n}\n") &&
		     !fsync(fd);
	}
	return !close(fd) && ok;
}

static int finish_out(const struct kscale_options *o, const char *tmp,
		      int failed, int nr_run)
{
	if (!nr_run) {
		fprintf(stderr, "%s: nothing ran: %s (see --list)\n", o->prog,
			err[0] ? err : "no benchmark selected");
		failed = -1;
	} else if (failed || kscale_warnings()) {
		fprintf(stderr, "%s: %d run(s) failed, %lu warning(s)%s%s\n",
			o->prog, failed, kscale_warnings(),
			tmp ? "; not written: " : "", tmp ? o->out : "");
	} else if (tmp && !out_complete(tmp)) {
		fprintf(stderr, "%s: cannot write %s: Google Benchmark's file "
			"is incomplete (disk full?)\n", o->prog, o->out);
		failed = -1;
	} else if (tmp && rename(tmp, o->out)) {
		fprintf(stderr, "%s: cannot write %s: %s\n", o->prog, o->out,
			strerror(errno));
		failed = -1;
	} else {
		return 0;
	}
	if (tmp)
		unlink(tmp);
	return 1;
}

/* The rows the running kernel or a host library runs, not a model. */
static void context_add_host_variants(void)
{
	char buf[512] = "";
	size_t off = 0;
	int i;

	for (i = 0; i < kscale_variants.nr; i++)
		if (kscale_variants.rows[i].host && off < sizeof(buf))
			off += snprintf(buf + off, sizeof(buf) - off, "%s%s",
					off ? "," : "",
					kscale_variants.rows[i].name);
	kscale_add_context("host_variants", "%s", off ? buf : "none");
}

/* What --calibration=FILE gave and what was measured before the runs. */
static void report_calibration(const char *prog)
{
	const char *summary = kscale_calibration_summary();

	if (!summary)
		return;
	fprintf(stderr, "%s: calibration: %s\n", prog, summary);
	kscale_add_context("calibration", "%s", summary);
}

/*
 * --sim runs without address randomisation (personality(2)'s
 * ADDR_NO_RANDOMIZE, as gdb runs what it debugs): a simulated run's
 * result depends on where the model's data lies (docs/sim.md), and two
 * runs of one command lay it out alike only at the same addresses.  This
 * turns it off for what the process execs next: 0, or -1 with errno.
 */
static int no_aslr_next(void)
{
	int was = personality(0xffffffff);

	if (was == -1 || personality(was | ADDR_NO_RANDOMIZE) == -1)
		return -1;
	return 0;
}

#ifdef KSCALE_SIM
/*
 * The simulator's build run directly (not through bench/NAME, which
 * turned it off before its exec): one exec of itself without address
 * randomisation, and the context says whether it is.
 */
static void sim_fixed_layout(char **argv)
{
	int was = personality(0xffffffff);
	const char *why;

	if (was != -1 && (was & ADDR_NO_RANDOMIZE)) {
		kscale_add_context("sim_aslr", "off (personality "
				   "ADDR_NO_RANDOMIZE)");
		return;
	}
	if (!no_aslr_next())
		execv("/proc/self/exe", argv);
	why = strerror(errno);
	if (was != -1)
		personality(was);
	kscale_add_context("sim_aslr", "on: cannot turn it off (%s): a run "
			   "may differ from the same command's", why);
}
#endif

/*
 * --sim runs the simulator's build of this binary (sim/NAME beside
 * bench/NAME in the build tree): the same code with lib/sim's
 * instrumentation, which the host runs are spared.
 */
static void sim_binary(const struct kscale_options *o,
		       const struct kscale_model *m, char **argv)
{
#ifdef KSCALE_SIM
	if (!o->sim)
		die(m->name, "this is the simulator's build: give --sim=MACHINE "
		    "(or run bench/NAME)");
	if (!o->help && !o->list)
		sim_fixed_layout(argv);
#else
	char self[4096], *path, *slash;
	ssize_t n;

	if (!o->sim || o->help || o->list)
		return;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n < 0)
		die(m->name, "--sim: cannot find this binary (/proc/self/exe)");
	self[n] = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	if (asprintf(&path, "%s/../sim/%s", self, slash + 1) < 0)
		die(m->name, "out of memory");
	no_aslr_next();		/* else the simulator's build says why */
	execv(path, argv);
	if (errno == ENOENT)
		snprintf(err, sizeof(err), "--sim: %s has no simulator's build "
			 "(no %s: sim/meson.build says which benches have one)",
			 m->name, path);
	else
		snprintf(err, sizeof(err), "--sim: cannot run the simulator's "
			 "build %s: %s", path, strerror(errno));
	die(m->name, err);
#endif
}

int main(int argc, char **argv)
{
	const struct kscale_model *m = &kscale_model;
	struct kscale_options o;
	struct registry r = { .m = m, .o = &o };
	struct topology t;
	char *tmp;
	int failed, nr_run;

	r.t = &t;
	if (options_parse(&o, m, argc, argv, err, sizeof(err)))
		die(m->name, err);
	sim_binary(&o, m, argv);
	if (o.help || o.list) {
		o.help ? options_usage(m) : options_list(m);
		return 0;
	}
	/* before --sim's set-up: its figures are the file's too */
	if (o.calibration && kscale_calibration_load(o.calibration, err,
						     sizeof(err)))
		die(m->name, err);
	setup_topology(&r, &t, &o);
	select_names(&r);
	select_counts(&r);
	/* a dry run checks Google Benchmark's flags too, writing nothing */
	tmp = o.dry_run ? NULL : redirect_out(&o);
	if (kb_initialize(&o.gb_argc, o.gb_argv, err, sizeof(err)))
		die(m->name, err);
	if (o.dry_run) {
		dry_run(&r);
		return 0;
	}
	kscale_calibrate_cpu(r.order[0]);
	/* --sim's set-up measured it, or took it from the file */
	if (!o.sim && tsc_calibrate(err, sizeof(err)))
		die(m->name, err);
	sched_lone_ns = SCHED_LONE_NS;
	sched_init();
	sched_set_slice_ns(o.slice_us * 1000ull, r.nr_order);
	sched_preempt_full = o.preempt_full;
	lockstat_enable(o.profile);
	lockstat_register_lines(o.sim != NULL);
	context_add_system(&t, &o);
	context_add_model(m, &o);
	context_add_host_variants();
	if (o.profile && !o.sim)
		linelat_record(&t, m->name);
	if (m->init && m->init(&o, err, sizeof(err)))
		die(m->name, err);
	report_calibration(m->name);
	perf_init(m, &o, r.order[0]);
	register_all(&r);
	kscale_progress_total(r.nr_benches * o.repetitions);
	err[0] = '\0';
	failed = kb_run(&nr_run, err, sizeof(err));
	return finish_out(&o, tmp, failed, nr_run);
}
