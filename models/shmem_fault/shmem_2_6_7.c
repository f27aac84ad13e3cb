// SPDX-License-Identifier: GPL-2.0
/*
 * 2.6.7 mm/shmem.c, the fault path of a shared /dev/zero mapping:
 * shmem_zero_setup() -> shmem_file_setup("dev/zero") makes one unlinked
 * inode per mapping; every fault runs shmem_nopage() -> shmem_getpage(),
 * which takes the inode's info->lock and, for every new block, the
 * superblock-wide sbinfo->stat_lock (lock order: info->lock, then
 * stat_lock or mapping->tree_lock).
 *
 * Three variants share this file, as the patches share its code:
 * - stat_lock: 2.6.7 itself, the internal mount keeping block counts
 *   (the seed was posted against 2.6.8-rc1; its fault path was not
 *   compared line by line here);
 * - nosbinfo: the seed, SHMEM_NOSBINFO on "dev/zero" inodes skips every
 *   stat_lock / free_blocks / i_blocks update;
 * - no_sbinfo_mount: 2.6.9 ("shmem: no sbinfo for shm mount"), the
 *   internal mount has no sbinfo and every stat_lock block is under
 *   `if (sbinfo)`.
 * The baseline pays one always-taken branch for the patches' tests.
 *
 * Departures: the mapping's radix tree is a flat array of slots (still
 * under tree_lock); swap is never used, so only the hole path runs;
 * index pages are also kept on a list for truncation to free; page
 * locks spin and yield instead of sleeping; there are no page tables or
 * TLB.  Pages come from 2.6.7's allocator and go on its LRU (mm_2_6_7.c:
 * the per-CPU lists, zone->lock and lru_lock of the faulting CPU's node),
 * with the page references that path counts.  shmem_release() frees a
 * range of a live object, which 2.6.7 cannot do (see release_range()).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/spinlock.h"
#include "mm_2_6_7.h"
#include "shmem_fault.h"

/*
 * The seed ran 2.6.7 on ia64 (the Altix), and its locks are ia64's: the
 * variants' rows name kernels 2.6.7 and 2.6.9, whose spinlock_t is
 * ia64's cmpxchg lock (lib/kernel/kernel_locks.c, spinlock_ia64.h), as
 * are mm_2_6_7.c's.  Its waiters retry as x86's byte lock of 2.6.7 did,
 * but no count of waiters is kept in the word: the 256P and 512P runs'
 * hundreds of CPUs on the one stat_lock (configs/at-scale-002.conf) never
 * let a second holder in, as x86's byte would past 128.
 *
 * stat_lock's takes are counted into stat_lock_stat once it is released
 * (spin_lock_account(), spinlock.h): no variant's section pays for the
 * statistics.  The macro is spinlock.h's function with this file's
 * statistics.
 */
#define spin_unlock_account(lock, wait) \
	spin_unlock_account(lock, &stat_lock_stat, wait)

__thread struct lock_class_stats stat_lock_stat;

/*
 * PAGE_CACHE_SIZE is the modelled machine's page (page_alloc.h): with
 * ia64's 16 KiB, ENTRIES_PER_PAGE is 2048 not 512 (one index page maps
 * 32 MiB, not 2 MiB), BLOCKS_PER_PAGE 32 not 8 and SHMEM_MAX_INDEX grows;
 * SHMEM_NR_DIRECT stays 16 (a constant in shmem_fs.h).
 */
#undef PAGE_SHIFT
#undef PAGE_SIZE
#define PAGE_SHIFT		mm_page_shift
#define PAGE_SIZE		MM_PAGE_SIZE

#define SHMEM_NR_DIRECT		16
#define ENTRIES_PER_PAGE	(PAGE_SIZE / sizeof(unsigned long))
#define ENTRIES_PER_PAGEPAGE	(ENTRIES_PER_PAGE * ENTRIES_PER_PAGE)
#define SHMEM_MAX_INDEX		(SHMEM_NR_DIRECT + \
				 (ENTRIES_PER_PAGEPAGE / 2) * (ENTRIES_PER_PAGE + 1))

