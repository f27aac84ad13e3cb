/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulator's side of a bench binary's set-up (-DKSCALE_SIM): the
 * machine --sim named and the run's seed, handed to each registered
 * benchmark (bench.h) for its window (sim/window.c), and the topology of
 * the machine's virtual CPUs in place of the host's.
 */
#ifndef KSCALE_HARNESS_SIM_SETUP_H
#define KSCALE_HARNESS_SIM_SETUP_H

#include <stdint.h>

#include "../../sim/machine.h"
#include "../../sys/topology.h"
#include "../options.h"

struct sim_setup {
	struct sim_machine machine;
	uint64_t seed;
};

/*
 * --sim's machine and seed (the process's one), and its CPUs and nodes
 * into t; the context says what was simulated.  NULL with one line in
 * err if it cannot.
 */
struct sim_setup *kscale_sim_setup(const struct kscale_options *o,
				   struct topology *t, char *err, size_t len);

#endif
