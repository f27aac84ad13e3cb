// SPDX-License-Identifier: GPL-2.0
/*
 * Validation of every real_lookup variant: two tasks missing on one name
 * at once get one dentry under the locked designs (the parallel one's
 * waiter gets the completed dentry) and two under the bypass, which says
 * so; eviction never frees a dentry in use; the hit ratio of a uniform
 * draw is dcache/files; racing lookups leave one dentry per name.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cmocka.h>

#include "../lib/kernel/percpu.h"
#include "../models/real_lookup/real_lookup.h"
#include "../models/real_lookup/sunrpc.h"
#include "helpers.h"

#define MAX_RACERS	4
#ifdef KSCALE_SANITIZE
#define LOOKUPS		3000	/* ThreadSanitizer serialises the race */
#else
#define LOOKUPS		30000
#endif
#define NFS_LOOKUPS	300	/* each miss a call of 50 us or more */

static struct topology machine;

struct lookup_test {
	const struct real_lookup_ops *ops;
	struct dentry *dir;
	unsigned long files;
	struct dentry *got[MAX_RACERS];
	struct lookup_stats stats[MAX_RACERS];
};

static struct qstr name_of(char *buf, unsigned long ino)
{
	struct qstr q = { .name = buf };

	q.len = snprintf(buf, DNAME_INLINE_LEN, "%lu", ino);
	q.hash = full_name_hash(buf, q.len);
	return q;
}

/*
 * The tests' own thread registers this one: a failed assertion leaves the
 * test by longjmp(), and the teardown unregisters it, else the next
 * rcu_barrier() would wait for it forever.
 */
static struct rcu_thread main_rcu;

static void task_start(struct rcu_thread *rcu)
{
	memset(&lookup_stats, 0, sizeof(lookup_stats));
	rcu_register_thread(rcu);
}

/* A lookup, then a quiescent state as between the workload's operations. */
static struct dentry *lookup(struct lookup_test *lt, unsigned long ino)
{
	char buf[DNAME_INLINE_LEN];
	struct qstr q = name_of(buf, ino);
	struct dentry *dentry = lt->ops->lookup(lt->dir, &q);

	rcu_quiescent_state();
	return dentry;
}

static struct lookup_test *setup_variant(const struct real_lookup_ops *ops,
					 unsigned long dcache)
{
	struct lookup_test *lt = calloc(1, sizeof(*lt));

	dcache_init(dcache, ops->vfs_scale);
	icache_init(0, 0);
	lt->ops = ops;
	lt->dir = magic_dir_create(ops);
	return lt;
}

static void teardown_variant(struct lookup_test *lt)
{
	dcache_exit();
	icache_exit();
	magic_dir_destroy(lt->dir);
	free(lt);
}

/*
 * ->lookup() of the first miss waits until the second task is inside too
 * (the bypass) or asleep waiting for the first (on the directory's lock,
 * or on its in-lookup dentry).  It waits asleep, so a mutex spinner sees
 * the owner off its CPU and goes to sleep as well.
 */
#define GIVE_UP_MS	10000

static int inside, gave_up;
static struct task_struct *racer[2];

static void rendezvous(unsigned long ino)
{
	double deadline = test_now_ms() + GIVE_UP_MS;
	struct task_struct *other;

	__atomic_fetch_add(&inside, 1, __ATOMIC_SEQ_CST);
	for (;;) {
		other = READ_ONCE(racer[READ_ONCE(racer[0]) == current]);
		if (__atomic_load_n(&inside, __ATOMIC_SEQ_CST) == 2 ||
		    (other && (__atomic_load_n(&other->state,
					       __ATOMIC_SEQ_CST) & TASK_ASLEEP)))
			return;
		if (test_now_ms() > deadline) {
			test_note(&gave_up);
			return;
		}
		schedule_timeout_ns(100000);
	}
}

/*
 * A racer still asleep long after the other finished lost its wake-up:
 * counted, and woken here so that the test ends rather than hangs (it
 * then finds what it waited for done, and goes on).
 */
static int lost_wakeups, racers_done;
static void (*watched_fn)(struct test_thread *t);

static void wake_the_lost(void)
{
	double deadline = test_now_ms() + 2000;
	struct task_struct *p;
	int i;

	while (__atomic_load_n(&racers_done, __ATOMIC_SEQ_CST) < 2) {
		schedule_timeout_ns(1000000);
		if (test_now_ms() < deadline)
			continue;
		for (i = 0; i < 2; i++) {
			p = READ_ONCE(racer[i]);
			if (p && (__atomic_load_n(&p->state, __ATOMIC_SEQ_CST) &
				  TASK_ASLEEP)) {
				test_note(&lost_wakeups);
				wake_up_process(p);
			}
		}
	}
}

static void watched_racer(struct test_thread *t)
{
	if (t->id == 2) {
		wake_the_lost();
		return;
	}
	WRITE_ONCE(racer[t->id], current);
	watched_fn(t);
	__atomic_fetch_add(&racers_done, 1, __ATOMIC_SEQ_CST);
}

/* Two racers, racer[0] and racer[1], each fn(), and the watchdog. */
static void race_watched(void (*fn)(struct test_thread *t), void *arg)
{
	racer[0] = racer[1] = NULL;
	racers_done = lost_wakeups = 0;
	watched_fn = fn;
	test_race(3, watched_racer, arg);
}

