// SPDX-License-Identifier: GPL-2.0
/*
 * A private anonymous mapping's faults and munmap, as will-it-scale's
 * page_fault1 drives them, v4.16 mm/memory.c and mm/mmap.c, over the
 * upstream allocator and LRU (mm_upstream.c, with 4.16's batch sizes
 * set there by the workload):
 *
 *	do_anonymous_page(): alloc_zeroed_user_highpage_movable() (the
 *		page allocator's pcp lists, zone->lock per pcp->batch;
 *		clear_page()); mem_cgroup_try_charge(); __SetPageUptodate();
 *		pte_offset_map_lock(); page_add_new_anon_rmap();
 *		lru_cache_add_active_or_unevictable() (the per-CPU pagevec,
 *		the node's lru_lock per PAGEVEC_SIZE pages); set_pte_at();
 *	munmap() -> unmap_region(): zap_pte_range() clears each pte,
 *		page_remove_rmap(), __tlb_remove_page() into the mmu_gather
 *		(MMU_GATHER_BUNDLE pages on the stack, then up to
 *		MAX_GATHER_BATCH_COUNT batches of MAX_GATHER_BATCH; when
 *		they are full, and at the end, tlb_flush_mmu_free() ->
 *		free_pages_and_swap_cache() a batch at a time: lru_add_drain(),
 *		release_pages(): each page whose count drops to 0 off the LRU
 *		under lru_lock, then to the pcp list (zone->lock when the
 *		list reaches pcp->high, pcp->batch pages back).
 *
 * Departures: the vma is an array of ptes (no page-table pages, so no
 * split pte lock: in process mode each task's is its own and never
 * contended), no mmap_sem (the same: one task a process), no rmap, memcg
 * or rss counters, no TLB flush; their time, and the trap's, is the
 * workload's --anon-work-ns outside any lock.  release_pages() is
 * today's (a folio batch, 31 pages, per lru_lock hold and per pcp
 * lock; 4.16 re-took lru_lock every SWAP_CLUSTER_MAX, 32, and freed the
 * whole mmu_gather batch to the pcp list with interrupts off).  The
 * allocator's own departures are mm_upstream.c's.
 */
#include <errno.h>
#include <stdlib.h>

#include "anon.h"
#include "mm_upstream.h"

/* include/asm-generic/tlb.h, 4 KiB pages: (PAGE_SIZE - 16) / 8 */
#define MMU_GATHER_BUNDLE	8
#define MAX_GATHER_BATCH	510
#define MAX_GATHER_BATCH_COUNT	(10000UL / MAX_GATHER_BATCH)
/* what one mmu_gather holds before it must flush */
#define MMU_GATHER_MAX	(MMU_GATHER_BUNDLE + \
			 MAX_GATHER_BATCH_COUNT * MAX_GATHER_BATCH)

struct vm_area_struct {
	unsigned long nr_pages;
	struct page **ptes;		/* a pte a page: NULL is pte_none */
};

struct vm_area_struct *anon_mmap(unsigned long pages)
{
	struct vm_area_struct *vma = calloc(1, sizeof(*vma));

	if (!vma)
		abort();
	vma->nr_pages = pages;
	vma->ptes = calloc(pages, sizeof(*vma->ptes));
	if (!vma->ptes)
		abort();
	return vma;
}

int do_anonymous_page(struct vm_area_struct *vma, unsigned long idx,
		      struct page **pagep)
{
	struct page *page;

	if (idx >= vma->nr_pages)
		return -EFAULT;
	if (READ_ONCE(vma->ptes[idx])) {	/* !pte_none(): already there */
		*pagep = vma->ptes[idx];
		return 0;
	}
	page = folio_alloc();	/* alloc_zeroed_user_highpage_movable() */
	clear_page(page_address(page));
	SetPageUptodate(page);
	folio_add_lru(page);	/* lru_cache_add_active_or_unevictable() */
	WRITE_ONCE(vma->ptes[idx], page);	/* set_pte_at() */
	*pagep = page;
	return 0;
}

/* One mmu_gather batch: free_pages_and_swap_cache(). */
static void free_pages_and_swap_cache(struct page **pages, int nr)
{
	lru_add_drain();
	release_pages(pages, nr);
}

/* tlb_flush_mmu_free(): the gathered pages, a batch at a time. */
static void tlb_flush_mmu_free(struct page **gathered, unsigned long nr)
{
	unsigned long i, n = MMU_GATHER_BUNDLE;

	for (i = 0; i < nr; i += n, n = MAX_GATHER_BATCH)
		free_pages_and_swap_cache(gathered + i,
					  nr - i < n ? nr - i : n);
}

void anon_munmap(struct vm_area_struct *vma)
{
	struct page **gathered = malloc(MMU_GATHER_MAX * sizeof(*gathered));
	unsigned long idx, nr = 0;

	if (!gathered)
		abort();
	for (idx = 0; idx < vma->nr_pages; idx++) {	/* zap_pte_range() */
		struct page *page = vma->ptes[idx];

		if (!page)
			continue;
		vma->ptes[idx] = NULL;		/* ptep_get_and_clear_full() */
		gathered[nr++] = page;		/* __tlb_remove_page() */
		if (nr == MMU_GATHER_MAX) {	/* force_flush */
			tlb_flush_mmu_free(gathered, nr);
			nr = 0;
		}
	}
	tlb_flush_mmu_free(gathered, nr);	/* tlb_finish_mmu() */
	free(gathered);
	free(vma->ptes);
	free(vma);
}

unsigned long anon_pages_mapped(struct vm_area_struct *vma)
{
	unsigned long idx, n = 0;

	for (idx = 0; idx < vma->nr_pages; idx++)
		n += vma->ptes[idx] != NULL;
	return n;
}
