// SPDX-License-Identifier: GPL-2.0
/*
 * 2.6.26's fs/file_table.c file_move()/file_kill() and the cwd's
 * reference in fs/namei.c's path walk: see fs_2_6.h.  dput() is
 * fs/dcache.c's fast path: the cwd's count never reaches 0 here.
 */
#include "../../lib/kernel/lockstat.h"
#include "fs_2_6.h"

struct super_block sb_2_6;

/* include/linux/dcache.h: d_count first, on the line dget()/dput() write */
static struct dentry {
	atomic_t d_count;
	unsigned int d_flags;
	spinlock_t d_lock;
} ____cacheline_aligned_in_smp pwd;

static spinlock_t dcache_lock = __SPIN_LOCK_UNLOCKED;

static spinlock_t files_lock ____cacheline_aligned_in_smp =
	__SPIN_LOCK_UNLOCKED;

#define file_list_lock() spin_lock(&files_lock);
#define file_list_unlock() spin_unlock(&files_lock);

void fs_2_6_init(void)
{
	INIT_LIST_HEAD(&sb_2_6.s_files);
	atomic_set(&pwd.d_count, 1);
	/* 2.6.22's byte lock or 2.6.26's ticket lock: the variant's */
	spin_lock_init(&pwd.d_lock);
	spin_lock_init(&dcache_lock);
	spin_lock_init(&files_lock);
	lockstat_register(&files_lock, "files_lock", 1, LOCKSTAT_SPIN);
	/* the list's head, and the neighbour list_move() links to */
	lockstat_register(&sb_2_6.s_files, "s_files", 2, LOCKSTAT_LINE);
	lockstat_register(&pwd.d_count, "dentry", 1, LOCKSTAT_LINE);
}

void file_init(struct file *f, struct vfsmount *mnt)
{
	INIT_LIST_HEAD(&f->f_u.fu_list);
	f->f_vfsmnt = mnt;
}

void dget_pwd(void)
{
	lockstat_visit(&pwd.d_count);
	atomic_inc(&pwd.d_count);
}

void dput_pwd(void)
{
	lockstat_visit(&pwd.d_count);
	if (!atomic_dec_and_lock(&pwd.d_count, &dcache_lock))
		return;
	/* the last reference: the cwd is pinned by fs_2_6_init()'s */
	spin_unlock(&dcache_lock);
	WARN_ON(1);
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
