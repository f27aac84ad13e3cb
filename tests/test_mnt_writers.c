// SPDX-License-Identifier: GPL-2.0
/*
 * Validation of every mnt_writers variant: the EROFS and EBUSY rules,
 * counts that sum to zero however opens and closes spread over CPUs, the
 * underflow coalesced once, a mount switched away from left unwritten,
 * and the same rules while writers race mnt_make_readonly(), with no
 * EROFS while every remount fails; and what the posted designs do that
 * the merged ones do not (percpu_seed's drop, atomic's superblock count).
 */
#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../lib/sys/process.h"
#include "../lib/kernel/page_alloc.h"
#include "../lib/kernel/percpu.h"
#include "../models/mnt_writers/mnt_writers.h"
#include "../lib/kernel/lockstat.h"
#include "../models/mnt_writers/open_2_6.h"
/* after open_2_6.h: its mntget() and mntput() macros are not the ops' */
#include "../models/mnt_writers/vfsmount_2_6.h"
#include "helpers.h"

#define CPUS		8
#define MAX_WRITERS	3
#define IMBALANCE	((1 << 16) + 4096)	/* past the underflow limit */
#ifdef KSCALE_SANITIZE
#define MAKE_RO_TRIES	300	/* ThreadSanitizer serialises the race */
#else
#define MAKE_RO_TRIES	3000
#endif

static struct topology machine;

/* for_each_variant()'s variant i: its name is its table row's */
static const char *variant_name(int i)
{
	return mnt_writers_variants.rows[i].name;
}

static void boot(const struct mnt_writers_ops *ops)
{
	kscale_set_cpu(0);
	if (ops->init)
		ops->init();
}

static void test_read_only_mount_refuses_writers(void **state)
{
	const struct mnt_writers_ops *ops;
	struct vfsmount *mnt;
	int i;

	for_each_variant(ops, i, &mnt_writers_variants) {
		boot(ops);
		mnt = ops->alloc_vfsmnt("ro");
		assert_int_equal(ops->mnt_make_readonly(mnt), 0);
		assert_int_equal(ops->mnt_want_write(mnt), -EROFS);
		ops->mnt_make_readwrite(mnt);
		assert_int_equal(ops->mnt_want_write(mnt), 0);
		ops->mnt_drop_write(mnt);
		assert_int_equal(ops->mnt_writers(mnt), 0);
		ops->free_vfsmnt(mnt);
	}
	assert_int_equal(kscale_warnings(), 0);
}

/* A writer on any CPU keeps the mount writable; `none` cannot know. */
static void test_busy_mount_stays_writable(void **state)
{
	const struct mnt_writers_ops *ops;
	struct vfsmount *mnt;
	int i;

	for_each_variant(ops, i, &mnt_writers_variants) {
		boot(ops);
		mnt = ops->alloc_vfsmnt("busy");
		kscale_set_cpu(5);
		assert_int_equal(ops->mnt_want_write(mnt), 0);
		kscale_set_cpu(0);
		assert_int_equal(ops->mnt_make_readonly(mnt),
				 ops->counts_writers ? -EBUSY : 0);
		assert_int_equal(ops->mnt_writers(mnt),
				 ops->counts_writers ? 1 : 0);
		ops->mnt_make_readwrite(mnt);
		kscale_set_cpu(5);
		ops->mnt_drop_write(mnt);
		kscale_set_cpu(0);
		assert_int_equal(ops->mnt_make_readonly(mnt), 0);
		ops->mnt_make_readwrite(mnt);
		ops->free_vfsmnt(mnt);
	}
	assert_int_equal(kscale_warnings(), 0);
}

/*
 * Opens on one CPU, closes on another, alternating two mounts: the
 * per-CPU counts go far out of balance (percpu coalesces the underflow),
 * yet each mount's sum is exact and it can go read-only afterwards.
 */
