/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ndelay(): busy work of a calibrated length, standing in for the parts of
 * a kernel path a model does not reproduce.  calibrate_delay() times a
 * loop of compiler barriers once; ndelay() touches no shared memory.
 */
#ifndef KSCALE_KERNEL_DELAY_H
#define KSCALE_KERNEL_DELAY_H

#include "compiler.h"

extern double loops_per_ns;

void calibrate_delay(void);

static inline void __delay(unsigned long loops)
{
	while (loops--)
		barrier();
}

static inline void ndelay(unsigned long ns)
{
	__delay((unsigned long)(ns * loops_per_ns));
}

#endif
