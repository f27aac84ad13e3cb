// SPDX-License-Identifier: GPL-2.0
/*
 * Validation of every shmem_fault variant: pages read back as zero, the
 * block books balance at every quiet point and return to the start,
 * i_blocks counts the pages held, ENOSPC comes exactly at the limit, and
 * threads racing on one index end up sharing one page.  page_fault1's
 * anonymous path: each page faulted once, every page back after munmap.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../lib/kernel/lockstat.h"
#include "../lib/kernel/percpu.h"
#include "../models/shmem_fault/anon.h"
#include "../models/shmem_fault/mm_2_6_7.h"
#include "../models/shmem_fault/mm_upstream.h"
#include "../models/shmem_fault/shmem_fault.h"
#include "helpers.h"

#define PAGES		600	/* past SHMEM_NR_DIRECT and one index page */
#define MAX_RACERS	4
#ifdef KSCALE_SANITIZE
#define PASSES		3	/* ThreadSanitizer serialises the race */
#define WINDOWS		4
#else
#define PASSES		20
#define WINDOWS		800	/* free_path_racer: 6 in 6 caught a dropped lock */
#endif

static struct topology machine;

static bool page_is_zero(struct page *page)
{
	const unsigned long *p = page_address(page);
	size_t i;

	for (i = 0; i < MM_PAGE_SIZE / sizeof(*p); i++)
		if (p[i])
			return false;
	return true;
}

/* The books of one object at a quiet point. */
static void assert_books(const struct shmem_fault_ops *ops, struct file *f)
{
	struct shmem_stats st;
	unsigned long held;

	ops->shmem_stats(f, &st);
	held = st.nrpages + st.index_pages;
	assert_int_equal(st.i_blocks, st.inode_books ?
			 BLOCKS_PER_PAGE * held : 0);
	if (st.has_sbinfo)
		assert_int_equal(st.free_blocks + held, st.max_blocks);
}

static void assert_sb_balanced(const struct shmem_fault_ops *ops)
{
	struct shmem_stats st;

	assert_true(shmem_books_balance(ops, &st));
}

/*
 * Fault [start, end): a new page reads back as zero and is then marked
 * with its index; a page already there still carries its mark.
 */
static void fault_range(const struct shmem_fault_ops *ops, struct file *f,
			unsigned long start, unsigned long end, bool fresh)
{
	struct page *page;
	unsigned long idx, *mark;

	for (idx = start; idx < end; idx++) {
		assert_int_equal(ops->shmem_fault(f, idx, &page), 0);
		mark = (unsigned long *)page_address(page) + 511;
		if (fresh) {
			assert_true(page_is_zero(page));
			*mark = idx + 1;
		} else {
			assert_int_equal(*mark, idx + 1);
		}
	}
}

/* Before a row's ops are called alone: its kernel's locks. */
static void row_locks(const struct shmem_fault_ops *ops)
{
	const struct kscale_variant *v;

	for_each_variant_row(v, &shmem_fault_variants)
		if (v->ops == ops)
			kscale_variant_locks(v);
}

static void test_pages_read_back_zero_and_books_balance(void **state)
{
	const struct shmem_fault_ops *ops;
	struct file *f;
	int i, pass;

	for_each_variant(ops, i, &shmem_fault_variants) {
		ops->shm_mount(0);
		/* the second pass gets the first one's dirty pages back */
		for (pass = 0; pass < 2; pass++) {
			f = ops->shmem_zero_setup(PAGES);
			fault_range(ops, f, 0, PAGES, true);
			assert_books(ops, f);
			ops->shmem_release(f, 100, 300);
			assert_books(ops, f);
			fault_range(ops, f, 0, 100, false);
			fault_range(ops, f, 100, 300, true);
			fault_range(ops, f, 300, PAGES, false);
			assert_books(ops, f);
			ops->fput(f);
			assert_sb_balanced(ops);
		}
	}
	assert_int_equal(kscale_warnings(), 0);
}

/*
 * ia64's 16 KiB pages: a fault clears all 16 KiB of a page dirtied to
 * its last word, a page is 32 blocks, and one index page maps 2048
 * entries: 600 pages take i_indirect and one leaf, where 4 KiB pages
 * (512 entries) take two leaves.
 */
