// SPDX-License-Identifier: GPL-2.0
/*
 * Today's order-0 page allocator and LRU, the parts a shmem fault and a
 * truncation run through (v6.x mm/page_alloc.c, mm/swap.c):
 *
 *	rmqueue_pcplist(): pcp = pcp_spin_trylock(zone->per_cpu_pageset)
 *		(preemption off, then the per-CPU pcp->lock, since 5.19);
 *		NULL: rmqueue_buddy() under zone->lock;
 *	__rmqueue_pcplist(): if (list_empty(list)) rmqueue_bulk(zone, order,
 *		batch, list, ...), under spin_lock_irqsave(&zone->lock);
 *	free_unref_page_commit(): list_add(); pcp->count += 1;
 *		if (pcp->count >= high) free_pcppages_bulk(zone, ...), under
 *		zone->lock;
 *	folio_add_lru() -> folio_batch_add_and_move(folio, lru_add):
 *		folio_get(); local_lock(&cpu_fbatches.lock) (preemption off);
 *		if (!folio_batch_add(fbatch, folio)) folio_batch_move_lru();
 *	folio_batch_move_lru(): folio_lruvec_relock_irqsave() (the lruvec's
 *		lru_lock, held across the batch), lru_add(), folio_set_lru();
 *		unlock; folios_put(fbatch);
 *	release_pages(): the pages a folio batch at a time to
 *		folios_put_refs();
 *	folios_put_refs(): each folio whose count drops to 0:
 *		__page_cache_release() relocks its lruvec (kept across the
 *		batch) and lruvec_del_folio(); unlock; free_unref_folios():
 *		the pcp lock once for a run of one zone's folios;
 *	__folio_batch_release(): lru_add_drain() once, then folios_put().
 *
 * One zone per node, one lruvec per node (the root memcg's: no memcg is
 * modelled), each allocated on its node.  The pcp batch is
 * zone_batchsize()'s:
 *
 *	batch = min(zone_managed_pages(zone) >> 10, SZ_1M / PAGE_SIZE);
 *	batch /= 4;		(We effectively *= 4 below)
 *	if (batch < 1)
 *		batch = 1;
 *	batch = rounddown_pow_of_two(batch + batch/2) - 1;
 *
 * 63 for a zone of 1 GiB or more with 4 KiB pages (15 with 16 KiB), and
 * pcp->high zone_highsize()'s floor, batch << 2.  Another kernel's sizes
 * can be set instead (mm_upstream_set_batch()): 4.16's zone_batchsize()
 * capped the batch at 512 KiB (31 with 4 KiB pages), its
 * pageset_set_batch() set high to 6 * batch (186), and its lru_cache_add()
 * pagevec held PAGEVEC_SIZE, 14.
 *
 * Departures: since 6.7 pcp->high tunes itself between high_min and
 * high_max, a refill grows with pcp->alloc_factor (nr_pcp_alloc()) and a
 * spill with pcp->free_count (nr_pcp_free()): here both are pcp->batch
 * and high is fixed, so the model takes zone->lock more often than today
 * does in a burst of faults or frees (today's path is if anything
 * slower here).  No buddy merging, migratetypes or watermarks; a zone
 * whose free pages run out takes PAGE_CHUNK fresh ones from the host
 * under zone->lock (the kernel's memory was there from boot; until the
 * pool reaches its peak).  zone->lock and the LRU lock are 6.18's queued
 * spinlock (the row's kernel, spinlock.h).  References are counted only as the LRU needs
 * them: the page cache's (the allocation's; the truncation's lookup
 * reference is the same one) and the folio batch's.
 */
#include <stdlib.h>
#include <string.h>

#include "../../lib/kernel/lockstat.h"
#include "../../lib/kernel/percpu.h"
#include "../../lib/kernel/spinlock.h"
#include "mm_upstream.h"

/* the model has no interrupts: a lock's own exclusion is enough */
#define spin_lock_irqsave(l, f)		do { (void)(f); spin_lock(l); } while (0)
#define spin_unlock_irqrestore(l, f)	do { (void)(f); spin_unlock(l); } while (0)

#undef PAGE_SIZE
#define PAGE_SIZE		MM_PAGE_SIZE
#define SZ_1M			(1UL << 20)
#define ZONE_MANAGED_BYTES	(1UL << 30)