#define VM_READ			0x00000001
#define VM_WRITE		0x00000002
#define VM_EXEC			0x00000004
#define VM_ACCOUNT		0x00100000
#define SHMEM_PAGEIN		VM_READ
#define SHMEM_TRUNCATE		VM_WRITE
#define SHMEM_NOSBINFO		VM_EXEC

#define ERR_PTR(e)		((void *)(long)(e))
#define PTR_ERR(p)		((long)(p))
#define IS_ERR(p)		((unsigned long)(p) >= (unsigned long)-4095)

typedef struct {
	unsigned long val;
} swp_entry_t;

struct shmem_sb_info {
	unsigned long max_blocks;	/* How many blocks are allowed */
	unsigned long free_blocks;	/* How many are left for allocation */
	unsigned long max_inodes;	/* How many inodes are allowed */
	unsigned long free_inodes;	/* How many are left for allocation */
	spinlock_t stat_lock;
};

struct super_block {
	struct shmem_sb_info *s_fs_info;
};

struct address_space {
	struct inode *host;
	struct page **page_tree;	/* the radix tree: a slot per index */
	spinlock_t tree_lock;
	unsigned long nrpages;
};

struct inode {
	unsigned long i_blocks;
	long long i_size;
	struct super_block *i_sb;
	struct address_space *i_mapping;
	struct address_space i_data;
};

struct shmem_inode_info {
	spinlock_t lock;
	unsigned long flags;
	unsigned long alloced;		/* data pages alloced to file */
	unsigned long swapped;		/* subtotal assigned to swap */
	unsigned long next_index;	/* highest alloced index + 1 */
	swp_entry_t i_direct[SHMEM_NR_DIRECT]; /* first blocks */
	void **i_indirect;		/* top indirect blocks page */
	struct list_head index_pages;	/* model only: every index page */
	unsigned long nr_index_pages;
	struct inode vfs_inode;
};

struct file {
	struct inode *f_inode;
};

enum sgp_type { SGP_READ, SGP_CACHE, SGP_WRITE };

/* kmalloc()ed apart in the kernel (sget(), shmem_fill_super()): so here. */
static struct super_block *shm_sb;	/* shm_mnt->mnt_sb */
static struct shmem_sb_info *shm_sbinfo;
static bool seed_patch;			/* the seed's SHMEM_NOSBINFO is applied */
/* mm/mmap.c's global: a line of its own here, other globals beside it there */
static atomic_long_t vm_committed_space ____cacheline_aligned;

#define SHMEM_I(inode)	((struct shmem_inode_info *)((char *)(inode) - \
			 offsetof(struct shmem_inode_info, vfs_inode)))
#define SHMEM_SB(sb)	((sb)->s_fs_info)

/*
 * Where this inode's blocks are counted: the superblock, unless the seed
 * marked the inode SHMEM_NOSBINFO or (2.6.9) the mount has no sbinfo.
 */
static inline struct shmem_sb_info *shmem_sb_books(struct inode *inode)
{
	struct shmem_sb_info *sbinfo = SHMEM_SB(inode->i_sb);

	/* read without info->lock, as the kernel does: the bit never changes */
	if (!sbinfo || (READ_ONCE(SHMEM_I(inode)->flags) & SHMEM_NOSBINFO))
		return NULL;
	return sbinfo;
}

/* VM_ACCOUNT objects are charged whole at setup: nothing per block. */
static inline int shmem_acct_size(unsigned long flags, long long size)
{
	if (flags & VM_ACCOUNT) {
		lockstat_visit(&vm_committed_space);
		atomic_long_add_return(size >> PAGE_SHIFT, &vm_committed_space);
	}
	return 0;
}

