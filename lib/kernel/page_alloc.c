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
unsigned int mm_page_shift = PAGE_SHIFT;

/* What alloc_batch() took from the host, to give back on a new size. */
struct page_chunk {
	struct page_chunk *next;
	void *data;
	struct page *pages;
};

static struct page_chunk *chunks;

void page_alloc_init(void)
{
	if (!pcp)
		pcp = alloc_percpu(struct per_cpu_pages);
}

void page_alloc_set_shift(unsigned int shift)
{
	struct page_chunk *chunk;
	int cpu;

	if (shift == mm_page_shift)
		return;
	mm_page_shift = shift;
	for_each_possible_cpu(cpu)
		per_cpu_ptr(pcp, cpu)->free = NULL;
	while ((chunk = chunks)) {
		chunks = chunk->next;
		kfree_node(chunk->data);
		kfree_node(chunk->pages);
		free(chunk);
	}
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
	struct page_chunk *chunk = malloc(sizeof(*chunk));
	char *data = kzalloc_node(PAGE_BATCH * MM_PAGE_SIZE + MM_PAGE_SIZE,
				  numa_node_id());
	struct page *pages = kzalloc_node(PAGE_BATCH * sizeof(*pages),
					  numa_node_id());
	int i;

	chunk->data = data;
	chunk->pages = pages;
	chunk->next = __atomic_load_n(&chunks, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&chunks, &chunk->next, chunk, true,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	data = (char *)(((uintptr_t)data + MM_PAGE_SIZE - 1) &
			~(MM_PAGE_SIZE - 1));
	for (i = 0; i < PAGE_BATCH; i++) {
		pages[i].virtual = data + i * MM_PAGE_SIZE;
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
