// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include "lockstat.h"
#include "page_alloc.h"
#include "percpu.h"
#include "spinlock.h"

#define PAGE_BATCH	64

/* The lock only matters when threads share a CPU (--oversubscribe). */
struct per_cpu_pages {
	spinlock_t lock;
	struct page *free;
};

static struct per_cpu_pages __percpu *pcp;

void page_alloc_init(void)
{
	if (!pcp)
		pcp = alloc_percpu(struct per_cpu_pages);
}

/* The list's head shares the lock's line; its pages are the CPU's own. */
void page_alloc_lockstat_register(void)
{
	int cpu;

	for_each_possible_cpu(cpu)
		lockstat_register(&per_cpu_ptr(pcp, cpu)->lock, "pcp_lock", 1,
				  LOCKSTAT_SPIN | LOCKSTAT_PER_CPU);
}

/*
 * A batch of pages on this CPU's node, data and struct pages apart, made
 * outside the list's lock: the host may sleep in malloc or on a first
 * touch, and no model task may sleep with preemption disabled (kzalloc
 * touches the data here, as the kernel's pages exist before it hands
 * them out).
 */
static struct page *alloc_batch(void)
{
	char *data = kzalloc_node(PAGE_BATCH * PAGE_SIZE + PAGE_SIZE,
				  numa_node_id());
	struct page *pages = kzalloc_node(PAGE_BATCH * sizeof(*pages),
					  numa_node_id());
	int i;

	data = (char *)(((uintptr_t)data + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1));
	for (i = 0; i < PAGE_BATCH; i++) {
		pages[i].virtual = data + i * PAGE_SIZE;
		pages[i].lru = i + 1 < PAGE_BATCH ? &pages[i + 1] : NULL;
	}
	return pages;
}

struct page *alloc_page(void)
{
	struct per_cpu_pages *list = this_cpu_ptr(pcp);
	struct page *page, *batch;

	spin_lock(&list->lock);
	while (unlikely(!list->free)) {
		spin_unlock(&list->lock);
		batch = alloc_batch();
		list = this_cpu_ptr(pcp);
		spin_lock(&list->lock);
		batch[PAGE_BATCH - 1].lru = list->free;
		list->free = batch;
	}
	page = list->free;
	list->free = page->lru;
	spin_unlock(&list->lock);
	page->flags = 0;
	page->mapping = NULL;
	return page;
}

void __free_page(struct page *page)
{
	struct per_cpu_pages *list = this_cpu_ptr(pcp);

	spin_lock(&list->lock);
	page->lru = list->free;
	list->free = page;
	spin_unlock(&list->lock);
}

void __lock_page(struct page *page)
{
	while (TestSetPageLocked(page))
		yield();
}
