// SPDX-License-Identifier: GPL-2.0
/*
 * real_lookup under torture, every design of its table: many tasks look
 * up a handful of names in one magic directory (two for sharded), so
 * that their misses race on one name, through an inode cache smaller
 * than the names and a ->lookup() that sleeps on one of two model
 * disks; some
 * keep a dentry across operations; one operation in eight evicts unused
 * dentries, a few (shrink_dcache_memory(), referenced ones last) or all
 * (shrink_dcache_sb()), and the 2.6.32 designs prune in dput() too.
 *
 * Checked in every operation: a lookup returns a hashed, positive,
 * completed dentry of the name and parent asked for, referenced; a
 * dentry kept stays so; where the design guarantees one dentry per name,
 * a lookup of a kept name returns the kept dentry.  At quiet points:
 * every child of a directory is hashed and positive, its d_count is the
 * number of tasks keeping it (if none, it is on the LRU), its LRU links
 * are intact, and the directory's d_count is 1 + its children; the hash
 * walk (dcache_stats()) agrees with the children on names with more than
 * one dentry, none where the design guarantees one; nr_dentry counts the
 * children.  After the tasks exit, every count is 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../models/real_lookup/real_lookup.h"
#include "torture.h"

#define NR_NAMES	4
#define SHARDED_DIRS	2
#define DCACHE_MAX	2	/* unused dentries kept: dput() prunes */
#define ICACHE_MAX	2	/* inodes in core: fewer than the names */
#define NR_DISKS	2	/* a read at a time each, by inode number */
#define EVICT_ONE_IN	8
#define KEEP_ONE_IN	8

struct rl_task {
	struct rcu_thread rcu;
	struct dentry *kept;		/* referenced across operations */
	int kept_dir, kept_name;
	unsigned long evictions;
};

static struct {
	const struct real_lookup_ops *ops;
	struct dentry *dirs[SHARDED_DIRS];
	int nr_dirs;
	struct qstr names[NR_NAMES];
	char name_buf[NR_NAMES][2];
	struct rl_task *tasks;
	/* the closing line's, summed at task exit and cleanup */
	unsigned long lookups, misses, waits, evictions, duplicates;
} rl;

static int rl_init(const void *variant, int nr_tasks)
{
	int i;

	memset(&rl, 0, sizeof(rl));
	rl.ops = variant;
	rl.nr_dirs = rl.ops == &real_lookup_sharded ? SHARDED_DIRS : 1;
	rl.tasks = aligned_alloc(sizeof(rl.tasks->rcu),
				 nr_tasks * sizeof(*rl.tasks));
	if (!rl.tasks)
		abort();
	memset(rl.tasks, 0, nr_tasks * sizeof(*rl.tasks));
	for (i = 0; i < NR_NAMES; i++) {
		rl.name_buf[i][0] = '0' + i;
		rl.names[i].name = rl.name_buf[i];
		rl.names[i].len = 1;
		rl.names[i].hash = full_name_hash(rl.name_buf[i], 1);
	}
	fs_lookup_ns = 200;
	fs_io_ns = 10000;
	magic_fs_init(rl.ops, &(struct magic_fs){
		.dcache = DCACHE_MAX,
		.icache = ICACHE_MAX,
		.disks = NR_DISKS,
		.io_depth = 1,
	}, rl.dirs, rl.nr_dirs);
	return 0;
}

static void rl_task_init(struct torture_task *t)
{
	memset(&lookup_stats, 0, sizeof(lookup_stats));
	rcu_register_thread(&rl.tasks[t->id].rcu);
}