struct per_cpu_pages {
	spinlock_t lock;	/* Protects lists field */
	int count;		/* number of pages in the list */
	int high;		/* high watermark, emptying needed */
	int batch;		/* chunk size for buddy add/remove */
	struct list_head lists[1];	/* MIGRATE_MOVABLE, order 0 */
} ____cacheline_aligned;

struct zone {
	struct per_cpu_pages __percpu *per_cpu_pageset;
	unsigned long managed_pages;
	int node;
	spinlock_t lock ____cacheline_aligned;
	unsigned long nr_free;		/* NR_FREE_PAGES */
	unsigned long present_pages;	/* taken from the host */
	struct list_head free_list;	/* free_area[0].free_list[] */
};

struct lruvec {
	spinlock_t lru_lock;
	struct list_head lists[1];	/* LRU_INACTIVE_FILE */
	unsigned long nr_pages;
} ____cacheline_aligned;

struct pglist_data {
	struct zone node_zones[1];	/* ZONE_NORMAL */
	struct lruvec __lruvec;
};

static struct pglist_data **node_data;
static struct folio_batch __percpu *lru_add_fbatches;	/* cpu_fbatches.lru_add */
/* the folio_add_lru() batch's size: FOLIO_BATCH_SIZE, or another kernel's */
static unsigned int lru_add_batch = FOLIO_BATCH_SIZE;

#define NODE_DATA(nid)		(node_data[nid])

static inline struct zone *folio_zone(struct page *folio)
{
	return &NODE_DATA(page_to_nid(folio))->node_zones[0];
}

static inline struct lruvec *folio_lruvec(struct page *folio)
{
	return &NODE_DATA(page_to_nid(folio))->__lruvec;
}

static unsigned long rounddown_pow_of_two(unsigned long n)
{
	return 1UL << (63 - __builtin_clzl(n));
}

static int zone_batchsize(struct zone *zone)
{
	unsigned long batch;

	batch = zone->managed_pages >> 10;
	if (batch > SZ_1M / PAGE_SIZE)
		batch = SZ_1M / PAGE_SIZE;
	batch /= 4;		/* We effectively *= 4 below */
	if (batch < 1)
		batch = 1;
	batch = rounddown_pow_of_two(batch + batch / 2) - 1;
	return batch;
}

static void pgdat_empty(struct pglist_data *pgdat)
{
	struct zone *zone = &pgdat->node_zones[0];
	int cpu;

	zone->nr_free = 0;
	zone->present_pages = 0;
	INIT_LIST_HEAD(&zone->free_list);
	INIT_LIST_HEAD(&pgdat->__lruvec.lists[0]);
	pgdat->__lruvec.nr_pages = 0;
	for_each_possible_cpu(cpu) {
		struct per_cpu_pages *pcp =
			per_cpu_ptr(zone->per_cpu_pageset, cpu);

		pcp->count = 0;
		INIT_LIST_HEAD(&pcp->lists[0]);
	}
}

void mm_upstream_init(void)
{
	int node, cpu;

	if (!node_data) {
		node_data = calloc(nr_node_ids, sizeof(*node_data));
		lru_add_fbatches = alloc_percpu(struct folio_batch);
		if (!node_data)
			abort();
	}
	for_each_online_node(node) {
		struct pglist_data *pgdat = NODE_DATA(node);
		struct zone *zone;
		int batch;

		if (!pgdat) {
			pgdat = kzalloc_node(sizeof(*pgdat), node);
			zone = &pgdat->node_zones[0];
			zone->node = node;
			zone->per_cpu_pageset =
				alloc_percpu(struct per_cpu_pages);
			pgdat_empty(pgdat);
			node_data[node] = pgdat;
		}
		/* each mount's: the kind of the variant being set up */
		zone = &pgdat->node_zones[0];
		spin_lock_init(&zone->lock);
		spin_lock_init(&pgdat->__lruvec.lru_lock);
		zone->managed_pages = ZONE_MANAGED_BYTES / PAGE_SIZE;
		batch = zone_batchsize(zone);
		for_each_possible_cpu(cpu) {
			struct per_cpu_pages *pcp =
				per_cpu_ptr(zone->per_cpu_pageset, cpu);

			spin_lock_init(&pcp->lock);
			pcp->batch = batch;
			pcp->high = batch << 2;
			/* count and the list heads share the lock's line */
			lockstat_register(&pcp->lock, "pcp_lock", 1,
					  LOCKSTAT_SPIN | LOCKSTAT_PER_CPU);
		}
		lockstat_register(&zone->lock, "zone_lock", 1,
				  LOCKSTAT_SPIN | LOCKSTAT_PER_NODE);
		lockstat_register(&pgdat->__lruvec.lru_lock, "lruvec_lock", 1,
				  LOCKSTAT_SPIN | LOCKSTAT_PER_NODE);
	}
	lru_add_batch = FOLIO_BATCH_SIZE;
}