static void test_page_size_16k(void **state)
{
	const struct shmem_fault_ops *ops = &shmem_fault_stat_lock;
	unsigned int shift;
	struct shmem_stats st;
	struct page *page;
	struct file *f;
	unsigned long idx;

	row_locks(ops);
	for (shift = 14; shift >= 12; shift -= 2) {
		shmem_fault_page_shift(shift);
		ops->shm_mount(0);
		f = ops->shmem_zero_setup(PAGES);
		for (idx = 0; idx < PAGES; idx++) {
			assert_int_equal(ops->shmem_fault(f, idx, &page), 0);
			((char *)page_address(page))[MM_PAGE_SIZE - 1] = 1;
		}
		ops->shmem_stats(f, &st);
		assert_int_equal(st.index_pages, shift == 14 ? 2 : 3);
		assert_int_equal(st.i_blocks, (PAGES + st.index_pages) *
				 (shift == 14 ? 32 : 8));
		ops->shmem_release(f, 0, PAGES);
		fault_range(ops, f, 0, PAGES, true);
		ops->fput(f);
		assert_sb_balanced(ops);
	}
	assert_int_equal(kscale_warnings(), 0);
}

/* Faults that succeed before the first error, on a limited mount. */
static unsigned long faults_until_error(const struct shmem_fault_ops *ops,
					unsigned long limit,
					unsigned long pages, int *err)
{
	struct page *page;
	struct file *f;
	unsigned long idx;

	ops->shm_mount(limit);
	f = ops->shmem_zero_setup(pages);
	*err = 0;
	for (idx = 0; idx < pages && !*err; idx++)
		*err = ops->shmem_fault(f, idx, &page);
	assert_books(ops, f);
	ops->fput(f);
	assert_sb_balanced(ops);
	return idx - (*err != 0);
}

static void test_enospc_exactly_at_the_limit(void **state)
{
	const struct shmem_fault_ops *ops;
	unsigned long got;
	int i, err;

	for_each_variant(ops, i, &shmem_fault_variants) {
		bool limited = ops == &shmem_fault_stat_lock;

		got = faults_until_error(ops, 10, 16, &err);
		assert_int_equal(got, limited ? 10 : 16);
		assert_int_equal(err, limited ? -ENOSPC : 0);
		/*
		 * 20 blocks: 16 direct pages, then index 16 takes the
		 * i_indirect page and a leaf (2 blocks) and its data page;
		 * index 17 takes the last block; index 18 finds none.
		 */
		got = faults_until_error(ops, 20, 32, &err);
		assert_int_equal(got, limited ? 18 : 32);
		assert_int_equal(err, limited ? -ENOSPC : 0);
	}
}

/*
 * The workload's mm (fault.c): handle_mm_fault() leaves the task's write
 * on the new page, so that a second fault at an index finds the page
 * written (FAULT_NOT_CLEARED), until the range is given back; past the
 * mount's last block the fault is the task's SIGBUS (-ENOSPC), where the
 * mount keeps books.  The books show an object's pages only there too,
 * and shmem_fault_pass() stops at the same fault.
 */
static void test_fault_path_sigbus_at_the_limit(void **state)
{
	const struct shmem_fault_ops *ops;
	struct shmem_stats st;
	unsigned long idx;
	struct file *f;
	int i;

	for_each_variant(ops, i, &shmem_fault_variants) {
		bool limited = ops == &shmem_fault_stat_lock;

		ops->shm_mount(10);
		f = ops->shmem_zero_setup(16);
		for (idx = 0; idx < 16; idx++)
			assert_int_equal(handle_mm_fault(ops, f, idx, 0),
					 limited && idx >= 10 ? -ENOSPC : 0);
		assert_int_equal(shmem_books_balance(ops, &st), !limited);
		assert_int_equal(handle_mm_fault(ops, f, 3, 0),
				 FAULT_NOT_CLEARED);
		ops->shmem_release(f, 0, 16);
		assert_int_equal(handle_mm_fault(ops, f, 3, 100), 0);
		ops->fput(f);
		assert_sb_balanced(ops);
		assert_int_equal(shmem_fault_pass(ops, 16),
				 limited ? -ENOSPC : 16);
		assert_sb_balanced(ops);
	}
	assert_int_equal(kscale_warnings(), 0);
}

struct race {
	const struct shmem_fault_ops *ops;
	struct file *file;
	struct page *got[MAX_RACERS][PAGES];
	int errors;
	int dirty;
};

/* Everyone faults every index, each thread in its own order. */
static void same_index_racer(struct test_thread *t)
{
	struct race *r = t->arg;
	unsigned long n, idx;

	/* coprime with PAGES: a permutation of the indexes */
	static const unsigned long stride[MAX_RACERS] = { 1, 7, 11, 13 };

	for (n = 0; n < PAGES; n++) {
		idx = (n * stride[t->id] + t->id * 97) % PAGES;
		if (r->ops->shmem_fault(r->file, idx, &r->got[t->id][idx]))
			test_note(&r->errors);
	}
}