static void same_name(struct test_thread *t)
{
	struct lookup_test *lt = t->arg;
	struct rcu_thread rcu;

	task_start(&rcu);
	lt->got[t->id] = lookup(lt, 42);
	lt->stats[t->id] = lookup_stats;
	rcu_unregister_thread();
}

/*
 * On both lines: ext3's ->lookup() reads the inode under iget_locked()'s
 * I_LOCK, NFS's makes its call before nfs_fhget(); the call is the
 * rendezvous here.  Either way the two dentries share the one inode.
 */
static void test_two_misses_on_one_name(void **state)
{
	const struct real_lookup_ops *ops;
	struct lookup_test *lt;
	struct dcache_stats st;
	int i, nfs;

	magic_read_inode = rendezvous;
	for (nfs = 0; nfs < 2; nfs++) {
		magic_xprt = nfs ? xprt_create(2, 0, 1, 0) : NULL;
		for_each_variant(ops, i, &real_lookup_variants) {
			lt = setup_variant(ops, 16);
			inside = gave_up = 0;
			race_watched(same_name, lt);
			assert_int_equal(gave_up, 0);
			assert_int_equal(lost_wakeups, 0);
			dcache_stats(&st);
			if (ops->one_dentry_per_name) {
				assert_ptr_equal(lt->got[0], lt->got[1]);
				assert_int_equal(st.duplicates, 0);
				assert_int_equal(st.names_with_duplicates, 0);
			} else {
				/* the bypass: both created one, counted */
				assert_ptr_not_equal(lt->got[0], lt->got[1]);
				assert_int_equal(st.duplicates, 1);
				assert_int_equal(st.names_with_duplicates, 1);
			}
			/* the waiter saw the completed dentry */
			assert_false(d_unhashed(lt->got[1]));
			assert_non_null(lt->got[1]->d_inode);
			assert_ptr_equal(lt->got[0]->d_inode,
					 lt->got[1]->d_inode);
			if (ops->vfs_scale)
				assert_int_equal(lt->stats[0].in_lookup_waits +
						 lt->stats[1].in_lookup_waits,
						 1);
			dput(lt->got[0]);
			dput(lt->got[1]);
			teardown_variant(lt);
		}
		xprt_destroy(magic_xprt);
		magic_xprt = NULL;
	}
}

static void no_work(unsigned long ino)
{
}

static void test_eviction_spares_dentries_in_use(void **state)
{
	const struct real_lookup_ops *ops;
	struct lookup_test *lt;
	struct dentry *held[2];
	unsigned long ino;
	int i;

	task_start(&main_rcu);
	for_each_variant(ops, i, &real_lookup_variants) {
		lt = setup_variant(ops, 4);
		held[0] = lookup(lt, 1);
		held[1] = lookup(lt, 2);
		for (ino = 10; ino < 2000; ino++)
			dput(lookup(lt, ino));
		for (ino = 0; ino < 2; ino++) {
			assert_false(d_unhashed(held[ino]));
			assert_int_equal(atomic_read(&held[ino]->d_count), 1);
			assert_int_equal(held[ino]->d_name.name[0], '1' + ino);
			/* and a lookup finds the very same dentry */
			assert_ptr_equal(lookup(lt, ino + 1), held[ino]);
			dput(held[ino]);
			dput(held[ino]);
		}
		teardown_variant(lt);
	}
	rcu_unregister_thread();
}

static void test_hit_ratio_of_a_uniform_draw(void **state)
{
	const unsigned long files = 1000, dcache = 250;
	const struct real_lookup_ops *ops;
	struct lookup_test *lt;
	uint64_t rng = 12345;
	double ratio;
	int i, n;

	task_start(&main_rcu);
	for_each_variant(ops, i, &real_lookup_variants) {
		lt = setup_variant(ops, dcache);
		for (n = 0; n < 20000; n++) {
			rng = rng * 6364136223846793005ULL + 1;
			dput(lookup(lt, (rng >> 33) % files));
		}
		memset(&lookup_stats, 0, sizeof(lookup_stats));
		for (n = 0; n < 200000; n++) {
			rng = rng * 6364136223846793005ULL + 1;
			dput(lookup(lt, (rng >> 33) % files));
		}
		ratio = (double)lookup_stats.hits /
			(lookup_stats.hits + lookup_stats.misses);
		/* LRU with second chance over a uniform draw: dcache/files */
		assert_true(ratio > 0.22 && ratio < 0.28);
		teardown_variant(lt);
	}
	rcu_unregister_thread();
}

/*
 * The magic filesystem as the bench and torture set it up
 * (magic_fs_init()): directories of their own, each with the design's
 * i_flags, so that a name has one dentry per directory, the one a second
 * lookup there finds; the disks asked for, gone with the rest at
 * magic_fs_exit().  lookup_stats_add() sums every count.
 */
