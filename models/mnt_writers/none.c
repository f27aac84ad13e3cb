// SPDX-License-Identifier: GPL-2.0
/*
 * Before the r/o bind mount series: 2.6.22 fs/namespace.c as the series
 * first patched it, where mnt_want_write() only checks the read-only flag
 * and mnt_drop_write() does nothing.  Nothing counts writers, so
 * mnt_make_readonly() cannot refuse while files are open for write:
 * the gap the series closed.
 */
#include <errno.h>
#include <stdlib.h>

#include "../../lib/kernel/compiler.h"
#include "mnt_writers.h"

struct vfsmount {
	int mnt_flags;
};

static struct vfsmount *alloc_vfsmnt(const char *name)
{
	(void)name;
	return calloc(1, sizeof(struct vfsmount));
}

static void free_vfsmnt(struct vfsmount *mnt)
{
	free(mnt);
}

static int mnt_want_write(struct vfsmount *mnt)
{
	if (__mnt_is_readonly(mnt))
		return -EROFS;
	return 0;
}

static void mnt_drop_write(struct vfsmount *mnt)
{
	(void)mnt;
}

static int mnt_make_readonly(struct vfsmount *mnt)
{
	WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags | MNT_READONLY);
	return 0;
}

static void __mnt_unmake_readonly(struct vfsmount *mnt)
{
	WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags & ~MNT_READONLY);
}

static long mnt_writers(struct vfsmount *mnt)
{
	(void)mnt;
	return 0;
}

const struct mnt_writers_ops mnt_writers_none = {
	.name = "none",
	.counts_writers = false,
	.alloc_vfsmnt = alloc_vfsmnt,
	.free_vfsmnt = free_vfsmnt,
	.mnt_want_write = mnt_want_write,
	.mnt_drop_write = mnt_drop_write,
	.mnt_make_readonly = mnt_make_readonly,
	.mnt_make_readwrite = __mnt_unmake_readonly,
	.mnt_writers = mnt_writers,
};
