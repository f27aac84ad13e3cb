// SPDX-License-Identifier: GPL-2.0
/*
 * The r/o bind mount writer counts under torture: tasks open files for
 * write on one or two mounts (mntget, mnt_want_write) and close them
 * (mnt_drop_write, mntput) after a delay, a sleep or a migration, so that
 * counts taken on one CPU or node are dropped on another, while read-only
 * remounts (mnt_make_readonly, mnt_make_readwrite) race them, serialised
 * per mount as do_remount()'s s_umount serialises them.
 *
 * Invariants: no task holds write access while a mount is read-only by a
 * completed mnt_make_readonly() (so it fails -EBUSY with writers held), and
 * it fails -EBUSY only with a writer in mnt_want_write()..mnt_drop_write();
 * mnt_want_write() fails -EROFS only if the mount was read-only at some
 * point of the call, and succeeds never when it was so throughout; at
 * quiet points the writer counts are zero, and the references (2.6) one.
 * Every fourth quiet point frees and reallocates the mounts, so that
 * free_vfsmnt()'s checks run; a WARN_ON anywhere fails.  `none` counts no
 * writers: its r/o remounts over held writers (the gap the series closed)
 * are counted, not failed.  percpu_seed's posted mnt_drop_write() must be
 * caught: opening on two mounts and closing the first leaves the second
 * held with a count of 0.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/kernel/delay.h"
#include "../lib/kernel/mutex.h"
#include "../lib/kernel/percpu.h"
#include "../lib/kernel/sched.h"
#include "../models/mnt_writers/mnt_writers.h"
#include "../models/mnt_writers/vfsmount_2_6.h"
#include "torture.h"

/* Only the ops' mntget and mntput are called here. */
#undef mntget
#undef mntput

#define NR_MOUNTS	2
#define REMOUNT_ONE_IN	16

/* A mount's read-only state as the remounters made it: a word, read at once. */
enum { RO_RW, RO_TRYING, RO_RO, RO_LEAVING };
#define RO_STATE(w)	((w) & 3)
#define RO_TRIES(w)	(((w) >> 2) & 0x3fffffff)	/* mnt_make_readonly() calls */
#define RO_SUCC(w)	((w) >> 32)			/* ... that succeeded */
#define RO_TRY		(1ULL << 2)
#define RO_SUCC_ONE	(1ULL << 32)

struct mw_mount {
	struct vfsmount *mnt;
	struct mutex s_umount;		/* the remounters' */
	uint64_t ro;
	long holders;			/* want_write returned 0, not dropped */
	unsigned long enters, exits;	/* into mnt_want_write(), out of it all */
	unsigned long erofs_try;	/* the try some EROFS can only blame */
} ____cacheline_aligned;

enum { REMOUNTS, EBUSY_, EROFS_, MOVED, OVER_RO, NR_STATS };

static struct {
	const struct mnt_writers_ops *ops;
	bool era_2_6;			/* a struct vfsmount_2_6: its mnt_count */
	struct mw_mount m[NR_MOUNTS];
	unsigned long n[NR_STATS];	/* for stats() */
	unsigned long warnings, nr_quiet;
} mw;

/* The bookkeeping is sequentially consistent: each side sees the other's. */
#define LOAD(x)		__atomic_load_n(&(x), __ATOMIC_SEQ_CST)
#define STORE(x, v)	__atomic_store_n(&(x), (v), __ATOMIC_SEQ_CST)
#define ADD(x, v)	__atomic_fetch_add(&(x), (v), __ATOMIC_SEQ_CST)
#define COUNT(stat)	__atomic_fetch_add(&mw.n[stat], 1, __ATOMIC_RELAXED)

static void mw_mounts(bool free, bool alloc)
{
	int i;

	for (i = 0; i < NR_MOUNTS; i++) {
		if (free)
			mw.ops->free_vfsmnt(mw.m[i].mnt);
		if (alloc)
			mw.m[i].mnt = mw.ops->alloc_vfsmnt("torture");
		STORE(mw.m[i].ro, mw.m[i].ro - RO_STATE(mw.m[i].ro));
	}
}

