// SPDX-License-Identifier: GPL-2.0
/*
 * The seed patch, "r/o bind mounts: scalable writer count", as merged in
 * 2.6.26 fs/namespace.c: one per-CPU struct mnt_writer caching the last
 * mount written on that CPU, flushed into the mount's atomic
 * __mnt_writers when the CPU switches mounts; closes on another CPU
 * underflow the atomic, coalesced past MNT_WRITER_UNDERFLOW_LIMIT.
 *
 * Taken from the merged form rather than the seed where they differ:
 * mnt_drop_write() also switches the cached mount (the seed decremented
 * whatever mount was cached), checks underflow only when it touched the
 * atomic, __clear_mnt_count() leaves a mount whose count is 0 alone, and
 * put_cpu_var() comes last.  The kernel rate-limits the imbalance
 * warning with MNT_IMBALANCED_WRITE_COUNT; so does this.
 */
#include <errno.h>
#include <stdlib.h>

#include "mnt_writers.h"
#include "percpu.h"

#define MNT_IMBALANCED_WRITE_COUNT	0x800 /* just for debugging */

vfsmount_2_6_check_layout(struct vfsmount, __mnt_writers);

struct mnt_writer __percpu *mnt_writers;

void init_mnt_writers(void)
{
	int cpu;

	free_percpu(mnt_writers);
	mnt_writers = alloc_percpu(struct mnt_writer);
	for_each_possible_cpu(cpu) {
		struct mnt_writer *writer = &per_cpu(mnt_writers, cpu);

		spin_lock_init(&writer->lock);
		writer->count = 0;
		/* count and mnt share the lock's line */
		lockstat_register(&writer->lock, "mnt_writer", 1,
				  LOCKSTAT_SPIN | LOCKSTAT_PER_CPU);
	}
	/* handle_write_count_underflow() takes it to coalesce */
	lockstat_register(&vfsmount_lock, "vfsmount_lock", 1, LOCKSTAT_SPIN);
}

struct vfsmount *alloc_vfsmnt_percpu(const char *name)
{
	struct vfsmount *mnt = mnt_cache_zalloc(sizeof(*mnt));

	vfsmount_2_6_init(mnt);
	mnt->mnt_devname = name;
	atomic_set(&mnt->__mnt_writers, 0);
	/* on mnt_count's line: one class, as a visit to either moves it */
	lockstat_register(&mnt->__mnt_writers, "vfsmount", 1, LOCKSTAT_LINE);
	return mnt;
}

static inline void __clear_mnt_count(struct mnt_writer *cpu_writer)
{
	if (!cpu_writer->mnt)
		return;
	/*
	 * This is in case anyone ever leaves an invalid,
	 * old ->mnt and a count of 0.
	 */
	if (!cpu_writer->count)
		return;
	lockstat_visit(&cpu_writer->mnt->__mnt_writers);
	atomic_add(cpu_writer->count, &cpu_writer->mnt->__mnt_writers);
	cpu_writer->count = 0;
}

static inline void use_cpu_writer_for_mount(struct mnt_writer *cpu_writer,
					    struct vfsmount *mnt)
{
	if (cpu_writer->mnt == mnt)
		return;
	__clear_mnt_count(cpu_writer);
	cpu_writer->mnt = mnt;
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
	use_cpu_writer_for_mount(cpu_writer, mnt);
	cpu_writer->count++;
out:
	spin_unlock(&cpu_writer->lock);
	put_cpu_var(mnt_writers);
	return ret;
}

static void lock_mnt_writers(void)
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

