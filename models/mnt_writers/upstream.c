// SPDX-License-Identifier: GPL-2.0
/*
 * Today's kernel, fs/namespace.c (v6.x; the design of Nick Piggin's
 * "mnt_want_write speedup", 2.6.29): per-mount per-CPU counters, no lock
 * on the write path; mnt_make_readonly() raises MNT_WRITE_HOLD, sums
 * every CPU's count, and writers that raced spin until it is lowered.
 *
 * struct mount is reduced to what this path touches.  mount_lock is the
 * kernel's seqlock; only its spinlock side (lock_mount_hash) is used here.
 * Not modelled: sb_start_write() (a per-CPU rwsem, uncontended) and the
 * inode's i_writecount, which an open for write also takes today.
 */
#include <errno.h>
#include <stdlib.h>

#include "../../lib/kernel/lockstat.h"
#include "../../lib/kernel/percpu.h"
#include "../../lib/kernel/rcu.h"
#include "../../lib/kernel/spinlock.h"
#include "mnt_writers.h"

#define MNT_WRITE_HOLD	0x200

struct mnt_pcp {
	int mnt_count;
	int mnt_writers;
};

struct vfsmount {
	int mnt_flags;
};

struct mnt_namespace {
	unsigned long long seq;
};

struct mount {
	struct vfsmount mnt;
	struct mnt_pcp __percpu *mnt_pcp;
	struct mnt_namespace *mnt_ns;	/* containing namespace */
	int mnt_expiry_mark;		/* true if marked for expiry */
};

/* The namespace the benchmark's mounts are in: they are never detached. */
static struct mnt_namespace init_mnt_ns;

static spinlock_t mount_lock = __SPIN_LOCK_UNLOCKED;

#define real_mount(m)	((struct mount *)(m))

static void lock_mount_hash(void)
{
	spin_lock(&mount_lock);
}

static void unlock_mount_hash(void)
{
	spin_unlock(&mount_lock);
}

static struct vfsmount *alloc_vfsmnt(const char *name)
{
	struct mount *mnt = mnt_cache_zalloc(sizeof(*mnt));
	int cpu;

	(void)name;
	mnt->mnt_pcp = alloc_percpu(struct mnt_pcp);
	/* its CPU's line alone: the counts are the design's whole point */
	for_each_possible_cpu(cpu)
		lockstat_register(per_cpu_ptr(mnt->mnt_pcp, cpu), "mnt_pcp", 1,
				  LOCKSTAT_LINE | LOCKSTAT_PER_CPU);
	this_cpu_ptr(mnt->mnt_pcp)->mnt_count = 1;
	mnt->mnt_ns = &init_mnt_ns;
	return &mnt->mnt;
}

static inline void mnt_add_count(struct mount *mnt, int n)
{
	lockstat_visit(this_cpu_ptr(mnt->mnt_pcp));
	this_cpu_add(this_cpu_ptr(mnt->mnt_pcp)->mnt_count, n);
}

static int mnt_get_count(struct mount *mnt)
{
	int count = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		count += READ_ONCE(per_cpu_ptr(mnt->mnt_pcp, cpu)->mnt_count);
	return count;
}

/*
 * __legitimize_mnt() at the end of an RCU walk: the count, the barrier
 * before the mount_lock recheck; the recheck itself (two reads of a line
 * only umount writes) is left out.
 */
static void mntget(struct vfsmount *m)
{
	mnt_add_count(real_mount(m), 1);
	smp_mb();
}

/*
 * mntput_no_expire(): a mount still in its namespace drops a per-CPU
 * count under RCU; only a detached one takes mount_lock.
 */
static void mntput(struct vfsmount *m)
{
	struct mount *mnt = real_mount(m);

	if (unlikely(READ_ONCE(mnt->mnt_expiry_mark)))
		WRITE_ONCE(mnt->mnt_expiry_mark, 0);
	rcu_read_lock();
	if (likely(READ_ONCE(mnt->mnt_ns))) {
		mnt_add_count(mnt, -1);
		rcu_read_unlock();
		return;
	}
	rcu_read_unlock();
	WARN_ON(1);
}

static inline void mnt_inc_writers(struct mount *mnt)
{
	lockstat_visit(this_cpu_ptr(mnt->mnt_pcp));
	this_cpu_inc(this_cpu_ptr(mnt->mnt_pcp)->mnt_writers);
}

static inline void mnt_dec_writers(struct mount *mnt)
{
	lockstat_visit(this_cpu_ptr(mnt->mnt_pcp));
	this_cpu_dec(this_cpu_ptr(mnt->mnt_pcp)->mnt_writers);
}

