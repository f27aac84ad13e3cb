/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Child processes of the real-kernel drivers (fio, mkfs.xfs, perf): found
 * in PATH, output to a file (or inherited), and killed by the kernel if
 * the bench dies, even by SIGKILL where no undo runs (PR_SET_PDEATHSIG,
 * so spawn from a thread that outlives the child: the main thread).
 */
#ifndef KSCALE_SPAWN_H
#define KSCALE_SPAWN_H

#include <sys/types.h>

/*
 * Start argv; stdout and stderr to `out` if not NULL.  The child's pid,
 * or -1 with errno (ENOENT: not in PATH, reported by the exec itself).
 */
pid_t kscale_spawn(char *const argv[], const char *out);

#endif
