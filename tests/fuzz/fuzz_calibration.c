// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: --calibration=FILE, kscale_calibration_load()'s "NAME VALUE"
 * lines.  The input is the file.  The values loaded are forgotten after
 * each input (calibrate.c's static `file`).  Beyond
 * not crashing: a file that loads has one value per line that is neither
 * empty nor a '#' comment, each name once; one value more through
 * kscale_calibrated() rewrites the file, which loads back to the same
 * values in the same order; a refused file says which line.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/sys/affinity.c"
#include "../../lib/sys/median.c"
#include "../../lib/sys/process.c"
#include "../../lib/harness/calibrate.c"
#include "fuzz.h"

/* calibrate.c's helper (not fuzzed here) runs on the model scheduler's CPUs */
__thread int kscale_this_cpu, kscale_this_node;

int sched_migrate_task(int cpu)
{
	return 0;
}

void kscale_add_context(const char *key, const char *fmt, ...)
{
}

/* The file, in a directory of its own under $TMPDIR (kscale fuzz's) */
static char dir[4096], path[4096 + 8];

static void remove_dir(void)
{
	unlink(path);
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/kscale-fuzz-calibration-XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	FUZZ_CHECK(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/cal", dir);
	atexit(remove_dir);
	return 0;
}

static void forget(void)
{
	int i;

	for (i = 0; i < file.nr; i++) {
		free(file.v[i].name);
		free(file.v[i].text);
	}
	free(file.v);
	memset(&file, 0, sizeof(file));
}

static void write_input(const uint8_t *data, size_t size)
{
	FILE *f = fopen(path, "w");

	FUZZ_CHECK(f);
	FUZZ_CHECK(fwrite(data, 1, size, f) == size);
	FUZZ_CHECK(!fclose(f));
}

/* Lines neither empty nor comments, as getline() splits them. */
static int value_lines(const uint8_t *data, size_t size)
{
	size_t i, start;
	int nr = 0;

	for (start = 0; start < size; start = i + 1) {
		for (i = start; i < size && data[i] != '\n'; i++)
			;
		nr += i > start && data[start] != '#';
	}
	return nr;
}

static int measure(void *arg, double *ns, char *err, size_t len)
{
	*ns = 1234.9;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct value *was;
	char err[512] = "";
	unsigned long ns;
	int i, j, nr;

	write_input(data, size);
	if (kscale_calibration_load(path, err, sizeof(err))) {
		FUZZ_CHECK(strstr(err, ": line "));
		forget();
		return 0;
	}
	FUZZ_CHECK(file.nr == value_lines(data, size));
	for (i = 0; i < file.nr; i++) {
		FUZZ_CHECK(file.v[i].name[0] && file.v[i].name[0] != '#');
		FUZZ_CHECK(!strpbrk(file.v[i].name, " \t\n"));
		for (j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(file.v[i].name, file.v[j].name));
	}
	/* one more value: the file is rewritten with all of them */
	nr = file.nr;
	/* (refused only if the file has it with decimals: not whole ns) */
	if (kscale_calibrated("fuzz.added_ns", &ns, measure, NULL, err,
			      sizeof(err)))
		FUZZ_CHECK(file.reused &&
			   strchr(find("fuzz.added_ns")->text, '.'));
	FUZZ_CHECK(file.nr == nr + !file.reused);
	FUZZ_CHECK(file.reused || ns == 1234);
	nr = file.nr;
	was = malloc(nr * sizeof(*was));
	memcpy(was, file.v, nr * sizeof(*was));
	free(file.v);
	file.v = NULL;
	file.nr = file.alloc = 0;
	/* (a value reused: nothing written, the input is the file still) */
	FUZZ_CHECK(!kscale_calibration_load(path, err, sizeof(err)));
	FUZZ_CHECK(file.nr == nr);
	for (i = 0; i < nr; i++) {
		FUZZ_CHECK(!strcmp(file.v[i].name, was[i].name));
		FUZZ_CHECK(!strcmp(file.v[i].text, was[i].text));
		FUZZ_CHECK(file.v[i].v == was[i].v);
		free(was[i].name);
		free(was[i].text);
	}
	free(was);
	forget();
	return 0;
}