static void test_imbalanced_counts_sum_to_zero(void **state)
{
	const struct mnt_writers_ops *ops;
	struct vfsmount *mnt[2];
	int i, n;

	for_each_variant(ops, i, &mnt_writers_variants) {
		boot(ops);
		mnt[0] = ops->alloc_vfsmnt("a");
		mnt[1] = ops->alloc_vfsmnt("b");
		kscale_set_cpu(1);
		for (n = 0; n < IMBALANCE; n++)
			assert_int_equal(ops->mnt_want_write(mnt[n & 1]), 0);
		assert_int_equal(ops->mnt_writers(mnt[0]),
				 ops->counts_writers ? IMBALANCE / 2 : 0);
		kscale_set_cpu(6);
		for (n = 0; n < IMBALANCE; n++)
			ops->mnt_drop_write(mnt[n & 1]);
		kscale_set_cpu(0);
		for (n = 0; n < 2; n++) {
			assert_int_equal(ops->mnt_writers(mnt[n]), 0);
			assert_int_equal(ops->mnt_make_readonly(mnt[n]), 0);
			ops->free_vfsmnt(mnt[n]);
		}
	}
	assert_int_equal(kscale_warnings(), 0);
}

/*
 * One mount: every open on CPU 1 stays in its per-CPU count, every close
 * on CPU 6 decrements the mount's atomic, which passes the underflow
 * limit once: percpu must coalesce exactly then, and the sum stays exact.
 */
static void test_underflow_is_coalesced_once(void **state)
{
	const struct mnt_writers_ops *ops;
	struct vfsmount *mnt;
	unsigned long before;
	int i, n;

	for_each_variant(ops, i, &mnt_writers_variants) {
		boot(ops);
		mnt = ops->alloc_vfsmnt("underflow");
		kscale_set_cpu(1);
		for (n = 0; n < IMBALANCE; n++)
			assert_int_equal(ops->mnt_want_write(mnt), 0);
		before = mnt_underflows_coalesced;
		kscale_set_cpu(6);
		for (n = 0; n < IMBALANCE; n++)
			ops->mnt_drop_write(mnt);
		assert_int_equal(mnt_underflows_coalesced - before,
				 strncmp(variant_name(i), "percpu", 6) ? 0 : 1);
		kscale_set_cpu(0);
		assert_int_equal(ops->mnt_writers(mnt), 0);
		assert_int_equal(ops->mnt_make_readonly(mnt), 0);
		ops->free_vfsmnt(mnt);
	}
	assert_int_equal(kscale_warnings(), 0);
}

/*
 * In a child, with both vfsmounts read-only pages: one CPU alternating
 * want/drop between them must not write either (2.6.26's
 * __clear_mnt_count() leaves a mount whose count is 0 alone).  `atomic`
 * writes the mount on this path, and so does percpu_seed, whose
 * __clear_mnt_count() adds the count to the old mount even when it is 0:
 * both must fault.
 */
static int alternate_on_protected_mounts(const struct mnt_writers_ops *ops)
{
	struct vfsmount *mnt[2];
	int n, status;
	pid_t pid;

	boot(ops);
	mnt_cache_page_per_object = true;
	mnt[0] = ops->alloc_vfsmnt("a");
	mnt[1] = ops->alloc_vfsmnt("b");
	mnt_cache_page_per_object = false;
	pid = fork();
	if (!pid) {
		/* cmocka's own handler would carry on with the next test */
		signal(SIGSEGV, SIG_DFL);
		if (mprotect(mnt[0], PAGE_SIZE, PROT_READ) ||
		    mprotect(mnt[1], PAGE_SIZE, PROT_READ))
			_exit(2);
		for (n = 0; n < 1000; n++) {
			if (ops->mnt_want_write(mnt[n & 1]))
				_exit(3);
			ops->mnt_drop_write(mnt[n & 1]);
		}
		_exit(0);
	}
	assert_true(waitpid(pid, &status, 0) == pid);
	ops->free_vfsmnt(mnt[0]);
	ops->free_vfsmnt(mnt[1]);
	return status;
}

static void test_switching_mounts_leaves_them_unwritten(void **state)
{
	const struct mnt_writers_ops *ops;
	int i, status;

	for_each_variant(ops, i, &mnt_writers_variants) {
		status = alternate_on_protected_mounts(ops);
		if (!strcmp(variant_name(i), "atomic") ||
		    !strcmp(variant_name(i), "percpu_seed")) {
			assert_true(WIFSIGNALED(status));
			assert_int_equal(WTERMSIG(status), SIGSEGV);
			continue;
		}
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail_msg("%s wrote a mount it only switched away from "
				 "(status %#x)", variant_name(i), status);
	}
	assert_int_equal(kscale_warnings(), 0);
}

