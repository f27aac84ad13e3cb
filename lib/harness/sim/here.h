/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What this machine's figures are, measured now or reused from
 * --calibration's file (sim/here.c): those of every simulated machine
 * that are the host's own, and the whole of `--sim=here`.
 */
#ifndef KSCALE_HARNESS_SIM_HERE_H
#define KSCALE_HARNESS_SIM_HERE_H

#include "../../sim/machine.h"
#include "../../sys/topology.h"

/*
 * What the model's copies, cycle-counter and clock reads cost here: 0, or
 * -1 with one line in err.
 */
int sim_host_work(struct sim_machine *m, char *err, size_t len);
/* This machine, measured: `--sim=here`. */
int sim_machine_here(const struct topology *t, struct sim_machine *m,
		     char *err, size_t len);

#endif
