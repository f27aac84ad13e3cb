/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A machine for the simulator (configs/machines/NAME.conf, the format in
 * configs/machines/README), or `here`: this machine's own measurements.
 */
#ifndef KSCALE_SIM_MACHINE_H
#define KSCALE_SIM_MACHINE_H

#include <stddef.h>

#define SIM_MAX_CPUS	1024
#define SIM_MAX_NODES	256
#define SIM_WAKE_POINTS	8
#define SIM_LINE_BYTES_MAX 512	/* the longest line a machine file may name */

struct sim_machine {
	char name[64];
	int cpus;
	int nodes;
	int threads_per_core;
	int line_bytes;
	double ghz;
	double hit_ns;		/* a line this CPU holds */
	double line_ns_smt;	/* Modified in the SMT sibling */
	double line_ns_node;	/* Modified in another core of the node */
	double line_ns_remote;	/* Modified in another node */
	double mem_ns_local;	/* a line no cache holds, home here */
	double mem_ns_remote;	/* ... home on another node */
	double atomic_ns;	/* a locked RMW's own cost, line held */
	double wake_ns;		/* wake_up_process() to running, idle CPU */
	/*
	 * Optional (wake_curve): the wake-up after the CPU has been idle
	 * for wake_idle_ns[i] is wake_at_ns[i], linear between points and
	 * flat beyond them (an idle loop that polls, then halts deeper).
	 */
	int nr_wake;
	double wake_idle_ns[SIM_WAKE_POINTS], wake_at_ns[SIM_WAKE_POINTS];
	double ctxsw_ns;	/* schedule() from one task to another */
	double ipc;		/* instructions a cycle, integer server code */
	/*
	 * A core's throughput with both its threads busy against one
	 * (threads_per_core 2): each runs at smt_throughput / 2 of its solo
	 * speed while the other is busy.  NaN or 0: they do not slow.
	 */
	double smt_throughput;
	double work_scale;	/* this machine's work ns -> the machine's */
	/* the model's own instructions, measured here (as work: scaled) */
	double copy_ns_per_kib;	/* memcpy/memset, ns a KiB */
	double rdtsc_ns;	/* an ordered cycle-counter read */
	double clock_ns;	/* a clock_gettime() */
	/*
	 * A basic block of the model's code (code.c): ipc and ghz's for a
	 * machine, measured for `here` (lib/harness/sim/code_here.c).
	 */
	double block_ns;
};

/*
 * name is "here" (measured: machine_here(), already filled in m), a path,
 * or a name under configs/machines (dir).  0, or -1 with one line in err.
 */
int sim_machine_load(const char *name, const char *dir,
		     struct sim_machine *m, char *err, size_t len);
/* The node and core of a CPU: CPUs fill a core, then a node, in order. */
int sim_machine_node(const struct sim_machine *m, int cpu);
int sim_machine_core(const struct sim_machine *m, int cpu);
/* What waking a CPU idle for idle_ns costs: wake_curve, or wake_ns. */
double sim_machine_wake_ns(const struct sim_machine *m, double idle_ns);
/* "IDLE:WAKE,IDLE:WAKE..." (ns, idle ascending) into m; 0 or -1. */
int sim_machine_wake_curve(struct sim_machine *m, const char *text);
/* One-way transfer of a line Modified in b to a. */
double sim_machine_line_ns(const struct sim_machine *m, int a, int b);

#endif