static void test_racing_faults_share_one_page(void **state)
{
	const struct shmem_fault_ops *ops;
	struct race *r = calloc(1, sizeof(*r));
	int i, n = test_racers(MAX_RACERS), t, idx;
	struct shmem_stats st;

	for_each_variant(ops, i, &shmem_fault_variants) {
		ops->shm_mount(0);
		memset(r, 0, sizeof(*r));
		r->ops = ops;
		r->file = ops->shmem_zero_setup(PAGES);
		test_race(n, same_index_racer, r);
		assert_int_equal(r->errors, 0);
		for (idx = 0; idx < PAGES; idx++)
			for (t = 1; t < n; t++)
				assert_ptr_equal(r->got[t][idx], r->got[0][idx]);
		ops->shmem_stats(r->file, &st);
		assert_int_equal(st.nrpages, PAGES);
		assert_books(ops, r->file);
		ops->fput(r->file);
		assert_sb_balanced(ops);
	}
	free(r);
	assert_int_equal(kscale_warnings(), 0);
}

/* The benchmark's shared-object pattern: own range, fault, give back. */
static void range_racer(struct test_thread *t)
{
	struct race *r = t->arg;
	unsigned long per = PAGES / MAX_RACERS, start = t->id * per, idx;
	struct page *page;
	int pass;

	for (pass = 0; pass < PASSES; pass++) {
		for (idx = start; idx < start + per; idx++) {
			if (r->ops->shmem_fault(r->file, idx, &page)) {
				test_note(&r->errors);
				continue;
			}
			if (*(long *)page_address(page))
				test_note(&r->dirty);
			*(long *)page_address(page) = 1;
		}
		r->ops->shmem_release(r->file, start, start + per);
	}
}

static void test_disjoint_ranges_return_every_block(void **state)
{
	const struct shmem_fault_ops *ops;
	struct race *r = calloc(1, sizeof(*r));
	struct shmem_stats st;
	int i;

	for_each_variant(ops, i, &shmem_fault_variants) {
		ops->shm_mount(0);
		memset(r, 0, sizeof(*r));
		r->ops = ops;
		r->file = ops->shmem_zero_setup(PAGES);
		test_race_tasks(MAX_RACERS, test_task_cpus(), range_racer, r);
		assert_int_equal(r->errors, 0);
		assert_int_equal(r->dirty, 0);
		ops->shmem_stats(r->file, &st);
		assert_int_equal(st.nrpages, 0);
		assert_books(ops, r->file);
		ops->fput(r->file);
		assert_sb_balanced(ops);
	}
	free(r);
	assert_int_equal(kscale_warnings(), 0);
}

/*
 * The free path's stat_lock sections raced: every task faults the same
 * fresh window of one object each pass, so that all but one of each
 * index's racers give their block back (shmem_free_block() after
 * add_to_page_cache() or another's index page won), while each also
 * faults and truncates a range of its own (shmem_recalc_inode()) and an
 * object of its own (shmem_truncate(), shmem_delete_inode()), all on one
 * superblock.  A window is never truncated while others fault it: the
 * models hold no page references for find_lock_page() to pin.
 */
#define WINDOW		24
#define OWN_PAGES	8

static void free_path_racer(struct test_thread *t)
{
	struct race *r = t->arg;
	unsigned long own_start = WINDOWS * WINDOW + t->id * OWN_PAGES, idx;
	struct page *page;
	struct file *own;
	unsigned long pass;

	for (pass = 0; pass < WINDOWS; pass++) {
		for (idx = pass * WINDOW; idx < (pass + 1) * WINDOW; idx++)
			if (r->ops->shmem_fault(r->file, idx, &page))
				test_note(&r->errors);
		for (idx = own_start; idx < own_start + OWN_PAGES; idx++)
			if (r->ops->shmem_fault(r->file, idx, &page))
				test_note(&r->errors);
		r->ops->shmem_release(r->file, own_start,
				      own_start + OWN_PAGES);
		own = r->ops->shmem_zero_setup(OWN_PAGES);
		for (idx = 0; idx < OWN_PAGES; idx++)
			if (r->ops->shmem_fault(own, idx, &page))
				test_note(&r->errors);
		r->ops->fput(own);
	}
}

static void test_free_path_races_allocation(void **state)
{
	const struct shmem_fault_ops *ops;
	struct race *r = calloc(1, sizeof(*r));
	int i;

	for_each_variant(ops, i, &shmem_fault_variants) {
		ops->shm_mount(0);
		memset(r, 0, sizeof(*r));
		r->ops = ops;
		r->file = ops->shmem_zero_setup(WINDOWS * WINDOW +
						MAX_RACERS * OWN_PAGES);
		test_race_tasks(MAX_RACERS, test_task_cpus(), free_path_racer,
				r);
		assert_int_equal(r->errors, 0);
		assert_books(ops, r->file);
		ops->fput(r->file);
		assert_sb_balanced(ops);
	}
	free(r);
	assert_int_equal(kscale_warnings(), 0);
}

