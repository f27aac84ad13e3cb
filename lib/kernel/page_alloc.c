// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>

#include "page_alloc.h"
#include "percpu.h"

unsigned int mm_page_shift = PAGE_SHIFT;

/* What page_alloc_fresh() took from the host, to give back on a new size. */
struct page_chunk {
	struct page_chunk *next;
	void *data;
	struct page *pages;
};

static struct page_chunk *chunks;
static unsigned long fresh_calls;

unsigned long page_alloc_fresh_calls(void)
{
	return __atomic_load_n(&fresh_calls, __ATOMIC_RELAXED);
}

void page_alloc_set_shift(unsigned int shift)
{
	struct page_chunk *chunk;

	if (shift == mm_page_shift)
		return;
	mm_page_shift = shift;
	while ((chunk = chunks)) {
		chunks = chunk->next;
		kfree_node(chunk->data);
		kfree_node(chunk->pages);
		free(chunk);
	}
}

/*
 * Data and struct pages apart, both on the node (kzalloc_node touches
 * the data, as the kernel's pages exist before it hands them out).
 */
void page_alloc_fresh(int node, struct list_head *list)
{
	struct page_chunk *chunk = malloc(sizeof(*chunk));
	char *data = kzalloc_node(PAGE_CHUNK * MM_PAGE_SIZE + MM_PAGE_SIZE,
				  node);
	struct page *pages = kzalloc_node(PAGE_CHUNK * sizeof(*pages), node);
	int i;

	if (!chunk)
		abort();
	__atomic_fetch_add(&fresh_calls, 1, __ATOMIC_RELAXED);
	chunk->data = data;
	chunk->pages = pages;
	chunk->next = __atomic_load_n(&chunks, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&chunks, &chunk->next, chunk, true,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
	data = (char *)(((uintptr_t)data + MM_PAGE_SIZE - 1) &
			~(MM_PAGE_SIZE - 1));
	for (i = 0; i < PAGE_CHUNK; i++) {
		pages[i].virtual = data + i * MM_PAGE_SIZE;
		pages[i].nid = node;
		list_add_tail(&pages[i].lru, list);
	}
}

void __lock_page(struct page *page)
{
	while (TestSetPageLocked(page))
		yield();
}
