// SPDX-License-Identifier: GPL-2.0
/*
 * 2.6.22 fs/namei.c's open_namei() and link_path_walk(), and the tree
 * openbench's paths name, with its mounts attached as fs/namespace.c's
 * attach_mnt() does: see namei_2_6.h.
 */
#include <stdlib.h>

#include "../../lib/kernel/delay.h"
#include "mnt_writers.h"
#include "namei_2_6.h"
#include "vfsmount_2_6.h"

static void dir_init(struct dentry *dentry, struct inode *inode)
{
	d_init(dentry, inode, true);
}

/* attach_mnt(): mnt on mountpoint of parent, found by lookup_mnt() */
static void attach_mnt(struct vfsmount *mnt, struct vfsmount *parent,
		       struct dentry *mountpoint)
{
	struct vfsmount_2_6 *v = (struct vfsmount_2_6 *)mnt;

	spin_lock(&vfsmount_lock);
	mntget_2_6(parent);
	dget_2_6(mountpoint);
	v->mnt_parent = parent;
	v->mnt_mountpoint = mountpoint;
	mountpoint->d_mounted++;
	list_add_tail(&v->mnt_hash, &mount_hashtable);
	spin_unlock(&vfsmount_lock);
}

/* detach_mnt() and the references umount_tree() drops */
static void detach_mnt(struct vfsmount *mnt)
{
	struct vfsmount_2_6 *v = (struct vfsmount_2_6 *)mnt;
	struct vfsmount *parent = v->mnt_parent;
	struct dentry *mountpoint = v->mnt_mountpoint;

	spin_lock(&vfsmount_lock);
	list_del_init(&v->mnt_hash);
	mountpoint->d_mounted--;
	v->mnt_parent = mnt;
	v->mnt_mountpoint = v->mnt_root;
	spin_unlock(&vfsmount_lock);
	dput_2_6(mountpoint);
	mntput_2_6(parent);
}

void tree_2_6_init(struct tree_2_6 *tree, const struct names_2_6 *names,
		   struct vfsmount **mnt, int nr)
{
	struct mnt_tree_2_6 *t;
	int i;

	tree->names = *names;
	tree->nr_mounts = nr;
	tree->rootmnt = NULL;
	if (names->cross_mount) {
		tree->rootmnt = mnt_cache_zalloc(sizeof(*tree->rootmnt));
		__vfsmount_2_6_init(tree->rootmnt, "rootmnt");
		dir_init(&tree->root, &tree->root_inode);
		dir_init(&tree->cwd, &tree->cwd_inode);
	}
	for (i = 0; i < nr; i++) {
		t = &tree->m[i];
		t->mnt = mnt[i];
		dir_init(&t->mnt_root, &t->mnt_root_inode);
		dir_init(&t->dir, &t->dir_inode);
		((struct vfsmount_2_6 *)mnt[i])->mnt_root = &t->mnt_root;
		if (!names->cross_mount)
			continue;
		dir_init(&t->mountpoint, &t->mountpoint_inode);
		attach_mnt(mnt[i], (struct vfsmount *)tree->rootmnt,
			   &t->mountpoint);
	}
}

/* A reference the walks took and did not drop, or dropped twice. */
static long unbalanced(const struct dentry *dentry)
{
	return labs(atomic_read(&dentry->d_count) - 1);
}

long tree_2_6_exit(struct tree_2_6 *tree)
{
	struct mnt_tree_2_6 *t;
	long bad = 0;
	int i;

	for (i = 0; i < tree->nr_mounts; i++) {
		t = &tree->m[i];
		if (tree->rootmnt)
			detach_mnt(t->mnt);
		bad += unbalanced(&t->mnt_root) + unbalanced(&t->dir);
		if (tree->rootmnt)
			bad += unbalanced(&t->mountpoint);
	}
	if (!tree->rootmnt)
		return bad;
	bad += unbalanced(&tree->root) + unbalanced(&tree->cwd);
	bad += labs(atomic_read(&tree->rootmnt->mnt_count) - 1);
	free(tree->rootmnt);
	tree->rootmnt = NULL;
	return bad;
}