static inline void shmem_unacct_size(unsigned long flags, long long size)
{
	if (flags & VM_ACCOUNT) {
		lockstat_visit(&vm_committed_space);
		atomic_long_add_return(-(size >> PAGE_SHIFT), &vm_committed_space);
	}
}

static void shmem_free_block(struct inode *inode)
{
	struct shmem_sb_info *sbinfo = shmem_sb_books(inode);
	uint64_t wait;

	if (!sbinfo)
		return;
	wait = spin_lock_account(&sbinfo->stat_lock);
	sbinfo->free_blocks++;
	inode->i_blocks -= BLOCKS_PER_PAGE;
	spin_unlock_account(&sbinfo->stat_lock, wait);
}

/* Return the blocks of pages that left the page cache.  info->lock held. */
static void shmem_recalc_inode(struct inode *inode)
{
	struct shmem_inode_info *info = SHMEM_I(inode);
	uint64_t wait;
	long freed;

	freed = info->alloced - info->swapped - READ_ONCE(inode->i_mapping->nrpages);
	if (freed > 0) {
		struct shmem_sb_info *sbinfo = shmem_sb_books(inode);

		info->alloced -= freed;
		if (!sbinfo)
			return;
		wait = spin_lock_account(&sbinfo->stat_lock);
		sbinfo->free_blocks += freed;
		inode->i_blocks -= freed * BLOCKS_PER_PAGE;
		spin_unlock_account(&sbinfo->stat_lock, wait);
	}
}

/*
 * shmem_swp_entry - find the swap vector position in the info structure
 * (SHMEM_NR_DIRECT entries in the inode, then i_indirect: its first half
 * doubly indirect, its second half triply indirect).  *page, if set, is a
 * zeroed page to use for a missing level; it is set to 0 once used.
 */
static swp_entry_t *shmem_swp_entry(struct shmem_inode_info *info,
				    unsigned long index, unsigned long *page)
{
	unsigned long offset;
	void **dir;

	if (index < SHMEM_NR_DIRECT)
		return info->i_direct + index;
	if (!info->i_indirect) {
		if (page && *page) {
			info->i_indirect = (void **)*page;
			*page = 0;
		}
		return NULL;			/* need another page */
	}

	index -= SHMEM_NR_DIRECT;
	offset = index % ENTRIES_PER_PAGE;
	index /= ENTRIES_PER_PAGE;
	dir = info->i_indirect;

	if (index >= ENTRIES_PER_PAGE / 2) {
		index -= ENTRIES_PER_PAGE / 2;
		dir += ENTRIES_PER_PAGE / 2 + index / ENTRIES_PER_PAGE;
		index %= ENTRIES_PER_PAGE;
		if (!*dir) {
			if (page && *page) {
				*dir = (void *)*page;
				*page = 0;
			}
			return NULL;		/* need another page */
		}
		dir = (void **)*dir;
	}

	dir += index;
	if (!*dir) {
		if (!page || !*page)
			return NULL;		/* need a page */
		*dir = (void *)*page;
		*page = 0;
	}
	return (swp_entry_t *)*dir + offset;
}

static struct page *shmem_dir_alloc(void)
{
	struct page *page = alloc_page();

	clear_page(page_address(page));
	return page;
}

/* The spare index page went into the vector: keep it for truncation. */
static void shmem_index_page_used(struct shmem_inode_info *info,
				  struct page **page, unsigned long addr)
{
	if (!*page || addr)
		return;
	list_add(&(*page)->lru, &info->index_pages);
	info->nr_index_pages++;
	*page = NULL;
}

/*
 * shmem_swp_alloc - get the position of the swap entry for the page,
 * allocating index pages as needed.  info->lock held, dropped around the
 * allocation.
 */
