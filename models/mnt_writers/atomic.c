// SPDX-License-Identifier: GPL-2.0
/*
 * The single atomic_t the seed replaced, as last posted before the
 * per-node design: "[PATCH 07/28] Add vfsmount writer count" (Dave
 * Hansen, lkml 2006-08-01, <20060801235245.08138ED2@localhost.localdomain>,
 * fs/namespace.c against 2.6.18-rc).  Every open for write anywhere on the
 * mount takes the mount's mnt_writers with atomic_add_unless() (a read and
 * a cmpxchg) while it has writers; its first writer takes the superblock's
 * s_mnt_writers_lock and counts the mount into sb->s_mnt_writers, and its
 * last writer's atomic_dec_and_lock() takes the lock to count it out.  The
 * seed reports "something like a 4x slowdown" from the one line bouncing.
 *
 * Departures: the count sits on mnt_count's line where 2.6.22 moved
 * mnt_count (the posting, on 2.6.18's layout, put mnt_writers between
 * mnt_count and mnt_flags, so mnt_flags shared the written line as well);
 * __mnt_is_readonly() tests MNT_READONLY alone (the posting also tested
 * MNT_SB_WRITABLE, which only a superblock remount clears); every mount
 * is a bind mount of one filesystem, so they share one superblock.
 */
#include <errno.h>
#include <stdlib.h>

#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/spinlock.h"
#include "fs_2_6.h"
#include "mnt_writers.h"
#include "vfsmount_2_6.h"

struct vfsmount {
	VFSMOUNT_2_6_FIELDS;
	atomic_t mnt_writers;
};
vfsmount_2_6_check_layout(struct vfsmount, mnt_writers);

/* alloc_super()'s part */
static void init_sb(void)
{
	atomic_set(&sb_2_6.s_mnt_writers, 0);
	spin_lock_init(&sb_2_6.s_mnt_writers_lock);
	lockstat_register(&sb_2_6.s_mnt_writers_lock, "s_mnt_writers_lock",
			  1, LOCKSTAT_SPIN);
}

static struct vfsmount *alloc_vfsmnt(const char *name)
{
	struct vfsmount *mnt = mnt_cache_zalloc(sizeof(*mnt));

	vfsmount_2_6_init(mnt);
	mnt->mnt_devname = name;
	atomic_set(&mnt->mnt_writers, 0);
	/* on mnt_count's line: one class, as a visit to either moves it */
	lockstat_register(&mnt->mnt_writers, "vfsmount", 1, LOCKSTAT_LINE);
	return mnt;
}

static void free_vfsmnt(struct vfsmount *mnt)
{
	WARN_ON(atomic_read(&mnt->mnt_writers));
	WARN_ON(atomic_read(&mnt->mnt_count) != 1);
	free(mnt);
}

static int mnt_make_readonly(struct vfsmount *mnt)
{
	int ret = 0;

	WARN_ON(__mnt_is_readonly(mnt));

	/*
	 * This flag set is actually redundant with what
	 * happens in do_remount(), but since we do this
	 * under the lock, anyone attempting to get a write
	 * on it after this will fail.
	 */
	spin_lock(&mnt->mnt_sb->s_mnt_writers_lock);
	if (!atomic_read(&mnt->mnt_writers))
		WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags | MNT_READONLY);
	else
		ret = -EBUSY;
	spin_unlock(&mnt->mnt_sb->s_mnt_writers_lock);
	return ret;
}

/* do_remount() calls it on any mount: the posting's WARN_ON() is left out. */
static void __mnt_unmake_readonly(struct vfsmount *mnt)
{
	WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags & ~MNT_READONLY);
}

static int mnt_want_write(struct vfsmount *mnt)
{
	int ret = 0;
repeat:
	lockstat_visit(&mnt->mnt_writers);
	if (atomic_add_unless(&mnt->mnt_writers, 1, 0))
		return 0;

	spin_lock(&mnt->mnt_sb->s_mnt_writers_lock);
	if (__mnt_is_readonly(mnt)) {
		ret = -EROFS;
		goto out;
	}
	lockstat_visit(&mnt->mnt_writers);
	if (atomic_add_return(1, &mnt->mnt_writers) != 1) {
		lockstat_visit(&mnt->mnt_writers);
		atomic_dec(&mnt->mnt_writers);
		spin_unlock(&mnt->mnt_sb->s_mnt_writers_lock);
		goto repeat;
	}
	atomic_inc(&mnt->mnt_sb->s_mnt_writers);
out:
	spin_unlock(&mnt->mnt_sb->s_mnt_writers_lock);
	return ret;
}

static void mnt_drop_write(struct vfsmount *mnt)
{
	lockstat_visit(&mnt->mnt_writers);
	if (!atomic_dec_and_lock(&mnt->mnt_writers,
				 &mnt->mnt_sb->s_mnt_writers_lock))
		return;

	atomic_dec(&mnt->mnt_sb->s_mnt_writers);
	spin_unlock(&mnt->mnt_sb->s_mnt_writers_lock);
}

static long mnt_writers(struct vfsmount *mnt)
{
	return atomic_read(&mnt->mnt_writers);
}

/* Mounts with writers, as sb->s_mnt_writers counts them. */
long mnt_atomic_sb_writers(void)
{
	return atomic_read(&sb_2_6.s_mnt_writers);
}

const struct mnt_writers_ops mnt_writers_atomic = {
	.counts_writers = true,
	.era_2_6 = true,
	.init = init_sb,
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