void walk_2_6_init(struct walk_2_6 *w, struct tree_2_6 *tree, int m,
		   struct thread_tree_2_6 *own)
{
	const struct names_2_6 *n = &tree->names;
	struct mnt_tree_2_6 *t = &tree->m[m];
	bool own_dir = n->dir_per_thread;

	d_init(&own->file, NULL, false);
	d_init(&own->dir, &own->dir_inode, false);
	w->nr_dirs = 0;
	if (n->cross_mount) {
		/* "/mnt0/..." or, from the root mount's cwd, "mnt0/..." */
		w->mnt = (struct vfsmount *)tree->rootmnt;
		w->start = n->abs_path ? &tree->root : &tree->cwd;
		w->dir[w->nr_dirs++] = &t->mountpoint;
	} else if (n->abs_path) {
		/* "/dir/...": the mount is the process's root */
		w->mnt = t->mnt;
		w->start = &t->mnt_root;
		w->dir[w->nr_dirs++] = &t->dir;
	} else {
		/* "file" from the cwd: the file's directory */
		w->mnt = t->mnt;
		w->start = own_dir ? &own->dir : &t->mnt_root;
		own_dir = false;
	}
	if (own_dir)
		w->dir[w->nr_dirs++] = &own->dir;
	w->file = &own->file;
}

/* path_to_nameidata(): nd moves on to path, dropping what it held */
static void path_to_nameidata(const struct nameidata *path,
			      struct nameidata *nd)
{
	dput_2_6(nd->dentry);
	if (nd->mnt != path->mnt)
		mntput_2_6(nd->mnt);
	*nd = *path;
}

/* __follow_mount(): down every mount on path's dentry */
static void __follow_mount(struct nameidata *path)
{
	struct vfsmount *mounted;
	bool res = false;

	while (READ_ONCE(path->dentry->d_mounted)) {
		mounted = lookup_mnt(path->mnt, path->dentry);
		if (!mounted)
			break;
		dput_2_6(path->dentry);
		if (res)
			mntput_2_6(path->mnt);
		path->mnt = mounted;
		path->dentry = ((struct vfsmount_2_6 *)mounted)->mnt_root;
		dget_2_6(path->dentry);
		res = true;
	}
}

/* do_lookup() of a dentry in the dcache: __d_lookup(), __follow_mount() */
static void do_lookup(const struct nameidata *nd, struct dentry *dentry,
		      struct nameidata *path)
{
	__d_lookup_2_6(dentry);
	path->mnt = nd->mnt;
	path->dentry = dentry;
	__follow_mount(path);
}

void open_namei_2_6(const struct walk_2_6 *w, bool creat,
		    unsigned long walk_ns, struct nameidata *nd)
{
	struct nameidata save, path;
	struct dentry *dir;
	int i;

	/* do_path_lookup(): fs->pwd or fs->root, under fs->lock */
	nd->mnt = w->mnt;
	mntget_2_6(nd->mnt);
	nd->dentry = w->start;
	dget_2_6(nd->dentry);
	/* link_path_walk(): make sure the stuff we saved doesn't go away */
	save = *nd;
	dget_2_6(save.dentry);
	mntget_2_6(save.mnt);
	ndelay(walk_ns);
	/* __link_path_walk(), to the parent only for O_CREAT */
	for (i = 0; i < w->nr_dirs; i++) {
		do_lookup(nd, w->dir[i], &path);
		path_to_nameidata(&path, nd);
	}
	if (!creat) {
		do_lookup(nd, w->file, &path);
		path_to_nameidata(&path, nd);
	}
	dput_2_6(save.dentry);
	mntput_2_6(save.mnt);
	if (!creat)
		return;
	/* open_namei(): lookup_hash() under the parent's i_mutex */
	dir = nd->dentry;
	mutex_lock(&dir->d_inode->i_mutex);
	__d_lookup_2_6(w->file);
	path.mnt = nd->mnt;
	path.dentry = w->file;
	/* It already exists. */
	mutex_unlock(&dir->d_inode->i_mutex);
	__follow_mount(&path);
	path_to_nameidata(&path, nd);
}