void mm_upstream_set_batch(int pcp_batch, int pcp_high, int lru_add_size)
{
	int node, cpu;

	for_each_online_node(node)
		for_each_possible_cpu(cpu) {
			struct per_cpu_pages *pcp = per_cpu_ptr(
				NODE_DATA(node)->node_zones[0].per_cpu_pageset,
				cpu);

			if (pcp_batch)
				pcp->batch = pcp_batch;
			if (pcp_high)
				pcp->high = pcp_high;
		}
	if (lru_add_size)
		lru_add_batch = lru_add_size;
}

static void lock_kind_agrees(struct mm_upstream_stats *st,
			     const spinlock_t *lock)
{
	if (st->lock_kind == NR_SPIN_LOCK_KINDS)
		st->lock_kind = lock->kind;
	else if (lock->kind != st->lock_kind)
		st->lock_kind = -1;
}

void mm_upstream_stats(struct mm_upstream_stats *st)
{
	int node, cpu;

	memset(st, 0, sizeof(*st));
	st->lock_kind = NR_SPIN_LOCK_KINDS;	/* none seen yet */
	for_each_online_node(node) {
		struct pglist_data *pgdat = NODE_DATA(node);
		struct zone *zone = &pgdat->node_zones[0];

		st->present += zone->present_pages;
		st->free += zone->nr_free;
		st->lru += pgdat->__lruvec.nr_pages;
		lock_kind_agrees(st, &zone->lock);
		lock_kind_agrees(st, &pgdat->__lruvec.lru_lock);
		for_each_possible_cpu(cpu) {
			struct per_cpu_pages *pcp =
				per_cpu_ptr(zone->per_cpu_pageset, cpu);

			st->pcp += pcp->count;
			lock_kind_agrees(st, &pcp->lock);
		}
	}
	for_each_possible_cpu(cpu)
		st->lru_add += folio_batch_count(per_cpu_ptr(lru_add_fbatches,
							     cpu));
}

void mm_upstream_reset(void)
{
	int node, cpu;

	if (!node_data)
		return;
	for (node = 0; node < nr_node_ids; node++)
		if (node_data[node])
			pgdat_empty(node_data[node]);
	for_each_possible_cpu(cpu)
		folio_batch_init(per_cpu_ptr(lru_add_fbatches, cpu));
}

void mm_upstream_pcp_sizes(int *batch, int *high)
{
	struct per_cpu_pages *pcp = this_cpu_ptr(
		NODE_DATA(numa_node_id())->node_zones[0].per_cpu_pageset);

	*batch = pcp->batch;
	*high = pcp->high;
}

/* pcpu_spin_trylock(): preemption off, this CPU's pcp, its lock. */
static struct per_cpu_pages *pcp_spin_trylock(struct zone *zone)
{
	struct per_cpu_pages *pcp;

	preempt_disable();
	pcp = this_cpu_ptr(zone->per_cpu_pageset);
	if (!spin_trylock(&pcp->lock)) {
		preempt_enable();
		return NULL;
	}
	return pcp;
}

static void pcp_spin_unlock(struct per_cpu_pages *pcp)
{
	spin_unlock(&pcp->lock);
	preempt_enable();
}

/* The memory the zone had from boot, a chunk at a time. */
static void zone_grow(struct zone *zone)
{
	page_alloc_grow(zone, nr_free);
	__atomic_fetch_add(&zone->present_pages, PAGE_CHUNK, __ATOMIC_RELAXED);
}

void mm_upstream_reserve(int node, unsigned long pages)
{
	struct zone *zone = &NODE_DATA(node)->node_zones[0];
	int cpu;

	for_each_possible_cpu(cpu)
		if (cpu_to_node(cpu) == node)
			pages += per_cpu_ptr(zone->per_cpu_pageset, cpu)->high +
				 FOLIO_BATCH_SIZE;
	while (READ_ONCE(zone->nr_free) < pages)
		zone_grow(zone);
}

