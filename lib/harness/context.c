// SPDX-License-Identifier: GPL-2.0
/* What a result needs to be read later: the machine, the build, the run. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include "../kernel/lockstat.h"
#include "../kernel/sched.h"
#include "../kernel/tsc.h"
#include "context.h"
#include "gbench.h"
#include "rt_throttle.h"
#include "version.h"
#ifndef KSCALE_CFLAGS
#define KSCALE_CFLAGS "unknown"
#endif

void kscale_add_context(const char *key, const char *fmt, ...)
{
	char k[128], v[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(v, sizeof(v), fmt, ap);
	va_end(ap);
	snprintf(k, sizeof(k), "kscale_%s", key);
	kb_add_context(k, v);
}

static void cpu_model(char *buf, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[512], *p;

	snprintf(buf, len, "unknown");
	while (f && fgets(line, sizeof(line), f)) {
		p = strchr(line, ':');
		if (!p || strncmp(line, "model name", 10))
			continue;
		p += 1 + strspn(p + 1, " \t");
		p[strcspn(p, "\n")] = 0;
		snprintf(buf, len, "%s", p);
		break;
	}
	if (f)
		fclose(f);
}

static void cpus_per_node(const struct topology *t, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	buf[0] = 0;
	for (i = 0; i < t->nr_nodes && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%d:%d", i ? "," : "",
				t->nodes[i],
				topology_cpus_on_node(t, t->nodes[i]));
}

void context_add_system(const struct topology *t,
			const struct kscale_options *o)
{
	double hold_ns, wait_ns;
	struct utsname u;
	char buf[1024];

	uname(&u);
	kscale_add_context("kernel_release", "%s", u.release);
	cpu_model(buf, sizeof(buf));
	kscale_add_context("cpu_model", "%s", buf);
	kscale_add_context("nodes", "%d", t->nr_nodes);
	cpus_per_node(t, buf, sizeof(buf));
	kscale_add_context("cpus_per_node", "%s", buf);
	kscale_add_context("allowed_cpus", "%d", t->nr_cpus);
	kscale_add_context("numa_emulate", "%d", t->emulated);
	kscale_add_context("memory_binding", "%s%s", t->bind_memory ?
			   "per-node data on its node" :
			   t->emulated ? "none: nodes are emulated" :
			   t->bind_why[0] ? "none: " : "none: one node",
			   t->bind_why);
	kscale_add_context("placement", "%s", o->placement);
	kscale_add_context("duration_s", "%g", o->duration);
	kscale_add_context("warmup_s", "%g", o->warmup);
	kscale_add_context("window_until_counted_s", "%g", o->until_counted);
	kscale_add_context("tsc_per_ns", "%.4f", tsc_per_ns);
	if (o->profile) {
		lockstat_floor_ns(&hold_ns, &wait_ns);
		kscale_add_context("profile", "lockstat of the models' shared "
				   "resources (lib/kernel/lockstat.h): "
				   "res_<class>_* counters of the window; its "
				   "own %.1f ns a hold and %.1f ns a wait "
				   "taken out", hold_ns, wait_ns);
	} else {
		kscale_add_context("profile", "off (--profile: res_<class>_* "
				   "counters)");
	}
	kscale_add_context("model_sched", "%s", sched_fifo ?
			   "SCHED_FIFO tasks, switched only where the kernel "
			   "would" : "SCHED_OTHER (no permission for "
			   "SCHED_FIFO): the host may switch a task out "
			   "holding a spinlock");
	kscale_add_context("model_slice_us", "%.0f", sched_slice_ns / 1e3);
	kscale_add_context("model_preempt", "%s", sched_preempt_full ?
			   "full" : "none");
	kscale_add_context("rt_throttling", "%s", rt_throttle_note());
	kscale_add_context("compiler", "%s", __VERSION__);
	kscale_add_context("cflags", "%s", KSCALE_CFLAGS);
	kscale_add_context("version", "%s", KSCALE_VERSION);
	kscale_add_context("gbench_note", "Debian's libbenchmark reports "
			   "library_build_type debug; the timed loop is "
			   "kscale's own C code, so this does not affect "
			   "results");
}

/* NULL unless the bench file has KSCALE_PRIMARY_METRIC: a weak reference */
extern const char kscale_primary_metric[] __attribute__((weak));

void context_add_model(const struct kscale_model *m,
		       const struct kscale_options *o)
{
	char key[128], buf[1024];
	size_t off;
	int i, j;

	kscale_add_context("model", "%s", m->name);
	kscale_add_context("primary_metric", "%s", kscale_primary_metric ?
			   kscale_primary_metric : "ops_per_sec");
	for (i = 0; i < m->nr_knobs; i++) {
		off = 0;
		buf[0] = 0;
		for (j = 0; j < o->knobs[i].nr && off < sizeof(buf); j++)
			off += snprintf(buf + off, sizeof(buf) - off, "%s%s",
					j ? "," : "", o->knobs[i].value[j]);
		snprintf(key, sizeof(key), "knob_%s", m->knobs[i].name);
		kscale_add_context(key, "%s", buf);
	}
}
