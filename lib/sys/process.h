/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For a `real` variant's thread: what a process of its own would have, a
 * private file table and private credentials.  Threads share both, and
 * bounce the file table's lock and the cred's reference count on every
 * open and close, a cost of threads that a benchmark of processes never
 * paid.  0, or -errno.
 */
#ifndef KSCALE_PROCESS_H
#define KSCALE_PROCESS_H

int thread_as_process(void);

/*
 * The temp file "<path>.tmp.<pid>" a writer of path renames into place,
 * the pid in ten digits: the name's length must not depend on the pid a
 * run gets, as where a --sim run's memory lands follows the heap's
 * history (real_lookup's dentry hash is of addresses).
 */
#define TMP_PATH_FMT "%s.tmp.%010d"

/*
 * The temp files "<path>.tmp.<pid>" of writers of path that are gone (one
 * SIGKILLed between writing its temp file and renaming it) removed.
 */
void remove_dead_tmp(const char *path);

#endif
