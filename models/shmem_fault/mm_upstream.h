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
#define release_pages		release_pages_upstream
#define lru_add_drain		lru_add_drain_upstream

/* An order-0 folio is a page here. */
struct page *folio_alloc(void);
void folio_put(struct page *folio);
void folio_add_lru(struct page *folio);
void __folio_batch_release(struct folio_batch *fbatch);
/* Drop a reference on each of nr pages: those at 0 leave the LRU, freed. */
void release_pages(struct page **pages, int nr);
/* This CPU's folio_add_lru() batch onto the LRU. */
void lru_add_drain(void);

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

/*
 * Another kernel's batch sizes, after a mount, before the tasks run:
 * every CPU's pcp batch and high, and the folio_add_lru() batch (at most
 * FOLIO_BATCH_SIZE); 0 keeps today's.  4.16: 31, 186 and 14.
 */
void mm_upstream_set_batch(int pcp_batch, int pcp_high, int lru_add_batch);

/* At a quiet point: where every page the zones took from the host is. */
struct mm_upstream_stats {
	unsigned long present;	/* taken from the host, all nodes */
	unsigned long free;	/* on the zones' free lists */
	unsigned long pcp;	/* on the per-CPU lists */
	unsigned long lru;	/* on the LRU lists */
	unsigned long lru_add;	/* in the per-CPU folio_add_lru() batches */
	int lock_kind;		/* every zone, LRU and pcp lock's, or -1 */
};
void mm_upstream_stats(struct mm_upstream_stats *st);

#endif
