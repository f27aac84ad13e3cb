// SPDX-License-Identifier: GPL-2.0
/* --sim: the machine, its topology, and the context (sim/setup.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../kernel/tsc.h"
#include "../calibrate.h"
#include "../context.h"
#include "../kscale.h"
#include "code_here.h"
#include "here.h"
#include "setup.h"

/* This machine's clock (GHz), for work measured here and run there. */
static int host_ghz(void *arg, double *ghz, char *err, size_t len)
{
	char line[256];
	double mhz = 0;
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "cpu MHz : %lf", &mhz) == 1)
			break;
	if (f)
		fclose(f);
	*ghz = mhz / 1000;
	if (*ghz > 0)
		return 0;
	snprintf(err, len, "this machine's clock is unknown (/proc/cpuinfo "
		 "has no cpu MHz): work measured here cannot be scaled");
	return -1;
}

/* The cycle counter's rate: what the simulated one counts a virtual ns. */
static int host_tsc(void *arg, double *tsc, char *err, size_t len)
{
	if (tsc_calibrate(err, len))
		return -1;
	*tsc = tsc_per_ns;
	return 0;
}

static void add_ns(const char *key, double v)
{
	if (isnan(v))
		kscale_add_context(key, "none");
	else
		kscale_add_context(key, "%.1f", v);
}

static void add_ratio(const char *key, double v)
{
	if (isnan(v))
		kscale_add_context(key, "none");
	else
		kscale_add_context(key, "%.2f", v);
}

static void add_wake_curve(const struct sim_machine *m)
{
	char buf[256] = "";
	size_t off = 0;
	int i;

	for (i = 0; i < m->nr_wake && off < sizeof(buf); i++)
		off += snprintf(buf + off, sizeof(buf) - off, "%s%.0f:%.0f",
				i ? "," : "", m->wake_idle_ns[i],
				m->wake_at_ns[i]);
	kscale_add_context("sim_wake_curve", "%s", i ? buf : "none");
}

static void context_add_sim(const struct sim_machine *m, uint64_t seed)
{
	kscale_add_context("sim_machine", "%s", m->name);
	kscale_add_context("sim_seed", "%llu", (unsigned long long)seed);
	kscale_add_context("sim_time", "virtual: every rate and time is the "
			   "simulated machine's");
	kscale_add_context("sim_cpus", "%d", m->cpus);
	kscale_add_context("sim_nodes", "%d", m->nodes);
	kscale_add_context("sim_threads_per_core", "%d", m->threads_per_core);
	kscale_add_context("sim_line_bytes", "%d", m->line_bytes);
	kscale_add_context("sim_work_scale", "%.3f", m->work_scale);
	add_ns("sim_hit_ns", m->hit_ns);
	add_ns("sim_line_ns_smt", m->line_ns_smt);
	add_ns("sim_line_ns_node", m->line_ns_node);
	add_ns("sim_line_ns_remote", m->line_ns_remote);
	add_ns("sim_mem_ns_local", m->mem_ns_local);
	add_ns("sim_mem_ns_remote", m->mem_ns_remote);
	add_ns("sim_atomic_ns", m->atomic_ns);
	add_ns("sim_wake_ns", m->wake_ns);
	add_wake_curve(m);
	add_ns("sim_ctxsw_ns", m->ctxsw_ns);
	add_ns("sim_copy_ns_per_kib", m->copy_ns_per_kib);
	add_ns("sim_rdtsc_ns", m->rdtsc_ns);
	add_ns("sim_clock_ns", m->clock_ns);
	add_ratio("sim_ipc", m->ipc);
	add_ratio("sim_smt_throughput", m->smt_throughput);
	kscale_add_context("sim_block_ns", "%.3f", m->block_ns);
}

/* --sim's machine into m; 0, or -1 with one line in err. */
static int sim_machine(const struct kscale_options *o, struct sim_machine *m,
		       char *err, size_t len)
{
	struct topology host;
	double ghz, insns_per_block;
	int ret;

	if (!strcmp(o->sim, "here")) {
		if (topology_from_system(&host, err, len))
			return -1;
		ret = sim_machine_here(&host, m, err, len);
		topology_free(&host);
		if (ret)
			return -1;
		m->work_scale = 1;
		/* its blocks are timed (code_here.c); siblings not measured */
		m->ipc = m->smt_throughput = NAN;
	} else {
		if (sim_machine_load(o->sim, KSCALE_MACHINES_DIR, m, err, len) ||
		    kscale_calibrated_figure("sim.host.ghz", &ghz, host_ghz, NULL,
					     err, len))
			return -1;
		m->work_scale = ghz / m->ghz;
		kscale_add_context("sim_host_ghz", "%.3f", ghz);
	}
	if (sim_host_work(m, err, len) ||
	    kscale_calibrated_figure("sim.host.tsc_per_ns", &tsc_per_ns,
				     host_tsc, NULL, err, len) ||
	    sim_code_cost(m, !strcmp(o->sim, "here"), &insns_per_block, err,
			  len))
		return -1;
	kscale_add_context("sim_insns_per_block", "%.2f", insns_per_block);
	return 0;
}

struct sim_setup *kscale_sim_setup(const struct kscale_options *o,
				   struct topology *t, char *err, size_t len)
{
	static struct sim_setup s;
	struct sim_machine *m = &s.machine;
	int *cpus, *node, i, ret;

	if (sim_machine(o, m, err, len))
		return NULL;
	cpus = malloc(m->cpus * sizeof(int));
	node = malloc(m->cpus * sizeof(int));
	for (i = 0; i < m->cpus; i++) {
		cpus[i] = i;
		node[i] = sim_machine_node(m, i);
	}
	ret = topology_init(t, cpus, node, m->cpus, false, err, len);
	free(cpus);
	free(node);
	if (ret)
		return NULL;
	s.seed = o->sim_seed ? o->sim_seed : 1;
	context_add_sim(m, s.seed);
	return &s;
}
