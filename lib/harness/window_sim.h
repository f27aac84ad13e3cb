/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The simulator's side of a bench binary (-DKSCALE_SIM): the machine
 * --sim named, and the topology of its virtual CPUs in place of the
 * host's.
 */
#ifndef KSCALE_WINDOW_SIM_H
#define KSCALE_WINDOW_SIM_H

#include <stdint.h>

#include "../sim/machine.h"
#include "../sys/topology.h"
#include "options.h"

struct sim_setup {
	struct sim_machine machine;
	uint64_t seed;
};

extern struct sim_setup kscale_sim;

/*
 * --sim's machine into kscale_sim and its CPUs and nodes into t; the
 * context says what was simulated.  0, or -1 with one line in err.
 */
int kscale_sim_setup(const struct kscale_options *o, struct topology *t,
		     char *err, size_t len);
/* What the model's copies, cycle-counter and clock reads cost here. */
void sim_host_work(struct sim_machine *m);
/* This machine, measured: `--sim=here`. */
int sim_machine_here(const struct topology *t, struct sim_machine *m,
		     char *err, size_t len);

#endif
