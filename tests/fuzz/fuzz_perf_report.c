// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: --perf's reading of `perf report --stdio -t '|'` lines
 * ("  2.00%  | 0.71%  |fio  |[k] do_syscall_64"), perf.c's static
 * parse_report(), and of perf's messages (perf_said()).  The input is
 * perf's output.  Beyond not crashing: a
 * function the input does not name gets nothing, no idle share without
 * the idle task's name, and the first message
 * line is one line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/harness/perf.c"
#include "fuzz.h"

/* perf.c's other functions' (not fuzzed here) */
void fatal_undo(void (*undo)(void))
{
}

void kscale_add_context(const char *key, const char *fmt, ...)
{
}

int kscale_fail(struct kscale_run *run, const char *fmt, ...)
{
	return -1;
}

void kscale_set_counter(struct kscale_run *run, const char *name, double v)
{
}

pid_t kscale_spawn(char *const argv[], const char *out)
{
	return -1;
}

struct kscale_variant_table kscale_variants;

static const char *fuzz_symbols[] = {
	"do_syscall_64", "osq_lock", "rwsem_down_write_slowpath", "_raw_spin",
};

static char said_path[4096];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	symbols = fuzz_symbols;
	nr_symbols = ARRAY_SIZE(fuzz_symbols);
	snprintf(said_path, sizeof(said_path), "%s/kscale-fuzz-perf.%d.log",
		 tmp && *tmp ? tmp : "/tmp", (int)getpid());
	return 0;
}

static void fuzz_said(const uint8_t *data, size_t size)
{
	FILE *f = fopen(said_path, "w");
	char buf[256];

	FUZZ_CHECK(f && fwrite(data, 1, size, f) == size && !fclose(f));
	perf_said(said_path, buf, sizeof(buf));
	FUZZ_CHECK(buf[0] && !strchr(buf, '\n'));
	unlink(said_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	double children[ARRAY_SIZE(fuzz_symbols)] = { 0 };
	double self[ARRAY_SIZE(fuzz_symbols)] = { 0 };
	double idle;
	FILE *f;
	int i;

	if (!size)
		return 0;
	f = fmemopen((void *)data, size, "r");
	FUZZ_CHECK(f);
	parse_report(f, children, self, &idle);
	fclose(f);
	for (i = 0; i < nr_symbols; i++)
		if (!memmem(data, size, symbols[i], strlen(symbols[i])))
			FUZZ_CHECK(children[i] == 0 && self[i] == 0);
	if (!memmem(data, size, "swapper", 7))
		FUZZ_CHECK(idle == 0);
	fuzz_said(data, size);
	return 0;
}
