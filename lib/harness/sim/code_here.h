/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a basic block of the model's code costs (lib/sim/code.c), measured
 * on one routine of plain code (code_routine.c) built twice: as the host
 * runs it and with its blocks counted.
 */
#ifndef KSCALE_HARNESS_SIM_CODE_HERE_H
#define KSCALE_HARNESS_SIM_CODE_HERE_H

#include <stdbool.h>
#include <stddef.h>

#include "../../sim/machine.h"

/* rounds of the routine: the host's build, and the counted one */
long sim_code_routine(long rounds);
long sim_code_routine_counted(long rounds);

/*
 * m->block_ns: ipc and ghz's for a machine, measured here at 1 CPU for
 * `here` (its ns a block kept as "sim.here.block_ns" in --calibration's
 * file); *insns_per_block the routine's.  0, or -1 with one line in err.
 */
int sim_code_cost(struct sim_machine *m, bool here, double *insns_per_block,
		  char *err, size_t len);

#endif
