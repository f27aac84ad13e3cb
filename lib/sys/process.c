// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "process.h"

/* PR_SET_KEEPCAPS to its own value commits new credentials for one thread. */
int thread_as_process(void)
{
	int keep;

	if (unshare(CLONE_FILES))
		return -errno;
	keep = prctl(PR_GET_KEEPCAPS, 0, 0, 0, 0);
	if (keep < 0 || prctl(PR_SET_KEEPCAPS, keep, 0, 0, 0))
		return -errno;
	return 0;
}

void remove_dead_tmp(const char *path)
{
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t len = strlen(base);
	char dir[4096], *end;
	struct dirent *e;
	long pid;
	DIR *d;

	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - path) : 1,
		 slash ? path : ".");
	d = opendir(dir[0] ? dir : "/");
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, base, len) ||
		    strncmp(e->d_name + len, ".tmp.", 5))
			continue;
		pid = strtol(e->d_name + len + 5, &end, 10);
		if (*end || pid <= 0 || !kill(pid, 0) || errno != ESRCH)
			continue;
		unlinkat(dirfd(d), e->d_name, 0);
	}
	if (d)
		closedir(d);
}