static void test_magic_fs_one_dentry_per_name_per_dir(void **state)
{
	const struct magic_fs fs = {
		.dcache = 16, .icache = 4, .disks = 3, .io_depth = 1,
	};
	struct lookup_stats sum = { 0 };
	const struct real_lookup_ops *ops;
	struct dentry *dirs[2], *got[2];
	struct dcache_stats st;
	struct lookup_test lt;
	int i, d;

	task_start(&main_rcu);
	for_each_variant(ops, i, &real_lookup_variants) {
		magic_fs_init(ops, &fs, dirs, 2);
		assert_ptr_not_equal(dirs[0], dirs[1]);
		assert_int_equal(nr_magic_disks, 3);
		lt.ops = ops;
		for (d = 0; d < 2; d++) {
			assert_int_equal(dirs[d]->d_inode->i_flags,
					 ops->dir_flags);
			lt.dir = dirs[d];
			got[d] = lookup(&lt, 7);
			assert_ptr_equal(got[d]->d_parent, dirs[d]);
			assert_ptr_equal(lookup(&lt, 7), got[d]);
			assert_int_equal(atomic_read(&got[d]->d_count), 2);
			dput(got[d]);
			dput(got[d]);
		}
		assert_ptr_not_equal(got[0], got[1]);
		dcache_stats(&st);
		assert_int_equal(st.nr_dentry, 2);
		assert_int_equal(st.duplicates, 0);
		magic_fs_exit(dirs, 2);
		assert_int_equal(nr_magic_disks, 0);
		lookup_stats_add(&sum, &lookup_stats);
		lookup_stats_add(&sum, &lookup_stats);
		assert_int_equal(sum.hits, 4 * (i + 1));
		assert_int_equal(sum.misses, 4 * (i + 1));
		/* the second directory's miss found the inode in core */
		assert_int_equal(sum.icache_hits, 2 * (i + 1));
		memset(&lookup_stats, 0, sizeof(lookup_stats));
	}
	rcu_unregister_thread();
}

static void racing_lookups(struct test_thread *t)
{
	struct lookup_test *lt = t->arg;
	struct rcu_thread rcu;
	uint64_t rng = 77 + t->id;
	int n;

	task_start(&rcu);
	for (n = 0; n < LOOKUPS; n++) {
		rng = rng * 6364136223846793005ULL + 1;
		dput(lookup(lt, (rng >> 33) % lt->files));
	}
	rcu_unregister_thread();
}

static void test_racing_lookups_keep_one_dentry_per_name(void **state)
{
	const struct real_lookup_ops *ops;
	struct lookup_test *lt;
	struct dcache_stats st;
	int i;

	magic_read_inode = no_work;
	for_each_variant(ops, i, &real_lookup_variants) {
		lt = setup_variant(ops, 16);
		lt->files = 64;
		test_race(test_racers(MAX_RACERS), racing_lookups, lt);
		dcache_stats(&st);
		if (ops->one_dentry_per_name) {
			assert_int_equal(st.duplicates, 0);
			assert_int_equal(st.names_with_duplicates, 0);
		}
		teardown_variant(lt);
	}
}

static struct dentry *watched;
static int refs_in_lookup;

static int children(struct dentry *dir)
{
	struct list_head *p;
	int n = 0;

	for (p = dir->d_subdirs.next; p != &dir->d_subdirs; p = p->next)
		n++;
	return n;
}

/* ->lookup(): the directory's references beyond its children's. */
static void count_refs(unsigned long ino)
{
	refs_in_lookup = atomic_read(&watched->d_count) - children(watched);
}

/*
 * Every cached child holds its directory (d_alloc()'s dget(parent)), and
 * the walk holds it while it looks in it: in ->lookup() the directory has
 * its own reference and the walk's beyond its children's; afterwards
 * only its own.
 */
static void test_children_and_the_walk_hold_the_directory(void **state)
{
	const struct real_lookup_ops *ops;
	struct lookup_test *lt;
	unsigned long ino;
	int i;

	task_start(&main_rcu);
	magic_read_inode = count_refs;
	for_each_variant(ops, i, &real_lookup_variants) {
		lt = setup_variant(ops, 64);
		watched = lt->dir;
		for (ino = 0; ino < 200; ino++) {
			refs_in_lookup = 0;
			dput(lookup(lt, ino));
			assert_int_equal(refs_in_lookup, 2);
			assert_int_equal(atomic_read(&lt->dir->d_count),
					 1 + children(lt->dir));
		}
		assert_true(children(lt->dir) > 0);
		teardown_variant(lt);
	}
	rcu_unregister_thread();
}

/*
 * Pruning: 2.6.32 prunes as soon as the LRU passes its limit; today the
 * shrinker prunes a batch at a time, so 10 past the limit are still there
 * (and a retained dentry's last dput took no LRU lock).
 */
static void test_pruning_at_once_then_in_batches(void **state)
{
	const unsigned long dcache = 256;
	const struct real_lookup_ops *ops;
	struct lookup_test *lt;
	struct dcache_stats st;
	unsigned long ino;
	int i;

	task_start(&main_rcu);
	for_each_variant(ops, i, &real_lookup_variants) {
		lt = setup_variant(ops, dcache);
		for (ino = 0; ino < dcache + 10; ino++)
			dput(lookup(lt, ino));
		dcache_stats(&st);
		assert_int_equal(st.nr_dentry,
				 ops->vfs_scale ? dcache + 10 : dcache);
		teardown_variant(lt);
	}
	rcu_unregister_thread();
}

/*
 * fast_dput(): today the last dput() of a dentry that stays cached
 * (hashed, on the LRU, referenced) takes no d_lock, nor a lock-free
 * not-last one; 2.6.32 took it to put the dentry back on the LRU.
 * Counted by the ticket lock's head, which each unlock advances.
 */
