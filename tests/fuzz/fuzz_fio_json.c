// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: fio_wait(), the totals read from fio's --output-format=json
 * (rwsem's fio variants).  The input is the JSON file; the "fio" is a
 * child that exits at once.  Beyond not crashing: a job is counted for
 * each "read" object followed by a "write" one, the least busy job is
 * not busier than the most, a refusal says why, and the file is gone
 * either way.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../lib/harness/fio.c"
#include "fuzz.h"

/* fio.c's other functions' (not fuzzed here) */
int kscale_fail(struct kscale_run *run, const char *fmt, ...)
{
	return -1;
}

void kscale_set_counter(struct kscale_run *run, const char *name, double v)
{
}

void set_thread_spread(struct kscale_run *run, double min, double mean,
		       double max)
{
}

int kscale_nr_distinct_cpus(const struct kscale_run *run)
{
	return 1;
}

double kscale_window_seconds(const struct kscale_run *run)
{
	return 1;
}

double kscale_warmup_seconds(const struct kscale_run *run)
{
	return 0;
}

void fatal_undo(void (*undo)(void))
{
}

pid_t kscale_spawn(char *const argv[], const char *out)
{
	return -1;
}

static char json_path[450];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(json_path, sizeof(json_path), "%s/kscale-fuzz-fio.%d.json",
		 tmp && *tmp ? tmp : "/tmp", (int)getpid());
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fio_totals t;
	struct fio_proc p;
	char err[256] = "";
	struct stat st;
	FILE *f;
	int ret;

	snprintf(p.json, sizeof(p.json), "%s", json_path);
	f = fopen(p.json, "w");
	FUZZ_CHECK(f && fwrite(data, 1, size, f) == size && !fclose(f));
	p.pid = vfork();
	FUZZ_CHECK(p.pid >= 0);
	if (!p.pid)
		_exit(0);
	ret = fio_wait(&p, &t, err, sizeof(err));
	FUZZ_CHECK(stat(p.json, &st) && errno == ENOENT);
	if (ret) {
		FUZZ_CHECK(ret == -1 && err[0] && !t.jobs);
		return 0;
	}
	FUZZ_CHECK(t.jobs >= 1);
	FUZZ_CHECK(memmem(data, size, "\"jobs\"", 6));
	FUZZ_CHECK(memmem(data, size, "\"read\" : {", 10) &&
		   memmem(data, size, "\"write\" : {", 11));
	/* (NaN, from "nan", compares false) */
	FUZZ_CHECK(!(t.io_min > t.io_max) && !(t.cpu_min > t.cpu_max) &&
		   !(t.iops_min > t.iops_max));
	return 0;
}