static swp_entry_t *shmem_swp_alloc(struct shmem_inode_info *info,
				    unsigned long index, enum sgp_type sgp)
{
	struct inode *inode = &info->vfs_inode;
	struct shmem_sb_info *sbinfo = shmem_sb_books(inode);
	struct page *page = NULL;
	unsigned long addr = 0;
	swp_entry_t *entry;
	uint64_t wait;

	if (((long long)index << PAGE_SHIFT) >= inode->i_size)
		return ERR_PTR(-EINVAL);

	while (!(entry = shmem_swp_entry(info, index, &addr))) {
		shmem_index_page_used(info, &page, addr);
		/*
		 * Test free_blocks against 1 not 0, since we have 1 data
		 * page (and perhaps indirect index pages) yet to allocate:
		 * a waste to allocate index if we cannot allocate data.
		 */
		if (sbinfo) {
			wait = spin_lock_account(&sbinfo->stat_lock);
			if (sbinfo->free_blocks <= 1) {
				spin_unlock_account(&sbinfo->stat_lock, wait);
				return ERR_PTR(-ENOSPC);
			}
			sbinfo->free_blocks--;
			inode->i_blocks += BLOCKS_PER_PAGE;
			spin_unlock_account(&sbinfo->stat_lock, wait);
		}

		spin_unlock(&info->lock);
		page = shmem_dir_alloc();
		spin_lock(&info->lock);
		addr = (unsigned long)page_address(page);
	}
	shmem_index_page_used(info, &page, addr);
	if (page) {
		/* another task gave its page */
		shmem_free_block(inode);
		__free_page(page);
	}
	if (info->next_index <= index)
		info->next_index = index + 1;
	(void)sgp;
	return entry;
}

static struct page *find_lock_page(struct address_space *mapping,
				   unsigned long idx)
{
	struct page *page;

	spin_lock(&mapping->tree_lock);
	page = mapping->page_tree[idx];
	spin_unlock(&mapping->tree_lock);
	if (page)
		lock_page(page);
	return page;
}

/* The new page goes in locked; -EEXIST if the index is taken. */
static int add_to_page_cache(struct page *page, struct address_space *mapping,
			     unsigned long idx)
{
	int error = -EEXIST;

	spin_lock(&mapping->tree_lock);
	if (!mapping->page_tree[idx]) {
		TestSetPageLocked(page);
		page->mapping = mapping;
		page->index = idx;
		mapping->page_tree[idx] = page;
		WRITE_ONCE(mapping->nrpages, mapping->nrpages + 1);
		error = 0;
	}
	spin_unlock(&mapping->tree_lock);
	return error;
}

/* alloc_page()'s reference is the page cache's; the pagevec takes one. */
static int add_to_page_cache_lru(struct page *page,
				 struct address_space *mapping,
				 unsigned long idx)
{
	int ret = add_to_page_cache(page, mapping, idx);

	if (ret == 0)
		lru_cache_add(page);
	return ret;
}

/* Take a block for a hole, under info->lock: the per-fault stat_lock. */
static int shmem_charge_block(struct inode *inode)
{
	struct shmem_sb_info *sbinfo = shmem_sb_books(inode);
	uint64_t wait;

	if (!sbinfo)
		return 0;
	wait = spin_lock_account(&sbinfo->stat_lock);
	if (sbinfo->free_blocks == 0) {
		spin_unlock_account(&sbinfo->stat_lock, wait);
		return -ENOSPC;
	}
	sbinfo->free_blocks--;
	inode->i_blocks += BLOCKS_PER_PAGE;
	spin_unlock_account(&sbinfo->stat_lock, wait);
	return 0;
}

/*
 * shmem_getpage - get the page at idx, allocating a zeroed one in a hole.
 * (The swap-in half of the kernel function is left out: nothing swaps.)
 */
static int shmem_getpage(struct inode *inode, unsigned long idx,
			 struct page **pagep, enum sgp_type sgp)
{
	struct address_space *mapping = inode->i_mapping;
	struct shmem_inode_info *info = SHMEM_I(inode);
	struct page *filepage = NULL;
	swp_entry_t *entry;
	long error;