/*
 * In a child, the mount's page inaccessible after mnt_want_write(): the
 * close on the same CPU.  2.6.26's mnt_drop_write() decrements the CPU's
 * count and leaves the mount alone; the posted one reads __mnt_writers in
 * handle_write_count_underflow() on every close, and must fault.
 */
static int close_on_protected_mount(const struct mnt_writers_ops *ops)
{
	struct vfsmount *mnt;
	int status;
	pid_t pid;

	boot(ops);
	mnt_cache_page_per_object = true;
	mnt = ops->alloc_vfsmnt("a");
	mnt_cache_page_per_object = false;
	pid = fork();
	if (!pid) {
		signal(SIGSEGV, SIG_DFL);
		if (ops->mnt_want_write(mnt))
			_exit(3);
		if (mprotect(mnt, PAGE_SIZE, PROT_NONE))
			_exit(2);
		ops->mnt_drop_write(mnt);
		_exit(0);
	}
	assert_true(waitpid(pid, &status, 0) == pid);
	ops->free_vfsmnt(mnt);
	return status;
}

static void test_posted_close_reads_the_mount(void **state)
{
	int status;

	status = close_on_protected_mount(&mnt_writers_percpu);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	status = close_on_protected_mount(&mnt_writers_percpu_seed);
	assert_true(WIFSIGNALED(status));
	assert_int_equal(WTERMSIG(status), SIGSEGV);
}

/*
 * One CPU opens on A, then on B, then closes A.  2.6.26 switches the
 * cached mount back to A before it decrements: B keeps its writer and
 * refuses to go read-only.  The posted drop decrements B's cached count
 * instead: B reads 0 writers while one holds it, so mnt_make_readonly(B)
 * succeeds under it, and A keeps a writer nobody holds.  The counts stay
 * exact in sum.
 */
static void test_posted_drop_decrements_the_cached_mount(void **state)
{
	const struct mnt_writers_ops *ops[] = {
		&mnt_writers_percpu, &mnt_writers_percpu_seed,
	};
	struct vfsmount *a, *b;
	int i;

	for (i = 0; i < 2; i++) {
		bool posted = ops[i]->posted_bug;

		boot(ops[i]);
		a = ops[i]->alloc_vfsmnt("a");
		b = ops[i]->alloc_vfsmnt("b");
		kscale_set_cpu(3);
		assert_int_equal(ops[i]->mnt_want_write(a), 0);
		assert_int_equal(ops[i]->mnt_want_write(b), 0);
		ops[i]->mnt_drop_write(a);
		assert_int_equal(ops[i]->mnt_writers(a), posted ? 1 : 0);
		assert_int_equal(ops[i]->mnt_writers(b), posted ? 0 : 1);
		assert_int_equal(ops[i]->mnt_make_readonly(b),
				 posted ? 0 : -EBUSY);
		ops[i]->mnt_make_readwrite(b);
		ops[i]->mnt_drop_write(b);
		assert_int_equal(ops[i]->mnt_writers(a) +
				 ops[i]->mnt_writers(b), 0);
		kscale_set_cpu(0);
		ops[i]->free_vfsmnt(a);
		ops[i]->free_vfsmnt(b);
	}
	assert_null(mnt_writers_percpu.posted_bug);
	assert_int_equal(kscale_warnings(), 0);
}

/*
 * The 2006 single atomic: a mount's first writer counts it into the
 * superblock's s_mnt_writers under s_mnt_writers_lock and its last counts
 * it out (atomic_dec_and_lock); writers in between only move the mount's
 * count.
 */
