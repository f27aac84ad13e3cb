/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Pages of the modelled machine's size from per-CPU free lists, standing in for the buddy
 * allocator's per-CPU page lists (the pcp fast path): uncontended, local.
 * A CPU whose list is empty takes a batch of fresh pages on its node.
 * Pages are never returned to the system; the pool grows to its peak.
 * Pages come back dirty, as from the kernel: callers clear them.  Each
 * list has a lock, as the kernel's pcp lists have since 5.19; it is only
 * ever contended when threads share a CPU.
 */
#ifndef KSCALE_KERNEL_PAGE_ALLOC_H
#define KSCALE_KERNEL_PAGE_ALLOC_H

#include "compiler.h"

#define PAGE_SHIFT	12		/* the host's page: mmap, mprotect */
#define PAGE_SIZE	(1UL << PAGE_SHIFT)

/*
 * The modelled machine's page, what a struct page's data is: the host's
 * by default, or ia64's 16 KiB (seed 002's Altix).  A model's PAGE_SIZE
 * (and its kernel's PAGE_CACHE_SIZE) is MM_PAGE_SIZE.
 */
#define MAX_MM_PAGE_SHIFT	14
extern unsigned int mm_page_shift;
#define MM_PAGE_SIZE	(1UL << mm_page_shift)

struct address_space;

struct page {
	unsigned long flags;
	unsigned long index;
	struct address_space *mapping;
	void *virtual;			/* the MM_PAGE_SIZE of data */
	struct page *lru;		/* free list link */
};

#define PG_locked	(1UL << 0)
#define PG_uptodate	(1UL << 1)

struct page *alloc_page(void);
void __free_page(struct page *page);
void page_alloc_init(void);
/*
 * Between runs, with every page free: the page size from now on (a new
 * size gives the pool's pages back to the host).
 */
void page_alloc_set_shift(unsigned int shift);
/* In a run's set-up: each CPU's list lock is a resource to lockstat. */
void page_alloc_lockstat_register(void);

static inline void *page_address(struct page *page)
{
	return page->virtual;
}

/* The page lock: the kernel sleeps on it; here a waiter spins, yielding. */
void __lock_page(struct page *page);

static inline bool TestSetPageLocked(struct page *page)
{
	return __atomic_fetch_or(&page->flags, PG_locked,
				 __ATOMIC_ACQUIRE) & PG_locked;
}

static inline void lock_page(struct page *page)
{
	if (TestSetPageLocked(page))
		__lock_page(page);
}

static inline void unlock_page(struct page *page)
{
	__atomic_fetch_and(&page->flags, ~PG_locked, __ATOMIC_RELEASE);
}

static inline bool PageUptodate(struct page *page)
{
	return __atomic_load_n(&page->flags, __ATOMIC_ACQUIRE) & PG_uptodate;
}

static inline void SetPageUptodate(struct page *page)
{
	__atomic_fetch_or(&page->flags, PG_uptodate, __ATOMIC_RELEASE);
}

static inline void clear_page(void *addr)
{
	__builtin_memset(addr, 0, MM_PAGE_SIZE);
}

#endif
