/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What 2.6.22-2.6.28's open/write/close did on shared lines besides the
 * writer count and mnt_count, for the designs of that era (none, atomic,
 * pernode, percpu, percpu_seed); `upstream` has none of it today:
 *
 *  - the path walk (namei_2_6.h, 2.6.22 fs/namei.c): the references it
 *    takes and drops on the mounts and dentries it passes, the parent's
 *    i_mutex of an O_CREAT open and lookup_mnt()'s vfsmount_lock where
 *    it crosses a mount; it separates mntget() from mnt_want_write();
 *  - __dentry_open()'s file_move() and __fput()'s file_kill() take the
 *    global files_lock to move the file onto, and off, its superblock's
 *    s_files list (fs/file_table.c, until 2.6.36).
 *
 * Left out, as private to openbench's processes: fs->lock (per process),
 * the file's own inode, the fd table and the nr_files per-CPU counter.
 */
#ifndef KSCALE_MNT_WRITERS_FS_2_6_H
#define KSCALE_MNT_WRITERS_FS_2_6_H

#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/list.h"
#include "../../lib/kernel/mutex.h"
#include "../../lib/kernel/spinlock.h"

struct vfsmount;

/*
 * __cacheline_aligned_in_smp DEFINE_SPINLOCK(), as 2.6.22 defines
 * files_lock and vfsmount_lock: the kernel's section of line-aligned
 * objects gives each its line to itself; a union pads ours, so nothing
 * the linker puts after it shares the line.
 */
union spinlock_line {
	spinlock_t lock;
	char line[SMP_CACHE_BYTES];
} ____cacheline_aligned_in_smp;

/* include/linux/fs.h's: a directory's, as far as its i_mutex goes */
struct inode {
	struct mutex i_mutex;
} ____cacheline_aligned_in_smp;

/*
 * include/linux/dcache.h's: d_count first, d_lock beside it, on the line
 * dget()/dput() and __d_lookup() write; d_mounted says lookup_mnt() has
 * a mount to find on it.
 */
struct dentry {
	atomic_t d_count;
	unsigned int d_flags;
	spinlock_t d_lock;
	int d_mounted;
	struct inode *d_inode;
} ____cacheline_aligned_in_smp;

/* include/linux/fs.h's, as far as the path goes */
struct file {
	union {
		struct list_head fu_list;
	} f_u;
	struct dentry *f_dentry;
	struct vfsmount *f_vfsmnt;
	char data[8];		/* the file's page, as far as 3 bytes go */
};

/*
 * The one filesystem every model mount binds.  s_mnt_writers and its lock
 * are the single-atomic posting's (atomic.c), next to s_files as there.
 */
struct super_block {
	atomic_t s_mnt_writers;		/* vfsmounts with active writers */
	spinlock_t s_mnt_writers_lock;	/* taken when mounts change rw state */
	struct list_head s_files;
} ____cacheline_aligned_in_smp;

extern struct super_block sb_2_6;

/*
 * At set-up: the superblock, files_lock and vfsmount_lock, with the
 * variant's lock kind, for lockstat too.
 */
void fs_2_6_init(void);
void file_init(struct file *f, struct vfsmount *mnt);

/*
 * A dentry in use (d_count 1, as its parent's reference pins it); a
 * directory's has inode, a file's NULL.  Shared ones count for lockstat
 * as class "dentry", their inodes' i_mutex as "i_mutex".
 */
void d_init(struct dentry *dentry, struct inode *inode, bool shared);

/*
 * fs/dcache.c's dget(), dput()'s fast path and __d_lookup()'s reference (named
 * for the era: real_lookup has its own, linked beside them in torture)
 */
void dget_2_6(struct dentry *dentry);
void dput_2_6(struct dentry *dentry);
void __d_lookup_2_6(struct dentry *dentry);

void file_move(struct file *file, struct list_head *list);
void file_kill(struct file *file);

#endif