static void test_last_dput_of_a_cached_dentry_takes_no_lock(void **state)
{
	const struct real_lookup_ops *ops;
	struct lookup_test *lt;
	struct dentry *d;
	uint16_t head;
	int i, n;

	task_start(&main_rcu);
	for_each_variant(ops, i, &real_lookup_variants) {
		/* ticket locks whatever the row's: the heads count the takes */
		spin_lock_init_kind = SPIN_TICKET;
		lt = setup_variant(ops, 64);
		for (n = 0; n < 2; n++)		/* onto the LRU, then referenced */
			dput(lookup(lt, 5));
		d = lookup(lt, 5);
		head = d->d_lock.tickets.head;
		dput(d);
#ifdef KSCALE_SANITIZE
		/* the lockless check is left out under ThreadSanitizer */
		assert_int_equal((uint16_t)(d->d_lock.tickets.head - head), 1);
#else
		assert_int_equal((uint16_t)(d->d_lock.tickets.head - head),
				 ops->vfs_scale ? 0 : 1);
#endif
		teardown_variant(lt);
	}
	rcu_unregister_thread();
}

/*
 * Each row's locks are its kernel's: 2.6.32's ticket lock, today's
 * queued spinlock for parallel; the static ones (inode_lock) too, set
 * up again for the row after another's.
 */
static void test_locks_are_the_rows_kernels(void **state)
{
	const struct real_lookup_ops *ops;
	struct lookup_test *lt;
	struct dentry *d;
	int i, kind;

	task_start(&main_rcu);
	for_each_variant(ops, i, &real_lookup_variants) {
		kind = ops == &real_lookup_parallel ? SPIN_QUEUED : SPIN_TICKET;
		lt = setup_variant(ops, 64);
		d = lookup(lt, 3);
		assert_int_equal(d->d_lock.kind, kind);
		assert_int_equal(inode_lock.kind, kind);
		spin_lock(&d->d_lock);
		assert_true(spin_is_locked(&d->d_lock));
		spin_unlock(&d->d_lock);
		dput(d);
		teardown_variant(lt);
	}
	rcu_unregister_thread();
}

/*
 * DCACHE_REFERENCED: 2.6.32's dput() marks a dentry as it joins the LRU
 * and not again while it stays there; today's retain_dentry() does the
 * opposite, it marks one found already on the LRU.  The flag is cleared
 * by hand, as the shrinker's second chance would.
 */
static void test_referenced_on_joining_the_lru(void **state)
{
	const struct real_lookup_ops *ops;
	struct lookup_test *lt;
	struct dentry *d;
	int i;

	task_start(&main_rcu);
	for_each_variant(ops, i, &real_lookup_variants) {
		lt = setup_variant(ops, 64);
		d = lookup(lt, 5);
		assert_false(d->d_flags & DCACHE_REFERENCED);
		dput(d);			/* joins the LRU */
		assert_int_equal(!!(d->d_flags & DCACHE_REFERENCED),
				 !ops->vfs_scale);
		d = lookup(lt, 5);		/* a hit: still on the LRU */
		assert_false(list_empty(&d->d_lru));
		spin_lock(&d->d_lock);
		d->d_flags &= ~DCACHE_REFERENCED;
		spin_unlock(&d->d_lock);
		dput(d);
		assert_int_equal(!!(d->d_flags & DCACHE_REFERENCED),
				 ops->vfs_scale);
		teardown_variant(lt);
	}
	rcu_unregister_thread();
}

static int reads;

static void count_reads(unsigned long ino)
{
	reads++;
}

/*
 * The inode cache: a name missed in a second directory finds the inode
 * the first miss read (no second read); past its size the least recently
 * found inode is read again.
 */
static void test_inode_cache_reads_each_inode_once(void **state)
{
	const struct real_lookup_ops *ops;
	struct lookup_test *lt;
	struct dentry *other;
	char buf[DNAME_INLINE_LEN];
	struct qstr q;
	int i;

	task_start(&main_rcu);
	magic_read_inode = count_reads;
	for_each_variant(ops, i, &real_lookup_variants) {
		lt = setup_variant(ops, 64);
		other = magic_dir_create(ops);
		icache_init(2, 0);
		reads = 0;
		dput(lookup(lt, 7));
		q = name_of(buf, 7);
		dput(ops->lookup(other, &q));	/* held by lt's dentry */
		assert_int_equal(reads, 1);
		shrink_dcache_sb();		/* inode 7 unused, in core */
		dput(lookup(lt, 8));
		dput(lookup(lt, 9));		/* evicts 7; 8 is held */
		assert_int_equal(reads, 3);
		shrink_dcache_sb();		/* 8 and 9 unused */
		q = name_of(buf, 7);
		dput(ops->lookup(other, &q));	/* read again, evicts 8 */
		assert_int_equal(reads, 4);
		q = name_of(buf, 9);
		dput(ops->lookup(other, &q));	/* unused but in core */
		assert_int_equal(reads, 4);
		icache_exit();
		teardown_variant(lt);
		magic_dir_destroy(other);
	}
	rcu_unregister_thread();
}

struct disk_race {
	struct lookup_test *lt;
	int per_task;
};

