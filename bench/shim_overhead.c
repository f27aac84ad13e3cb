// SPDX-License-Identifier: GPL-2.0
/*
 * What the C shim costs per iteration: a null body run through
 * kb_register_batch() (one C call per run, then a plain C loop) against
 * the same body in a native C++ Google Benchmark loop
 * (shim_overhead_native.cc).  Both bodies are one compiler barrier.
 */
#include <stdio.h>

#include "../lib/harness/gbench.h"
#include "../lib/kernel/compiler.h"

static void null_c_batch(void *arg, uint64_t iterations)
{
	while (iterations--)
		barrier();
}

int main(int argc, char **argv)
{
	char why[256];
	int nr_run;

	kb_register_batch("shim_overhead/null/c_batch", null_c_batch, NULL);
	if (kb_initialize(&argc, argv, why, sizeof(why))) {
		fprintf(stderr, "shim_overhead: %s\n", why);
		return 2;
	}
	if (kb_run(&nr_run, why, sizeof(why)) || !nr_run) {
		fprintf(stderr, "shim_overhead: %s\n", nr_run ? "failed" : why);
		return 1;
	}
	return 0;
}
