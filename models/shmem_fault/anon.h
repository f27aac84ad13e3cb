/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A private anonymous mapping (anon.c): will-it-scale page_fault1's
 * mmap(MAP_PRIVATE | MAP_ANONYMOUS), a write fault a page, munmap, on the
 * upstream allocator and LRU (mm_upstream.h).
 */
#ifndef KSCALE_SHMEM_ANON_H
#define KSCALE_SHMEM_ANON_H

#include "../../lib/kernel/delay.h"
#include "../../lib/kernel/page_alloc.h"
#include "shmem_fault.h"

struct vm_area_struct;

/* mmap(MAP_PRIVATE | MAP_ANONYMOUS) of `pages`: no page yet. */
struct vm_area_struct *anon_mmap(unsigned long pages);
/* The write fault at page idx: the page, zeroed, on the LRU; 0 or -EFAULT. */
int do_anonymous_page(struct vm_area_struct *vma, unsigned long idx,
		      struct page **pagep);
/* munmap(): every page back to the allocator, the vma gone. */
void anon_munmap(struct vm_area_struct *vma);
/* The ptes that map a page (the tests count them). */
unsigned long anon_pages_mapped(struct vm_area_struct *vma);

/*
 * handle_mm_fault() of a write to page idx of the mapping, as
 * shmem_fault.h's for a shared one: work_ns of the rest of the fault
 * (trap, page-table walk, rmap, memcg, and its share of the munmap's
 * work) outside any lock, half before do_anonymous_page() and half
 * after, then the task's write; 0, or FAULT_NOT_CLEARED (shmem_fault.h)
 * where the page did not read back zero.
 */
static inline int handle_anon_fault(struct vm_area_struct *vma,
				    unsigned long idx, unsigned long work_ns)
{
	struct page *page;
	char *addr;
	int err;

	ndelay(work_ns / 2);
	err = do_anonymous_page(vma, idx, &page);
	ndelay(work_ns - work_ns / 2);
	if (err)
		return err;
	addr = page_address(page);
	if (unlikely(*(long *)addr))
		return FAULT_NOT_CLEARED;
	addr[0] = 1;
	return 0;
}

#endif
