// SPDX-License-Identifier: GPL-2.0
/*
 * 2.6.7's order-0 page allocator and page-cache LRU, the parts a shmem
 * fault and a truncation run through (mm/page_alloc.c, mm/swap.c):
 *
 *	buffered_rmqueue(): pcp = &zone->pageset[get_cpu()].pcp[cold];
 *		local_irq_save(flags);
 *		if (pcp->count <= pcp->low)
 *			pcp->count += rmqueue_bulk(zone, 0, pcp->batch,
 *						   &pcp->list);
 *	rmqueue_bulk(): spin_lock_irqsave(&zone->lock, flags), `count`
 *		__rmqueue()s, unlock;
 *	free_hot_cold_page(): if (pcp->count >= pcp->high)
 *		pcp->count -= free_pages_bulk(zone, pcp->batch, &pcp->list, 0);
 *	lru_cache_add(): pvec = &get_cpu_var(lru_add_pvecs); page_cache_get;
 *		if (!pagevec_add(pvec, page)) __pagevec_lru_add(pvec);
 *	__pagevec_lru_add(): zone->lru_lock held across the pagevec, each
 *		page onto the inactive list, then release_pages();
 *	release_pages(): for each page whose count drops to 0: lru_lock
 *		(kept across the pages), del_page_from_lru(), then
 *		__pagevec_free() of 16 at a time with lru_lock dropped;
 *	__pagevec_release(): lru_add_drain(), then release_pages().
 *
 * The pcp list has no lock: interrupts off on its CPU were its exclusion,
 * here preempt_disable_cpu() (sched.h).  One zone per node (ia64 SN2 put
 * a node's memory in one zone), allocated on its node, its pcp batch as
 * free_area_init_core() sized it:
 *
 *	batch = zone->present_pages / 1024;
 *	if (batch * PAGE_SIZE > 256 * 1024)
 *		batch = (256 * 1024) / PAGE_SIZE;
 *	batch /= 4;		(We effectively *= 4 below)
 *	if (batch < 1)
 *		batch = 1;
 *	hot list: low = 2 * batch, high = 6 * batch
 *
 * (2.6.7 had no zone_batchsize() and no rounding to 2^n - 1: those came
 * later.)  A zone of 1 GiB or more hits the 256 KiB cap: batch is 4 with
 * ia64's 16 KiB pages, 16 with 4 KiB.  The model's zone is sized as such
 * a node (ZONE_PRESENT_BYTES) whatever the host has.
 *
 * Departures: no buddy merging (order 0 only: the free area is one
 * list); no watermarks, kswapd or reclaim: a zone whose free pages run out
 * takes PAGE_CHUNK fresh ones from the host under zone->lock, outside any
 * section with preemption off (the kernel's memory was there from boot;
 * this happens until the pool reaches its peak, in the warm-up); a CPU
 * allocates from its own node's zone only (zonelist fallback never
 * needed).  Each CPU's pageset is its per-CPU slot (on its node), not an
 * array in the zone; only the hot list exists (this path never asks for
 * cold pages).  Page references are counted only as the LRU needs them:
 * the page cache's (alloc_page()'s, which add_to_page_cache() keeps; the
 * truncation's lookup reference is the same one) and the lru_add
 * pagevec's; the fault's and the PTE's are not (munmap's release of them
 * is never the last, so never reaches lru_lock).
 *
 * zone->lock and lru_lock are spinlock_t, of the row's kernel: ia64's for
 * 2.6.7 and 2.6.9 (lib/kernel/kernel_locks.c), given again at every mount
 * (mm_2_6_7_init()), the zones being kept across runs.
 */
#include <stdlib.h>

#include "../../lib/kernel/lockstat.h"
#include "../../lib/kernel/percpu.h"
#include "../../lib/kernel/spinlock.h"
#include "mm_2_6_7.h"

/* the model has no interrupts: a lock's own exclusion is enough */
#define spin_lock_irq		spin_lock
#define spin_unlock_irq		spin_unlock
#define spin_lock_irqsave(l, f)	do { (void)(f); spin_lock_irq(l); } while (0)
#define spin_unlock_irqrestore(l, f) do { (void)(f); spin_unlock_irq(l); } while (0)

