// SPDX-License-Identifier: GPL-2.0
/*
 * The mm around the variant's shmem path, what the fault workload's tasks
 * do to a /dev/zero shared mapping: mmap() gets a new shmem object
 * (drivers/char/mem.c mmap_zero() -> shmem_zero_setup(), 2.6.7 and
 * today alike), a write faults each page in (handle_mm_fault(), inline
 * in shmem_fault.h), and munmap() of the last mapping drops the object
 * (fput(): shmem_delete_inode(), today's shmem_evict_inode()).
 *
 * Departures: the object is the mapping (a struct file, indexed in pages,
 * no vma, no page tables), and threads share one by being handed it, as
 * the threads of one process share their MAP_SHARED vma.
 */
#include "shmem_fault.h"

struct file *shmem_zero_setup_shared(const struct shmem_fault_ops *ops,
				     unsigned long pages)
{
	struct file *file = ops->shmem_zero_setup(pages);

	ops->lockstat_register(file);
	return file;
}

long shmem_fault_pass(const struct shmem_fault_ops *ops, unsigned long pages)
{
	struct file *file = ops->shmem_zero_setup(pages);
	struct page *page;
	unsigned long i;
	int ret;

	for (i = 0; i < pages; i++) {
		ret = ops->shmem_fault(file, i, &page);
		if (ret) {
			ops->fput(file);
			return ret;
		}
		((volatile char *)page_address(page))[0] = 1;
	}
	ops->fput(file);
	return pages;
}

bool shmem_books_balance(const struct shmem_fault_ops *ops,
			 struct shmem_stats *st)
{
	ops->sb_stats(st);
	return !st->has_sbinfo || st->free_blocks == st->max_blocks;
}
