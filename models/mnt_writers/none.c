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
#include "vfsmount_2_6.h"

struct vfsmount {
	VFSMOUNT_2_6_FIELDS;
};

static struct vfsmount *alloc_vfsmnt(const char *name)
{
	struct vfsmount *mnt = mnt_cache_zalloc(sizeof(*mnt));

	vfsmount_2_6_init(mnt);
	mnt->mnt_devname = name;
	return mnt;
}

static void free_vfsmnt(struct vfsmount *mnt)
{
	WARN_ON(atomic_read(&mnt->mnt_count) != 1);
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
	.counts_writers = false,
	.era_2_6 = true,
	.alloc_vfsmnt = alloc_vfsmnt,
	.free_vfsmnt = free_vfsmnt,
	.mntget = mntget_2_6,
	.mntput = mntput_2_6,
	.mnt_want_write = mnt_want_write,
	.mnt_drop_write = mnt_drop_write,
	.mnt_make_readonly = mnt_make_readonly,
	.mnt_make_readwrite = __mnt_unmake_readonly,
	.mnt_writers = mnt_writers,
};
