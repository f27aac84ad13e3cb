/* SPDX-License-Identifier: GPL-2.0 */
/*
 * struct page and the memory behind it: pages of the modelled machine's
 * size, made on a node from the host's memory.  The page allocators
 * themselves (zones, per-CPU lists, the LRU) are each kernel's own and
 * live with the models that follow that kernel (models/shmem_fault/mm_*):
 * a zone that runs dry takes page_alloc_fresh()'s pages, standing in for
 * the memory a kernel's zone had from boot, taken before the tasks run
 * (shmem_fault's mm_reserve).  Pages are never given back to the host;
 * the pool grows to its peak.  Pages come back dirty, as from the
 * kernel: callers clear them.
 */
#ifndef KSCALE_KERNEL_PAGE_ALLOC_H
#define KSCALE_KERNEL_PAGE_ALLOC_H

#include "compiler.h"
#include "list.h"

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

/* page_alloc_fresh()'s pages at a time: one host allocation. */
#define PAGE_CHUNK	64

struct address_space;

struct page {
	unsigned long flags;
	int _count;
	int nid;			/* the kernel keeps it in flags */
	unsigned long index;
	struct address_space *mapping;
	void *virtual;			/* the MM_PAGE_SIZE of data */
	struct list_head lru;		/* free, per-CPU or LRU list */
};

#define PG_locked	(1UL << 0)
#define PG_uptodate	(1UL << 1)
#define PG_lru		(1UL << 2)

/*
 * PAGE_CHUNK new pages on node, onto list; their nid set, all else 0.
 * The host may sleep here: never with preemption disabled.
 */
void page_alloc_fresh(int node, struct list_head *list);
/*
 * A zone run dry (each kernel's struct zone: models/shmem_fault/mm_*.c)
 * grows by page_alloc_fresh()'s pages, the memory it had from boot: onto
 * its free_list under its lock, its counter field nr_free counting them.
 * A macro, for the lock is of the model's type, taken with its own
 * spin_lock_irqsave().
 */
#define page_alloc_grow(zone, nr_free) do {				\
	struct list_head __fresh = LIST_HEAD_INIT(__fresh);		\
	struct page *__page, *__next;					\
	unsigned long __flags = 0;					\
									\
	page_alloc_fresh((zone)->node, &__fresh);			\
	spin_lock_irqsave(&(zone)->lock, __flags);			\
	list_for_each_entry_safe(__page, __next, &__fresh, lru) {	\
		list_add(&__page->lru, &(zone)->free_list);		\
		WRITE_ONCE((zone)->nr_free, (zone)->nr_free + 1);	\
	}								\
	spin_unlock_irqrestore(&(zone)->lock, __flags);			\
} while (0)

/* page_alloc_fresh()'s calls so far, every thread's. */
unsigned long page_alloc_fresh_calls(void);
/*
 * Between runs, with no page held anywhere (every allocator emptied):
 * the page size from now on (a new size gives the pages back to the
 * host).
 */
void page_alloc_set_shift(unsigned int shift);

static inline void *page_address(struct page *page)
{
	return page->virtual;
}

static inline int page_to_nid(struct page *page)
{
	return page->nid;
}

static inline int page_count(struct page *page)
{
	return __atomic_load_n(&page->_count, __ATOMIC_RELAXED);
}

static inline void set_page_count(struct page *page, int v)
{
	__atomic_store_n(&page->_count, v, __ATOMIC_RELAXED);
}

static inline void get_page(struct page *page)
{
	__atomic_fetch_add(&page->_count, 1, __ATOMIC_RELAXED);
}

static inline bool put_page_testzero(struct page *page)
{
	return __atomic_sub_fetch(&page->_count, 1, __ATOMIC_ACQ_REL) == 0;
}

static inline bool PageLRU(struct page *page)
{
	return __atomic_load_n(&page->flags, __ATOMIC_RELAXED) & PG_lru;
}

static inline void SetPageLRU(struct page *page)
{
	__atomic_fetch_or(&page->flags, PG_lru, __ATOMIC_RELAXED);
}

static inline bool TestClearPageLRU(struct page *page)
{
	return __atomic_fetch_and(&page->flags, ~PG_lru,
				  __ATOMIC_RELAXED) & PG_lru;
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
