// SPDX-License-Identifier: GPL-2.0
/*
 * The code between events: a count of the model's basic blocks (sim.h).
 *
 * The simulator's build compiles the model's code (lib/kernel, lib/sys,
 * the harness, models/, bench/; not the engine, lib/sim, nor here's
 * measures) with GCC's -fsanitize-coverage=trace-pc, which calls
 * __sanitizer_cov_trace_pc() at the head of every basic block.  It counts
 * them, and the engine charges what a task ran since its last event at the
 * next one (sim.c: code_charge()).  The count is the host thread's: the
 * tasks of a run all run on the thread that calls sim_run(), and a block
 * another host thread runs (Google Benchmark's, the watchdog's) is not
 * theirs.
 */
#include "sim.h"

static _Thread_local uint64_t blocks
	__attribute__((tls_model("initial-exec")));

void __sanitizer_cov_trace_pc(void);

void __sanitizer_cov_trace_pc(void)
{
	blocks++;
}

uint64_t sim_code_blocks(void)
{
	return blocks;
}
