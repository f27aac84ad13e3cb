// SPDX-License-Identifier: GPL-2.0
/*
 * 2.6.22's fs/file_table.c file_move()/file_kill() and fs/dcache.c's
 * references, for the path walk of namei_2_6.h: see fs_2_6.h.  dput() is
 * the fast path: no dentry the walk passes reaches 0 here, as its parent
 * (or the tree's set-up) holds it.
 */
#include "../../lib/kernel/lockstat.h"
#include "fs_2_6.h"
#include "vfsmount_2_6.h"

struct super_block sb_2_6;

static spinlock_t dcache_lock = __SPIN_LOCK_UNLOCKED;

static union spinlock_line files_lock_line = {
	.lock = __SPIN_LOCK_UNLOCKED,
};
#define files_lock (files_lock_line.lock)

#define file_list_lock() spin_lock(&files_lock);
#define file_list_unlock() spin_unlock(&files_lock);

void fs_2_6_init(void)
{
	INIT_LIST_HEAD(&sb_2_6.s_files);
	/* 2.6.22's byte lock or 2.6.26's ticket lock: the variant's */
	spin_lock_init(&dcache_lock);
	spin_lock_init(&files_lock);
	spin_lock_init(&vfsmount_lock);
	lockstat_register(&files_lock, "files_lock", 1, LOCKSTAT_SPIN);
	/* the list's head, and the neighbour list_move() links to */
	lockstat_register(&sb_2_6.s_files, "s_files", 2, LOCKSTAT_LINE);
	/* lookup_mnt() takes it where a walk crosses a mount */
	lockstat_register(&vfsmount_lock, "vfsmount_lock", 1, LOCKSTAT_SPIN);
}

void file_init(struct file *f, struct vfsmount *mnt)
{
	INIT_LIST_HEAD(&f->f_u.fu_list);
	f->f_dentry = NULL;
	f->f_vfsmnt = mnt;
}

void d_init(struct dentry *dentry, struct inode *inode, bool shared)
{
	atomic_set(&dentry->d_count, 1);
	spin_lock_init(&dentry->d_lock);
	dentry->d_mounted = 0;
	dentry->d_inode = inode;
	if (inode)
		mutex_init(&inode->i_mutex);
	if (!shared)
		return;
	lockstat_register(&dentry->d_count, "dentry", 1, LOCKSTAT_LINE);
	if (inode)
		lockstat_register(&inode->i_mutex, "i_mutex", 1,
				  LOCKSTAT_MUTEX);
}

void dget_2_6(struct dentry *dentry)
{
	lockstat_visit(&dentry->d_count);
	atomic_inc(&dentry->d_count);
}

void dput_2_6(struct dentry *dentry)
{
	lockstat_visit(&dentry->d_count);
	if (!atomic_dec_and_lock(&dentry->d_count, &dcache_lock))
		return;
	/* the last reference: every dentry here is pinned by its set-up */
	spin_unlock(&dcache_lock);
	WARN_ON(1);
}

/* The reference __d_lookup() takes on the dentry it found, under d_lock. */
void __d_lookup_2_6(struct dentry *dentry)
{
	spin_lock(&dentry->d_lock);
	lockstat_visit(&dentry->d_count);
	atomic_inc(&dentry->d_count);
	spin_unlock(&dentry->d_lock);
}

void file_move(struct file *file, struct list_head *list)
{
	if (!list)
		return;
	file_list_lock();
	lockstat_visit(&sb_2_6.s_files);
	list_move(&file->f_u.fu_list, list);
	file_list_unlock();
}

void file_kill(struct file *file)
{
	if (!list_empty(&file->f_u.fu_list)) {
		file_list_lock();
		lockstat_visit(&sb_2_6.s_files);
		list_del_init(&file->f_u.fu_list);
		file_list_unlock();
	}
}