#undef PAGE_SIZE
#define PAGE_SIZE		MM_PAGE_SIZE

#define ZONE_PRESENT_BYTES	(1UL << 30)

struct per_cpu_pages {
	int count;		/* number of pages in the list */
	int low;		/* low watermark, refill needed */
	int high;		/* high watermark, emptying needed */
	int batch;		/* chunk size for buddy add/remove */
	struct list_head list;	/* the list of pages */
};

struct per_cpu_pageset {
	struct per_cpu_pages pcp;	/* pcp[0], the hot list */
};

struct zone {
	spinlock_t lock;
	unsigned long free_pages;
	struct list_head free_list;	/* free_area[0].free_list */
	/* ZONE_PADDING(_pad1_) */
	spinlock_t lru_lock ____cacheline_aligned;
	struct list_head active_list;
	struct list_head inactive_list;
	unsigned long nr_active;
	unsigned long nr_inactive;
	/* the model's: */
	struct per_cpu_pageset __percpu *pageset;
	unsigned long present_pages;
	int node;
};

static struct zone **node_zones;	/* NODE_DATA(nid)->node_zones */
static struct pagevec __percpu *lru_add_pvecs;

static inline struct zone *page_zone(struct page *page)
{
	return node_zones[page_to_nid(page)];
}

static void zone_pcp_init(struct zone *zone)
{
	unsigned long batch;
	int cpu;

	batch = zone->present_pages / 1024;
	if (batch * PAGE_SIZE > 256 * 1024)
		batch = (256 * 1024) / PAGE_SIZE;
	batch /= 4;		/* We effectively *= 4 below */
	if (batch < 1)
		batch = 1;

	for_each_possible_cpu(cpu) {
		struct per_cpu_pages *pcp = &per_cpu_ptr(zone->pageset,
							 cpu)->pcp;

		pcp->low = 2 * batch;
		pcp->high = 6 * batch;
		pcp->batch = 1 * batch;
	}
}

static void zone_empty(struct zone *zone)
{
	int cpu;

	zone->free_pages = 0;
	INIT_LIST_HEAD(&zone->free_list);
	INIT_LIST_HEAD(&zone->active_list);
	INIT_LIST_HEAD(&zone->inactive_list);
	zone->nr_active = zone->nr_inactive = 0;
	for_each_possible_cpu(cpu) {
		struct per_cpu_pages *pcp = &per_cpu_ptr(zone->pageset,
							 cpu)->pcp;

		pcp->count = 0;
		INIT_LIST_HEAD(&pcp->list);
	}
}

void mm_2_6_7_init(void)
{
	int node;

	if (!node_zones) {
		node_zones = calloc(nr_node_ids, sizeof(*node_zones));
		lru_add_pvecs = alloc_percpu(struct pagevec);
		if (!node_zones)
			abort();
	}
	for_each_online_node(node) {
		struct zone *zone = node_zones[node];

		if (!zone) {
			zone = kzalloc_node(sizeof(*zone), node);
			zone->node = node;
			zone->pageset = alloc_percpu(struct per_cpu_pageset);
			zone_empty(zone);
			node_zones[node] = zone;
		}
		spin_lock_init(&zone->lock);
		spin_lock_init(&zone->lru_lock);
		zone->present_pages = ZONE_PRESENT_BYTES / PAGE_SIZE;
		zone_pcp_init(zone);
		/* free_pages and the free list's head share the lock's line */
		lockstat_register(&zone->lock, "zone_lock", 1,
				  LOCKSTAT_SPIN | LOCKSTAT_PER_NODE);
		lockstat_register(&zone->lru_lock, "lru_lock", 1,
				  LOCKSTAT_SPIN | LOCKSTAT_PER_NODE);
	}
}

void mm_2_6_7_reset(void)
{
	int node, cpu;

	if (!node_zones)
		return;
	for (node = 0; node < nr_node_ids; node++)
		if (node_zones[node])
			zone_empty(node_zones[node]);
	for_each_possible_cpu(cpu)
		per_cpu_ptr(lru_add_pvecs, cpu)->nr = 0;
}