static void test_atomic_counts_mounts_with_writers(void **state)
{
	const struct mnt_writers_ops *ops = &mnt_writers_atomic;
	struct vfsmount *a, *b;

	boot(ops);
	a = ops->alloc_vfsmnt("a");
	b = ops->alloc_vfsmnt("b");
	assert_int_equal(mnt_atomic_sb_writers(), 0);
	assert_int_equal(ops->mnt_want_write(a), 0);
	assert_int_equal(mnt_atomic_sb_writers(), 1);
	assert_int_equal(ops->mnt_want_write(a), 0);
	assert_int_equal(ops->mnt_want_write(b), 0);
	assert_int_equal(mnt_atomic_sb_writers(), 2);
	ops->mnt_drop_write(a);
	assert_int_equal(mnt_atomic_sb_writers(), 2);
	ops->mnt_drop_write(a);
	assert_int_equal(mnt_atomic_sb_writers(), 1);
	assert_int_equal(ops->mnt_make_readonly(a), 0);
	assert_int_equal(ops->mnt_want_write(a), -EROFS);
	assert_int_equal(mnt_atomic_sb_writers(), 1);
	ops->mnt_drop_write(b);
	assert_int_equal(mnt_atomic_sb_writers(), 0);
	ops->mnt_make_readwrite(a);
	ops->free_vfsmnt(a);
	ops->free_vfsmnt(b);
	assert_int_equal(kscale_warnings(), 0);
}

/* The mount's references (2.6.2x designs; -1 for today's per-CPU count) */
static int mnt_refs(const struct mnt_writers_ops *ops, struct vfsmount *mnt)
{
	if (!ops->era_2_6)
		return -1;
	return atomic_read(&((struct vfsmount_2_6 *)mnt)->mnt_count);
}

/* The names openbench's paths may take (namei_2_6.h), as a number 0..7. */
static struct names_2_6 names_of(int n)
{
	return (struct names_2_6){ .abs_path = n & 1,
				   .dir_per_thread = n & 2,
				   .cross_mount = n & 4 };
}

/* Every dentry of a thread's walk, and their references, in order. */
static int walk_dentries(const struct walk_2_6 *w, struct dentry **d)
{
	int i, nr = 0;

	d[nr++] = w->start;
	for (i = 0; i < w->nr_dirs; i++)
		d[nr++] = w->dir[i];
	d[nr++] = w->file;
	return nr;
}

/*
 * The benchmark's open, write and close (open_2_6.h), in each form the
 * knobs give it: the open holds write access, a reference to the mount
 * and to the file's dentry (and nothing else the walk passed), and the
 * file on s_files, until the close drops them all; on a read-only mount
 * the open fails -EROFS and keeps nothing.  The walk's references
 * balance: every dentry and mount it passed is back where it was.
 */
