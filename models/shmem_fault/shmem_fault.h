/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The /dev/zero shared-mapping fault path behind one table, so the fault
 * workload and the validation tests drive every variant alike.  Each
 * variant file has its own era's structures; a struct file here is
 * "one mapping of /dev/zero" (the vma's file), indexed in pages.
 */
#ifndef KSCALE_SHMEM_FAULT_H
#define KSCALE_SHMEM_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#include "../../lib/harness/variant.h"
#include "../../lib/kernel/delay.h"
#include "../../lib/kernel/page_alloc.h"
#include "../../lib/kernel/lockstat.h"

/* 2.6.7 include/linux/shmem_fs.h: PAGE_CACHE_SIZE / 512 */
#define BLOCKS_PER_PAGE	(MM_PAGE_SIZE / 512)

struct file;

/* A quiet-point view of an object and its mount, for validation. */
struct shmem_stats {
	bool has_sbinfo;		/* the superblock counts this object */
	bool inode_books;		/* i_blocks counts its pages */
	unsigned long max_blocks;
	unsigned long free_blocks;
	unsigned long max_inodes;	/* sb_stats(): 0 where none are kept */
	unsigned long free_inodes;
	unsigned long i_blocks;		/* the inode's 512-byte blocks */
	unsigned long nrpages;		/* data pages in the page cache */
	unsigned long index_pages;	/* swap-vector pages (2.6.7 only) */
	int lock_kind;			/* info->lock's (spinlock.h) */
};

struct shmem_fault_ops {
	/* The internal shm mount, limited to size_limit pages (0: unlimited). */
	void (*shm_mount)(unsigned long size_limit);
	/*
	 * After the mount, before the tasks run: node's zone holds `pages`
	 * free beyond what its CPUs' per-CPU lists may keep.  The kernel's
	 * zones had their memory from boot; the model's come from the host
	 * (page_alloc_fresh(): mmap, mbind, first touch), which in the window
	 * would put every task of the bench behind the host's mmap_lock.
	 */
	void (*mm_reserve)(int node, unsigned long pages);
	/* mmap(MAP_SHARED) of /dev/zero: a new unlinked object of `pages`. */
	struct file *(*shmem_zero_setup)(unsigned long pages);
	/* One fault at page idx: 0, or -ENOSPC (SIGBUS) or -ENOMEM. */
	int (*shmem_fault)(struct file *file, unsigned long idx,
			   struct page **pagep);
	/* Give back the pages of [start, end) (see the variant files). */
	void (*shmem_release)(struct file *file, unsigned long start,
			      unsigned long end);
	/* munmap() of the last mapping: the object and its pages go. */
	void (*fput)(struct file *file);
	/*
	 * Every thread faults this object: its locks are shared resources
	 * to lockstat (a thread's own object's are not).
	 */
	void (*lockstat_register)(struct file *file);
	void (*shmem_stats)(struct file *file, struct shmem_stats *st);
	/* Superblock-wide totals, to check the books balance at the end. */
	void (*sb_stats)(struct shmem_stats *st);
};

extern const struct shmem_fault_ops shmem_fault_stat_lock;
extern const struct shmem_fault_ops shmem_fault_nosbinfo;
extern const struct shmem_fault_ops shmem_fault_no_sbinfo_mount;
extern const struct shmem_fault_ops shmem_fault_upstream;

/* The model's variant table: each row's .ops a struct shmem_fault_ops. */
extern const struct kscale_variant_table shmem_fault_variants;

/*
 * Between runs, with no object left: the modelled machine's page size
 * (page_alloc.h), every variant's allocator emptied first.
 */
void shmem_fault_page_shift(unsigned int shift);
/* With no page in use: forget every free page (mm_2_6_7.c, mm_upstream.c). */
void mm_2_6_7_reset(void);
void mm_upstream_reset(void);

/*
 * For mm_reserve(): the index pages an object of `pages` may take, at the
 * most (2.6.7's swap vector: one a 512 entries, at most two more),
 * counted as one a 256.
 */
static inline unsigned long shmem_index_pages_max(unsigned long pages)
{
	return pages / 256 + 2;
}

/* This thread's takes of, and waits for, the superblock stat_lock. */
extern __thread struct lock_class_stats stat_lock_stat;

/*
 * The mm around the variant's shmem path, as the fault workload's tasks
 * meet it (fault.c).  handle_mm_fault() of a write to page idx of a
 * /dev/zero shared mapping (mm/memory.c: 2.6.7's do_no_page() ->
 * shmem_nopage(), today's do_shared_fault() -> shmem_fault()): work_ns of
 * the rest of the fault (trap, page-table walk, PTE installation, memcg)
 * outside any lock, half before the shmem path and half after, then the
 * task's write to the page's first byte.  0, the shmem path's error
 * (-ENOSPC or -ENOMEM: the task's SIGBUS), or FAULT_NOT_CLEARED: the page
 * did not read back cleared, a bug of the model's.  Inline: the workload
 * calls it on every operation, as it did when this was its own code.
 */
#define FAULT_NOT_CLEARED	1

static inline int handle_mm_fault(const struct shmem_fault_ops *ops,
				  struct file *file, unsigned long idx,
				  unsigned long work_ns)
{
	struct page *page;
	char *addr;
	int err;

	ndelay(work_ns / 2);
	err = ops->shmem_fault(file, idx, &page);
	ndelay(work_ns - work_ns / 2);
	if (err)
		return err;
	addr = page_address(page);
	if (unlikely(*(long *)addr))
		return FAULT_NOT_CLEARED;
	addr[0] = 1;
	return 0;
}

/*
 * mmap(MAP_SHARED) of /dev/zero of `pages` that every task faults (each
 * its own range): the object's locks are shared resources to lockstat.
 */
struct file *shmem_zero_setup_shared(const struct shmem_fault_ops *ops,
				     unsigned long pages);

/*
 * One mapping's life, the rest of a fault left out: mmap, a write to
 * every page, munmap.  The pages faulted, or the first fault's error.
 */
long shmem_fault_pass(const struct shmem_fault_ops *ops, unsigned long pages);

/*
 * With no object left, the superblock's books back where they began:
 * whether they balance (or the mount keeps none); *st has them.
 */
bool shmem_books_balance(const struct shmem_fault_ops *ops,
			 struct shmem_stats *st);

#endif