/*
 * The class "a lock section that no test races": every stat_lock section
 * of the free path raced against the charge side on one exactly-sized
 * mount.  Before this, shmem_truncate()'s return of the index pages'
 * blocks and shmem_delete_inode()'s free_inodes++ ran only at teardown
 * (the racers' own objects had no index pages) and free_inodes was never
 * read.  Two threads on two CPUs (a lost update needs both running) each
 * round make an object (shmem_get_inode(): free_inodes--), fault its
 * first indirect index (shmem_swp_alloc()'s two index charges,
 * shmem_charge_block()), give it back and fault it again
 * (shmem_recalc_inode()) and unmap it (shmem_recalc_inode(),
 * shmem_truncate(), free_inodes++): every section of both sides, as
 * often as it can run.  The mount holds exactly each thread's last
 * object, faulted whole: no fault may get ENOSPC (a block given back and
 * lost shows there or in the books), and with those objects kept the
 * mount is full: free_blocks 0, the next fault ENOSPC.  Then every block
 * and inode is back.
 */
#define SECTION_PAGES	17	/* SHMEM_NR_DIRECT + 1: i_indirect, a leaf */
#define SECTION_BLOCKS	(SECTION_PAGES + 2)
#ifdef KSCALE_SANITIZE
#define SECTION_ROUNDS	200
#else
#define SECTION_ROUNDS	40000
#endif

struct lockstep {
	const struct shmem_fault_ops *ops;
	struct file *file;
	int arrived;			/* at the end of a window */
	int errors, bad_books;
};

static void lockstep_wait(int *arrived, int nr, unsigned long window)
{
	__atomic_add_fetch(arrived, 1, __ATOMIC_ACQ_REL);
	while (__atomic_load_n(arrived, __ATOMIC_ACQUIRE) <
	       (long)(nr * (window + 1)))
		cpu_relax();
}

struct sections {
	const struct shmem_fault_ops *ops;
	struct file *kept[MAX_RACERS];
	int nr, arrived;
	int errors;
};

static void free_sections_racer(struct test_thread *t)
{
	struct sections *r = t->arg;
	const struct shmem_fault_ops *ops = r->ops;
	unsigned long idx = SECTION_PAGES - 1;
	struct page *page;
	struct file *own;
	int round;

	for (round = 0; round < SECTION_ROUNDS; round++) {
		own = ops->shmem_zero_setup(SECTION_PAGES);
		if (ops->shmem_fault(own, idx, &page))
			test_note(&r->errors);
		ops->shmem_release(own, idx, idx + 1);
		if (ops->shmem_fault(own, idx, &page))
			test_note(&r->errors);
		/* the threads' unmaps in step: a lost update needs both */
		lockstep_wait(&r->arrived, r->nr, round);
		if (round < SECTION_ROUNDS - 1) {
			ops->fput(own);
			continue;
		}
		for (idx = 0; idx < SECTION_PAGES; idx++)
			if (ops->shmem_fault(own, idx, &page))
				test_note(&r->errors);
		r->kept[t->id] = own;
	}
}

static void test_free_path_sections_race_the_charge_side(void **state)
{
	const struct shmem_fault_ops *ops;
	struct sections *r = calloc(1, sizeof(*r));
	struct shmem_stats st;
	int i, t, n = test_racers(MAX_RACERS);
	struct page *page;
	struct file *f;

	for_each_variant(ops, i, &shmem_fault_variants) {
		bool limited = ops == &shmem_fault_stat_lock;

		ops->shm_mount(n * SECTION_BLOCKS);
		memset(r, 0, sizeof(*r));
		r->ops = ops;
		r->nr = n;
		test_race(n, free_sections_racer, r);
		assert_int_equal(r->errors, 0);
		for (t = 0; t < n; t++) {
			ops->shmem_stats(r->kept[t], &st);
			assert_int_equal(st.nrpages, SECTION_PAGES);
			assert_int_equal(st.i_blocks, st.inode_books ?
					 BLOCKS_PER_PAGE * (SECTION_PAGES +
							    st.index_pages) : 0);
			if (limited)
				assert_int_equal(st.index_pages,
						 SECTION_BLOCKS - SECTION_PAGES);
		}
		ops->sb_stats(&st);
		if (limited)
			assert_int_equal(st.free_blocks, 0);
		if (st.has_sbinfo)
			assert_int_equal(st.free_inodes, st.max_inodes - n);
		f = ops->shmem_zero_setup(1);
		assert_int_equal(ops->shmem_fault(f, 0, &page),
				 limited ? -ENOSPC : 0);
		ops->fput(f);
		for (t = 0; t < n; t++)
			ops->fput(r->kept[t]);
		assert_sb_balanced(ops);
		ops->sb_stats(&st);
		assert_int_equal(st.free_inodes, st.max_inodes);
	}
	free(r);
	assert_int_equal(kscale_warnings(), 0);
}

