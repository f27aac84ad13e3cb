/* SPDX-License-Identifier: GPL-2.0 */
/* Progress lines on stderr: "[k/total] name (ETA ...)". */
#ifndef KSCALE_PROGRESS_H
#define KSCALE_PROGRESS_H

struct kscale_bench;

/* Once, before the runs: how many there will be. */
void kscale_progress_total(int total);
/* As each run starts. */
void progress_line(const struct kscale_bench *b);

#endif