/* Task i reads inodes i, i + 2, i + 4, ...: all of one disk of two. */
static void read_own_inodes(struct test_thread *t)
{
	struct disk_race *dr = t->arg;
	struct rcu_thread rcu;
	int n;

	task_start(&rcu);
	for (n = 0; n < dr->per_task; n++)
		dput(lookup(dr->lt, t->id + 2 * n));
	rcu_unregister_thread();
}

static unsigned long disks_queued(void)
{
	unsigned long queued = 0;
	unsigned int d;

	for (d = 0; d < nr_magic_disks; d++)
		queued += magic_disks[d].nr_queued;
	return queued;
}

/*
 * --disks: inode ino is read from disk ino % disks, and each disk has its
 * own slots.  Two tasks reading inodes of a disk each, one slot a disk,
 * never queue; on one disk of one slot they do, and with one disk every
 * read is on it, as before there were several.
 */
static void test_reads_spread_over_disks_by_inode(void **state)
{
	struct disk_race dr = { .per_task = 40 };
	unsigned long ino;
	unsigned int d;

	fs_io_ns = 1000;
	task_start(&main_rcu);
	dr.lt = setup_variant(&real_lookup_i_mutex, 64);
	magic_disks_init(3, 1);
	for (ino = 0; ino < 30; ino++)
		dput(lookup(dr.lt, ino));
	for (d = 0; d < 3; d++)
		assert_int_equal(magic_disks[d].nr_reads, 10);
	magic_disks_init(1, 1);
	for (ino = 100; ino < 130; ino++)
		dput(lookup(dr.lt, ino));
	assert_int_equal(magic_disks[0].nr_reads, 30);
	teardown_variant(dr.lt);
	rcu_unregister_thread();

	fs_io_ns = 200000;
	dr.lt = setup_variant(&real_lookup_parallel, 4 * dr.per_task);
	magic_disks_init(2, 1);
	test_race(2, read_own_inodes, &dr);
	assert_int_equal(magic_disks[0].nr_reads + magic_disks[1].nr_reads,
			 2 * dr.per_task);
	assert_int_equal(disks_queued(), 0);
	teardown_variant(dr.lt);

	dr.lt = setup_variant(&real_lookup_parallel, 4 * dr.per_task);
	magic_disks_init(1, 1);
	test_race(2, read_own_inodes, &dr);
	assert_true(disks_queued() > 0);
	teardown_variant(dr.lt);
	magic_disks_exit();
	fs_io_ns = 0;
}

static int reads_under_inode_lock;

/* ->lookup()'s read, as 2.6.32's: outside inode_lock. */
static void count_reads_unlocked(unsigned long ino)
{
	reads++;
	reads_under_inode_lock += spin_is_locked(&inode_lock);
}

/* inode_lock acquisitions of one lookup, by its ticket head. */
static int inode_lock_taken(struct dentry *dir,
			    const struct real_lookup_ops *ops,
			    unsigned long ino)
{
	uint16_t head = inode_lock.tickets.head;
	char buf[DNAME_INLINE_LEN];
	struct qstr q = name_of(buf, ino);

	dput(ops->lookup(dir, &q));
	rcu_quiescent_state();
	return (uint16_t)(inode_lock.tickets.head - head);
}

/*
 * 2.6.32's inode_lock, inode cache or none: a miss takes it in
 * ifind_fast() and get_new_inode_fast(), not in unlock_new_inode(); a
 * miss whose inode is in core in ifind_fast(); a miss that prunes an
 * inode, twice more in dispose_list().  The dentry keeps the inode's
 * reference: its last iput() takes it once as the dentries are pruned,
 * not in the lookup.  The read itself runs outside it.
 */
static int inode_lock_taken_shrinking(void)
{
	uint16_t head = inode_lock.tickets.head;

	shrink_dcache_sb();
	return (uint16_t)(inode_lock.tickets.head - head);
}

static void test_inode_lock_on_every_inode(void **state)
{
	const struct real_lookup_ops *ops;
	struct lookup_test *lt;
	struct dentry *other, *d;
	int i;

	task_start(&main_rcu);
	magic_read_inode = count_reads_unlocked;
	for_each_variant(ops, i, &real_lookup_variants) {
		/* ticket locks whatever the row's: the heads count the takes */
		spin_lock_init_kind = SPIN_TICKET;
		lt = setup_variant(ops, 64);
		other = magic_dir_create(ops);
		reads = reads_under_inode_lock = 0;
		assert_int_equal(inode_lock_taken(lt->dir, ops, 1), 2);
		d = lookup(lt, 1);	/* a hit: the cached dentry's inode */
		assert_int_equal(atomic_read(&d->d_inode->i_count), 1);
		dput(d);
		/* the first dentry holds it: in core, even with no cache */
		assert_int_equal(inode_lock_taken(other, ops, 1), 1);
		assert_int_equal(reads, 1);
		/* two dentries, one last iput(); no inode cache: evicted */
		assert_int_equal(inode_lock_taken_shrinking(), 1);
		assert_int_equal(inode_lock_taken(other, ops, 1), 2);
		assert_int_equal(reads, 2);
		assert_int_equal(inode_lock_taken_shrinking(), 1);
		icache_init(1, 0);
		assert_int_equal(inode_lock_taken(lt->dir, ops, 2), 2);
		assert_int_equal(inode_lock_taken_shrinking(), 1);
		assert_int_equal(inode_lock_taken(other, ops, 2), 1);
		assert_int_equal(reads, 3);
		assert_int_equal(inode_lock_taken_shrinking(), 1);
		assert_int_equal(inode_lock_taken(lt->dir, ops, 3), 4);
		assert_int_equal(reads, 4);
		assert_int_equal(reads_under_inode_lock, 0);
		teardown_variant(lt);
		magic_dir_destroy(other);
	}
	rcu_unregister_thread();
}