/* zone->lock held */
static struct page *__rmqueue(struct zone *zone)
{
	struct page *page;

	if (list_empty(&zone->free_list))
		return NULL;
	page = list_first_entry(&zone->free_list, struct page, lru);
	list_del(&page->lru);
	WRITE_ONCE(zone->nr_free, zone->nr_free - 1);
	return page;
}

static int rmqueue_bulk(struct zone *zone, int count,
			struct list_head *list)
{
	unsigned long flags = 0;
	int i;

	spin_lock_irqsave(&zone->lock, flags);
	for (i = 0; i < count; ++i) {
		struct page *page = __rmqueue(zone);

		if (unlikely(page == NULL))
			break;
		list_add_tail(&page->lru, list);
	}
	spin_unlock_irqrestore(&zone->lock, flags);
	return i;
}

static struct page *__rmqueue_pcplist(struct zone *zone,
				      struct per_cpu_pages *pcp,
				      struct list_head *list)
{
	struct page *page;

	if (list_empty(list)) {
		pcp->count += rmqueue_bulk(zone, READ_ONCE(pcp->batch), list);
		if (unlikely(list_empty(list)))
			return NULL;
	}
	page = list_first_entry(list, struct page, lru);
	list_del(&page->lru);
	pcp->count -= 1;
	return page;
}

static struct page *rmqueue_pcplist(struct zone *zone)
{
	struct per_cpu_pages *pcp;
	struct page *page;

	/* spin_trylock may fail due to a parallel drain or IRQ reentrancy. */
	pcp = pcp_spin_trylock(zone);
	if (!pcp)
		return NULL;
	page = __rmqueue_pcplist(zone, pcp, &pcp->lists[0]);
	pcp_spin_unlock(pcp);
	return page;
}

static struct page *rmqueue_buddy(struct zone *zone)
{
	unsigned long flags = 0;
	struct page *page;

	spin_lock_irqsave(&zone->lock, flags);
	page = __rmqueue(zone);
	spin_unlock_irqrestore(&zone->lock, flags);
	return page;
}

/* get_page_from_freelist() of one order-0 page from the local zone. */
struct page *folio_alloc(void)
{
	struct zone *zone;
	struct page *page;

	for (;;) {
		zone = &NODE_DATA(numa_node_id())->node_zones[0];
		if (READ_ONCE(zone->nr_free) >= 1) {	/* zone_watermark_ok */
			page = rmqueue_pcplist(zone);
			if (!page)
				page = rmqueue_buddy(zone);
			if (page) {			/* prep_new_page() */
				page->flags = 0;
				page->mapping = NULL;
				set_page_count(page, 1);
				return page;
			}
		}
		zone_grow(zone);
	}
}

static void free_pcppages_bulk(struct zone *zone, int count,
			       struct per_cpu_pages *pcp)
{
	struct list_head *list = &pcp->lists[0];
	unsigned long flags = 0;
	struct page *page;

	spin_lock_irqsave(&zone->lock, flags);
	while (count-- > 0 && !list_empty(list)) {
		page = list_last_entry(list, struct page, lru);
		list_del(&page->lru);
		pcp->count -= 1;
		list_add(&page->lru, &zone->free_list);	/* __free_one_page */
		WRITE_ONCE(zone->nr_free, zone->nr_free + 1);
	}
	spin_unlock_irqrestore(&zone->lock, flags);
}

static void free_one_page(struct zone *zone, struct page *page)
{
	unsigned long flags = 0;

	spin_lock_irqsave(&zone->lock, flags);
	list_add(&page->lru, &zone->free_list);
	WRITE_ONCE(zone->nr_free, zone->nr_free + 1);
	spin_unlock_irqrestore(&zone->lock, flags);
}

static void free_unref_page_commit(struct zone *zone,
				   struct per_cpu_pages *pcp,
				   struct page *page)
{
	list_add(&page->lru, &pcp->lists[0]);
	pcp->count += 1;
	if (pcp->count >= pcp->high)
		free_pcppages_bulk(zone, pcp->batch, pcp);
}

