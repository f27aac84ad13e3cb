// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fatal.h"
#include "spawn.h"
#include "xfs_loop.h"

/*
 * What the fatal-exit undo must take down (async-signal-safe): the one
 * mount, its directory, the backing file while it has a name.
 */
static char undo_dir[300], undo_backing[32];
static volatile int undo_mounted;

static void xfs_loop_undo(void)
{
	if (undo_backing[0])
		unlink(undo_backing);
	if (undo_mounted)
		umount2(undo_dir, MNT_DETACH);
	if (undo_dir[0])
		rmdir(undo_dir);
	undo_mounted = 0;
	undo_dir[0] = '\0';
}

static int fail(char *err, size_t len, const char *what, int e)
{
	snprintf(err, len, "%s: %s", what, strerror(e));
	return -1;
}

/* A free loop device attached to fd, clearing itself when unused. */
static int loop_attach(struct xfs_loop *x, int fd, char *err, size_t len)
{
	struct loop_config cfg = {
		.fd = fd,
		.info.lo_flags = LO_FLAGS_AUTOCLEAR,
	};
	int ctl, nr, dev, tries;

	ctl = open("/dev/loop-control", O_RDWR | O_CLOEXEC);
	if (ctl < 0)
		return fail(err, len, "/dev/loop-control", errno);
	/* another process may take the free device first: try again */
	for (tries = 0; tries < 8; tries++) {
		nr = ioctl(ctl, LOOP_CTL_GET_FREE);
		if (nr < 0)
			break;
		snprintf(x->dev, sizeof(x->dev), "/dev/loop%d", nr);
		dev = open(x->dev, O_RDWR | O_CLOEXEC);
		if (dev < 0)
			break;
		if (!ioctl(dev, LOOP_CONFIGURE, &cfg)) {
			close(ctl);
			return dev;
		}
		close(dev);
		if (errno != EBUSY)
			break;
	}
	close(ctl);
	return fail(err, len, "no free loop device", errno);
}

static int run_mkfs(const char *dev, char *err, size_t len)
{
	char *argv[] = { "mkfs.xfs", "-q", "-f", (char *)dev, NULL };
	pid_t pid = kscale_spawn(argv, "/dev/null");
	int status;

	if (pid < 0)
		return fail(err, len, "mkfs.xfs (apt-get install xfsprogs)",
			    errno);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		snprintf(err, len, "mkfs.xfs %s failed (status %d)", dev,
			 status);
		return -1;
	}
	return 0;
}

int xfs_loop_mount(struct xfs_loop *x, size_t size, char *err, size_t len)
{
	const char *tmp = getenv("TMPDIR");
	static bool undo_registered;
	int fd, dev, ret = -1;

	if (geteuid())
		return fail(err, len, "XFS on a loop device", EPERM);
	if (undo_dir[0])
		return fail(err, len, "XFS on a loop device", EBUSY);
	if (!undo_registered) {
		fatal_undo(xfs_loop_undo);
		undo_registered = true;
	}
	/* named in the undo's storage until unlinked: a signal finds it */
	strcpy(undo_backing, "/dev/shm/kscale-xfs.XXXXXX");
	fd = mkstemp(undo_backing);
	/* the loop device keeps the file: nothing to delete later */
	if (fd >= 0)
		unlink(undo_backing);
	undo_backing[0] = '\0';
	if (fd < 0)
		return fail(err, len, "/dev/shm", errno);
	if (ftruncate(fd, (off_t)size)) {
		close(fd);
		return fail(err, len, "/dev/shm", errno);
	}
	dev = loop_attach(x, fd, err, len);
	close(fd);
	if (dev < 0)
		return -1;
	if (run_mkfs(x->dev, err, len))
		goto out;
	/* made in the undo's own storage: no moment a signal could miss it */
	snprintf(undo_dir, sizeof(undo_dir), "%s/kscale-xfs.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(undo_dir)) {
		fail(err, len, undo_dir, errno);
		undo_dir[0] = '\0';
		goto out;
	}
	memcpy(x->dir, undo_dir, sizeof(x->dir));
	undo_mounted = 1;
	if (mount(x->dev, x->dir, "xfs", 0, NULL)) {
		fail(err, len, "mount -t xfs", errno);
		xfs_loop_undo();
		goto out;
	}
	ret = 0;
out:
	/* autoclear: the device detaches once nothing holds it */
	close(dev);
	return ret;
}

void xfs_loop_unmount(struct xfs_loop *x)
{
	if (strcmp(undo_dir, x->dir))
		return;
	if (umount2(x->dir, 0))
		fprintf(stderr, "kscale: umount %s: %s\n", x->dir,
			strerror(errno));
	undo_mounted = 0;
	rmdir(x->dir);
	undo_dir[0] = '\0';
}