static void test_open_write_close_leaves_no_writer(void **state)
{
	const struct mnt_writers_ops *ops;
	struct mnt_writers_path p;
	struct tree_2_6 *tree = mnt_cache_zalloc(sizeof(*tree));
	struct thread_tree_2_6 *own = mnt_cache_zalloc(sizeof(*own));
	struct walk_2_6 w = { 0 };
	struct names_2_6 names;
	struct dentry *d[WALK_MAX_DIRS + 2];
	int count[WALK_MAX_DIRS + 2];
	struct vfsmount *mnt;
	struct file f;
	int i, j, nr, form, refs;

	for_each_variant(ops, i, &mnt_writers_variants) {
		for (form = 0; form < 64; form++) {
			if (form >= 8 && !ops->era_2_6)
				break;
			kscale_set_cpu(0);
			mnt_writers_path_init(&p, ops, 0, form & 1, form & 2,
					      form & 4);
			mnt = ops->alloc_vfsmnt("path");
			names = names_of(form >> 3);
			nr = 0;
			if (p.path_2_6) {
				tree_2_6_init(tree, &names, &mnt, 1);
				walk_2_6_init(&w, tree, 0, own);
				nr = walk_dentries(&w, d);
				assert_int_equal(w.nr_dirs,
						 names.dir_per_thread +
						 (names.abs_path ||
						  names.cross_mount) -
						 (!names.abs_path &&
						  !names.cross_mount &&
						  names.dir_per_thread));
			}
			refs = mnt_refs(ops, mnt);
			for (j = 0; j < nr; j++)
				count[j] = atomic_read(&d[j]->d_count);
			file_init(&f, mnt);
			assert_int_equal(__dentry_open(&p, &w, &f), 0);
			vfs_write(&p, &f, "abc", 3);
			assert_memory_equal(f.data, "abc", 3);
			assert_int_equal(ops->mnt_writers(mnt),
					 ops->counts_writers);
			if (ops->counts_writers)
				assert_int_equal(ops->mnt_make_readonly(mnt),
						 -EBUSY);
			assert_int_equal(list_empty(&f.f_u.fu_list),
					 !p.path_2_6);
			if (ops->era_2_6)
				assert_int_equal(mnt_refs(ops, mnt), refs + 1);
			for (j = 0; j < nr; j++)
				assert_int_equal(atomic_read(&d[j]->d_count),
						 count[j] + (d[j] == w.file));
			assert_ptr_equal(f.f_dentry, p.path_2_6 ? w.file :
					 NULL);
			__fput(&p, &f);
			assert_int_equal(ops->mnt_writers(mnt), 0);
			assert_true(list_empty(&f.f_u.fu_list));
			assert_int_equal(mnt_refs(ops, mnt), refs);
			for (j = 0; j < nr; j++)
				assert_int_equal(atomic_read(&d[j]->d_count),
						 count[j]);
			assert_int_equal(ops->mnt_make_readonly(mnt), 0);
			assert_int_equal(__dentry_open(&p, &w, &f), -EROFS);
			assert_int_equal(ops->mnt_writers(mnt), 0);
			assert_true(list_empty(&f.f_u.fu_list));
			assert_int_equal(mnt_refs(ops, mnt), refs);
			for (j = 0; j < nr; j++)
				assert_int_equal(atomic_read(&d[j]->d_count),
						 count[j]);
			ops->mnt_make_readwrite(mnt);
			if (p.path_2_6)
				assert_int_equal(tree_2_6_exit(tree), 0);
			ops->free_vfsmnt(mnt);
		}
	}
	free(own);
	free(tree);
	assert_int_equal(kscale_warnings(), 0);
}

/*
 * 2.6.22's walk, reference by reference, on the lines other openers
 * share: link_path_walk() takes a second reference on its start (mount
 * and dentry) and drops it; crossing a mount point takes vfsmount_lock
 * once and leaves the root mount as it was.  Counted with lockstat.
 */
static void test_walk_takes_its_references_twice(void **state)
{
	const struct mnt_writers_ops *ops = &mnt_writers_none;
	struct tree_2_6 *tree = mnt_cache_zalloc(sizeof(*tree));
	struct thread_tree_2_6 *own = mnt_cache_zalloc(sizeof(*own));
	struct mnt_writers_path p;
	struct walk_2_6 w;
	struct names_2_6 names;
	struct lockstat_acc acc[LOCKSTAT_MAX_CLASSES];
	struct vfsmount *mnt;
	struct file f;
	int form, c;
	/* visits an open and close make, per class: see namei_2_6.h */
	struct {
		const char *class;
		int visits[8];	/* names_of(n) */
	} want[] = {
		/* relative: the cwd's mount; absolute: the mount as "/" */
		{ "vfsmount",	   { 4, 4, 4, 4, 2, 2, 2, 2 } },
		/* across: the root mount, taken twice and dropped twice */
		{ "rootmnt",	   { 0, 0, 0, 0, 4, 4, 4, 4 } },
		{ "vfsmount_lock", { 0, 0, 0, 0, 1, 1, 1, 1 } },
		/*
		 * shared dentries: the start 4 (do_path_lookup's, the save),
		 * a directory 2 (__d_lookup, path_to_nameidata), a mount
		 * point 2, and the mount's root after it 2 (dget, dput)
		 */
		{ "dentry",	   { 4, 6, 0, 6, 8, 8, 8, 8 } },
		{ "i_mutex",	   { 0, 0, 0, 0, 0, 0, 0, 0 } },
	};

	lockstat_enable(true);
	for (form = 0; form < 8; form++) {
		lockstat_reset();
		kscale_set_cpu(0);
		mnt_writers_path_init(&p, ops, 0, true, false, false);
		mnt = ops->alloc_vfsmnt("walk");
		names = names_of(form);
		tree_2_6_init(tree, &names, &mnt, 1);
		walk_2_6_init(&w, tree, 0, own);
		assert_int_equal(lockstat_threads_init(1), 0);
		lockstat_thread_attach(0);
		file_init(&f, mnt);
		assert_int_equal(__dentry_open(&p, &w, &f), 0);
		__fput(&p, &f);
		lockstat_sum(acc);
		lockstat_thread_detach();
		for (c = 0; c < lockstat_nr_classes(); c++) {
			const char *name = lockstat_class(c)->name;
			size_t k;

			for (k = 0; k < sizeof(want) / sizeof(want[0]); k++)
				if (!strcmp(want[k].class, name))
					break;
			if (k == sizeof(want) / sizeof(want[0]))
				continue;
			if ((int)acc[c].visits != want[k].visits[form])
				fail_msg("form %d: %s %d visits, want %d",
					 form, name, (int)acc[c].visits,
					 want[k].visits[form]);
		}
		assert_int_equal(tree_2_6_exit(tree), 0);
		ops->free_vfsmnt(mnt);
	}
	lockstat_enable(false);
	lockstat_reset();
	free(own);
	free(tree);
	assert_int_equal(kscale_warnings(), 0);
}