/*
 * The same class for i_blocks: shmem_free_block() gives back, under
 * stat_lock alone (shmem_getpage() has dropped info->lock), the block of
 * a page that lost the race for its index, while the winner charges the
 * next one to the same inode under stat_lock.  Two threads on two CPUs
 * fault each fresh window in the same order, so that nearly every index
 * is raced, and the inode's books are checked after every window.
 */
#define SAME_WINDOW	64
#ifdef KSCALE_SANITIZE
#define SAME_WINDOWS	8
#else
#define SAME_WINDOWS	400
#endif

static void same_order_racer(struct test_thread *t)
{
	struct lockstep *r = t->arg;
	const struct shmem_fault_ops *ops = r->ops;
	int nr = test_racers(2);
	struct shmem_stats st;
	struct page *page;
	unsigned long idx, w;

	for (w = 0; w < SAME_WINDOWS; w++) {
		for (idx = w * SAME_WINDOW; idx < (w + 1) * SAME_WINDOW; idx++)
			if (ops->shmem_fault(r->file, idx, &page))
				test_note(&r->errors);
		lockstep_wait(&r->arrived, nr, 2 * w);
		if (t->id == 0) {
			ops->shmem_stats(r->file, &st);
			if (st.i_blocks != (st.inode_books ? BLOCKS_PER_PAGE *
					    (st.nrpages + st.index_pages) : 0))
				test_note(&r->bad_books);
		}
		lockstep_wait(&r->arrived, nr, 2 * w + 1);
	}
}

static void test_free_block_races_charges_on_one_inode(void **state)
{
	const struct shmem_fault_ops *ops;
	struct lockstep *r = calloc(1, sizeof(*r));
	int i;

	for_each_variant(ops, i, &shmem_fault_variants) {
		ops->shm_mount(0);
		memset(r, 0, sizeof(*r));
		r->ops = ops;
		r->file = ops->shmem_zero_setup(SAME_WINDOWS * SAME_WINDOW);
		test_race(test_racers(2), same_order_racer, r);
		assert_int_equal(r->errors, 0);
		assert_int_equal(r->bad_books, 0);
		assert_books(ops, r->file);
		ops->fput(r->file);
		assert_sb_balanced(ops);
	}
	free(r);
	assert_int_equal(kscale_warnings(), 0);
}

/*
 * lockstat of the superblock stat_lock: 2.6.7 takes it for every new
 * block (and index page); the seed's nosbinfo takes it on no fault, only
 * to count the mapping's inode in and out (twice a mapping); 2.6.9 and
 * today have no superblock books on this mount at all.
 */
static void test_stat_lock_takes_per_variant(void **state)
{
	const struct shmem_fault_ops *ops;
	struct file *file;
	struct page *page;
	unsigned long setup, faults, idx;
	const char *name;
	int i;

	for_each_variant(ops, i, &shmem_fault_variants) {
		ops->shm_mount(0);
		memset(&stat_lock_stat, 0, sizeof(stat_lock_stat));
		file = ops->shmem_zero_setup(PAGES);
		setup = stat_lock_stat.acquisitions;
		for (idx = 0; idx < PAGES; idx++)
			assert_int_equal(ops->shmem_fault(file, idx, &page), 0);
		faults = stat_lock_stat.acquisitions - setup;
		ops->fput(file);
		name = shmem_fault_variants.rows[i].name;
		if (!strcmp(name, "stat_lock")) {
			assert_true(faults >= PAGES);
		} else if (!strcmp(name, "nosbinfo")) {
			assert_int_equal(faults, 0);
			assert_int_equal(stat_lock_stat.acquisitions, 2);
		} else {
			assert_int_equal(stat_lock_stat.acquisitions, 0);
		}
	}
}

/*
 * Each row's locks are its kernel's (lib/kernel/kernel_locks.c): the
 * 2.6.7 and 2.6.9 rows', the seed's Altix kernels, ia64's cmpxchg lock,
 * today's the queued spinlock; a take of the object's info->lock sets
 * that lock's word.
 */
static void test_locks_are_the_rows_kernels(void **state)
{
	const struct shmem_fault_ops *ops;
	struct shmem_stats st;
	struct file *file;
	struct page *page;
	int i;

	for_each_variant(ops, i, &shmem_fault_variants) {
		ops->shm_mount(0);
		file = ops->shmem_zero_setup(PAGES);
		assert_int_equal(ops->shmem_fault(file, 0, &page), 0);
		ops->shmem_stats(file, &st);
		assert_int_equal(st.lock_kind,
				 ops == &shmem_fault_upstream ? SPIN_QUEUED :
				 SPIN_IA64);
		ops->fput(file);
	}
}

