/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulator's definitions of what lib/kernel leaves to its platform,
 * as an arch's asm/ headers replace asm-generic's: included by
 * instrument.h, force-included before any of lib/kernel's headers, whose
 * native definitions stand behind #ifndef (compiler.h).  So lib/kernel
 * names nothing of lib/sim, and its code calls the engine (sim.c) only
 * through these.
 *
 * On the host (outside sim_run(): sim_cpu_running NULL) each is the
 * host's: the counter, the spin, no parking, the host thread's task.
 */
#ifndef KSCALE_SIM_ARCH_H
#define KSCALE_SIM_ARCH_H

#include <stdint.h>

struct sim_cpu;
struct sim_task;
struct task_struct;

/* The running CPU; NULL on the host (outside sim_run()). */
extern struct sim_cpu *sim_cpu_running;
/* Calibrated work of ns (this machine's), scaled for the machine. */
void sim_delay(uint64_t ns);
/* cpu_relax(): park until a line read since the last one is written. */
void sim_relax(void);
/*
 * The running CPU's virtual clock in cycles (a read's cost paid), or the
 * host's counter.
 */
uint64_t sim_rdtsc(void);
/* Virtual ns of the running CPU, its code charged, no read's cost (sim.h). */
uint64_t sim_now(void);
/* The running simulated task's, or the host thread's (current_task). */
struct task_struct *sim_current(void);

/* compiler.h: the CPU parks until a line it spun on is written. */
#define cpu_relax()	sim_relax()

/*
 * tsc.h, delay.h: the counter.  sim_rdtsc() and sim_current() stay calls,
 * and current_task is not declared here, ahead of lib/kernel's headers:
 * either would move the model's stack frames or its __thread variables
 * (one section, its lines shared by every task), and with them the
 * simulated results.
 */
#define rdtsc_ordered()	sim_rdtsc()
#define rdtsc()		sim_rdtsc()

/* clock.h: the harness's spans, at no cost to the model's time. */
#define span_clock_ns()	((double)sim_now())

/* delay.h: the running CPU's clock moves on, scaled; the host spins. */
#define ndelay(ns) do {							\
	unsigned long __ns = (ns);					\
									\
	if (__ns && sim_cpu_running)					\
		sim_delay(__ns);					\
	else if (__ns)							\
		delay_tsc(__ns);					\
} while (0)

/* sched.h */
#define get_current()	sim_current()

#endif
