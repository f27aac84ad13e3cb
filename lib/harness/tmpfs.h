/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Scratch directories for the `real` variants: on their own tmpfs mounts
 * when the process may mount (root: it moves into a private mount
 * namespace first, so nothing leaks into the host), else directories on
 * one tmpfs (/dev/shm).  Removed at exit, or by the next bench once the
 * pid in their name is gone (after a SIGKILL).
 */
#ifndef KSCALE_TMPFS_H
#define KSCALE_TMPFS_H

#include <stdbool.h>

#define KSCALE_TMPFS_MAX	8

struct tmpfs_dirs {
	int nr;
	char path[KSCALE_TMPFS_MAX][300];
	bool mounted;		/* each on its own tmpfs mount */
	char how[256];		/* one line for the results and the output */
};

/* Call before any other thread exists: the namespace is per thread. */
int tmpfs_dirs_create(struct tmpfs_dirs *d, int nr, char *err, size_t len);

#endif