	if (idx >= SHMEM_MAX_INDEX)
		return -EFBIG;
repeat:
	if (!filepage)
		filepage = find_lock_page(mapping, idx);
	if (filepage && PageUptodate(filepage))
		goto done;

	spin_lock(&info->lock);
	shmem_recalc_inode(inode);
	entry = shmem_swp_alloc(info, idx, sgp);
	if (IS_ERR(entry)) {
		spin_unlock(&info->lock);
		error = PTR_ERR(entry);
		goto failed;
	}
	error = shmem_charge_block(inode);
	if (error) {
		spin_unlock(&info->lock);
		goto failed;
	}

	if (!filepage) {
		spin_unlock(&info->lock);
		filepage = alloc_page();
		spin_lock(&info->lock);
		entry = shmem_swp_alloc(info, idx, sgp);
		if (IS_ERR(entry))
			error = PTR_ERR(entry);
		if (error || add_to_page_cache_lru(filepage, mapping, idx)) {
			spin_unlock(&info->lock);
			__free_page(filepage);
			shmem_free_block(inode);
			filepage = NULL;
			if (error)
				goto failed;
			goto repeat;
		}
		WRITE_ONCE(info->flags, info->flags | SHMEM_PAGEIN);
	}

	info->alloced++;
	spin_unlock(&info->lock);
	clear_page(page_address(filepage));
	SetPageUptodate(filepage);
done:
	unlock_page(filepage);
	*pagep = filepage;
	return 0;
failed:
	if (filepage)
		unlock_page(filepage);
	return (int)error;
}

static int shmem_nopage(struct file *file, unsigned long idx,
			struct page **pagep)
{
	return shmem_getpage(file->f_inode, idx, pagep, SGP_CACHE);
}

static struct inode *shmem_get_inode(struct super_block *sb)
{
	struct shmem_sb_info *sbinfo = SHMEM_SB(sb);
	struct shmem_inode_info *info;
	uint64_t wait;

	if (sbinfo) {
		wait = spin_lock_account(&sbinfo->stat_lock);
		if (!sbinfo->free_inodes) {
			spin_unlock_account(&sbinfo->stat_lock, wait);
			return NULL;
		}
		sbinfo->free_inodes--;
		spin_unlock_account(&sbinfo->stat_lock, wait);
	}
	info = calloc(1, sizeof(*info));
	spin_lock_init(&info->lock);
	INIT_LIST_HEAD(&info->index_pages);
	info->vfs_inode.i_sb = sb;
	info->vfs_inode.i_mapping = &info->vfs_inode.i_data;
	info->vfs_inode.i_data.host = &info->vfs_inode;
	spin_lock_init(&info->vfs_inode.i_data.tree_lock);
	return &info->vfs_inode;
}

static struct file *shmem_file_setup(const char *name, long long size,
				     unsigned long flags)
{
	struct shmem_inode_info *info;
	struct inode *inode;
	struct file *file;

	shmem_acct_size(flags, size);
	inode = shmem_get_inode(shm_sb);
	if (!inode) {
		shmem_unacct_size(flags, size);
		return NULL;
	}
	info = SHMEM_I(inode);
	info->flags = flags & VM_ACCOUNT;
	if (seed_patch && !strcmp("dev/zero", name))
		info->flags |= SHMEM_NOSBINFO;
	inode->i_size = size;
	inode->i_data.page_tree = calloc(size >> PAGE_SHIFT, sizeof(void *));
	file = calloc(1, sizeof(*file));
	file->f_inode = inode;
	return file;
}

static struct file *shmem_zero_setup(unsigned long pages)
{
	return shmem_file_setup("dev/zero", (long long)pages << PAGE_SHIFT,
				VM_ACCOUNT);
}

/*
 * truncate_inode_pages(): each page out of the tree, its reference
 * dropped a pagevec at a time (pagevec_release(): lru_lock per 16).
 */