struct inode_race {
	const struct real_lookup_ops *ops;
	struct dentry *dir[2];
	unsigned long sleeps[2];	/* each looker's, in its lookup */
};

static struct task_struct *reader;

/* ->lookup() of the task that hashed the inode: until the other sleeps. */
static void read_until_other_sleeps(unsigned long ino)
{
	double deadline = test_now_ms() + GIVE_UP_MS;
	struct task_struct *other;

	WRITE_ONCE(reader, current);
	reads++;
	for (;;) {
		other = READ_ONCE(racer[READ_ONCE(racer[0]) == current]);
		if (other && (__atomic_load_n(&other->state, __ATOMIC_SEQ_CST) &
			      TASK_ASLEEP))
			return;
		if (test_now_ms() > deadline) {
			test_note(&gave_up);
			return;
		}
		schedule_timeout_ns(100000);
	}
}

static void same_inode(struct test_thread *t)
{
	struct inode_race *ir = t->arg;
	char buf[DNAME_INLINE_LEN];
	struct qstr q = name_of(buf, 42);
	struct rcu_thread rcu;
	unsigned long nvcsw;

	task_start(&rcu);
	nvcsw = current->nvcsw;
	dput(ir->ops->lookup(ir->dir[t->id], &q));
	rcu_quiescent_state();
	ir->sleeps[t->id] = current->nvcsw - nvcsw;
	rcu_unregister_thread();
}

/*
 * Misses on one inode in two directories at once: the second finds it
 * I_LOCK and sleeps on its bit wait queue until unlock_new_inode(), which
 * wakes it once (it sleeps once, and needs no watchdog's wake-up), and the
 * inode is read once.
 */
static void test_waiter_on_a_new_inode_woken_once(void **state)
{
	struct inode_race ir = { 0 };
	int i, waiter;

	magic_read_inode = read_until_other_sleeps;
	for_each_variant(ir.ops, i, &real_lookup_variants) {
		struct lookup_test *lt = setup_variant(ir.ops, 16);

		ir.dir[0] = lt->dir;
		ir.dir[1] = magic_dir_create(ir.ops);
		reads = gave_up = 0;
		reader = NULL;
		race_watched(same_inode, &ir);
		assert_int_equal(gave_up, 0);
		assert_int_equal(lost_wakeups, 0);
		assert_int_equal(reads, 1);
		waiter = reader == racer[0];
		assert_int_equal(ir.sleeps[waiter], 1);
		magic_dir_destroy(ir.dir[1]);
		teardown_variant(lt);
	}
}

/*
 * The NFS line's round trip (sunrpc.c), driven by its callers alone.
 * Four tasks on one CPU make calls to a server of one thread, so that
 * each one's request is sent while another's is served: every request is
 * served from the later of its arrival and the end of the request
 * nfsd_threads before it (a FIFO of that many threads: never more at
 * once), for the service time, and its reply comes half a round trip
 * later; never more calls in flight than the slots; every call answered.
 */
#define RPC_TASKS	4
#define RPC_CALLS	10
#define RPC_RTT_NS	1000000
#define RPC_SERVICE_NS	2000000

struct rpc_race {
	struct rpc_xprt *xprt;
	struct rpc_timing t[RPC_TASKS * RPC_CALLS];
};

static void rpc_caller(struct test_thread *t)
{
	struct rpc_race *rr = t->arg;
	int n;

	for (n = 0; n < RPC_CALLS; n++)
		rpc_call_sync(rr->xprt, &rr->t[t->id * RPC_CALLS + n]);
}

static int by_sent(const void *a, const void *b)
{
	const struct rpc_timing *x = a, *y = b;

	return (x->sent > y->sent) - (x->sent < y->sent);
}

/* The most of [from, to) intervals open at once: +1 and -1 events. */
struct rpc_event {
	uint64_t at;
	int step;
};

static int by_time(const void *a, const void *b)
{
	const struct rpc_event *x = a, *y = b;

	if (x->at != y->at)
		return (x->at > y->at) - (x->at < y->at);
	return x->step - y->step;	/* an end before a start at one time */
}

static int most_at_once(const struct rpc_timing *t, int n, size_t from,
			size_t to)
{
	struct rpc_event *ev = calloc(2 * n, sizeof(*ev));
	int i, open = 0, most = 0;

	for (i = 0; i < n; i++) {
		ev[2 * i].at = *(const uint64_t *)((const char *)&t[i] + from);
		ev[2 * i].step = 1;
		ev[2 * i + 1].at = *(const uint64_t *)((const char *)&t[i] + to);
		ev[2 * i + 1].step = -1;
	}
	qsort(ev, 2 * n, sizeof(*ev), by_time);
	for (i = 0; i < 2 * n; i++) {
		open += ev[i].step;
		if (open > most)
			most = open;
	}
	free(ev);
	return most;
}

