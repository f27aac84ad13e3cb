/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kscale sim: the model code itself on V virtual CPUs, in virtual time.
 *
 * Every model task is a user-level context on the one host thread that
 * calls sim_run(); a virtual CPU (struct sim_cpu) runs one task at a time
 * and has its own clock.  The model's shared-memory accesses (every
 * __atomic builtin, READ_ONCE/WRITE_ONCE, the locks built on them: see
 * instrument.h) are events: before one, a CPU whose clock is ahead of any
 * other runnable CPU's gives way, so the events happen in one global
 * order of virtual time (ties by a sequence number), and a run is a
 * function of its seed.  An event costs what the coherence model says
 * (machine.h: hit, SMT sibling, same node, remote, memory), queued behind
 * the line's earlier transfers; calibrated work (ndelay()) advances the
 * clock by its length times the machine's work scale.  The code between
 * events costs its basic blocks (code.c) at the machine's cost a block,
 * charged at the next event; a hardware thread's work and code run
 * slower while its core's other thread is busy (smt_throughput).
 *
 * A spin (cpu_relax() after reads) does not burn host time: the CPU
 * parks until one of the lines it read since its last cpu_relax() is
 * written, or a spin timeout passes, and stays busy in virtual time.
 * The scheduler (lib/sim/sched.c) keeps lib/kernel/sched.h's interface:
 * sleeps, wake-ups, ticks and timers are events in virtual time.
 */
#ifndef KSCALE_SIM_H
#define KSCALE_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "arch.h"
#include "machine.h"

enum sim_access_kind {
	SIM_READ,
	SIM_WRITE,
	SIM_RMW,
};

/* Before anything else; m is copied.  The seed orders ties and start-up. */
int sim_init(const struct sim_machine *m, uint64_t seed, char *err,
	     size_t len);
void sim_exit(void);
/* A task on cpu that runs fn(arg) and then ends. */
struct sim_task *sim_spawn(int cpu, void (*fn)(void *), void *arg);
/*
 * Runs until virtual time until_ns (every runnable CPU at or past it) or
 * until no task is left; 0, or -1 when every task left is asleep with
 * nothing to wake it: a lost wake-up, said on stderr.
 */
int sim_run(uint64_t until_ns);
/* Tasks spawned and not yet ended. */
int sim_nr_tasks(void);

/* Virtual ns of the running CPU (the slowest runnable one on the host). */
uint64_t sim_now(void);
/* An access to size bytes at p by the running CPU; none on the host. */
void sim_access(const volatile void *p, size_t size, int kind);
/* A write from the host (a stop flag): spinners on its line look again. */
void sim_host_write(const volatile void *p);
/*
 * Misses of the line holding p since sim_init() (accesses that moved it
 * from another CPU or filled it from memory): 0 for a line not touched.
 */
uint64_t sim_line_misses(const void *p);
/*
 * The lines of [p, p + len) are homed on node, from now until sim_exit()
 * (else on their first toucher's).  Only the tests call it so far.
 */
void sim_set_home(const void *p, size_t len, int node);

/*
 * Basic blocks the model's code has run on this host thread so far
 * (code.c): the simulator's build counts them, the native build does not.
 */
uint64_t sim_code_blocks(void);

/* Statistics of the run so far. */
struct sim_stats {
	uint64_t events;	/* accesses, delays, relaxes, switches */
	uint64_t switches;	/* host context switches between tasks */
	uint64_t parks;		/* spins parked */
	uint64_t misses;	/* accesses that moved a line (or filled it) */
	uint64_t lines;		/* distinct lines touched */
	uint64_t busy_ns;	/* virtual CPU time not idle, all CPUs */
	uint64_t stack_bytes;	/* per task, reserved */
	uint64_t tls_bytes;	/* per task, saved */
};
void sim_get_stats(struct sim_stats *s);

/* For the scheduler (lib/sim/sched.c) */
struct sim_task *sim_task_current(void);
struct task_struct *sim_task_struct(struct sim_task *t);
struct sim_task *sim_task_of(struct task_struct *p);
/* Virtual ns t has run on a CPU. */
uint64_t sim_task_cputime(const struct sim_task *t);
int sim_task_cpu(const struct sim_task *t);
/*
 * Gives the CPU up: the task sleeps until sim_wake() (or a timeout).  A
 * wake-up that came since its last sim_sleep(), while it was runnable
 * but not running (it yielded on its way here), is kept: it leaves the
 * CPU and is queued again at once.
 */
void sim_sleep(uint64_t timeout_ns);
/*
 * Wake t: runnable on its CPU wake_ns from now; a runnable t keeps it for
 * its next sim_sleep().  1 if it slept or keeps it.
 */
int sim_wake(struct sim_task *t);
/* The CPU's next runnable task replaces the running one, which stays queued. */
void sim_yield_cpu(void);
/* Move the running task to cpu's queue. */
void sim_migrate(int cpu);
/*
 * After slice_ns of the running task with others queued, or lone_ns of
 * it alone (0: never): a tick, fn(cpu).
 */
void sim_set_tick(uint64_t slice_ns, uint64_t lone_ns, void (*fn)(int cpu));

#endif