void mm_2_6_7_pcp_sizes(int *batch, int *low, int *high)
{
	struct per_cpu_pages *pcp =
		&this_cpu_ptr(node_zones[numa_node_id()]->pageset)->pcp;

	*batch = pcp->batch;
	*low = pcp->low;
	*high = pcp->high;
}

/* The memory the zone had from boot, a chunk at a time. */
static void zone_grow(struct zone *zone)
{
	page_alloc_grow(zone, free_pages);
}

void mm_2_6_7_reserve(int node, unsigned long pages)
{
	struct zone *zone = node_zones[node];
	int cpu;

	for_each_possible_cpu(cpu)
		if (cpu_to_node(cpu) == node)
			pages += per_cpu_ptr(zone->pageset, cpu)->pcp.high +
				 PAGEVEC_SIZE;
	while (READ_ONCE(zone->free_pages) < pages)
		zone_grow(zone);
}

/* Call me with the zone->lock already held. */
static struct page *__rmqueue(struct zone *zone)
{
	struct page *page;

	if (list_empty(&zone->free_list))
		return NULL;
	page = list_entry(zone->free_list.next, struct page, lru);
	list_del(&page->lru);
	WRITE_ONCE(zone->free_pages, zone->free_pages - 1);
	return page;
}

/*
 * Obtain a specified number of elements from the buddy allocator, all under
 * a single hold of the lock, for efficiency.  Add them to the supplied list.
 * Returns the number of new pages which were placed at *list.
 */
static int rmqueue_bulk(struct zone *zone, int count,
			struct list_head *list)
{
	unsigned long flags = 0;
	int i, allocated = 0;
	struct page *page;

	spin_lock_irqsave(&zone->lock, flags);
	for (i = 0; i < count; ++i) {
		page = __rmqueue(zone);
		if (page == NULL)
			break;
		allocated++;
		list_add_tail(&page->lru, list);
	}
	spin_unlock_irqrestore(&zone->lock, flags);
	return allocated;
}

static int free_pages_bulk(struct zone *zone, int count,
			   struct list_head *list)
{
	unsigned long flags = 0;
	struct page *page;
	int ret = 0;

	spin_lock_irqsave(&zone->lock, flags);
	while (!list_empty(list) && count--) {
		page = list_entry(list->prev, struct page, lru);
		list_del(&page->lru);
		list_add(&page->lru, &zone->free_list);	/* __free_pages_bulk */
		WRITE_ONCE(zone->free_pages, zone->free_pages + 1);
		ret++;
	}
	spin_unlock_irqrestore(&zone->lock, flags);
	return ret;
}

static void free_hot_page(struct page *page)
{
	struct zone *zone = page_zone(page);
	struct per_cpu_pages *pcp;
	unsigned long flags = 0;

	WARN_ON(page->flags & (PG_locked | PG_lru));	/* free_pages_check */
	preempt_disable();				/* get_cpu() */
	pcp = &this_cpu_ptr(zone->pageset)->pcp;
	local_irq_save(flags);
	if (pcp->count >= pcp->high)
		pcp->count -= free_pages_bulk(zone, pcp->batch, &pcp->list);
	list_add(&page->lru, &pcp->list);
	pcp->count++;
	local_irq_restore(flags);
	preempt_enable();				/* put_cpu() */
}

static struct page *buffered_rmqueue(struct zone *zone)
{
	struct page *page = NULL;
	struct per_cpu_pages *pcp;
	unsigned long flags = 0;

	preempt_disable();
	pcp = &this_cpu_ptr(zone->pageset)->pcp;
	local_irq_save(flags);
	if (pcp->count <= pcp->low)
		pcp->count += rmqueue_bulk(zone, pcp->batch, &pcp->list);
	if (pcp->count) {
		page = list_entry(pcp->list.next, struct page, lru);
		list_del(&page->lru);
		pcp->count--;
	}
	local_irq_restore(flags);
	preempt_enable();

	if (page == NULL) {
		spin_lock_irqsave(&zone->lock, flags);
		page = __rmqueue(zone);
		spin_unlock_irqrestore(&zone->lock, flags);
	}
	if (page != NULL) {			/* prep_new_page() */
		page->flags = 0;
		page->mapping = NULL;
		set_page_count(page, 1);
	}
	return page;
}

