/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct vfsmount of 2.6.22-2.6.28 (include/linux/mount.h), shared by the
 * designs of that era (none, atomic, pernode, percpu), and the reference
 * count every open takes and every close drops on it: the path walk's
 * mntget() and __fput()'s mntput().
 *
 * The fields are the kernel's, in its order, so that mnt_flags sits on the
 * second cache line, away from mnt_count and mnt_expiry_mark, which every
 * open and close write; each design appends its writer count after them,
 * as 2.6.26 put __mnt_writers there, on that same written line.  The
 * superblock's MS_RDONLY test in __mnt_is_readonly() (a read of a line
 * nobody writes) is left out.
 */
#ifndef KSCALE_MNT_WRITERS_VFSMOUNT_2_6_H
#define KSCALE_MNT_WRITERS_VFSMOUNT_2_6_H

#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/list.h"
#include "../../lib/kernel/lockstat.h"
#include "../../lib/kernel/spinlock.h"
#include "fs_2_6.h"

struct dentry;
struct mnt_namespace;

#define VFSMOUNT_2_6_FIELDS						\
	struct list_head mnt_hash;					\
	struct vfsmount *mnt_parent;	/* fs we are mounted on */	\
	struct dentry *mnt_mountpoint;	/* dentry of mountpoint */	\
	struct dentry *mnt_root;	/* root of the mounted tree */	\
	struct super_block *mnt_sb;	/* pointer to superblock */	\
	struct list_head mnt_mounts;	/* list of children */		\
	struct list_head mnt_child;	/* and going through their mnt_child */ \
	int mnt_flags;							\
	/* 4 bytes hole on 64bits arches */				\
	const char *mnt_devname;	/* Name of device */		\
	struct list_head mnt_list;					\
	struct list_head mnt_expire;	/* link in fs-specific expiry list */ \
	struct list_head mnt_share;	/* circular list of shared mounts */ \
	struct list_head mnt_slave_list;/* list of slave mounts */	\
	struct list_head mnt_slave;	/* slave list entry */		\
	struct vfsmount *mnt_master;	/* slave is on master->mnt_slave_list */ \
	struct mnt_namespace *mnt_ns;	/* containing namespace */	\
	int mnt_id;			/* mount identifier */		\
	int mnt_group_id;		/* peer group identifier */	\
	/*								\
	 * We put mnt_count & mnt_expiry_mark at the end of struct vfsmount \
	 * to let these frequently modified fields in a separate cache line \
	 * (so that reads of mnt_flags wont ping-pong on SMP machines)	\
	 */								\
	atomic_t mnt_count;						\
	int mnt_expiry_mark;		/* true if marked for expiry */	\
	int mnt_pinned;							\
	int mnt_ghosts

/* What every design's struct vfsmount starts with. */
struct vfsmount_2_6 {
	VFSMOUNT_2_6_FIELDS;
};

/* fs/namespace.c: for mnt_flags, the last reference and the mount hash. */
extern union spinlock_line vfsmount_lock_line;
#define vfsmount_lock (vfsmount_lock_line.lock)

/* The mounts lookup_mnt() finds, by mnt_hash: one bucket here. */
extern struct list_head mount_hashtable;

/* The ops' mntget and mntput for any design of the era. */
void mntget_2_6(struct vfsmount *mnt);
void mntput_2_6(struct vfsmount *mnt);

/*
 * The mount's own reference, as alloc_vfsmnt() sets mnt_count.  For
 * lockstat, mnt_count's line is a shared resource every open and close
 * visits (mntget, mntput), one line a visit: class "vfsmount" for the
 * mounts openbench writes, another for the root mount a walk crosses.
 */
#define vfsmount_2_6_init(mnt) __vfsmount_2_6_init(mnt, "vfsmount")
#define __vfsmount_2_6_init(mnt, class)					\
	do {								\
		INIT_LIST_HEAD(&(mnt)->mnt_hash);			\
		INIT_LIST_HEAD(&(mnt)->mnt_child);			\
		INIT_LIST_HEAD(&(mnt)->mnt_mounts);			\
		INIT_LIST_HEAD(&(mnt)->mnt_list);			\
		INIT_LIST_HEAD(&(mnt)->mnt_expire);			\
		INIT_LIST_HEAD(&(mnt)->mnt_share);			\
		INIT_LIST_HEAD(&(mnt)->mnt_slave_list);			\
		INIT_LIST_HEAD(&(mnt)->mnt_slave);			\
		(mnt)->mnt_sb = &sb_2_6;				\
		atomic_set(&(mnt)->mnt_count, 1);			\
		lockstat_register(&(mnt)->mnt_count, class, 1,		\
				  LOCKSTAT_LINE);			\
	} while (0)

#define mntget(mnt)							\
	do {								\
		lockstat_visit(&(mnt)->mnt_count);			\
		atomic_inc(&(mnt)->mnt_count);				\
	} while (0)

/*
 * mntput(): the expiry mark's store, then mntput_no_expire()'s
 * atomic_dec_and_lock().  The workload never drops the mount's own
 * reference, so the last-reference path (__mntput) is a bug here.
 */
#define mntput(mnt)							\
	do {								\
		lockstat_visit(&(mnt)->mnt_count);			\
		WRITE_ONCE((mnt)->mnt_expiry_mark, 0);		\
		if (atomic_dec_and_lock(&(mnt)->mnt_count, &vfsmount_lock)) { \
			spin_unlock(&vfsmount_lock);			\
			WARN_ON(1);					\
		}							\
	} while (0)

/* Each design's count must share mnt_count's line, not mnt_flags'. */
#define vfsmount_2_6_check_layout(type, count)				\
	_Static_assert(offsetof(type, count) / SMP_CACHE_BYTES ==	\
		       offsetof(type, mnt_count) / SMP_CACHE_BYTES &&	\
		       offsetof(type, mnt_flags) / SMP_CACHE_BYTES !=	\
		       offsetof(type, mnt_count) / SMP_CACHE_BYTES,	\
		       #type " is not laid out as 2.6.26's")

#endif