struct create_check {
	struct mnt_writers_path p;
	struct walk_2_6 w;
	struct file f;
	struct dentry *parent;
	int held;		/* the checker holds the file's d_lock */
	int done;		/* the open returned */
	int locked_at_lookup;	/* i_mutex held when the lookup came */
	int lookups;		/* the lookup waited on d_lock */
};

/* A ticket lock with a waiter behind its holder. */
static bool ticket_contended(spinlock_t *lock)
{
	uint32_t v = READ_ONCE(lock->head_tail);

	return (uint16_t)((v >> TICKET_SHIFT) - (uint16_t)v) >= 2;
}

static void create_check_task(struct test_thread *t)
{
	struct create_check *c = t->arg;
	struct dentry *file = c->w.file;

	if (t->id == 0) {
		while (!__atomic_load_n(&c->held, __ATOMIC_ACQUIRE))
			cpu_relax();
		if (__dentry_open(&c->p, &c->w, &c->f) == 0)
			__fput(&c->p, &c->f);
		__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
		return;
	}
	spin_lock(&file->d_lock);
	__atomic_store_n(&c->held, 1, __ATOMIC_RELEASE);
	while (!ticket_contended(&file->d_lock) &&
	       !__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
		cpu_relax();
	if (ticket_contended(&file->d_lock)) {
		c->lookups++;
		c->locked_at_lookup =
			atomic_read(&c->parent->d_inode->i_mutex.count) != 1;
	}
	spin_unlock(&file->d_lock);
}

/*
 * An O_CREAT open looks its file up (__d_lookup(), under the file's
 * d_lock) while it holds the parent's i_mutex, the file existing: the
 * checker holds the d_lock until the opener waits on it, and looks at
 * the mutex then.  Without O_CREAT no i_mutex is taken.
 */
static void test_creat_looks_up_under_parent_i_mutex(void **state)
{
	const struct mnt_writers_ops *ops = &mnt_writers_percpu;
	struct tree_2_6 *tree = mnt_cache_zalloc(sizeof(*tree));
	struct thread_tree_2_6 *own = mnt_cache_zalloc(sizeof(*own));
	struct create_check *c = mnt_cache_zalloc(sizeof(*c));
	struct vfsmount *mnt;
	struct names_2_6 names;
	enum spin_lock_kind kind;
	int form, creat;

	if (test_task_cpus() < 2) {
		skip();
		return;
	}
	kind = spin_lock_init_kind;
	spin_lock_init_kind = SPIN_TICKET;
	for (form = 0; form < 16; form++) {
		creat = form & 1;
		memset(c, 0, sizeof(*c));
		kscale_set_cpu(0);
		mnt_writers_path_init(&c->p, ops, 0, true, false, creat);
		mnt = ops->alloc_vfsmnt("creat");
		names = names_of(form >> 1);
		tree_2_6_init(tree, &names, &mnt, 1);
		walk_2_6_init(&c->w, tree, 0, own);
		/* the file's directory: a mount point's is the mount's root */
		c->parent = c->w.nr_dirs ? c->w.dir[c->w.nr_dirs - 1] :
			    c->w.start;
		if (c->parent->d_mounted)
			c->parent = ((struct vfsmount_2_6 *)mnt)->mnt_root;
		file_init(&c->f, mnt);
		test_race_tasks(2, 2, create_check_task, c);
		assert_int_equal(c->lookups, 1);
		if (c->locked_at_lookup != creat)
			fail_msg("form %d: the file looked up with its "
				 "parent's i_mutex %s", form,
				 creat ? "free" : "held");
		assert_int_equal(
			atomic_read(&c->parent->d_inode->i_mutex.count), 1);
		assert_int_equal(tree_2_6_exit(tree), 0);
		assert_int_equal(ops->mnt_writers(mnt), 0);
		ops->free_vfsmnt(mnt);
	}
	spin_lock_init_kind = kind;
	free(c);
	free(own);
	free(tree);
	assert_int_equal(kscale_warnings(), 0);
}

struct race {
	const struct mnt_writers_ops *ops;
	int writers;
	struct vfsmount *mnt;
	int done;
	int inside;		/* writers between want and drop */
	int read_only;		/* the checker holds the mount r/o */
	int violations;		/* a writer inside while r/o */
	int unexpected;		/* want_write errors other than EROFS */
	int became_ro;
	int busy;
	int erofs;
};

static void writer(struct race *r)
{
	int ret;

	while (!__atomic_load_n(&r->done, __ATOMIC_ACQUIRE)) {
		ret = r->ops->mnt_want_write(r->mnt);
		if (ret) {
			if (ret != -EROFS)
				test_note(&r->unexpected);
			test_note(&r->erofs);
			continue;
		}
		__atomic_fetch_add(&r->inside, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&r->read_only, __ATOMIC_SEQ_CST))
			test_note(&r->violations);
		__atomic_fetch_sub(&r->inside, 1, __ATOMIC_SEQ_CST);
		r->ops->mnt_drop_write(r->mnt);
	}
}

