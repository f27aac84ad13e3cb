// SPDX-License-Identifier: GPL-2.0
/*
 * Today's fault path of a shared /dev/zero mapping, mm/shmem.c (v6.x):
 * shmem_fault() -> shmem_get_folio_gfp(): a lockless page-cache lookup
 * (RCU), then shmem_alloc_and_add_folio(): allocate, insert under the
 * mapping's xarray lock, account the block to the inode under its i_lock
 * (the kernel mount is unlimited: the superblock's used_blocks counter is
 * not touched), info->lock for alloced; then clear the page.  No
 * superblock-wide lock anywhere on the path (as described in
 * ../shared/reference/kernel-paths.md, section 2).
 *
 * The new folio goes on the LRU (folio_add_lru()), and truncation gives
 * the folios back a folio batch at a time (shmem_undo_range():
 * folio_batch_release()), through today's allocator (mm_upstream.c:
 * the pcp lock, zone->lock and the lruvec lock of the faulting CPU's
 * node).
 *
 * Departures: order-0 folios only; the xarray is a flat array of slots
 * whose readers use READ_ONCE in place of RCU, and folio references are
 * counted only as the LRU needs them (pages are freed only by truncation,
 * after every user); memcg charging, vm_committed_as and the PTE
 * installation are not modelled.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/kernel/spinlock.h"
#include "mm_upstream.h"
#include "shmem_fault.h"

/* An order-0 folio is the modelled machine's page (page_alloc.h). */
#undef PAGE_SHIFT
#define PAGE_SHIFT	mm_page_shift

struct address_space {
	struct page **i_pages;		/* the xarray: a slot per index */
	spinlock_t xa_lock;
	unsigned long nrpages;
};

struct inode {
	spinlock_t i_lock;
	unsigned long i_blocks;
	long long i_size;
	struct address_space *i_mapping;
	struct address_space i_data;
};

struct shmem_inode_info {
	spinlock_t lock;
	unsigned long alloced;		/* data pages alloced to file */
	unsigned long swapped;		/* subtotal assigned to swap */
	struct inode vfs_inode;
};

struct file {
	struct inode *f_inode;
};

#define SHMEM_I(inode)	((struct shmem_inode_info *)((char *)(inode) - \
			 offsetof(struct shmem_inode_info, vfs_inode)))

static void inode_add_blocks(struct inode *inode, long pages)
{
	spin_lock(&inode->i_lock);
	inode->i_blocks += pages * BLOCKS_PER_PAGE;
	spin_unlock(&inode->i_lock);
}

static void shmem_recalc_inode(struct inode *inode, long alloced, long swapped)
{
	struct shmem_inode_info *info = SHMEM_I(inode);
	long freed;

	spin_lock(&info->lock);
	info->alloced += alloced;
	info->swapped += swapped;
	freed = info->alloced - info->swapped -
		READ_ONCE(inode->i_mapping->nrpages);
	if (freed > 0)
		info->alloced -= freed;
	spin_unlock(&info->lock);
	if (freed > 0)
		inode_add_blocks(inode, -freed);
}

/* filemap_get_entry() + folio_lock(): an RCU walk in the kernel. */
static struct page *filemap_lock_folio(struct address_space *mapping,
				       unsigned long index)
{
	struct page *folio = __atomic_load_n(&mapping->i_pages[index],
					     __ATOMIC_ACQUIRE);

	if (folio)
		lock_page(folio);
	return folio;
}

static int shmem_add_to_page_cache(struct page *folio,
				   struct address_space *mapping,
				   unsigned long index)
{
	int error = -EEXIST;

	folio->mapping = mapping;
	folio->index = index;
	spin_lock(&mapping->xa_lock);
	if (!mapping->i_pages[index]) {
		__atomic_store_n(&mapping->i_pages[index], folio,
				 __ATOMIC_RELEASE);
		WRITE_ONCE(mapping->nrpages, mapping->nrpages + 1);
		error = 0;
	}
	spin_unlock(&mapping->xa_lock);
	return error;
}

static struct page *shmem_alloc_and_add_folio(struct inode *inode,
					      unsigned long index, int *error)
{
	struct page *folio = folio_alloc();

	TestSetPageLocked(folio);		/* __folio_set_locked() */
	*error = shmem_add_to_page_cache(folio, inode->i_mapping, index);
	if (*error) {
		unlock_page(folio);
		folio_put(folio);
		return NULL;
	}
	inode_add_blocks(inode, 1);		/* shmem_inode_acct_blocks() */
	shmem_recalc_inode(inode, 1, 0);
	folio_add_lru(folio);
	return folio;
}

