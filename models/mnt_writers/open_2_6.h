/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 2.6.26's open, write and close of a file opened for write, around the
 * writer count: fs/namei.c's do_filp_open() to fs/open.c's
 * __dentry_open(), fs/read_write.c's vfs_write() with fs/inode.c's
 * file_update_time(), and fs/file_table.c's __fput().  The rest of the
 * syscalls is p->path_ns of uncontended busy work, spread as below:
 *
 *  - a quarter of it, then the path walk: in the 2.6.2x designs
 *    2.6.22's open_namei() (namei_2_6.h), which spends another quarter
 *    after taking its start's references, and ends holding the file's
 *    dentry and mount; otherwise (today's, or without the shared lines)
 *    the mount's reference (mntget) and the quarter;
 *  - __dentry_open()'s __get_file_write_access() takes write access
 *    (mnt_want_write(), "balanced in __fput()"), and its file_move()
 *    puts the file on its superblock's s_files under the global
 *    files_lock;
 *  - the write: with p->update_time, file_update_time() takes and drops
 *    write access around the times;
 *  - __fput(): file_kill(), mnt_drop_write(), dput() of the file's
 *    dentry (2.6.2x), mntput(), then the other half of the work.
 *
 * fs_2_6.h says what is left out; without p->path_2_6 the 2.6.2x path's
 * shared lines (the walk, files_lock, s_files) are left out too, and
 * `upstream`, today's path, has none of them.  Inline, unlike the
 * kernel's: the benchmark's loop runs them as it did when they were its
 * own, with no call more than before.
 */
#ifndef KSCALE_MNT_WRITERS_OPEN_2_6_H
#define KSCALE_MNT_WRITERS_OPEN_2_6_H

#include <stdbool.h>
#include <string.h>

#include "../../lib/kernel/compiler.h"
#include "../../lib/kernel/delay.h"
#include "fs_2_6.h"
#include "mnt_writers.h"
#include "namei_2_6.h"

/* The path as a run takes it: the design, and what the knobs make of it. */
struct mnt_writers_path {
	const struct mnt_writers_ops *ops;
	unsigned long path_ns;	/* the rest of the syscalls, busy work */
	bool update_time;	/* file_update_time() takes write access */
	bool path_2_6;		/* the 2.6.2x path's shared lines */
	bool creat;		/* opened with O_CREAT */
};

/*
 * Boot: the path of ops, with path_ns of work, the 2.6.2x shared lines
 * unless !shared_path, file_update_time()'s write access if update_time
 * and O_CREAT's if creat; then the design's own set-up.
 */
static inline void mnt_writers_path_init(struct mnt_writers_path *p,
					 const struct mnt_writers_ops *ops,
					 unsigned long path_ns,
					 bool shared_path, bool update_time,
					 bool creat)
{
	p->ops = ops;
	p->path_ns = path_ns;
	p->update_time = update_time;
	p->creat = creat;
	p->path_2_6 = ops->era_2_6 && shared_path;
	if (ops->era_2_6)
		fs_2_6_init();
	if (ops->init)
		ops->init();
}

/* path_release(): what the walk left the file holding */
static inline void path_release(const struct mnt_writers_path *p,
				struct file *f)
{
	if (f->f_dentry)
		dput_2_6(f->f_dentry);
	f->f_dentry = NULL;
	p->ops->mntput(f->f_vfsmnt);
}

/*
 * do_filp_open() to __dentry_open(), of the file w names (its mount
 * f->f_vfsmnt).  Today's walk takes the mount at its end, but on a
 * per-CPU count: where it stands does not matter.
 */
static inline int __dentry_open(const struct mnt_writers_path *p,
				const struct walk_2_6 *w, struct file *f)
{
	const struct mnt_writers_ops *ops = p->ops;
	unsigned long walk_ns = p->path_ns / 2 - p->path_ns / 4;
	struct nameidata nd;
	int ret;

	ndelay(p->path_ns / 4);
	if (p->path_2_6) {
		open_namei_2_6(w, p->creat, walk_ns, &nd);
		WARN_ON(nd.mnt != f->f_vfsmnt);
		f->f_dentry = nd.dentry;
	} else {
		ops->mntget(f->f_vfsmnt);
		ndelay(walk_ns);
	}
	ret = ops->mnt_want_write(f->f_vfsmnt);
	if (ret) {
		path_release(p, f);
		return ret;
	}
	if (p->path_2_6)
		file_move(f, &sb_2_6.s_files);
	return 0;
}

/*
 * 2.6.26 fs/inode.c.  The seed's 2.6.22 tmpfs set the times itself, in
 * shmem_file_write(), without write access; today's takes no count for a
 * file opened for write (mnt_get_write_access_file()).
 */
static inline void file_update_time(const struct mnt_writers_path *p,
				    struct file *file)
{
	if (!p->update_time || !p->ops->era_2_6)
		return;
	if (p->ops->mnt_want_write(file->f_vfsmnt))
		return;
	p->ops->mnt_drop_write(file->f_vfsmnt);
}

static inline void vfs_write(const struct mnt_writers_path *p,
			     struct file *f, const char *buf, size_t count)
{
	file_update_time(p, f);
	memcpy(f->data, buf, count);
	barrier();
}

static inline void __fput(const struct mnt_writers_path *p, struct file *f)
{
	const struct mnt_writers_ops *ops = p->ops;

	if (p->path_2_6)
		file_kill(f);
	ops->mnt_drop_write(f->f_vfsmnt);
	path_release(p, f);
	ndelay(p->path_ns - p->path_ns / 2);
}

#endif