/* While mnt_make_readonly() holds, no writer may be inside. */
static void checker(struct race *r)
{
	int n, ret;

	for (n = 0; n < MAKE_RO_TRIES; n++) {
		ret = r->ops->mnt_make_readonly(r->mnt);
		if (ret) {
			r->busy += ret == -EBUSY;
			r->unexpected += ret != -EBUSY;
			continue;
		}
		r->became_ro++;
		__atomic_store_n(&r->read_only, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&r->inside, __ATOMIC_SEQ_CST))
			test_note(&r->violations);
		__atomic_store_n(&r->read_only, 0, __ATOMIC_SEQ_CST);
		r->ops->mnt_make_readwrite(r->mnt);
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
}

static void race_thread(struct test_thread *t)
{
	struct race *r = t->arg;

	if (t->id == r->writers)
		checker(t->arg);
	else
		writer(t->arg);
}

/*
 * With busy false, remounts race the writers: no writer inside while the
 * mount is read-only.  With busy, a writer that never leaves keeps every
 * remount failing: then no other writer may see EROFS (none did in 2.6.26
 * nor does today; a design that sets MNT_READONLY before it counts would).
 */
static void race_make_readonly(bool busy)
{
	const struct mnt_writers_ops *ops;
	struct race *r = malloc(sizeof(*r));
	int i;

	for_each_variant(ops, i, &mnt_writers_variants) {
		if (!ops->counts_writers)
			continue;
		boot(ops);
		memset(r, 0, sizeof(*r));
		r->ops = ops;
		r->writers = test_racers(MAX_WRITERS + 1) - 1;
		r->mnt = ops->alloc_vfsmnt("race");
		if (busy)
			assert_int_equal(ops->mnt_want_write(r->mnt), 0);
		test_race(r->writers + 1, race_thread, r);
		assert_int_equal(r->violations, 0);
		assert_int_equal(r->unexpected, 0);
		assert_int_equal(r->became_ro + r->busy, MAKE_RO_TRIES);
		if (busy) {
			if (r->erofs)
				fail_msg("%s: %d EROFS while every remount "
					 "failed", variant_name(i), r->erofs);
			assert_int_equal(r->busy, MAKE_RO_TRIES);
			ops->mnt_drop_write(r->mnt);
		}
		assert_int_equal(ops->mnt_writers(r->mnt), 0);
		ops->free_vfsmnt(r->mnt);
	}
	free(r);
	assert_int_equal(kscale_warnings(), 0);
}