/*
 * The allocator's locks are the kind of the row being set up, though the
 * zones were made under another's (--fault-work-ns=auto measures through
 * upstream's path at start-up, before any row: a ticket zone->lock then
 * stayed, and 64 simulated CPUs faulted 5x slower than the next run).
 */
static void test_allocator_locks_follow_the_row(void **state)
{
	struct mm_upstream_stats st;

	spin_lock_init_kind = SPIN_TICKET;
	shmem_fault_upstream.shm_mount(0);
	row_locks(&shmem_fault_upstream);
	shmem_fault_upstream.shm_mount(0);
	mm_upstream_stats(&st);
	assert_int_equal(st.lock_kind, SPIN_QUEUED);
}

/*
 * Each kernel's pcp sizes: 2.6.7's free_area_init_core() (batch capped
 * at 256 KiB / 4, low 2 * batch, high 6 * batch), today's
 * zone_batchsize() (1 MiB / 4, then 2^n - 1) with high at batch << 2.
 */
static void test_pcp_sizes(void **state)
{
	int batch, low, high;

	shmem_fault_page_shift(14);
	row_locks(&shmem_fault_stat_lock);
	shmem_fault_stat_lock.shm_mount(0);
	row_locks(&shmem_fault_upstream);
	shmem_fault_upstream.shm_mount(0);
	mm_2_6_7_pcp_sizes(&batch, &low, &high);
	assert_int_equal(batch, 4);
	assert_int_equal(low, 8);
	assert_int_equal(high, 24);
	mm_upstream_pcp_sizes(&batch, &high);
	assert_int_equal(batch, 15);
	assert_int_equal(high, 60);
	shmem_fault_page_shift(12);
	row_locks(&shmem_fault_stat_lock);
	shmem_fault_stat_lock.shm_mount(0);
	row_locks(&shmem_fault_upstream);
	shmem_fault_upstream.shm_mount(0);
	mm_2_6_7_pcp_sizes(&batch, &low, &high);
	assert_int_equal(batch, 16);
	assert_int_equal(low, 32);
	assert_int_equal(high, 96);
	mm_upstream_pcp_sizes(&batch, &high);
	assert_int_equal(batch, 63);
	assert_int_equal(high, 252);
}

#define LOCK_PASSES	8
#define LOCK_PAGES	1024	/* a multiple of 16: every pagevec drains */

static int class_index(const char *name)
{
	int c;

	for (c = 0; c < lockstat_nr_classes(); c++)
		if (!strcmp(lockstat_class(c)->name, name))
			return c;
	return -1;
}

/* A pass: an object faulted whole, then unmapped (truncated, freed). */
static void fault_pass(const struct shmem_fault_ops *ops)
{
	struct file *f = ops->shmem_zero_setup(LOCK_PAGES);
	struct page *page;
	unsigned long idx;

	for (idx = 0; idx < LOCK_PAGES; idx++) {
		assert_int_equal(ops->shmem_fault(f, idx, &page), 0);
		assert_int_equal(page_to_nid(page), numa_node_id());
	}
	ops->fput(f);
}

/* Visits of class `name` per fault over LOCK_PASSES passes; -1: none. */
static double visits_per_fault(const char *name,
			       const struct lockstat_acc *sum)
{
	int c = class_index(name);

	return c < 0 ? -1 : (double)sum[c].visits /
			    (LOCK_PASSES * LOCK_PAGES);
}

static void assert_near(double got, double want, double tolerance)
{
	if (got < want * (1 - tolerance) || got > want * (1 + tolerance))
		fail_msg("%f visits a fault, want %f", got, want);
}

/*
 * The allocator's locks a fault meets, with 4 KiB pages, as lockstat
 * counts them: 2.6.7's pcp list has no lock, its zone->lock is taken once
 * per pcp->batch (16) pages on the way in and once on the way out, its
 * lru_lock once per pagevec (16) each way; today's pcp lock once a
 * fault and once a folio batch (31) freed, zone->lock once per 63 each
 * way, the lruvec lock once per 31 each way.  Faults from a CPU of the
 * other node take the other node's zone and lru locks, and get that
 * node's pages.
 */
