// SPDX-License-Identifier: GPL-2.0
/* Progress lines on stderr, one a run (progress.h). */
#include <stdio.h>

#include "../sys/clock.h"
#include "progress.h"
#include "bench.h"

static int progress_done, progress_total;
static double progress_started;

void kscale_progress_total(int total)
{
	progress_total = total;
}

/* "[k/total] name (ETA 1m05s)": the runs so far, or the plan for the first. */
void progress_line(const struct kscale_bench *b)
{
	double left, t = now();
	int done = progress_done++;

	if (!done) {
		progress_started = t;
		left = (b->warmup + b->duration) * progress_total;
	} else {
		left = (t - progress_started) / done * (progress_total - done);
	}
	fprintf(stderr, "kscale: [%d/%d] %s (ETA %dm%02ds)\n", done + 1,
		progress_total, b->name, (int)left / 60, (int)left % 60);
}