static void test_make_readonly_races_writers(void **state)
{
	race_make_readonly(false);
}

static void test_failed_remount_never_refuses_writers(void **state)
{
	race_make_readonly(true);
}

/*
 * The same rules on the running kernel (the `real` variant's): a bind
 * mount cannot go read-only while a file on it is open for write, can
 * once it is closed, and then refuses opens for write.  Needs root, in a
 * private mount namespace so nothing leaks to the host.
 */
static void test_real_bind_mount_rules(void **state)
{
	char dir[] = "/tmp/kscale-bind.XXXXXX", path[64];
	unsigned long remount_ro = MS_REMOUNT | MS_BIND | MS_RDONLY;
	int fd;

	if (geteuid() || unshare(CLONE_NEWNS) ||
	    mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL)) {
		skip();
		return;
	}
	assert_non_null(mkdtemp(dir));
	if (mount("kscale", dir, "tmpfs", 0, NULL) ||
	    mount(dir, dir, NULL, MS_BIND, NULL)) {
		rmdir(dir);
		skip();
		return;
	}
	snprintf(path, sizeof(path), "%s/file", dir);
	fd = open(path, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	assert_int_equal(mount(NULL, dir, NULL, remount_ro, NULL), -1);
	assert_int_equal(errno, EBUSY);
	close(fd);
	assert_int_equal(mount(NULL, dir, NULL, remount_ro, NULL), 0);
	assert_int_equal(open(path, O_WRONLY), -1);
	assert_int_equal(errno, EROFS);
	umount2(dir, MNT_DETACH);
	umount2(dir, MNT_DETACH);
	rmdir(dir);
}

struct as_process {
	int fd;
	int ret;
};

static void *open_as_process(void *arg)
{
	struct as_process *p = arg;

	p->ret = thread_as_process();
	p->fd = open("/dev/null", O_RDONLY);
	return NULL;
}

/* The `real` variant's threads: an fd one opens is not another's. */
static void test_real_threads_have_private_file_tables(void **state)
{
	struct as_process *p = calloc(1, sizeof(*p));
	pthread_t th;

	assert_int_equal(pthread_create(&th, NULL, open_as_process, p), 0);
	pthread_join(th, NULL);
	assert_int_equal(p->ret, 0);
	assert_true(p->fd >= 0);
	assert_int_equal(fcntl(p->fd, F_GETFD), -1);
	assert_int_equal(errno, EBADF);
	free(p);
}

static int setup(void **state)
{
	test_machine(&machine, CPUS, 2);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_read_only_mount_refuses_writers),
		cmocka_unit_test(test_busy_mount_stays_writable),
		cmocka_unit_test(test_imbalanced_counts_sum_to_zero),
		cmocka_unit_test(test_underflow_is_coalesced_once),
		cmocka_unit_test(test_switching_mounts_leaves_them_unwritten),
		cmocka_unit_test(test_posted_close_reads_the_mount),
		cmocka_unit_test(test_posted_drop_decrements_the_cached_mount),
		cmocka_unit_test(test_atomic_counts_mounts_with_writers),
		cmocka_unit_test(test_open_write_close_leaves_no_writer),
		cmocka_unit_test(test_walk_takes_its_references_twice),
		cmocka_unit_test(test_creat_looks_up_under_parent_i_mutex),
		cmocka_unit_test(test_make_readonly_races_writers),
		cmocka_unit_test(test_failed_remount_never_refuses_writers),
		cmocka_unit_test(test_real_bind_mount_rules),
		cmocka_unit_test(test_real_threads_have_private_file_tables),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