/* __alloc_pages() of one page: the local node's zone, min = 1 page. */
struct page *alloc_page(void)
{
	struct zone *zone;
	struct page *page;

	for (;;) {
		zone = node_zones[numa_node_id()];
		if (READ_ONCE(zone->free_pages) >= 1 &&
		    (page = buffered_rmqueue(zone)))
			return page;
		zone_grow(zone);
	}
}

void __free_page(struct page *page)
{
	if (put_page_testzero(page))
		free_hot_page(page);
}

static void __pagevec_free(struct pagevec *pvec)
{
	unsigned i;

	for (i = 0; i < pvec->nr; i++)
		free_hot_page(pvec->pages[i]);
}

/*
 * Batched page_cache_release().  Decrement the reference count on all the
 * passed pages.  If it fell to zero then remove the page from the LRU and
 * free it.
 */
static void release_pages(struct page **pages, int nr, int cold)
{
	struct pagevec pages_to_free;
	struct zone *zone = NULL;
	int i;

	pagevec_init(&pages_to_free, cold);
	for (i = 0; i < nr; i++) {
		struct page *page = pages[i];
		struct zone *pagezone;

		if (!put_page_testzero(page))
			continue;

		pagezone = page_zone(page);
		if (pagezone != zone) {
			if (zone)
				spin_unlock_irq(&zone->lru_lock);
			zone = pagezone;
			spin_lock_irq(&zone->lru_lock);
		}
		if (TestClearPageLRU(page)) {		/* del_page_from_lru */
			list_del(&page->lru);
			zone->nr_inactive--;
		}
		if (page_count(page) == 0) {
			if (!pagevec_add(&pages_to_free, page)) {
				spin_unlock_irq(&zone->lru_lock);
				__pagevec_free(&pages_to_free);
				pagevec_init(&pages_to_free, cold);
				zone = NULL;	/* No lock is held */
			}
		}
	}
	if (zone)
		spin_unlock_irq(&zone->lru_lock);
	__pagevec_free(&pages_to_free);
}

/*
 * Add the passed pages to the LRU, then drop the caller's refcount
 * on them.  Reinitialises the caller's pagevec.
 */
static void __pagevec_lru_add(struct pagevec *pvec)
{
	struct zone *zone = NULL;
	unsigned i;

	for (i = 0; i < pvec->nr; i++) {
		struct page *page = pvec->pages[i];
		struct zone *pagezone = page_zone(page);

		if (pagezone != zone) {
			if (zone)
				spin_unlock_irq(&zone->lru_lock);
			zone = pagezone;
			spin_lock_irq(&zone->lru_lock);
		}
		WARN_ON(PageLRU(page));
		SetPageLRU(page);
		list_add(&page->lru, &zone->inactive_list);
		zone->nr_inactive++;
	}
	if (zone)
		spin_unlock_irq(&zone->lru_lock);
	release_pages(pvec->pages, pvec->nr, pvec->cold);
	pagevec_init(pvec, pvec->cold);
}

/* get_cpu_var(lru_add_pvecs): this CPU's, which it owns meanwhile. */
static struct pagevec *get_lru_add_pvec(void)
{
	preempt_disable_cpu();
	return this_cpu_ptr(lru_add_pvecs);
}

void lru_cache_add(struct page *page)
{
	struct pagevec *pvec = get_lru_add_pvec();

	get_page(page);				/* page_cache_get() */
	if (!pagevec_add(pvec, page))
		__pagevec_lru_add(pvec);
	preempt_enable_cpu();			/* put_cpu_var() */
}

static void lru_add_drain(void)
{
	struct pagevec *pvec = get_lru_add_pvec();

	if (pvec->nr)
		__pagevec_lru_add(pvec);
	preempt_enable_cpu();
}

void __pagevec_release(struct pagevec *pvec)
{
	lru_add_drain();
	release_pages(pvec->pages, pvec->nr, pvec->cold);
	pagevec_init(pvec, pvec->cold);
}
