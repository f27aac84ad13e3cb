// SPDX-License-Identifier: GPL-2.0
/*
 * The series' first design (2007, -mm, before 2.6.26 fs/namespace.c): one
 * atomic_t __mnt_writers per vfsmount, incremented by every open for
 * write anywhere on the mount.  The seed reports ~4x slower
 * open/write/close from the one cache line bouncing between CPUs.
 *
 * The -mm code is not in the seed.  The count sits where 2.6.26 put
 * __mnt_writers, on the line mntget()/mntput() already write; the
 * read-only handshake is the minimal correct one for a single count,
 * MNT_WRITE_HOLD as 2.6.29 introduced it: mnt_make_readonly() holds new
 * writers while it reads the count, so a writer racing a remount that
 * fails with EBUSY never sees a transient MNT_READONLY (no spurious EROFS).
 */
#include <errno.h>
#include <stdlib.h>

#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/sched.h"
#include "../../lib/kernel/spinlock.h"
#include "mnt_writers.h"
#include "vfsmount_2_6.h"

#define MNT_WRITE_HOLD	0x200

struct vfsmount {
	VFSMOUNT_2_6_FIELDS;
	atomic_t __mnt_writers;
};
vfsmount_2_6_check_layout(struct vfsmount, __mnt_writers);

static struct vfsmount *alloc_vfsmnt(const char *name)
{
	struct vfsmount *mnt = mnt_cache_zalloc(sizeof(*mnt));

	vfsmount_2_6_init(mnt);
	mnt->mnt_devname = name;
	atomic_set(&mnt->__mnt_writers, 0);
	/* on mnt_count's line: one class, as a visit to either moves it */
	lockstat_register(&mnt->__mnt_writers, "vfsmount", 1, LOCKSTAT_LINE);
	return mnt;
}

static void free_vfsmnt(struct vfsmount *mnt)
{
	WARN_ON(atomic_read(&mnt->__mnt_writers));
	WARN_ON(atomic_read(&mnt->mnt_count) != 1);
	free(mnt);
}

/*
 * The increment is a full barrier: either mnt_make_readonly() sees our
 * count, or we see its MNT_WRITE_HOLD and wait for its verdict.
 */
static int mnt_want_write(struct vfsmount *mnt)
{
	int ret = 0;

	preempt_disable();
	lockstat_visit(&mnt->__mnt_writers);
	atomic_inc(&mnt->__mnt_writers);
	smp_mb__after_atomic();
	while (READ_ONCE(mnt->mnt_flags) & MNT_WRITE_HOLD)
		cpu_relax();
	smp_rmb();
	if (__mnt_is_readonly(mnt)) {
		lockstat_visit(&mnt->__mnt_writers);
		atomic_dec(&mnt->__mnt_writers);
		ret = -EROFS;
	}
	preempt_enable();
	return ret;
}

static void mnt_drop_write(struct vfsmount *mnt)
{
	lockstat_visit(&mnt->__mnt_writers);
	atomic_dec(&mnt->__mnt_writers);
}

static int mnt_make_readonly(struct vfsmount *mnt)
{
	int ret = 0;

	spin_lock(&vfsmount_lock);
	WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags | MNT_WRITE_HOLD);
	smp_mb();
	if (atomic_read(&mnt->__mnt_writers) > 0)
		ret = -EBUSY;
	else
		WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags | MNT_READONLY);
	smp_wmb();
	WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags & ~MNT_WRITE_HOLD);
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
	.mntget = mntget_2_6,
	.mntput = mntput_2_6,
	.mnt_want_write = mnt_want_write,
	.mnt_drop_write = mnt_drop_write,
	.mnt_make_readonly = mnt_make_readonly,
	.mnt_make_readwrite = __mnt_unmake_readonly,
	.mnt_writers = mnt_writers,
};
