// SPDX-License-Identifier: GPL-2.0
/*
 * fs/namespace.c's pieces every design shares: vfsmount_lock, the
 * mnt_cache its designs allocate from (kmem_cache_zalloc()), 2.6's
 * mntget()/mntput() out of line (include/linux/mount.h has them inline;
 * the out-of-line call is the bench's, not the kernel's), and 2.6.22's
 * lookup_mnt() on a mount_hashtable of one bucket.
 */
#include <stdlib.h>
#include <string.h>

#include "../../lib/kernel/page_alloc.h"
#include "mnt_writers.h"
#include "namei_2_6.h"
#include "vfsmount_2_6.h"

union spinlock_line vfsmount_lock_line = {
	.lock = __SPIN_LOCK_UNLOCKED,
};
struct list_head mount_hashtable = LIST_HEAD_INIT(mount_hashtable);
bool mnt_cache_page_per_object;
unsigned long mnt_underflows_coalesced;

void *mnt_cache_zalloc(size_t size)
{
	size_t align = mnt_cache_page_per_object ? PAGE_SIZE : SMP_CACHE_BYTES;
	size_t total = (size + align - 1) & ~(align - 1);
	void *p = aligned_alloc(align, total);

	if (!p)
		abort();
	memset(p, 0, total);
	return p;
}

void mntget_2_6(struct vfsmount *mnt)
{
	mntget((struct vfsmount_2_6 *)mnt);
}

void mntput_2_6(struct vfsmount *mnt)
{
	struct vfsmount_2_6 *m = (struct vfsmount_2_6 *)mnt;

	mntput(m);
}

/* __lookup_mnt(mnt, dentry, 1), and its reference, under vfsmount_lock */
struct vfsmount *lookup_mnt(struct vfsmount *mnt, struct dentry *dentry)
{
	struct vfsmount_2_6 *p, *found = NULL;

	spin_lock(&vfsmount_lock);
	list_for_each_entry(p, &mount_hashtable, mnt_hash) {
		if (p->mnt_parent == mnt && p->mnt_mountpoint == dentry) {
			found = p;
			mntget(found);
			break;
		}
	}
	spin_unlock(&vfsmount_lock);
	return (struct vfsmount *)found;
}