static void truncate_inode_pages_range(struct address_space *mapping,
				       unsigned long start, unsigned long end)
{
	struct pagevec pvec;
	struct page *page;
	unsigned long idx;

	pagevec_init(&pvec, 0);
	for (idx = start; idx < end; idx++) {
		spin_lock(&mapping->tree_lock);
		page = mapping->page_tree[idx];
		mapping->page_tree[idx] = NULL;
		if (page)
			WRITE_ONCE(mapping->nrpages, mapping->nrpages - 1);
		spin_unlock(&mapping->tree_lock);
		if (page && !pagevec_add(&pvec, page))
			pagevec_release(&pvec);
	}
	pagevec_release(&pvec);
}

/*
 * The pages of [start, end) leave the object and their blocks return
 * (shmem_recalc_inode), index pages stay.  2.6.7 frees a live object's
 * pages only when it is truncated; this stands in for each thread's part
 * of one shared object going away, so that every pass faults anew.
 */
static void release_range(struct file *file, unsigned long start,
			  unsigned long end)
{
	struct inode *inode = file->f_inode;
	struct shmem_inode_info *info = SHMEM_I(inode);

	truncate_inode_pages_range(inode->i_mapping, start, end);
	spin_lock(&info->lock);
	shmem_recalc_inode(inode);
	spin_unlock(&info->lock);
}

/* Free every index page; returns how many.  info->lock held. */
static unsigned long shmem_truncate_index(struct shmem_inode_info *info)
{
	unsigned long freed = info->nr_index_pages;
	struct page *page, *next;

	list_for_each_entry_safe(page, next, &info->index_pages, lru) {
		list_del(&page->lru);
		__free_page(page);
	}
	info->nr_index_pages = 0;
	info->i_indirect = NULL;
	info->next_index = 0;
	return freed;
}

static void shmem_truncate(struct inode *inode)
{
	struct shmem_inode_info *info = SHMEM_I(inode);
	struct shmem_sb_info *sbinfo = shmem_sb_books(inode);
	unsigned long freed;
	uint64_t wait;

	spin_lock(&info->lock);
	freed = shmem_truncate_index(info);
	shmem_recalc_inode(inode);
	spin_unlock(&info->lock);
	if (sbinfo && freed) {
		wait = spin_lock_account(&sbinfo->stat_lock);
		sbinfo->free_blocks += freed;
		inode->i_blocks -= freed * BLOCKS_PER_PAGE;
		spin_unlock_account(&sbinfo->stat_lock, wait);
	}
}

/* The last munmap(): iput() of the unlinked inode. */
static void shmem_delete_inode(struct file *file)
{
	struct inode *inode = file->f_inode;
	struct shmem_inode_info *info = SHMEM_I(inode);
	struct shmem_sb_info *sbinfo = SHMEM_SB(inode->i_sb);
	long long size = inode->i_size;
	uint64_t wait;

	inode->i_size = 0;
	truncate_inode_pages_range(inode->i_mapping, 0, size >> PAGE_SHIFT);
	shmem_truncate(inode);
	WARN_ON(inode->i_blocks);
	if (sbinfo) {
		wait = spin_lock_account(&sbinfo->stat_lock);
		sbinfo->free_inodes++;
		spin_unlock_account(&sbinfo->stat_lock, wait);
	}
	shmem_unacct_size(info->flags, size);
	free(inode->i_data.page_tree);
	free(info);
	free(file);
}

static void alloc_shm_sb(void)
{
	if (shm_sb)
		return;
	shm_sb = aligned_alloc(SMP_CACHE_BYTES, SMP_CACHE_BYTES);
	shm_sbinfo = aligned_alloc(SMP_CACHE_BYTES, SMP_CACHE_BYTES);
}

