/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A fresh XFS for the `real` variants that need the kernel's own
 * filesystem code: mkfs.xfs on a loop device over a file in /dev/shm
 * (memory, as the seeds' NVDIMMs were), mounted on a directory under
 * $TMPDIR.  The backing file is unlinked once attached and the loop
 * device clears itself when unmounted, so a kill -9 leaves nothing once
 * the process's private mount namespace (tmpfs.h) goes; any other exit
 * unmounts at once.
 */
#ifndef KSCALE_XFS_LOOP_H
#define KSCALE_XFS_LOOP_H

#include <stddef.h>

struct xfs_loop {
	char dir[300];		/* the mount point */
	char dev[32];		/* /dev/loopN */
};

/*
 * Make and mount an XFS of `size` bytes; 0, or -1 with one line in err
 * saying why not (not root, no loop device, no xfs, no mkfs.xfs).
 */
int xfs_loop_mount(struct xfs_loop *x, size_t size, char *err, size_t len);
void xfs_loop_unmount(struct xfs_loop *x);

#endif
