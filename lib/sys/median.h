/* SPDX-License-Identifier: GPL-2.0 */
#ifndef KSCALE_SYS_MEDIAN_H
#define KSCALE_SYS_MEDIAN_H

/* The median of nr samples (sorted in place). */
double kscale_median(double *v, int nr);

#endif