static void rl_check(struct torture_task *t, struct dentry *d, int dir,
		     int name, const char *what)
{
	if (!d || (unsigned long)d >= -4095UL) {
		torture_fail("task %d: lookup of %d/%d returned %p", t->id,
			     dir, name, (void *)d);
	} else if (d->d_parent != rl.dirs[dir] || d->d_name.len != 1 ||
		   d->d_name.name[0] != '0' + name) {
		torture_fail("task %d: %s dentry %p is %.1s in %p, not %d in "
			     "%p", t->id, what, (void *)d, d->d_name.name,
			     (void *)d->d_parent, name, (void *)rl.dirs[dir]);
	} else {
		bool in_lookup, unhashed;

		/* d_flags and d_hash change under d_lock: read them there */
		spin_lock(&d->d_lock);
		in_lookup = d_in_lookup(d);
		unhashed = d_unhashed(d);
		spin_unlock(&d->d_lock);
		if (atomic_read(&d->d_count) < 1 || !d->d_inode || in_lookup ||
		    unhashed)
			torture_fail("task %d: %s dentry %d/%d: d_count %d, "
				     "inode %p, %sin lookup, %shashed", t->id,
				     what, dir, name, atomic_read(&d->d_count),
				     (void *)d->d_inode, in_lookup ? "" : "not ",
				     unhashed ? "un" : "");
	}
}

static void rl_lookup(struct torture_task *t, struct rl_task *me)
{
	struct dentry *d;
	int dir, name;

	/* one in four a lookup of the name kept, or else any name */
	if (me->kept && torture_random() % 4 == 0) {
		dir = me->kept_dir;
		name = me->kept_name;
	} else {
		dir = torture_random() % rl.nr_dirs;
		name = torture_random() % NR_NAMES;
	}
	d = rl.ops->lookup(rl.dirs[dir], &rl.names[name]);
	rl_check(t, d, dir, name, "found");
	if (me->kept && d != me->kept && rl.ops->one_dentry_per_name &&
	    dir == me->kept_dir && name == me->kept_name)
		torture_fail("task %d: %d/%d found %p, another than the %p it "
			     "keeps", t->id, dir, name, (void *)d,
			     (void *)me->kept);
	if (!me->kept && torture_random() % KEEP_ONE_IN == 0) {
		me->kept = d;
		me->kept_dir = dir;
		me->kept_name = name;
	} else {
		dput(d);
	}
}

static void rl_op(struct torture_task *t)
{
	struct rl_task *me = &rl.tasks[t->id];

	if (me->kept) {
		rl_check(t, me->kept, me->kept_dir, me->kept_name, "kept");
		if (torture_random() % 2) {
			dput(me->kept);
			me->kept = NULL;
		}
	}
	if (torture_random() % EVICT_ONE_IN == 0) {
		if (torture_random() % 2)
			shrink_dcache_sb();
		else
			shrink_dcache_memory(torture_random() % NR_NAMES);
		me->evictions++;
	} else {
		rl_lookup(t, me);
	}
	rcu_quiescent_state();
}

static void rl_task_exit(struct torture_task *t)
{
	struct rl_task *me = &rl.tasks[t->id];

	if (me->kept)
		dput(me->kept);
	me->kept = NULL;
	rcu_quiescent_state();
	__atomic_fetch_add(&rl.lookups, lookup_stats.hits + lookup_stats.misses,
			   __ATOMIC_RELAXED);
	__atomic_fetch_add(&rl.misses, lookup_stats.misses, __ATOMIC_RELAXED);
	__atomic_fetch_add(&rl.waits, lookup_stats.in_lookup_waits,
			   __ATOMIC_RELAXED);
	__atomic_fetch_add(&rl.evictions, me->evictions, __ATOMIC_RELAXED);
	rcu_unregister_thread();
}

