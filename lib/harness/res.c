// SPDX-License-Identifier: GPL-2.0
/* --profile's res_* counters of a window, from lockstat's sums (res.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernel/tsc.h"
#include "kscale.h"
#include "res.h"

/*
 * "res_<class>_<what>", made once and kept (counters keep their names);
 * NULL when out of memory.
 */
static const char *res_name(const char *class, const char *what)
{
	static struct res_name {
		struct res_name *next;
		char name[];
	} *names;
	struct res_name *n;
	char buf[160];

	snprintf(buf, sizeof(buf), "res_%s_%s", class, what);
	for (n = names; n; n = n->next)
		if (!strcmp(n->name, buf))
			return n->name;
	n = malloc(sizeof(*n) + strlen(buf) + 1);
	if (!n)
		return NULL;
	strcpy(n->name, buf);
	n->next = names;
	names = n;
	return n->name;
}

static void set_res(struct kscale_run *run, const struct lockstat_class *c,
		    const char *what, double value)
{
	const char *name = res_name(c->name, what);

	if (name)
		kscale_set_counter(run, name, value);
	else
		kscale_fail(run, "out of memory");
}

static double ns_per_visit(uint64_t cycles, uint64_t visits)
{
	return visits ? cycles_to_ns(cycles) / visits : 0;
}

void res_counters(struct kscale_run *run, double ops,
		  const struct res_snapshot *r0, const struct res_snapshot *r1)
{
	const struct lockstat_acc *a = r0->acc, *b = r1->acc;
	unsigned long seen[LOCKSTAT_MAX_CLASSES];
	const struct lockstat_class *c;
	uint64_t visits, reads;
	int i;

	kscale_set_counter(run, "lockstat_ns_per_op", ops ?
			   cycles_to_ns(r1->cost - r0->cost) / ops : 0);
	lockstat_instances_seen(seen);
	for (i = 0; i < lockstat_nr_classes(); i++) {
		c = lockstat_class(i);
		visits = b[i].visits - a[i].visits;
		reads = b[i].read_visits - a[i].read_visits;
		set_res(run, c, "visits", ops ? visits / ops : 0);
		set_res(run, c, "hold_ns",
			ns_per_visit(b[i].hold - a[i].hold, visits));
		set_res(run, c, "wait_ns",
			ns_per_visit(b[i].wait - a[i].wait, visits));
		set_res(run, c, "lines", c->lines);
		set_res(run, c, "instances", seen[i]);
		set_res(run, c, "sleeps", !!(c->flags & LOCKSTAT_SLEEPS));
		set_res(run, c, "scope", c->flags & LOCKSTAT_PER_CPU ? 2 :
			c->flags & LOCKSTAT_PER_NODE ? 1 : 0);
		if (!(c->flags & LOCKSTAT_RW))
			continue;
		set_res(run, c, "read_visits", ops ? reads / ops : 0);
		set_res(run, c, "read_hold_ns",
			ns_per_visit(b[i].read_hold - a[i].read_hold, reads));
		set_res(run, c, "read_wait_ns",
			ns_per_visit(b[i].read_wait - a[i].read_wait, reads));
	}
}

void res_transfers(struct kscale_run *run, double ops, const uint64_t *t0,
		   const uint64_t *t1)
{
	int i;

	for (i = 0; i < lockstat_nr_classes(); i++)
		set_res(run, lockstat_class(i), "transfers",
			ops ? (t1[i] - t0[i]) / ops : 0);
}
