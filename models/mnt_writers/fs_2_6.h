/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What 2.6.22-2.6.28's open/write/close did on shared lines besides the
 * writer count and mnt_count, for the designs of that era (none, atomic,
 * pernode, percpu, percpu_seed); `upstream` has none of it today:
 *
 *  - the path walk starts with path_get(&fs->pwd): mntget() and a dget()
 *    of the cwd dentry every opener shares, and the walk's
 *    path_to_nameidata() dputs it once the name is looked up
 *    (fs/namei.c), so the walk separates mntget() from mnt_want_write();
 *  - __dentry_open()'s file_move() and __fput()'s file_kill() take the
 *    global files_lock to move the file onto, and off, its superblock's
 *    s_files list (fs/file_table.c, until 2.6.36).
 *
 * Left out, as private to openbench's processes or not known: fs->lock
 * (per process), the file's own dentry and inode, the fd table, the
 * nr_files per-CPU counter, and the parent directory's i_mutex that an
 * O_CREAT open took (the seed does not say openbench's flags).
 */
#ifndef KSCALE_MNT_WRITERS_FS_2_6_H
#define KSCALE_MNT_WRITERS_FS_2_6_H

#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/list.h"
#include "../../lib/kernel/spinlock.h"

struct vfsmount;

/* include/linux/fs.h's, as far as the path goes */
struct file {
	union {
		struct list_head fu_list;
	} f_u;
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

/* At set-up: the superblock, the cwd and files_lock, for lockstat too. */
void fs_2_6_init(void);
void file_init(struct file *f, struct vfsmount *mnt);

/* path_get(&fs->pwd)'s dget(), and path_to_nameidata()'s dput() */
void dget_pwd(void);
void dput_pwd(void);

void file_move(struct file *file, struct list_head *list);
void file_kill(struct file *file);

#endif