/* A WARN_ON() in the model, e.g. free_vfsmnt()'s, fails. */
static void mw_check_warnings(void)
{
	unsigned long warnings = kscale_warnings();

	if (warnings != mw.warnings)
		torture_fail("%lu WARN_ON()s", warnings - mw.warnings);
	mw.warnings = warnings;
}

static int mw_init(const void *variant, int nr_tasks)
{
	int i;

	memset(&mw, 0, sizeof(mw));
	mw.ops = variant;
	mw.era_2_6 = mw.ops->era_2_6;
	if (mw.ops->init)
		mw.ops->init();
	for (i = 0; i < NR_MOUNTS; i++)
		mutex_init(&mw.m[i].s_umount);
	mw_mounts(false, true);
	mw.warnings = kscale_warnings();
	return 0;
}

static void mw_check_refs(struct mw_mount *m, int min, int max)
{
	int count;

	if (!mw.era_2_6)
		return;
	count = atomic_read(&((struct vfsmount_2_6 *)m->mnt)->mnt_count);
	if (count < min || count > max)
		torture_fail("mount %d: mnt_count %d, expected %d..%d",
			     (int)(m - mw.m), count, min, max);
}

static void mw_remount(struct torture_task *t, struct mw_mount *m)
{
	bool counts = mw.ops->counts_writers;
	unsigned long exits;
	uint64_t w;
	long held;
	int ret;

	mutex_lock(&m->s_umount);
	w = LOAD(m->ro);
	if (RO_STATE(w) == RO_RO) {
		held = LOAD(m->holders);
		if (counts && held)
			torture_fail("%ld writers hold a read-only mount", held);
		STORE(m->ro, w - RO_RO + RO_LEAVING);
		mw.ops->mnt_make_readwrite(m->mnt);
		STORE(m->ro, w - RO_RO + RO_RW);
		goto out;
	}
	exits = LOAD(m->exits);
	w += RO_TRY;
	STORE(m->ro, w + RO_TRYING);
	ret = mw.ops->mnt_make_readonly(m->mnt);
	if (!ret) {
		STORE(m->ro, w + RO_SUCC_ONE + RO_RO);
		held = LOAD(m->holders);
		if (counts && held)
			torture_fail("mnt_make_readonly() succeeded with %ld "
				     "writers holding", held);
		COUNT(REMOUNTS);
		goto out;
	}
	STORE(m->ro, w);
	if (ret != -EBUSY || !counts) {
		torture_fail("mnt_make_readonly() returned %d", ret);
	} else {
		COUNT(EBUSY_);
		if (LOAD(m->enters) == exits)
			torture_fail("mnt_make_readonly() returned -EBUSY with "
				     "no writer about");
		if (LOAD(m->erofs_try) == RO_TRIES(w))
			torture_fail("-EROFS during a mnt_make_readonly() that "
				     "failed");
	}
out:
	mutex_unlock(&m->s_umount);
}

/* Failed -EROFS between two looks at the state, w1 and w2. */
static void mw_check_erofs(struct torture_task *t, struct mw_mount *m,
			   uint64_t w1, uint64_t w2)
{
	if (RO_STATE(w1) >= RO_RO || RO_STATE(w2) >= RO_RO ||
	    RO_SUCC(w1) != RO_SUCC(w2))
		return;
	/* a try in progress may yet succeed: its remounter judges */
	if (RO_STATE(w2) == RO_TRYING)
		STORE(m->erofs_try, RO_TRIES(w2));
	else
		torture_fail("task %d: -EROFS from a read-write mount", t->id);
}

/* Holding write access: the mount must not be read-only. */
static bool mw_check_held(struct torture_task *t, struct mw_mount *m)
{
	if (RO_STATE(LOAD(m->ro)) != RO_RO)
		return false;
	if (mw.ops->counts_writers)
		torture_fail("task %d holds write access to a mount "
			     "mnt_make_readonly() made read-only", t->id);
	return true;
}

struct mw_file {
	struct mw_mount *m;
	int cpu;		/* opened on */
	bool over_ro;
};

