// SPDX-License-Identifier: GPL-2.0
/*
 * What a basic block of the model's code costs (code_here.h).
 *
 * Instructions a block is a property of the code, the same on every x86-64
 * machine: the routine's instructions, counted by single-stepping the
 * host's build of it (the trap flag, a SIGTRAP an instruction), over its
 * blocks, counted by the simulator's build of it; each less what the
 * routine does with no rounds (its set-up, the call).  A machine's block
 * then costs those instructions at its ipc and ghz (its machine file's,
 * sourced).  `here` has no ipc to read (no PMU on a guest, nor a figure
 * for an unknown CPU): it times the host's routine at 1 CPU (pinned, the
 * median of TIME_TRIES) and divides by its blocks, so its blocks cost
 * what this CPU takes for them.  Both are
 * deterministic but the time, which --calibration's file keeps.
 */
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <ucontext.h>

#include "../../sim/sim.h"
#include "../../sys/affinity.h"
#include "../../sys/clock.h"
#include "../../sys/median.h"
#include "../calibrate.h"
#include "code_here.h"

#define STEP_ROUNDS	50		/* single-stepped: ~6k traps, 0.1 s */
#define TIME_ROUNDS	100000		/* a timed round: a few ms */
#define TIME_TRIES	7
#define EFLAGS_TF	0x100

static volatile long steps;
static volatile int stepping;

/* A trap an instruction: the kernel clears TF for the handler; set again */
static void on_step(int sig, siginfo_t *si, void *ucontext)
{
	ucontext_t *uc = ucontext;

	(void)sig;
	(void)si;
	if (stepping) {
		steps++;
		uc->uc_mcontext.gregs[REG_EFL] |= EFLAGS_TF;
	} else {
		uc->uc_mcontext.gregs[REG_EFL] &= ~(long)EFLAGS_TF;
	}
}

/* Instructions the host's routine runs for rounds, or -1. */
static long routine_insns(long rounds)
{
	struct sigaction sa, old;
	volatile long sum;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_step;
	sa.sa_flags = SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGTRAP, &sa, &old))
		return -1;
	steps = 0;
	stepping = 1;
	__asm__ __volatile__("pushfq; orq %0, (%%rsp); popfq" ::
			     "i"(EFLAGS_TF) : "memory", "cc");
	sum = sim_code_routine(rounds);
	stepping = 0;
	(void)sum;
	sigaction(SIGTRAP, &old, NULL);
	return steps;
}

static long routine_blocks(long rounds)
{
	uint64_t b = sim_code_blocks();

	sim_code_routine_counted(rounds);
	return (long)(sim_code_blocks() - b);
}

/* ns a round of the host's routine, less its set-up */
static double time_rounds(void)
{
	double t0 = thread_now_ns(), t1;

	sim_code_routine(0);
	t1 = thread_now_ns();
	sim_code_routine(TIME_ROUNDS);
	return (thread_now_ns() - t1 - (t1 - t0)) / TIME_ROUNDS;
}

/*
 * ns a block of the host's routine, pinned to the CPU it is on: the median
 * of TIME_TRIES after one to warm up, over the counted routine's blocks.
 */
static int measure_block_ns(void *arg, double *ns, char *err, size_t len)
{
	double blocks_a_round = (double)(routine_blocks(TIME_ROUNDS) -
					 routine_blocks(0)) / TIME_ROUNDS;
	double v[TIME_TRIES];
	struct affinity saved;
	int i, cpu = sched_getcpu();

	(void)arg;

	if (cpu < 0 || affinity_save(&saved) || affinity_pin(cpu)) {
		snprintf(err, len, "cannot pin to CPU %d", cpu);
		return -1;
	}
	time_rounds();
	for (i = 0; i < TIME_TRIES; i++)
		v[i] = time_rounds();
	affinity_restore(&saved);
	*ns = kscale_median(v, TIME_TRIES) / blocks_a_round;
	return 0;
}

int sim_code_cost(struct sim_machine *m, bool here, double *insns_per_block,
		  char *err, size_t len)
{
	long insns = routine_insns(STEP_ROUNDS) - routine_insns(0);
	long blocks = routine_blocks(STEP_ROUNDS) - routine_blocks(0);

	if (insns <= 0 || blocks <= 0) {
		snprintf(err, len, "the code's cost: %ld instructions in %ld "
			 "blocks (no trap flag, or a build without "
			 "-fsanitize-coverage)", insns, blocks);
		return -1;
	}
	*insns_per_block = (double)insns / blocks;
	if (!here) {
		m->block_ns = *insns_per_block / (m->ipc * m->ghz);
		return 0;
	}
	return kscale_calibrated_figure("sim.here.block_ns", &m->block_ns,
					measure_block_ns, NULL, err, len);
}
