/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Today's page allocator and LRU as the shmem fault path meets them
 * (mm_upstream.c), under the kernel's names for upstream.c.
 */
#ifndef KSCALE_SHMEM_MM_UPSTREAM_H
#define KSCALE_SHMEM_MM_UPSTREAM_H

#include "../../lib/kernel/page_alloc.h"

/* include/linux/pagevec.h: PAGEVEC_SIZE (renamed here beside 2.6.7's) */
#define FOLIO_BATCH_SIZE	31

struct folio_batch {
	unsigned char nr;
	bool percpu_pvec_drained;
	struct page *folios[FOLIO_BATCH_SIZE];
};

static inline void folio_batch_init(struct folio_batch *fbatch)
{
	fbatch->nr = 0;
	fbatch->percpu_pvec_drained = false;
}

static inline unsigned int folio_batch_count(struct folio_batch *fbatch)
{
	return fbatch->nr;
}

/* Returns the slots left: 0 when the batch is full. */
static inline unsigned folio_batch_add(struct folio_batch *fbatch,
				       struct page *folio)
{
	fbatch->folios[fbatch->nr++] = folio;
	return FOLIO_BATCH_SIZE - fbatch->nr;
}

#define folio_alloc		folio_alloc_upstream
#define folio_put		folio_put_upstream
#define folio_add_lru		folio_add_lru_upstream
#define __folio_batch_release	__folio_batch_release_upstream

/* An order-0 folio is a page here. */
struct page *folio_alloc(void);
void folio_put(struct page *folio);
void folio_add_lru(struct page *folio);
void __folio_batch_release(struct folio_batch *fbatch);

static inline void folio_batch_release(struct folio_batch *fbatch)
{
	if (folio_batch_count(fbatch))
		__folio_batch_release(fbatch);
}

/* At a mount: the zones exist, their locks are resources to lockstat. */
void mm_upstream_init(void);
/* As mm_2_6_7_reserve(), for today's zone and lists. */
void mm_upstream_reserve(int node, unsigned long pages);
/* This CPU's pcp batch and high (the tests check them). */
void mm_upstream_pcp_sizes(int *batch, int *high);

#endif
