// SPDX-License-Identifier: GPL-2.0
/*
 * The series' first design (2007, -mm, before 2.6.26 fs/namespace.c): one
 * atomic_t __mnt_writers per vfsmount, incremented by every open for
 * write anywhere on the mount.  The seed reports ~4x slower
 * open/write/close from the one cache line bouncing between CPUs.
 *
 * The -mm code is not in the seed; the increment-then-check and
 * check-under-vfsmount_lock pairing here is the minimal correct form of
 * the design it describes.
 */
#include <errno.h>
#include <stdlib.h>

#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/spinlock.h"
#include "mnt_writers.h"

struct vfsmount {
	int mnt_flags;
	atomic_t __mnt_writers;
};

static spinlock_t vfsmount_lock = __SPIN_LOCK_UNLOCKED;

static struct vfsmount *alloc_vfsmnt(const char *name)
{
	struct vfsmount *mnt = aligned_alloc(SMP_CACHE_BYTES,
					     SMP_CACHE_BYTES);

	(void)name;
	mnt->mnt_flags = 0;
	atomic_set(&mnt->__mnt_writers, 0);
	return mnt;
}

static void free_vfsmnt(struct vfsmount *mnt)
{
	WARN_ON(atomic_read(&mnt->__mnt_writers));
	free(mnt);
}

/* The increment is a full barrier: either we see MNT_READONLY or
 * mnt_make_readonly() sees our count. */
static int mnt_want_write(struct vfsmount *mnt)
{
	atomic_inc(&mnt->__mnt_writers);
	if (__mnt_is_readonly(mnt)) {
		atomic_dec(&mnt->__mnt_writers);
		return -EROFS;
	}
	return 0;
}

static void mnt_drop_write(struct vfsmount *mnt)
{
	atomic_dec(&mnt->__mnt_writers);
}

static int mnt_make_readonly(struct vfsmount *mnt)
{
	int ret = 0;

	spin_lock(&vfsmount_lock);
	WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags | MNT_READONLY);
	smp_mb();
	if (atomic_read(&mnt->__mnt_writers) > 0) {
		WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags & ~MNT_READONLY);
		ret = -EBUSY;
	}
	spin_unlock(&vfsmount_lock);
	return ret;
}

static void __mnt_unmake_readonly(struct vfsmount *mnt)
{
	spin_lock(&vfsmount_lock);
	WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags & ~MNT_READONLY);
	spin_unlock(&vfsmount_lock);
}

static long mnt_writers(struct vfsmount *mnt)
{
	return atomic_read(&mnt->__mnt_writers);
}

const struct mnt_writers_ops mnt_writers_atomic = {
	.name = "atomic",
	.counts_writers = true,
	.alloc_vfsmnt = alloc_vfsmnt,
	.free_vfsmnt = free_vfsmnt,
	.mnt_want_write = mnt_want_write,
	.mnt_drop_write = mnt_drop_write,
	.mnt_make_readonly = mnt_make_readonly,
	.mnt_make_readwrite = __mnt_unmake_readonly,
	.mnt_writers = mnt_writers,
};