static int shmem_get_folio_gfp(struct inode *inode, unsigned long index,
			       struct page **foliop)
{
	struct page *folio;
	int error;

	if (((long long)index << PAGE_SHIFT) >= inode->i_size)
		return -EINVAL;
repeat:
	folio = filemap_lock_folio(inode->i_mapping, index);
	if (folio && PageUptodate(folio))
		goto out;
	if (!folio) {
		folio = shmem_alloc_and_add_folio(inode, index, &error);
		if (error == -EEXIST)
			goto repeat;
	}
	clear_page(page_address(folio));	/* folio_zero_range() */
	SetPageUptodate(folio);
out:
	unlock_page(folio);
	*foliop = folio;
	return 0;
}

static int shmem_fault(struct file *file, unsigned long index,
		       struct page **pagep)
{
	return shmem_get_folio_gfp(file->f_inode, index, pagep);
}

static struct file *shmem_zero_setup(unsigned long pages)
{
	struct shmem_inode_info *info = calloc(1, sizeof(*info));
	struct file *file = calloc(1, sizeof(*file));
	struct inode *inode = &info->vfs_inode;

	spin_lock_init(&info->lock);
	spin_lock_init(&inode->i_lock);
	spin_lock_init(&inode->i_data.xa_lock);
	inode->i_size = (long long)pages << PAGE_SHIFT;
	inode->i_mapping = &inode->i_data;
	inode->i_data.i_pages = calloc(pages, sizeof(void *));
	file->f_inode = inode;
	return file;
}

/*
 * shmem_undo_range(): remove each folio under xa_lock, its reference
 * dropped a folio batch at a time, then recalc.
 */
static void shmem_undo_range(struct file *file, unsigned long start,
			     unsigned long end)
{
	struct inode *inode = file->f_inode;
	struct address_space *mapping = inode->i_mapping;
	struct folio_batch fbatch;
	struct page *folio;
	unsigned long index;

	folio_batch_init(&fbatch);
	for (index = start; index < end; index++) {
		spin_lock(&mapping->xa_lock);
		folio = mapping->i_pages[index];
		__atomic_store_n(&mapping->i_pages[index], NULL,
				 __ATOMIC_RELAXED);
		if (folio)
			WRITE_ONCE(mapping->nrpages, mapping->nrpages - 1);
		spin_unlock(&mapping->xa_lock);
		if (folio && !folio_batch_add(&fbatch, folio))
			folio_batch_release(&fbatch);
	}
	folio_batch_release(&fbatch);
	shmem_recalc_inode(inode, 0, 0);
}

static void shmem_evict_inode(struct file *file)
{
	struct inode *inode = file->f_inode;

	shmem_undo_range(file, 0, inode->i_size >> PAGE_SHIFT);
	WARN_ON(inode->i_blocks);
	free(inode->i_data.i_pages);
	free(SHMEM_I(inode));
	free(file);
}

static void shm_mount(unsigned long size_limit)
{
	mm_upstream_init();
}

/*
 * Each lock and the counts it guards on one line: xa_lock and nrpages,
 * i_lock and i_blocks, info->lock and alloced (in a calloc()ed object
 * the last two may share one).
 */
static void register_shared(struct file *file)
{
	struct inode *inode = file->f_inode;

	lockstat_register(&inode->i_data.xa_lock, "xa_lock", 1, LOCKSTAT_SPIN);
	lockstat_register(&inode->i_lock, "i_lock", 1, LOCKSTAT_SPIN);
	lockstat_register(&SHMEM_I(inode)->lock, "info_lock", 1,
			  LOCKSTAT_SPIN);
}

static void sb_stats(struct shmem_stats *st)
{
	memset(st, 0, sizeof(*st));
}

static void shmem_stats(struct file *file, struct shmem_stats *st)
{
	struct inode *inode = file->f_inode;

	sb_stats(st);
	st->inode_books = true;
	st->i_blocks = inode->i_blocks;
	st->nrpages = inode->i_mapping->nrpages;
	st->lock_kind = SHMEM_I(inode)->lock.kind;
}

const struct shmem_fault_ops shmem_fault_upstream = {
	.shm_mount = shm_mount,
	.mm_reserve = mm_upstream_reserve,
	.shmem_zero_setup = shmem_zero_setup,
	.shmem_fault = shmem_fault,
	.shmem_release = shmem_undo_range,
	.fput = shmem_evict_inode,
	.lockstat_register = register_shared,
	.shmem_stats = shmem_stats,
	.sb_stats = sb_stats,
};