/* The path walk's mntget() and __dentry_open()'s mnt_want_write(). */
static bool mw_open(struct torture_task *t, struct mw_file *f)
{
	struct mw_mount *m = f->m;
	uint64_t w1, w2;
	int ret;

	mw.ops->mntget(m->mnt);
	mw_check_refs(m, 2, torture_nr_tasks * 2 + 1);
	ADD(m->enters, 1);
	w1 = LOAD(m->ro);
	ret = mw.ops->mnt_want_write(m->mnt);
	w2 = LOAD(m->ro);
	if (ret) {
		if (ret == -EROFS)
			mw_check_erofs(t, m, w1, w2);
		else
			torture_fail("mnt_want_write() returned %d", ret);
		COUNT(EROFS_);
		ADD(m->exits, 1);
		mw.ops->mntput(m->mnt);
		return false;
	}
	if (w1 == w2 && RO_STATE(w1) == RO_RO)
		torture_fail("task %d: mnt_want_write() succeeded on a "
			     "read-only mount", t->id);
	ADD(m->holders, 1);
	f->over_ro = mw_check_held(t, m);
	f->cpu = smp_processor_id();
	return true;
}

/* __fput(): mnt_drop_write(), then mntput(). */
static void mw_close(struct torture_task *t, struct mw_file *f)
{
	struct mw_mount *m = f->m;

	if (mw_check_held(t, m) || f->over_ro)
		COUNT(OVER_RO);
	ADD(m->holders, -1);
	mw.ops->mnt_drop_write(m->mnt);
	ADD(m->exits, 1);
	mw.ops->mntput(m->mnt);
	if (smp_processor_id() != f->cpu)
		COUNT(MOVED);
}

/* A file held open for write: a write, a sleep, or a move to another CPU. */
static void mw_hold(void)
{
	uint32_t r = torture_random() % 16;

	if (r < 4)
		torture_migrate();
	else if (r == 4)
		yield();
	else if (r == 5)
		schedule_timeout_ns(torture_random() % 100000);
	else
		ndelay(torture_random() % 2000);
}

static void mw_op(struct torture_task *t)
{
	struct mw_file f[2];
	int i, nr = 1 + torture_random() % 2;
	bool open[2];

	if (torture_random() % REMOUNT_ONE_IN == 0) {
		mw_remount(t, &mw.m[torture_random() % NR_MOUNTS]);
		return;
	}
	for (i = 0; i < nr; i++) {
		f[i].m = &mw.m[torture_random() % NR_MOUNTS];
		open[i] = mw_open(t, &f[i]);
	}
	mw_hold();
	for (i = 0; i < nr; i++)
		if (open[i])
			mw_close(t, &f[i]);
}

static void mw_quiet(void)
{
	long writers;
	int i;

	for (i = 0; i < NR_MOUNTS; i++) {
		struct mw_mount *m = &mw.m[i];

		writers = mw.ops->mnt_writers(m->mnt);
		if (writers)
			torture_fail("mount %d: %ld writers at a quiet point",
				     i, writers);
		if (m->holders || m->enters != m->exits)
			torture_fail("mount %d: the tasks hold %ld", i,
				     m->holders);
		mw_check_refs(m, 1, 1);
	}
	if (++mw.nr_quiet % 4 == 0)
		mw_mounts(true, true);
	mw_check_warnings();
}

static void mw_stats(char *buf, size_t len)
{
	unsigned long *n = mw.n;
	int l;

	l = snprintf(buf, len, "Remounts: %lu EBUSY: %lu EROFS: %lu "
		     "Moved closes: %lu", n[REMOUNTS], n[EBUSY_], n[EROFS_],
		     n[MOVED]);
	if (!mw.ops->counts_writers && l >= 0 && (size_t)l < len)
		snprintf(buf + l, len - l, " Held over r/o: %lu", n[OVER_RO]);
}

static void mw_cleanup(void)
{
	mw_mounts(true, false);
	mw_check_warnings();
}

static const char *mw_posted_bug(const void *variant)
{
	const struct mnt_writers_ops *ops = variant;

	return ops->posted_bug;
}

static const struct torture_model mnt_writers_torture = {
	.name		= "mnt_writers",
	.variants	= &mnt_writers_variants,
	.init		= mw_init,
	.op		= mw_op,
	.quiet		= mw_quiet,
	.stats		= mw_stats,
	.cleanup	= mw_cleanup,
	.posted_bug	= mw_posted_bug,
};
torture_model_register(mnt_writers_torture);