/* One directory's children: their number; names with several to *dups. */
static unsigned long rl_quiet_dir(int dir, unsigned long *dups)
{
	struct dentry *parent = rl.dirs[dir];
	int per_name[NR_NAMES] = { 0 }, kept = 0, found = 0, i, n, name;
	unsigned long children = 0;
	struct dentry *d;

	for (i = 0; i < torture_nr_tasks; i++)
		kept += rl.tasks[i].kept && rl.tasks[i].kept_dir == dir;
	list_for_each_entry(d, &parent->d_subdirs, d_child) {
		children++;
		name = d->d_name.name[0] - '0';
		if (d->d_parent != parent || d->d_name.len != 1 ||
		    name < 0 || name >= NR_NAMES || d_unhashed(d) ||
		    !d->d_inode || d_in_lookup(d)) {
			torture_fail("dir %d: child %p (%.1s) of %p, %shashed, "
				     "inode %p, flags %#x", dir, (void *)d,
				     d->d_name.name, (void *)d->d_parent,
				     d_unhashed(d) ? "un" : "",
				     (void *)d->d_inode, d->d_flags);
			continue;
		}
		per_name[name]++;
		for (i = n = 0; i < torture_nr_tasks; i++)
			n += rl.tasks[i].kept == d;
		found += n;
		if (atomic_read(&d->d_count) != n)
			torture_fail("dir %d: %d/%d has d_count %d, kept by %d "
				     "tasks", dir, dir, name,
				     atomic_read(&d->d_count), n);
		/* unused, it is on the LRU for the shrinker to find */
		if ((!n && list_empty(&d->d_lru)) ||
		    d->d_lru.next->prev != &d->d_lru ||
		    d->d_lru.prev->next != &d->d_lru)
			torture_fail("dir %d: %d/%d (d_count %d) %s the LRU",
				     dir, dir, name, atomic_read(&d->d_count),
				     list_empty(&d->d_lru) ? "off" :
				     "broken into");
	}
	if (found != kept)
		torture_fail("dir %d: %d tasks keep a dentry, %d among its "
			     "children", dir, kept, found);
	if (atomic_read(&parent->d_count) != 1 + (int)children)
		torture_fail("dir %d: d_count %d with %lu children", dir,
			     atomic_read(&parent->d_count), children);
	for (name = 0; name < NR_NAMES; name++)
		*dups += per_name[name] > 1;
	return children;
}

static void rl_quiet(void)
{
	unsigned long children = 0, dups = 0;
	struct dcache_stats st;
	int dir;

	for (dir = 0; dir < rl.nr_dirs; dir++)
		children += rl_quiet_dir(dir, &dups);
	dcache_stats(&st);
	if (st.nr_dentry != children)
		torture_fail("nr_dentry %lu, %lu children", st.nr_dentry,
			     children);
	if (st.names_with_duplicates != dups)
		torture_fail("the hash has %lu names with duplicates, the "
			     "directories %lu", st.names_with_duplicates, dups);
	if (rl.ops->one_dentry_per_name && (st.duplicates || dups))
		torture_fail("%lu duplicate dentries (%lu names now)",
			     st.duplicates, dups);
}

static void rl_stats(char *buf, size_t len)
{
	int n = snprintf(buf, len, "Lookups: %lu Misses: %lu Shrinks: %lu",
			 rl.lookups, rl.misses, rl.evictions);

	if (rl.ops->vfs_scale)
		snprintf(buf + n, len - n, " In-lookup waits: %lu", rl.waits);
	else if (!rl.ops->one_dentry_per_name)
		snprintf(buf + n, len - n, " Duplicates: %lu", rl.duplicates);
}

static void rl_cleanup(void)
{
	struct dcache_stats st;

	dcache_stats(&st);
	rl.duplicates = st.duplicates;
	magic_fs_exit(rl.dirs, rl.nr_dirs);
	free(rl.tasks);
	rl.tasks = NULL;
}

static const struct torture_model real_lookup_torture = {
	.name		= "real_lookup",
	.variants	= &real_lookup_variants,
	.init		= rl_init,
	.task_init	= rl_task_init,
	.op		= rl_op,
	.task_exit	= rl_task_exit,
	.quiet		= rl_quiet,
	.stats		= rl_stats,
	.cleanup	= rl_cleanup,
};
torture_model_register(real_lookup_torture);
