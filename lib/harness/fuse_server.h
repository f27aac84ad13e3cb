/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A lookup-only FUSE filesystem served from this process (threads reading
 * /dev/fuse and answering in the kernel's protocol), for the running
 * kernel's own directory lock: without FUSE_PARALLEL_DIROPS, fuse_lookup()
 * takes the directory's fuse inode mutex around every LOOKUP, as 2.6's
 * real_lookup() took i_mutex; with it, lookups in a directory overlap.
 *
 * It is mounted on $TMPDIR/kscale-fuse.XXXXXX (/tmp without TMPDIR).
 * The root holds directories d000 .. dNNN; a LOOKUP in one of them costs
 * lookup_ns of CPU, sleeps io_us, and answers ENOENT, so nothing is cached
 * and every lookup of a new name reaches the server.  The mount is undone
 * by fuse_server_stop(), and by fatal.h on a signal or the watchdog.
 */
#ifndef KSCALE_FUSE_SERVER_H
#define KSCALE_FUSE_SERVER_H

#include <stdbool.h>
#include <stddef.h>

struct fuse_server;

struct fuse_server_config {
	int dirs;
	bool parallel_dirops;
	unsigned long io_us;
	unsigned long lookup_ns;
	int max_threads;		/* server threads: one per client */
};

/* Why FUSE cannot be mounted here, or NULL if it can be tried. */
const char *fuse_server_unavailable(void);
struct fuse_server *fuse_server_start(const struct fuse_server_config *cfg,
				      char *err, size_t len);
/* The path of directory i. */
const char *fuse_server_dir(const struct fuse_server *fs, int i);
/* Whether the kernel granted what the config asked for. */
bool fuse_server_parallel_dirops(const struct fuse_server *fs);
unsigned long fuse_server_lookups(const struct fuse_server *fs);
void fuse_server_stop(struct fuse_server *fs);

#endif