static void test_allocator_locks_per_fault(void **state)
{
	struct lockstat_acc sum[LOCKSTAT_MAX_CLASSES];
	const struct shmem_fault_ops *ops;
	unsigned long seen[LOCKSTAT_MAX_CLASSES];
	int i, pass;

	shmem_fault_page_shift(12);
	for_each_variant(ops, i, &shmem_fault_variants) {
		bool old = ops != &shmem_fault_upstream;
		const char *lru = old ? "lru_lock" : "lruvec_lock";

		lockstat_enable(true);
		lockstat_reset();
		ops->shm_mount(0);
		assert_int_equal(lockstat_threads_init(1), 0);
		fault_pass(ops);		/* the pool at its peak */
		lockstat_thread_attach(0);
		for (pass = 0; pass < LOCK_PASSES; pass++)
			fault_pass(ops);
		lockstat_sum(sum);
		if (old) {
			assert_true(visits_per_fault("pcp_lock", sum) < 0);
			/*
			 * 3 index pages a pass besides; the pcp list's
			 * count between low and high (64) takes no lock
			 */
			assert_near(visits_per_fault("zone_lock", sum),
				    2.0 * (LOCK_PAGES + 3 - 64) / 16 /
				    LOCK_PAGES, 0.03);
			assert_near(visits_per_fault(lru, sum), 2.0 / 16,
				    0.001);
		} else {
			assert_near(visits_per_fault("pcp_lock", sum),
				    1 + 34.0 / LOCK_PAGES, 0.001);
			/* the pcp keeps 3 batches and more between passes */
			assert_near(visits_per_fault("zone_lock", sum),
				    2.0 * (LOCK_PAGES - 3 * 63) / 63 /
				    LOCK_PAGES, 0.05);
			assert_near(visits_per_fault(lru, sum),
				    (33 + 1 + 34.0) / LOCK_PAGES, 0.05);
		}
		/* then from node 1 too: that node's instances */
		lockstat_window(true);
		fault_pass(ops);
		kscale_set_cpu(4);
		fault_pass(ops);
		fault_pass(ops);
		kscale_set_cpu(0);
		lockstat_window(false);
		lockstat_instances_seen(seen);
		assert_int_equal(seen[class_index("zone_lock")], 2);
		assert_int_equal(seen[class_index(lru)], 2);
		lockstat_thread_detach();
		lockstat_enable(false);
	}
	assert_int_equal(kscale_warnings(), 0);
}

/* 4.16's batch sizes, which page_fault1 takes for Jordan's data set. */
#define PCP_BATCH_4_16	31
#define PCP_HIGH_4_16	186
#define PAGEVEC_4_16	14
#define ANON_PAGES	1000	/* not a multiple of 14 or 31: partial batches */

static void anon_mount(void)
{
	shmem_fault_page_shift(12);
	shmem_fault_upstream.shm_mount(0);
	mm_upstream_set_batch(PCP_BATCH_4_16, PCP_HIGH_4_16, PAGEVEC_4_16);
}

/* Every page the zones took is free again, none on the LRU. */
static void assert_anon_all_free(void)
{
	struct mm_upstream_stats st;

	mm_upstream_stats(&st);
	assert_int_equal(st.lru, 0);
	assert_int_equal(st.lru_add, 0);
	assert_true(st.present > 0);
	assert_int_equal(st.free + st.pcp, st.present);
}

/*
 * A mapping faulted whole: a zeroed page of its own at each index,
 * mapped once (a second write to a page finds it there), every page on
 * the LRU or in this CPU's batch, the per-CPU lists within 4.16's high;
 * after the unmap, every page back.
 */
static void test_anon_faults_once_and_frees_every_page(void **state)
{
	struct vm_area_struct *vma;
	struct mm_upstream_stats st;
	struct page **got = calloc(ANON_PAGES, sizeof(*got));
	struct page *page;
	unsigned long idx, j;
	int pass, batch, high;

	anon_mount();
	mm_upstream_pcp_sizes(&batch, &high);
	assert_int_equal(batch, PCP_BATCH_4_16);
	assert_int_equal(high, PCP_HIGH_4_16);
	for (pass = 0; pass < 3; pass++) {
		vma = anon_mmap(ANON_PAGES);
		assert_int_equal(anon_pages_mapped(vma), 0);
		for (idx = 0; idx < ANON_PAGES; idx++) {
			assert_int_equal(do_anonymous_page(vma, idx, &got[idx]),
					 0);
			assert_true(page_is_zero(got[idx]));
			*(long *)page_address(got[idx]) = 1;	/* dirty it */
			assert_int_equal(do_anonymous_page(vma, idx, &page),
					 0);
			assert_ptr_equal(page, got[idx]);
		}
		assert_int_equal(do_anonymous_page(vma, ANON_PAGES, &page),
				 -EFAULT);
		for (idx = 1; idx < ANON_PAGES; idx++)
			for (j = idx < 40 ? 0 : idx - 40; j < idx; j++)
				assert_ptr_not_equal(got[j], got[idx]);
		assert_int_equal(anon_pages_mapped(vma), ANON_PAGES);
		mm_upstream_stats(&st);
		assert_int_equal(st.lru + st.lru_add, ANON_PAGES);
		assert_int_equal(st.lru_add, ANON_PAGES % PAGEVEC_4_16);
		assert_true(st.pcp <= (unsigned long)PCP_HIGH_4_16 *
				      kscale_nr_possible_cpus());
		assert_int_equal(st.free + st.pcp + ANON_PAGES, st.present);
		anon_munmap(vma);
		assert_anon_all_free();
	}
	free(got);
	assert_int_equal(kscale_warnings(), 0);
}