void unlock_mnt_writers(void)
{
	int cpu;
	struct mnt_writer *cpu_writer;

	for_each_possible_cpu(cpu) {
		cpu_writer = &per_cpu(mnt_writers, cpu);
		spin_unlock(&cpu_writer->lock);
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
	if (atomic_read(&mnt->__mnt_writers) >=
	    MNT_WRITER_UNDERFLOW_LIMIT)
		return;
	/*
	 * It isn't necessary to hold all of the locks
	 * at the same time, but doing it this way makes
	 * us share a lot more code.
	 */
	lock_mnt_writers();
	__atomic_fetch_add(&mnt_underflows_coalesced, 1, __ATOMIC_RELAXED);
	/*
	 * vfsmount_lock is for mnt_flags.
	 */
	spin_lock(&vfsmount_lock);
	/*
	 * If coalescing the per-cpu writer counts did not
	 * get us back to a positive writer count, we have
	 * a bug.
	 */
	if ((atomic_read(&mnt->__mnt_writers) < 0) &&
	    !(mnt->mnt_flags & MNT_IMBALANCED_WRITE_COUNT)) {
		WARN_ON(1);
		/* use the flag to keep the dmesg spam down */
		mnt->mnt_flags |= MNT_IMBALANCED_WRITE_COUNT;
	}
	spin_unlock(&vfsmount_lock);
	unlock_mnt_writers();
}

static void mnt_drop_write(struct vfsmount *mnt)
{
	int must_check_underflow = 0;
	struct mnt_writer *cpu_writer;

	cpu_writer = &get_cpu_var(mnt_writers);
	spin_lock(&cpu_writer->lock);

	use_cpu_writer_for_mount(cpu_writer, mnt);
	if (cpu_writer->count > 0) {
		cpu_writer->count--;
	} else {
		must_check_underflow = 1;
		lockstat_visit(&mnt->__mnt_writers);
		atomic_dec(&mnt->__mnt_writers);
	}

	spin_unlock(&cpu_writer->lock);
	/*
	 * Logically, we could call this each time,
	 * but the __mnt_writers cacheline tends to
	 * be cold, and makes this expensive.
	 */
	if (must_check_underflow)
		handle_write_count_underflow(mnt);
	/*
	 * This could be done right after the spinlock
	 * is taken because the spinlock keeps us on
	 * the cpu, and disables preemption.  However,
	 * putting it here bounds the amount that
	 * __mnt_writers can underflow.  Without it,
	 * we could theoretically wrap __mnt_writers.
	 */
	put_cpu_var(mnt_writers);
}

static int mnt_make_readonly(struct vfsmount *mnt)
{
	int ret = 0;

	lock_mnt_writers();
	/*
	 * With all the locks held, this value is stable
	 */
	if (atomic_read(&mnt->__mnt_writers) > 0) {
		ret = -EBUSY;
		goto out;
	}
	/*
	 * nobody can do a successful mnt_want_write() with all
	 * of the counts in MNT_DENIED_WRITE and the locks held.
	 */
	spin_lock(&vfsmount_lock);
	if (!ret)
		WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags | MNT_READONLY);
	spin_unlock(&vfsmount_lock);
out:
	unlock_mnt_writers();
	return ret;
}

void __mnt_unmake_readonly_percpu(struct vfsmount *mnt)
{
	spin_lock(&vfsmount_lock);
	WRITE_ONCE(mnt->mnt_flags, mnt->mnt_flags & ~MNT_READONLY);
	spin_unlock(&vfsmount_lock);
}

static long mnt_writers_count(struct vfsmount *mnt)
{
	long count;

	lock_mnt_writers();
	count = atomic_read(&mnt->__mnt_writers);
	unlock_mnt_writers();
	return count;
}

/* __mntput(): fold any CPU's cached count back before the mount goes. */
static void free_vfsmnt(struct vfsmount *mnt)
{
	int cpu;

	for_each_possible_cpu(cpu) {
		struct mnt_writer *cpu_writer = &per_cpu(mnt_writers, cpu);

		if (cpu_writer->mnt != mnt)
			continue;
		spin_lock(&cpu_writer->lock);
		atomic_add(cpu_writer->count, &mnt->__mnt_writers);
		cpu_writer->count = 0;
		cpu_writer->mnt = NULL;
		spin_unlock(&cpu_writer->lock);
	}
	WARN_ON(atomic_read(&mnt->__mnt_writers));
	WARN_ON(atomic_read(&mnt->mnt_count) != 1);
	free(mnt);
}

const struct mnt_writers_ops mnt_writers_percpu = {
	.counts_writers = true,
	.era_2_6 = true,
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