static unsigned int mnt_get_writers(struct mount *mnt)
{
	unsigned int count = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		count += READ_ONCE(per_cpu_ptr(mnt->mnt_pcp, cpu)->mnt_writers);
	return count;
}

static int mnt_get_write_access(struct vfsmount *m)
{
	struct mount *mnt = real_mount(m);
	int ret = 0;

	preempt_disable();
	mnt_inc_writers(mnt);
	/*
	 * The store to mnt_inc_writers must be visible before we pass
	 * MNT_WRITE_HOLD loop below, so that the slowpath can see our
	 * incremented count after it has set MNT_WRITE_HOLD.
	 */
	smp_mb();
	while (READ_ONCE(mnt->mnt.mnt_flags) & MNT_WRITE_HOLD)
		cpu_relax();
	/*
	 * The barrier pairs with the barrier sb_start_ro_state_change() making
	 * sure that if we see MNT_WRITE_HOLD cleared, we will also see
	 * s_readonly_remount set (or even SB_RDONLY / MNT_READONLY flags) in
	 * mnt_is_readonly() and bail in case we are racing with remount
	 * read-only.
	 */
	smp_rmb();
	if (__mnt_is_readonly(m)) {
		mnt_dec_writers(mnt);
		ret = -EROFS;
	}
	preempt_enable();
	return ret;
}

static void mnt_put_write_access(struct vfsmount *mnt)
{
	mnt_dec_writers(real_mount(mnt));
}

static inline int mnt_hold_writers(struct mount *mnt)
{
	WRITE_ONCE(mnt->mnt.mnt_flags, mnt->mnt.mnt_flags | MNT_WRITE_HOLD);
	/*
	 * After storing MNT_WRITE_HOLD, we'll read the counters. This store
	 * should be visible before we do.
	 */
	smp_mb();
	/*
	 * With writers on hold, if this value is zero, then there are
	 * definitely no active writers (although held writers may subsequently
	 * increment the count, they'll have to wait, and decrement it after
	 * seeing MNT_READONLY).
	 */
	if (mnt_get_writers(mnt) > 0)
		return -EBUSY;
	return 0;
}

static inline void mnt_unhold_writers(struct mount *mnt)
{
	/*
	 * MNT_READONLY must become visible before ~MNT_WRITE_HOLD, so writers
	 * that become unheld will see MNT_READONLY.
	 */
	smp_wmb();
	WRITE_ONCE(mnt->mnt.mnt_flags, mnt->mnt.mnt_flags & ~MNT_WRITE_HOLD);
}

static int mnt_make_readonly(struct vfsmount *m)
{
	struct mount *mnt = real_mount(m);
	int ret;

	lock_mount_hash();
	ret = mnt_hold_writers(mnt);
	if (!ret)
		WRITE_ONCE(mnt->mnt.mnt_flags,
			   mnt->mnt.mnt_flags | MNT_READONLY);
	mnt_unhold_writers(mnt);
	unlock_mount_hash();
	return ret;
}

static void __mnt_unmake_readonly(struct vfsmount *m)
{
	struct mount *mnt = real_mount(m);

	lock_mount_hash();
	WRITE_ONCE(mnt->mnt.mnt_flags, mnt->mnt.mnt_flags & ~MNT_READONLY);
	unlock_mount_hash();
}

static long mnt_writers(struct vfsmount *m)
{
	return (int)mnt_get_writers(real_mount(m));
}

static void free_vfsmnt(struct vfsmount *m)
{
	struct mount *mnt = real_mount(m);

	WARN_ON(mnt_get_writers(mnt));
	WARN_ON(mnt_get_count(mnt) != 1);
	free_percpu(mnt->mnt_pcp);
	free(mnt);
}

/* mount_lock, 6.18's queued spinlock (spinlock.h) */
static void init_mount_lock(void)
{
	spin_lock_init(&mount_lock);
}

const struct mnt_writers_ops mnt_writers_upstream = {
	.counts_writers = true,
	.init = init_mount_lock,
	.alloc_vfsmnt = alloc_vfsmnt,
	.free_vfsmnt = free_vfsmnt,
	.mntget = mntget,
	.mntput = mntput,
	.mnt_want_write = mnt_get_write_access,
	.mnt_drop_write = mnt_put_write_access,
	.mnt_make_readonly = mnt_make_readonly,
	.mnt_make_readwrite = __mnt_unmake_readonly,
	.mnt_writers = mnt_writers,
};
