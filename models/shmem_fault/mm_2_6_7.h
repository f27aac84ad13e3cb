/* SPDX-License-Identifier: GPL-2.0 */
/*
 * 2.6.7's page allocator and page-cache LRU as the shmem fault path meets
 * them (mm_2_6_7.c), under the kernel's names for shmem_2_6_7.c.
 */
#ifndef KSCALE_SHMEM_MM_2_6_7_H
#define KSCALE_SHMEM_MM_2_6_7_H

#include "../../lib/kernel/page_alloc.h"

#define PAGEVEC_SIZE	16

struct pagevec {
	unsigned nr;
	int cold;
	struct page *pages[PAGEVEC_SIZE];
};

static inline void pagevec_init(struct pagevec *pvec, int cold)
{
	pvec->nr = 0;
	pvec->cold = cold;
}

/* Returns the slots left: 0 when the pagevec is full. */
static inline unsigned pagevec_add(struct pagevec *pvec, struct page *page)
{
	pvec->pages[pvec->nr++] = page;
	return PAGEVEC_SIZE - pvec->nr;
}

#define alloc_page		alloc_page_2_6_7
#define __free_page		__free_page_2_6_7
#define lru_cache_add		lru_cache_add_2_6_7
#define __pagevec_release	__pagevec_release_2_6_7

struct page *alloc_page(void);
void __free_page(struct page *page);
void lru_cache_add(struct page *page);
void __pagevec_release(struct pagevec *pvec);

static inline void pagevec_release(struct pagevec *pvec)
{
	if (pvec->nr)
		__pagevec_release(pvec);
}

/* At a mount: the zones exist, their locks are resources to lockstat. */
void mm_2_6_7_init(void);
/*
 * Before the tasks run: node's zone holds pages free, and each of its
 * CPUs' lists' most besides (zone_reserve() in shmem_fault.h).
 */
void mm_2_6_7_reserve(int node, unsigned long pages);
/* Each CPU's pcp batch, low and high (the tests check them). */
void mm_2_6_7_pcp_sizes(int *batch, int *low, int *high);

#endif