/* free_unref_folios(): one pcp lock for each run of one zone's folios. */
static void free_unref_folios(struct page **folios, int nr)
{
	struct per_cpu_pages *pcp = NULL;
	struct zone *locked_zone = NULL;
	int i;

	for (i = 0; i < nr; i++) {
		struct page *folio = folios[i];
		struct zone *zone = folio_zone(folio);

		WARN_ON(folio->flags & (PG_locked | PG_lru));
		if (zone != locked_zone) {
			if (pcp)
				pcp_spin_unlock(pcp);
			locked_zone = zone;
			pcp = pcp_spin_trylock(zone);
			if (unlikely(!pcp)) {
				free_one_page(zone, folio);
				locked_zone = NULL;
				continue;
			}
		}
		free_unref_page_commit(zone, pcp, folio);
	}
	if (pcp)
		pcp_spin_unlock(pcp);
}

/* A batch whose references drop: those at 0 leave the LRU and are freed. */
static void folios_put(struct folio_batch *folios)
{
	struct lruvec *lruvec = NULL;
	unsigned long flags = 0;
	int i, j;

	for (i = 0, j = 0; i < folios->nr; i++) {
		struct page *folio = folios->folios[i];

		if (!put_page_testzero(folio))
			continue;
		if (PageLRU(folio)) {			/* __page_cache_release */
			if (folio_lruvec(folio) != lruvec) {
				if (lruvec)
					spin_unlock_irqrestore(
						&lruvec->lru_lock, flags);
				lruvec = folio_lruvec(folio);
				spin_lock_irqsave(&lruvec->lru_lock, flags);
			}
			list_del(&folio->lru);		/* lruvec_del_folio */
			lruvec->nr_pages--;
			TestClearPageLRU(folio);
		}
		folios->folios[j++] = folio;
	}
	if (lruvec)
		spin_unlock_irqrestore(&lruvec->lru_lock, flags);
	free_unref_folios(folios->folios, j);
	folios->nr = 0;				/* folio_batch_reinit() */
}

void folio_put(struct page *folio)
{
	struct folio_batch fbatch;

	folio_batch_init(&fbatch);
	folio_batch_add(&fbatch, folio);
	folios_put(&fbatch);
}

static void folio_batch_move_lru(struct folio_batch *fbatch)
{
	struct lruvec *lruvec = NULL;
	unsigned long flags = 0;
	unsigned int i;

	for (i = 0; i < folio_batch_count(fbatch); i++) {
		struct page *folio = fbatch->folios[i];

		if (folio_lruvec(folio) != lruvec) {	/* relock_irqsave */
			if (lruvec)
				spin_unlock_irqrestore(&lruvec->lru_lock,
						       flags);
			lruvec = folio_lruvec(folio);
			spin_lock_irqsave(&lruvec->lru_lock, flags);
		}
		WARN_ON(PageLRU(folio));
		list_add(&folio->lru, &lruvec->lists[0]);	/* lru_add */
		lruvec->nr_pages++;
		SetPageLRU(folio);
	}
	if (lruvec)
		spin_unlock_irqrestore(&lruvec->lru_lock, flags);
	folios_put(fbatch);
}

/* local_lock(&cpu_fbatches.lock): this CPU's, which it owns meanwhile. */
static struct folio_batch *local_lock_lru_add(void)
{
	preempt_disable_cpu();
	return this_cpu_ptr(lru_add_fbatches);
}

void folio_add_lru(struct page *folio)
{
	struct folio_batch *fbatch;

	get_page(folio);			/* folio_get() */
	fbatch = local_lock_lru_add();
	if (!folio_batch_add(fbatch, folio) ||
	    folio_batch_count(fbatch) >= lru_add_batch)
		folio_batch_move_lru(fbatch);
	preempt_enable_cpu();			/* local_unlock() */
}

void lru_add_drain(void)
{
	struct folio_batch *fbatch = local_lock_lru_add();

	if (folio_batch_count(fbatch))
		folio_batch_move_lru(fbatch);
	preempt_enable_cpu();
}

void __folio_batch_release(struct folio_batch *fbatch)
{
	if (!fbatch->percpu_pvec_drained) {
		lru_add_drain();
		fbatch->percpu_pvec_drained = true;
	}
	folios_put(fbatch);
}

void release_pages(struct page **pages, int nr)
{
	struct folio_batch fbatch;
	int i;

	folio_batch_init(&fbatch);
	for (i = 0; i < nr; i++)
		if (!folio_batch_add(&fbatch, pages[i]))
			folios_put(&fbatch);
	if (folio_batch_count(&fbatch))
		folios_put(&fbatch);
}
