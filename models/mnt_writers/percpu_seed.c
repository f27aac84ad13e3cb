// SPDX-License-Identifier: GPL-2.0
/*
 * The seed patch exactly as posted: "[PATCH 25/26] r/o bind mounts:
 * scalable writer count" (Dave Hansen, lxc tree, 2007-06-22, against
 * 2.6.22-rc fs/namespace.c).  percpu.c is what 2.6.26 merged; this is what
 * the seed measured.  Where the two differ:
 *
 *  - __clear_mnt_count() has no count check: every switch of a CPU's
 *    cached mount does a locked atomic_add() on the old mount's
 *    __mnt_writers, the line every mntget()/mntput() of that mount
 *    writes, even to add 0.  This is the seed's two-mount worst case.
 *  - mnt_drop_write() calls handle_write_count_underflow() on every
 *    close, which reads __mnt_writers.
 *  - mnt_drop_write() decrements the CPU's cached count whatever mount it
 *    caches.  A CPU that opens on A, then on B, then closes A takes B's
 *    count to 0 while B is held (mnt_make_readonly(B) succeeds under a
 *    writer) and leaves A's at 1 for good.  Fixed before the merge:
 *    2.6.26's drop switches the cached mount first.  The bench runs it
 *    (its counts stay exact in sum over the mounts); torture catches it.
 *
 * The one departure from the posting: its mnt_make_readonly() leaves the
 * flag's store as a comment ("actually set mount's r/o flag here"), the
 * series' next patches adding MNT_READONLY; it is stored where the comment
 * says, with all the locks held, as 2.6.26 does.
 */
#include <errno.h>
#include <stdlib.h>

#include "mnt_writers.h"
#include "percpu.h"

/* The posting's name for 2.6.26's unlock_mnt_writers(). */
#define mnt_unlock_cpus unlock_mnt_writers

static inline void __clear_mnt_count(struct mnt_writer *cpu_writer)
{
	if (!cpu_writer->mnt)
		return;
	lockstat_visit(&cpu_writer->mnt->__mnt_writers);
	atomic_add(cpu_writer->count, &cpu_writer->mnt->__mnt_writers);
	cpu_writer->count = 0;
}

static int mnt_want_write(struct vfsmount *mnt)
{
	int ret = 0;
	struct mnt_writer *cpu_writer;

	cpu_writer = &get_cpu_var(mnt_writers);
	spin_lock(&cpu_writer->lock);
	if (__mnt_is_readonly(mnt)) {
		ret = -EROFS;
		goto out;
	}
	if (cpu_writer->mnt != mnt) {
		__clear_mnt_count(cpu_writer);
		cpu_writer->mnt = mnt;
	}
	cpu_writer->count++;
out:
	spin_unlock(&cpu_writer->lock);
	put_cpu_var(mnt_writers);
	return ret;
}

static void lock_and_coalesce_cpu_mnt_writer_counts(void)
{
	int cpu;
	struct mnt_writer *cpu_writer;

	for_each_possible_cpu(cpu) {
		cpu_writer = &per_cpu(mnt_writers, cpu);
		spin_lock(&cpu_writer->lock);
		__clear_mnt_count(cpu_writer);
		cpu_writer->mnt = NULL;
	}
}

/*
 * These per-cpu write counts are not guaranteed to have
 * matched increments and decrements on any given cpu.
 * A file open()ed for write on one cpu and close()d on
 * another cpu will imbalance this count.  Make sure it
 * does not get too far out of whack.
 */
static void handle_write_count_underflow(struct vfsmount *mnt)
{
	/*
	 * This should be fast the vast majority
	 * of the time because everyone will only
	 * be reading it and will share cachelines.
	 */
	lockstat_visit(&mnt->__mnt_writers);
	while (atomic_read(&mnt->__mnt_writers) <
		MNT_WRITER_UNDERFLOW_LIMIT) {
		/*
		 * It isn't necessary to hold all of the locks
		 * at the same time, but doing it this way makes
		 * us share a lot more code.
		 */
		lock_and_coalesce_cpu_mnt_writer_counts();
		__atomic_fetch_add(&mnt_underflows_coalesced, 1,
				   __ATOMIC_RELAXED);
		mnt_unlock_cpus();
	}
}

static void mnt_drop_write(struct vfsmount *mnt)
{
	struct mnt_writer *cpu_writer;

	cpu_writer = &get_cpu_var(mnt_writers);
	spin_lock(&cpu_writer->lock);
	put_cpu_var(mnt_writers);
	if (cpu_writer->count > 0) {
		cpu_writer->count--;
	} else {
		lockstat_visit(&mnt->__mnt_writers);
		atomic_dec(&mnt->__mnt_writers);
	}
	spin_unlock(&cpu_writer->lock);
	handle_write_count_underflow(mnt);
}

static int mnt_make_readonly(struct vfsmount *mnt)
{
	int ret = 0;

	lock_and_coalesce_cpu_mnt_writer_counts();
	/*
	 * With all the locks held, this value is stable
	 */
	if (atomic_read(&mnt->__mnt_writers) > 0) {
		ret = -EBUSY;
		goto out;
	}
	/*
	 * actually set mount's r/o flag here to make
	 * __mnt_is_readonly() true, which keeps anyone
	 * from doing a successful mnt_want_write().
	 */
	spin_lock(&vfsmount_lock);
	WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags | MNT_READONLY);
	spin_unlock(&vfsmount_lock);
out:
	mnt_unlock_cpus();
	return ret;
}

static long mnt_writers_count(struct vfsmount *mnt)
{
	long count;

	lock_and_coalesce_cpu_mnt_writer_counts();
	count = atomic_read(&mnt->__mnt_writers);
	mnt_unlock_cpus();
	return count;
}

/*
 * The posting has no __mntput() hook, and its __clear_mnt_count() would add
 * to a freed mount some CPU still caches: coalesce, which forgets them all.
 * What the posted drop left misattributed is the caller's to check.
 */
static void free_vfsmnt(struct vfsmount *mnt)
{
	mnt_writers_count(mnt);
	WARN_ON(atomic_read(&mnt->mnt_count) != 1);
	free(mnt);
}

const struct mnt_writers_ops mnt_writers_percpu_seed = {
	.counts_writers = true,
	.era_2_6 = true,
	.posted_bug = "mnt_drop_write() decrements the CPU's cached count "
		      "whatever mount it caches (fixed before 2.6.26)",
	.init = init_mnt_writers,
	.alloc_vfsmnt = alloc_vfsmnt_percpu,
	.free_vfsmnt = free_vfsmnt,
	.mntget = mntget_2_6,
	.mntput = mntput_2_6,
	.mnt_want_write = mnt_want_write,
	.mnt_drop_write = mnt_drop_write,
	.mnt_make_readonly = mnt_make_readonly,
	.mnt_make_readwrite = __mnt_unmake_readonly_percpu,
	.mnt_writers = mnt_writers_count,
};