static void test_rpc_server_threads_and_slots(void **state)
{
	const unsigned int threads[] = { 1, 2 }, slots = 3;
	const int n = RPC_TASKS * RPC_CALLS;
	struct rpc_race *rr = calloc(1, sizeof(*rr));
	uint64_t arrival, free_at;
	unsigned int i;
	int k;

	for (i = 0; i < sizeof(threads) / sizeof(threads[0]); i++) {
		rr->xprt = xprt_create(slots, RPC_RTT_NS, threads[i],
				       RPC_SERVICE_NS);
		test_race_tasks(RPC_TASKS, 1, rpc_caller, rr);
		qsort(rr->t, n, sizeof(rr->t[0]), by_sent);
		for (k = 0; k < n; k++) {
			arrival = rr->t[k].sent + RPC_RTT_NS / 2;
			free_at = k < (int)threads[i] ?
				  0 : rr->t[k - threads[i]].finish;
			assert_int_equal(rr->t[k].start,
					 arrival > free_at ? arrival : free_at);
			assert_int_equal(rr->t[k].finish,
					 rr->t[k].start + RPC_SERVICE_NS);
			assert_int_equal(rr->t[k].replied, rr->t[k].finish +
					 RPC_RTT_NS - RPC_RTT_NS / 2);
		}
		assert_true(most_at_once(rr->t, n,
					 offsetof(struct rpc_timing, start),
					 offsetof(struct rpc_timing, finish)) <=
			    (int)threads[i]);
		assert_true(most_at_once(rr->t, n,
					 offsetof(struct rpc_timing, sent),
					 offsetof(struct rpc_timing, replied)) <=
			    (int)slots);
		/* each sent while another was served: the server queued */
		assert_true(rr->xprt->serv.nr_queued > 0);
		/* every call answered, every slot given back */
		assert_int_equal(rr->xprt->nr_calls, n);
		assert_int_equal(rr->xprt->serv.nr_requests, n);
		assert_int_equal(rr->xprt->num_reqs, 0);
		assert_int_equal(rr->xprt->nr_recv, 0);
		assert_true(list_empty(&rr->xprt->backlog));
		xprt_destroy(rr->xprt);
	}
	free(rr);
}

static struct rpc_xprt *one_slot;

/* Under reserve_lock, as the slot table's users read them. */
static bool backlog_waiting(struct rpc_xprt *xprt)
{
	bool waiting;

	spin_lock(&xprt->reserve_lock);
	waiting = !list_empty(&xprt->backlog);
	spin_unlock(&xprt->reserve_lock);
	return waiting;
}

static bool slot_held(struct rpc_xprt *xprt)
{
	bool held;

	spin_lock(&xprt->reserve_lock);
	held = xprt->num_reqs;
	spin_unlock(&xprt->reserve_lock);
	return held;
}

/*
 * racer[0] holds the one slot until racer[1], calling, sleeps on the
 * backlog for it; then releases it, which must wake racer[1].
 */
static void slot_holder_and_caller(struct test_thread *t)
{
	double deadline = test_now_ms() + GIVE_UP_MS;
	struct task_struct *other;

	if (t->id == 1) {
		while (!slot_held(one_slot) && test_now_ms() < deadline)
			schedule_timeout_ns(100000);
		rpc_call_sync(one_slot, NULL);
		return;
	}
	xprt_reserve(one_slot);
	for (;;) {
		other = READ_ONCE(racer[1]);
		if (other && backlog_waiting(one_slot) &&
		    (__atomic_load_n(&other->state, __ATOMIC_SEQ_CST) &
		     TASK_ASLEEP))
			break;
		if (test_now_ms() > deadline) {
			test_note(&gave_up);
			break;
		}
		schedule_timeout_ns(100000);
	}
	xprt_release(one_slot);
}

static void test_rpc_backlog_woken_by_a_release(void **state)
{
	one_slot = xprt_create(1, 0, 1, 1000);
	gave_up = 0;
	race_watched(slot_holder_and_caller, NULL);
	assert_int_equal(gave_up, 0);
	assert_int_equal(lost_wakeups, 0);
	assert_int_equal(one_slot->nr_calls, 2);
	assert_int_equal(one_slot->nr_backlogged, 1);
	assert_int_equal(one_slot->num_reqs, 0);
	xprt_destroy(one_slot);
}

struct nfs_race {
	struct lookup_test lt;
	int negative;
};

static void nfs_lookups(struct test_thread *t)
{
	struct nfs_race *nr = t->arg;
	struct rcu_thread rcu;
	struct dentry *d;
	uint64_t rng = 77 + t->id;
	int n;

	task_start(&rcu);
	for (n = 0; n < NFS_LOOKUPS; n++) {
		rng = rng * 6364136223846793005ULL + 1;
		d = lookup(&nr->lt, (rng >> 33) % nr->lt.files);
		if (!d->d_inode)
			test_note(&nr->negative);
		dput(d);
	}
	nr->lt.stats[t->id] = lookup_stats;
	rcu_unregister_thread();
}

/*
 * The NFS line's lookups racing over a few names: one dentry per name
 * where the design promises it, each lookup a positive dentry, each miss
 * at most one call, every call answered and its slot given back.
 */