/* The bench's tasks: a mapping each, faulted whole and unmapped, racing. */
struct anon_race {
	int dirty;
	int twice;
};

static void anon_racer(struct test_thread *t)
{
	struct anon_race *r = t->arg;
	struct vm_area_struct *vma;
	struct page *page;
	unsigned long idx;
	int pass;

	for (pass = 0; pass < PASSES; pass++) {
		vma = anon_mmap(ANON_PAGES / 4);
		for (idx = 0; idx < ANON_PAGES / 4; idx++) {
			do_anonymous_page(vma, idx, &page);
			if (*(long *)page_address(page))
				test_note(&r->dirty);
			*(long *)page_address(page) = 1;
		}
		if (anon_pages_mapped(vma) != ANON_PAGES / 4)
			test_note(&r->twice);
		anon_munmap(vma);
	}
}

static void test_anon_racing_tasks_give_every_page_back(void **state)
{
	struct anon_race r = { 0 };

	anon_mount();
	test_race_tasks(MAX_RACERS, test_task_cpus(), anon_racer, &r);
	assert_int_equal(r.dirty, 0);
	assert_int_equal(r.twice, 0);
	assert_anon_all_free();
	assert_int_equal(kscale_warnings(), 0);
}

/*
 * 4.16's batch sizes as the locks see them: zone->lock once per
 * pcp->batch (31) pages each way, past what the per-CPU list keeps
 * between passes; the LRU lock once a pagevec (14) on the way in and
 * once a folio batch (31) of each mmu_gather batch on the way out.
 */
static void test_anon_locks_per_fault_4_16(void **state)
{
	struct lockstat_acc sum[LOCKSTAT_MAX_CLASSES];
	struct vm_area_struct *vma;
	struct page *page;
	unsigned long idx;
	int pass;

	lockstat_enable(true);
	lockstat_reset();
	anon_mount();
	assert_int_equal(lockstat_threads_init(1), 0);
	for (pass = 0; pass <= LOCK_PASSES; pass++) {
		if (pass == 1)		/* the pool at its peak */
			lockstat_thread_attach(0);
		vma = anon_mmap(LOCK_PAGES);
		for (idx = 0; idx < LOCK_PAGES; idx++)
			do_anonymous_page(vma, idx, &page);
		anon_munmap(vma);
	}
	lockstat_sum(sum);
	/* mmu_gather batches of 8, 510, 506: 1 + 17 + 17 folio batches */
	assert_near(visits_per_fault("lruvec_lock", sum),
		    (LOCK_PAGES / 14 + 1 + 35.0) / LOCK_PAGES, 0.05);
	/* the pcp list keeps up to high (186) pages between passes */
	assert_near(visits_per_fault("zone_lock", sum),
		    2.0 * (LOCK_PAGES - 155) / 31 / LOCK_PAGES, 0.1);
	lockstat_thread_detach();
	lockstat_enable(false);
	assert_int_equal(kscale_warnings(), 0);
}

static int setup(void **state)
{
	test_machine(&machine, 8, 2);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		/* first: the zones are made in it, under another kind */
		cmocka_unit_test(test_allocator_locks_follow_the_row),
		cmocka_unit_test(test_pages_read_back_zero_and_books_balance),
		cmocka_unit_test(test_enospc_exactly_at_the_limit),
		cmocka_unit_test(test_fault_path_sigbus_at_the_limit),
		cmocka_unit_test(test_page_size_16k),
		cmocka_unit_test(test_racing_faults_share_one_page),
		cmocka_unit_test(test_stat_lock_takes_per_variant),
		cmocka_unit_test(test_disjoint_ranges_return_every_block),
		cmocka_unit_test(test_free_path_races_allocation),
		cmocka_unit_test(test_free_path_sections_race_the_charge_side),
		cmocka_unit_test(test_free_block_races_charges_on_one_inode),
		cmocka_unit_test(test_locks_are_the_rows_kernels),
		cmocka_unit_test(test_pcp_sizes),
		cmocka_unit_test(test_allocator_locks_per_fault),
		cmocka_unit_test(test_anon_faults_once_and_frees_every_page),
		cmocka_unit_test(test_anon_racing_tasks_give_every_page_back),
		cmocka_unit_test(test_anon_locks_per_fault_4_16),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
