/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 2.6.22 fs/namei.c's walk of an open, as far as it touches lines other
 * openers touch: do_path_lookup() takes the start (fs->pwd or fs->root,
 * as a path_get(): mntget() and dget()); link_path_walk() takes a second
 * reference on both, to restart the walk on -ESTALE, and drops it when
 * __link_path_walk() returns; each component is found by __d_lookup()
 * (a reference taken under the dentry's d_lock), its mount followed by
 * __follow_mount() (lookup_mnt() under vfsmount_lock takes the mounted
 * vfsmount, and dget() its root), and path_to_nameidata() drops the
 * directory it came from (and its mount, if it crossed one).  An O_CREAT
 * open (open_namei()) walks to the parent only (LOOKUP_PARENT), then
 * looks the last component up under the parent's i_mutex, taken even
 * when the file exists, and drops the parent after.  The open ends
 * holding the file's dentry and vfsmount; __fput() drops both.
 *
 * Departures: no hash chain walk, permission() or d_op (tmpfs has none):
 * what they cost is in the path work; one bucket in mount_hashtable; the
 * file exists, as in every loop of openbench but its first, so
 * vfs_create() never runs; i_mutex is lib/kernel's struct mutex (2.6.32's,
 * which spins while its owner runs, where 2.6.22's slept at once: less
 * waiting than 2.6.22 had); the i_mutex hold is the lookup's own lines
 * and code, none of the path work (the least it can cost); an absolute
 * path walks one directory before the files' (or their parent's), the
 * depth not being known; with two mounts and no crossing, each mount's
 * walk starts on it, as openat() on a directory of it would (the same
 * references), where one process has one cwd and one root.
 */
#ifndef KSCALE_MNT_WRITERS_NAMEI_2_6_H
#define KSCALE_MNT_WRITERS_NAMEI_2_6_H

#include <stdbool.h>

#include "fs_2_6.h"

struct vfsmount_2_6;

#define WALK_MAX_DIRS	2

/* include/linux/namei.h's, as far as the references go */
struct nameidata {
	struct vfsmount *mnt;
	struct dentry *dentry;
};

/*
 * What a path names, dentry by dentry: where its walk starts, the
 * directories it looks up after that (one may be a mount point), and
 * the file, its last component, which exists.
 */
struct walk_2_6 {
	struct vfsmount *mnt;		/* fs->pwdmnt or fs->rootmnt */
	struct dentry *start;		/* fs->pwd or fs->root */
	struct dentry *dir[WALK_MAX_DIRS];
	int nr_dirs;
	struct dentry *file;
};

/*
 * The names openbench's paths may take (the seed does not say which):
 * relative to the cwd or absolute, every file in one directory or each
 * thread's in its own, and whether the walk crosses the file's mount
 * point from the root mount.
 */
struct names_2_6 {
	bool abs_path;
	bool dir_per_thread;
	bool cross_mount;
};

/*
 * The shared part of the tree a mount's files are in: the root mount
 * and its "/" and cwd (with cross_mount), the mount's mount point on it,
 * the mount's root and the directory below it (absolute paths).
 */
struct tree_2_6 {
	struct names_2_6 names;
	struct vfsmount_2_6 *rootmnt;
	struct dentry root, cwd;
	struct inode root_inode, cwd_inode;
	struct mnt_tree_2_6 {
		struct vfsmount *mnt;
		struct dentry mountpoint, mnt_root, dir;
		struct inode mountpoint_inode, mnt_root_inode, dir_inode;
	} m[2];
	int nr_mounts;
};

/* One thread's own: its directory on each mount, and its file there. */
struct thread_tree_2_6 {
	struct dentry dir, file;
	struct inode dir_inode;
};

/*
 * At set-up, after fs_2_6_init(): the tree of mnt[0..nr-1] as names lays
 * it out, each mounted on its mount point when the walks cross them.
 * Before the mounts are freed, tree_2_6_exit() unmounts them and returns
 * how many references the walks left taken (or dropped twice): 0.
 */
void tree_2_6_init(struct tree_2_6 *tree, const struct names_2_6 *names,
		   struct vfsmount **mnt, int nr);
long tree_2_6_exit(struct tree_2_6 *tree);

/* A thread's walk to its file on mount m, with its dentries in own. */
void walk_2_6_init(struct walk_2_6 *w, struct tree_2_6 *tree, int m,
		   struct thread_tree_2_6 *own);

/*
 * open_namei() of w's file, with O_CREAT if creat; walk_ns of the path
 * work, spent after the start's references.  Ends with nd holding the
 * file's dentry and mount (path_release() drops them).
 */
void open_namei_2_6(const struct walk_2_6 *w, bool creat,
		    unsigned long walk_ns, struct nameidata *nd);

/* fs/namespace.c: the mount on dentry of mnt, referenced, or NULL. */
struct vfsmount *lookup_mnt(struct vfsmount *mnt, struct dentry *dentry);

#endif