static void test_nfs_line_answers_every_lookup(void **state)
{
	const struct magic_fs fs = {
		.dcache = 16, .nfs = true, .rpc_slots = 2, .nfsd_threads = 1,
		.nfs_rtt_ns = 20000, .nfsd_ns = 30000,
	};
	const int racers = test_racers(MAX_RACERS);
	const struct real_lookup_ops *ops;
	struct nfs_race *nr = calloc(1, sizeof(*nr));
	unsigned long misses;
	struct dcache_stats st;
	struct dentry *dir;
	int i, r;

	for_each_variant(ops, i, &real_lookup_variants) {
		magic_fs_init(ops, &fs, &dir, 1);
		assert_non_null(magic_xprt);
		memset(nr, 0, sizeof(*nr));
		nr->lt.ops = ops;
		nr->lt.dir = dir;
		nr->lt.files = 64;
		test_race(racers, nfs_lookups, nr);
		assert_int_equal(nr->negative, 0);
		dcache_stats(&st);
		if (ops->one_dentry_per_name)
			assert_int_equal(st.duplicates, 0);
		for (r = misses = 0; r < racers; r++)
			misses += nr->lt.stats[r].misses;
		assert_true(magic_xprt->nr_calls > 0);
		assert_true(magic_xprt->nr_calls <= misses);
		assert_int_equal(magic_xprt->serv.nr_requests,
				 magic_xprt->nr_calls);
		assert_int_equal(magic_xprt->num_reqs, 0);
		assert_int_equal(magic_xprt->nr_recv, 0);
		magic_fs_exit(&dir, 1);
		assert_null(magic_xprt);
	}
	free(nr);
}

/*
 * NFS asks the server on every miss: a name missed in a second directory
 * whose inode is in core still makes its call, and finds the inode.
 */
static void test_nfs_line_calls_with_the_inode_in_core(void **state)
{
	const struct magic_fs fs = {
		.dcache = 16, .icache = 4, .nfs = true, .rpc_slots = 2,
		.nfsd_threads = 1, .nfs_rtt_ns = 1000, .nfsd_ns = 1000,
	};
	const struct real_lookup_ops *ops;
	struct dentry *dirs[2], *got[2];
	struct lookup_test lt;
	int i, d;

	task_start(&main_rcu);
	for_each_variant(ops, i, &real_lookup_variants) {
		magic_fs_init(ops, &fs, dirs, 2);
		memset(&lookup_stats, 0, sizeof(lookup_stats));
		lt.ops = ops;
		for (d = 0; d < 2; d++) {
			lt.dir = dirs[d];
			got[d] = lookup(&lt, 7);
		}
		assert_ptr_equal(got[0]->d_inode, got[1]->d_inode);
		assert_int_equal(lookup_stats.icache_hits, 1);
		assert_int_equal(magic_xprt->nr_calls, 2);
		dput(got[0]);
		dput(got[1]);
		magic_fs_exit(dirs, 2);
	}
	rcu_unregister_thread();
}

static int setup(void **state)
{
	test_machine(&machine, 8, 2);
	return 0;
}

/* Whatever a test left, passed or failed: the next one starts afresh. */
static int restore(void **state)
{
	static void (*saved)(unsigned long ino);

	if (!saved)
		saved = magic_read_inode;
	magic_read_inode = saved;
	fs_io_ns = 0;
	xprt_destroy(magic_xprt);
	magic_xprt = NULL;
	if (rcu_self)
		rcu_unregister_thread();
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_teardown(
			test_waiter_on_a_new_inode_woken_once, restore),
		cmocka_unit_test_teardown(test_two_misses_on_one_name, restore),
		cmocka_unit_test_teardown(
			test_eviction_spares_dentries_in_use, restore),
		cmocka_unit_test_teardown(test_hit_ratio_of_a_uniform_draw, restore),
		cmocka_unit_test_teardown(
			test_children_and_the_walk_hold_the_directory, restore),
		cmocka_unit_test_teardown(
			test_inode_cache_reads_each_inode_once, restore),
		cmocka_unit_test_teardown(test_inode_lock_on_every_inode, restore),
		cmocka_unit_test_teardown(test_locks_are_the_rows_kernels,
					  restore),
		cmocka_unit_test_teardown(
			test_pruning_at_once_then_in_batches, restore),
		cmocka_unit_test_teardown(
			test_reads_spread_over_disks_by_inode, restore),
		cmocka_unit_test_teardown(
			test_referenced_on_joining_the_lru, restore),
		cmocka_unit_test_teardown(
			test_last_dput_of_a_cached_dentry_takes_no_lock, restore),
		cmocka_unit_test_teardown(
			test_racing_lookups_keep_one_dentry_per_name, restore),
		cmocka_unit_test_teardown(
			test_magic_fs_one_dentry_per_name_per_dir, restore),
		/* first: a lost wake-up fails here, before a call hangs */
		cmocka_unit_test_teardown(test_rpc_backlog_woken_by_a_release,
					  restore),
		cmocka_unit_test_teardown(test_rpc_server_threads_and_slots,
					  restore),
		cmocka_unit_test_teardown(test_nfs_line_answers_every_lookup,
					  restore),
		cmocka_unit_test_teardown(
			test_nfs_line_calls_with_the_inode_in_core, restore),
	};

	restore(NULL);
	return cmocka_run_group_tests(tests, setup, NULL);
}