static void shmem_fill_super(unsigned long size_limit)
{
	memset(shm_sbinfo, 0, sizeof(*shm_sbinfo));
	shm_sbinfo->max_blocks = size_limit ? size_limit : (unsigned long)-1;
	shm_sbinfo->free_blocks = shm_sbinfo->max_blocks;
	shm_sbinfo->max_inodes = shm_sbinfo->free_inodes = (unsigned long)-1;
	spin_lock_init(&shm_sbinfo->stat_lock);
	/*
	 * The counts it guards share its line; a shared inode's i_blocks
	 * is counted with info->lock's lines.
	 */
	lockstat_register(&shm_sbinfo->stat_lock, "stat_lock", 1,
			  LOCKSTAT_SPIN);
}

/* Every mapping's setup and last unmap: one line of its own. */
static void register_vm_committed_space(void)
{
	lockstat_register(&vm_committed_space, "vm_committed_space", 1,
			  LOCKSTAT_LINE);
}

static void mount_stat_lock(unsigned long size_limit)
{
	mm_2_6_7_init();
	alloc_shm_sb();
	shmem_fill_super(size_limit);
	shm_sb->s_fs_info = shm_sbinfo;
	seed_patch = false;
	register_vm_committed_space();
}

static void mount_nosbinfo(unsigned long size_limit)
{
	mount_stat_lock(size_limit);
	seed_patch = true;
}

static void mount_no_sbinfo(unsigned long size_limit)
{
	mm_2_6_7_init();
	alloc_shm_sb();
	shm_sb->s_fs_info = NULL;
	seed_patch = false;
	register_vm_committed_space();
}

/*
 * info->lock: its own line (alloced, next_index, the first i_direct
 * entries) and the inode's, whose i_blocks stat_lock's holders write
 * under it; tree_lock: the mapping's line (nrpages) and the tree's slot,
 * in the faulting thread's own range.
 */
static void register_shared(struct file *file)
{
	struct inode *inode = file->f_inode;

	lockstat_register(&SHMEM_I(inode)->lock, "info_lock", 2,
			  LOCKSTAT_SPIN);
	lockstat_register(&inode->i_data.tree_lock, "tree_lock", 1,
			  LOCKSTAT_SPIN);
}

/* shmem_statfs(): the counts under stat_lock, faults may be running. */
static void sb_stats(struct shmem_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!shm_sb->s_fs_info)
		return;
	st->has_sbinfo = true;
	spin_lock(&shm_sbinfo->stat_lock);
	st->max_blocks = shm_sbinfo->max_blocks;
	st->free_blocks = shm_sbinfo->free_blocks;
	st->max_inodes = shm_sbinfo->max_inodes;
	st->free_inodes = shm_sbinfo->free_inodes;
	spin_unlock(&shm_sbinfo->stat_lock);
}

static void shmem_stats(struct file *file, struct shmem_stats *st)
{
	struct inode *inode = file->f_inode;

	sb_stats(st);
	st->has_sbinfo = shmem_sb_books(inode) != NULL;
	st->inode_books = st->has_sbinfo;
	st->i_blocks = inode->i_blocks;
	st->nrpages = inode->i_mapping->nrpages;
	st->index_pages = SHMEM_I(inode)->nr_index_pages;
	st->lock_kind = SHMEM_I(inode)->lock.kind;
}

#define SHMEM_2_6_OPS(mount)				\
	{						\
		.shm_mount = mount,			\
		.mm_reserve = mm_2_6_7_reserve,		\
		.shmem_zero_setup = shmem_zero_setup,	\
		.shmem_fault = shmem_nopage,		\
		.shmem_release = release_range,		\
		.fput = shmem_delete_inode,		\
		.lockstat_register = register_shared,	\
		.shmem_stats = shmem_stats,		\
		.sb_stats = sb_stats,			\
	}

const struct shmem_fault_ops shmem_fault_stat_lock =
	SHMEM_2_6_OPS(mount_stat_lock);
const struct shmem_fault_ops shmem_fault_nosbinfo =
	SHMEM_2_6_OPS(mount_nosbinfo);
const struct shmem_fault_ops shmem_fault_no_sbinfo_mount =
	SHMEM_2_6_OPS(mount_no_sbinfo);
