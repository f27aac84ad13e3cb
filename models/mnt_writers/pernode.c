// SPDX-License-Identifier: GPL-2.0
/*
 * The series' second design (2007, -mm): a spinlock and an atomic per
 * node in each vfsmount.  The seed reports it much better on NUMA but
 * still ~6% slower on a 4-way SMP box, where every CPU shares one node.
 *
 * Not in the seed's code; reconstructed from its description.  Each
 * node's slot is allocated on that node (when nodes are real), and
 * mnt_make_readonly() takes the node locks in node order.  The pointer to
 * the slots follows the 2.6.2x fields, read on mntget()'s written line.  A count may go
 * negative on one node when a file opened on another is closed here; only
 * the sum over nodes means anything.
 */
#include <errno.h>
#include <stdlib.h>

#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/percpu.h"
#include "../../lib/kernel/spinlock.h"
#include "mnt_writers.h"
#include "vfsmount_2_6.h"

struct mnt_node_writer {
	spinlock_t lock;
	atomic_t count;
} ____cacheline_aligned_in_smp;

struct vfsmount {
	VFSMOUNT_2_6_FIELDS;
	struct mnt_node_writer **mnt_node_writers;	/* [nr_node_ids] */
};
vfsmount_2_6_check_layout(struct vfsmount, mnt_node_writers);

static struct vfsmount *alloc_vfsmnt(const char *name)
{
	struct vfsmount *mnt = mnt_cache_zalloc(sizeof(*mnt));
	int node;

	vfsmount_2_6_init(mnt);
	mnt->mnt_devname = name;
	mnt->mnt_node_writers = calloc(nr_node_ids, sizeof(void *));
	for_each_online_node(node) {
		mnt->mnt_node_writers[node] =
			kzalloc_node(sizeof(struct mnt_node_writer), node);
		spin_lock_init(&mnt->mnt_node_writers[node]->lock);
		/* the count it guards shares its line */
		lockstat_register(&mnt->mnt_node_writers[node]->lock,
				  "mnt_node_writer", 1,
				  LOCKSTAT_SPIN | LOCKSTAT_PER_NODE);
	}
	return mnt;
}

static long mnt_writers(struct vfsmount *mnt)
{
	long sum = 0;
	int node;

	for_each_online_node(node)
		sum += atomic_read(&mnt->mnt_node_writers[node]->count);
	return sum;
}

static void free_vfsmnt(struct vfsmount *mnt)
{
	int node;

	WARN_ON(mnt_writers(mnt));
	for_each_online_node(node)
		kfree_node(mnt->mnt_node_writers[node]);
	free(mnt->mnt_node_writers);
	WARN_ON(atomic_read(&mnt->mnt_count) != 1);
	free(mnt);
}

static int mnt_want_write(struct vfsmount *mnt)
{
	struct mnt_node_writer *w = mnt->mnt_node_writers[numa_node_id()];
	int ret = 0;

	spin_lock(&w->lock);
	if (__mnt_is_readonly(mnt))
		ret = -EROFS;
	else
		atomic_inc(&w->count);
	spin_unlock(&w->lock);
	return ret;
}

static void mnt_drop_write(struct vfsmount *mnt)
{
	struct mnt_node_writer *w = mnt->mnt_node_writers[numa_node_id()];

	spin_lock(&w->lock);
	atomic_dec(&w->count);
	spin_unlock(&w->lock);
}

static void lock_node_writers(struct vfsmount *mnt)
{
	int node;

	for_each_online_node(node)
		spin_lock(&mnt->mnt_node_writers[node]->lock);
}

static void unlock_node_writers(struct vfsmount *mnt)
{
	int node;

	for_each_online_node(node)
		spin_unlock(&mnt->mnt_node_writers[node]->lock);
}

static int mnt_make_readonly(struct vfsmount *mnt)
{
	int ret = 0;

	lock_node_writers(mnt);
	if (mnt_writers(mnt) > 0)
		ret = -EBUSY;
	else
		WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags | MNT_READONLY);
	unlock_node_writers(mnt);
	return ret;
}

static void __mnt_unmake_readonly(struct vfsmount *mnt)
{
	lock_node_writers(mnt);
	WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags & ~MNT_READONLY);
	unlock_node_writers(mnt);
}

const struct mnt_writers_ops mnt_writers_pernode = {
	.counts_writers = true,
	.era_2_6 = true,
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
