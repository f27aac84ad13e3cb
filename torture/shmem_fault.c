// SPDX-License-Identifier: GPL-2.0
/*
 * The shmem fault path of every shmem_fault variant under torture, on a
 * size-limited shm mount: tasks fault a public area of shared objects
 * that all of them race on, their own range of each shared object and
 * an object of their own, while truncating ranges and re-creating
 * objects (the last reference's fput deletes the old one).
 *
 * In each operation: a fault gives a cleared page, the same page for an
 * index while it is mapped (its mark intact), one page per public index,
 * and -ENOSPC only where the mount keeps the object's books.  At each
 * object's last fput and at quiet points: its nrpages is the pages the
 * tasks hold mapped, its i_blocks counts those and its index pages.  At
 * quiet points: free plus used blocks equal max_blocks, and a probe
 * object, faulted from the monitor until the mount is full, gets -ENOSPC
 * only with no block left for it and gives every block back.  At the
 * end: free_blocks == max_blocks, and no WARN_ON in the model.
 *
 * With `upstream` each task also faults and unmaps a private anonymous
 * mapping of its own (page_fault1's path, anon.c) on the same allocator
 * and LRU: a fault gives a cleared page, the same page while mapped, and
 * the mapping's ptes are the pages the task holds; at the end, with
 * every object and mapping gone, every page the zones took is free (or
 * in a per-CPU LRU batch), none on the LRU.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../lib/kernel/atomic.h"
#include "../lib/kernel/page_alloc.h"
#include "../lib/kernel/percpu.h"
#include "../lib/kernel/spinlock.h"
#include "../models/shmem_fault/anon.h"
#include "../models/shmem_fault/mm_upstream.h"
#include "../models/shmem_fault/shmem_fault.h"
#include "torture.h"

#define NR_SHARED	2
#define NR_MAPS		(NR_SHARED + 1)	/* a task's: the shared, its own */
#define PUBLIC		24	/* past the 16 direct entries of 2.6.7 */
#define RANGE		8	/* a task's range in a shared object, */
#define RANGE_STRIDE	256	/* two tasks' ranges an index page */
#define OWN		40
#define LIMIT_PER_TASK	16	/* mount blocks: a few % of faults fail */
#define ANON		40	/* a task's anonymous mapping */

struct sf_obj {				/* one mapping of /dev/zero */
	struct file *file;
	atomic_t count;			/* its slot's reference, its users' */
	atomic_t mapped;		/* pages the tasks hold mapped */
	unsigned long serial;
	struct page *seen[PUBLIC];	/* the public area's pages */
};

struct sf_map {				/* a task's pages mapped in an object */
	unsigned long serial;
	struct page *pages[OWN];
};

struct sf_task {
	struct sf_map map[NR_MAPS];
	unsigned long faults, enospc, truncates;
	struct vm_area_struct *vma;	/* upstream: its anonymous mapping */
	struct page *anon[ANON];
	unsigned long anon_faults, anon_unmaps, anon_serial;
};

static struct {
	const struct shmem_fault_ops *ops;
	bool books;			/* the mount counts these objects */
	bool anon;			/* anonymous mappings too (upstream) */
	unsigned long limit;
	spinlock_t slot_lock;
	struct sf_obj **slot;		/* the shared, then each task's own */
	struct sf_task *tasks;
	unsigned long serial, fputs, warnings, fresh_calls;
	unsigned long faults, enospc, truncates, zone_grows;
	unsigned long anon_faults, anon_unmaps;
} s;

static const char zero_page[1UL << MAX_MM_PAGE_SHIFT];

/* Where task id's range in its map k begins. */
static unsigned long sf_base(int id, int k)
{
	return k < NR_SHARED ? PUBLIC + (unsigned long)id * RANGE_STRIDE : 0;
}

static struct sf_obj *sf_obj_new(int k)
{
	struct sf_obj *o = calloc(1, sizeof(*o));

	if (!o)
		abort();
	o->file = s.ops->shmem_zero_setup(k < NR_SHARED ?
					  sf_base(torture_nr_tasks, k) : OWN);
	atomic_set(&o->count, 1);
	o->serial = __atomic_add_fetch(&s.serial, 1, __ATOMIC_RELAXED);
	return o;
}

/* An object's books, no fault on it: the blocks it takes, if counted. */
static unsigned long sf_check_obj(struct file *f, unsigned long mapped,
				  const char *what)
{
	struct shmem_stats st;
	unsigned long held;

	s.ops->shmem_stats(f, &st);
	held = st.nrpages + st.index_pages;
	if (st.nrpages != mapped)
		torture_fail("%s: nrpages %lu, %lu pages mapped", what,
			     st.nrpages, mapped);
	if (st.i_blocks != (st.inode_books ? held * BLOCKS_PER_PAGE : 0))
		torture_fail("%s: i_blocks %lu for %lu pages and %lu index "
			     "pages", what, st.i_blocks, st.nrpages,
			     st.index_pages);
	return st.has_sbinfo ? held : 0;
}

static void sf_put(struct sf_obj *o)
{
	if (atomic_add_return(-1, &o->count))
		return;
	sf_check_obj(o->file, atomic_read(&o->mapped), "at its last fput");
	s.ops->fput(o->file);
	free(o);
	__atomic_fetch_add(&s.fputs, 1, __ATOMIC_RELAXED);
}

/* An object's most pages: `faulted` of `size`, and its index pages. */
static unsigned long sf_obj_pages(unsigned long faulted, unsigned long size)
{
	return faulted + shmem_index_pages_max(size);
}

/*
 * Each node's zone holds, before the tasks run, twice its share of what
 * the run can hold at once (tasks migrate, so a node's share is the run's
 * over the nodes, give or take): every slot's object full, twice (a
 * replaced one lives while a task still uses it), and the probe's.  The
 * model's zones take host pages when they run dry (page_alloc_fresh():
 * mmap, mbind, a first touch) behind the host's mmap_lock, which every
 * task's page fault then waits for: at 128 tasks in a 64-vCPU guest, for
 * longer than the quiet point's 120 s.  The bench's zone_reserve() does
 * the same for its tasks; a run's takes after it are its Zone grows.
 */
static void sf_reserve(int nr_tasks)
{
	unsigned long shared = sf_obj_pages(PUBLIC + nr_tasks * RANGE,
					    sf_base(nr_tasks, 0));
	unsigned long held = 2 * (NR_SHARED * shared +
				  nr_tasks * sf_obj_pages(OWN, OWN)) +
			     sf_obj_pages(s.limit + OWN, s.limit + OWN) +
			     (s.anon ? 2 * nr_tasks * ANON : 0);
	int node, nodes = kscale_nr_online_nodes();

	for_each_online_node(node)
		s.ops->mm_reserve(node, nodes > 1 ? 2 * held / nodes : held);
	s.fresh_calls = page_alloc_fresh_calls();
}

static int sf_init(const void *variant, int nr_tasks)
{
	struct shmem_stats st;
	struct file *f;
	int i;

	memset(&s, 0, sizeof(s));
	s.ops = variant;
	s.anon = s.ops == &shmem_fault_upstream;
	s.limit = NR_SHARED * PUBLIC + LIMIT_PER_TASK * nr_tasks;
	s.ops->shm_mount(s.limit);
	sf_reserve(nr_tasks);
	f = s.ops->shmem_zero_setup(1);
	s.ops->shmem_stats(f, &st);
	s.books = st.has_sbinfo;
	s.ops->fput(f);
	spin_lock_init(&s.slot_lock);
	s.slot = calloc(NR_SHARED + nr_tasks, sizeof(*s.slot));
	s.tasks = calloc(nr_tasks, sizeof(*s.tasks));
	if (!s.slot || !s.tasks)
		abort();
	for (i = 0; i < NR_SHARED + nr_tasks; i++)
		s.slot[i] = sf_obj_new(i < NR_SHARED ? i : NR_SHARED);
	s.warnings = kscale_warnings();
	return 0;
}

/* A fault; one that fails where a page is known there (was) fails too. */
static struct page *sf_fault(struct sf_task *st, struct file *f,
			     unsigned long idx, struct page *there)
{
	struct page *page;
	int err = s.ops->shmem_fault(f, idx, &page);

	st->faults++;
	if (!err)
		return page;
	st->enospc += err == -ENOSPC;
	if (err != -ENOSPC || !s.books || there)
		torture_fail("fault at %lu: error %d, page %p there", idx, err,
			     there);
	return NULL;
}

/* Fault index i of map m: the page mapped there, or a cleared one. */
static void sf_fault_mapped(struct sf_task *st, struct sf_obj *o,
			    struct sf_map *m, unsigned long base,
			    unsigned long i)
{
	unsigned long mark = o->serial << 32 | (base + i), *word;
	struct page *page = sf_fault(st, o->file, base + i, m->pages[i]);

	if (!page)
		return;
	word = page_address(page);
	if (m->pages[i] && (page != m->pages[i] || *word != mark))
		torture_fail("index %lu: page %p (mark %#lx), mapped %p "
			     "(mark %#lx)", base + i, page, *word,
			     m->pages[i], mark);
	if (m->pages[i])
		return;
	if (memcmp(page_address(page), zero_page, MM_PAGE_SIZE))
		torture_fail("index %lu: page %p not cleared", base + i, page);
	*word = mark;
	m->pages[i] = page;
	atomic_inc(&o->mapped);
}

/* Every task's fault of a public index finds the first one's page. */
static void sf_fault_public(struct sf_task *st, struct sf_obj *o,
			    unsigned long idx)
{
	unsigned long mark = o->serial << 32 | idx, old;
	struct page *page = sf_fault(st, o->file, idx, READ_ONCE(o->seen[idx]));
	struct page *first;

	if (!page)
		return;
	first = cmpxchg(&o->seen[idx], NULL, page);
	if (!first)
		atomic_inc(&o->mapped);
	else if (first != page)
		torture_fail("public index %lu: page %p, another task got %p",
			     idx, page, first);
	old = __atomic_exchange_n((unsigned long *)page_address(page), mark,
				  __ATOMIC_RELAXED);
	if (old && old != mark)
		torture_fail("public index %lu: page %p not cleared (%#lx)",
			     idx, page, old);
}

/* The task's anonymous mapping: a fault at a random page, or munmap. */
static void sf_anon_op(struct sf_task *st)
{
	unsigned long idx = torture_random() % ANON, mark, *word;
	struct page *page;

	if (!st->vma) {
		st->vma = anon_mmap(ANON);
		st->anon_serial++;
	}
	if (torture_random() % 16 == 0) {
		anon_munmap(st->vma);
		st->vma = NULL;
		memset(st->anon, 0, sizeof(st->anon));
		st->anon_unmaps++;
		return;
	}
	if (do_anonymous_page(st->vma, idx, &page))
		torture_fail("anonymous fault at %lu failed", idx);
	st->anon_faults++;
	word = page_address(page);
	mark = st->anon_serial << 32 | idx;
	if (st->anon[idx]) {
		if (page != st->anon[idx] || *word != mark)
			torture_fail("anonymous page %lu: %p (mark %#lx), "
				     "mapped %p (mark %#lx)", idx, page,
				     *word, st->anon[idx], mark);
		return;
	}
	if (memcmp(page_address(page), zero_page, MM_PAGE_SIZE))
		torture_fail("anonymous page %lu: %p not cleared", idx, page);
	*word = mark;
	st->anon[idx] = page;
}

/* The task's anonymous ptes are the pages it holds. */
static void sf_anon_check(struct sf_task *st)
{
	unsigned long held = 0, i;

	if (!st->vma)
		return;
	for (i = 0; i < ANON; i++)
		held += st->anon[i] != NULL;
	if (anon_pages_mapped(st->vma) != held)
		torture_fail("anonymous mapping: %lu ptes, %lu pages held",
			     anon_pages_mapped(st->vma), held);
}

static void sf_op(struct torture_task *t)
{
	struct sf_task *st = &s.tasks[t->id];
	uint32_t r = torture_random() % 100;
	int k = torture_random() % NR_MAPS;
	int slot = k < NR_SHARED ? k : NR_SHARED + t->id;
	unsigned long base = sf_base(t->id, k), a, b;
	unsigned long n = k < NR_SHARED ? RANGE : OWN;
	struct sf_map *m = &st->map[k];
	struct sf_obj *o, *old;

	if (s.anon && r >= 75 && r < 85) {
		sf_anon_op(st);
		return;
	}
	if (r >= 98) {			/* the slot's munmap, a new mmap */
		o = sf_obj_new(k);
		spin_lock(&s.slot_lock);
		old = s.slot[slot];
		s.slot[slot] = o;
		spin_unlock(&s.slot_lock);
		sf_put(old);
		return;
	}
	spin_lock(&s.slot_lock);	/* the task's mapping: get_file() */
	o = s.slot[slot];
	atomic_inc(&o->count);
	spin_unlock(&s.slot_lock);
	if (m->serial != o->serial) {
		memset(m, 0, sizeof(*m));
		m->serial = o->serial;
	}
	if (r < 20 && k < NR_SHARED) {
		sf_fault_public(st, o, torture_random() % PUBLIC);
	} else if (r < 85) {
		sf_fault_mapped(st, o, m, base, torture_random() % n);
	} else {			/* truncate [a, b) of its range */
		a = torture_random() % n;
		b = a + 1 + torture_random() % (n - a);
		s.ops->shmem_release(o->file, base + a, base + b);
		for (; a < b; a++)
			if (m->pages[a]) {
				m->pages[a] = NULL;
				atomic_dec(&o->mapped);
			}
		st->truncates++;
	}
	sf_put(o);
}

/* A new object faulted until the mount is full, then fput. */
static void sf_probe(const struct shmem_stats *before)
{
	struct file *f = s.ops->shmem_zero_setup(s.limit + OWN), *g;
	struct shmem_stats mid, after;
	unsigned long n, held;
	struct page *page;
	int err = 0;

	for (n = 0; n < s.limit + OWN; n++)
		if ((err = s.ops->shmem_fault(f, n, &page)))
			break;
	held = sf_check_obj(f, n, "probe");
	s.ops->sb_stats(&mid);
	if (s.books ? err != -ENOSPC : err != 0)
		torture_fail("probe: %lu faults, then error %d", n, err);
	if (mid.free_blocks + held != before->free_blocks ||
	    (err && mid.free_blocks > 1))
		torture_fail("probe: %lu blocks held, free_blocks %lu -> %lu",
			     held, before->free_blocks, mid.free_blocks);
	if (err && mid.free_blocks == 1) {	/* must take a direct page */
		g = s.ops->shmem_zero_setup(1);
		if (s.ops->shmem_fault(g, 0, &page))
			torture_fail("probe: ENOSPC with a block free");
		s.ops->fput(g);
	}
	s.ops->fput(f);
	s.ops->sb_stats(&after);
	if (after.free_blocks != before->free_blocks)
		torture_fail("probe: free_blocks %lu after fput, %lu before",
			     after.free_blocks, before->free_blocks);
}

static void sf_quiet(void)
{
	unsigned long used = 0, warnings = kscale_warnings();
	struct shmem_stats sb;
	int i;

	for (i = 0; i < NR_SHARED + torture_nr_tasks; i++) {
		struct sf_obj *o = s.slot[i];

		if (atomic_read(&o->count) != 1)
			torture_fail("object %d: %d references at a quiet "
				     "point", i, atomic_read(&o->count));
		used += sf_check_obj(o->file, atomic_read(&o->mapped),
				     i < NR_SHARED ? "shared" : "own");
	}
	for (i = 0; i < torture_nr_tasks; i++)
		sf_anon_check(&s.tasks[i]);
	if (warnings != s.warnings)
		torture_fail("%lu WARN_ONs in the model",
			     warnings - s.warnings);
	s.warnings = warnings;
	s.ops->sb_stats(&sb);
	if (sb.has_sbinfo && (sb.free_blocks > sb.max_blocks ||
			      sb.free_blocks + used != sb.max_blocks))
		torture_fail("free_blocks %lu + %lu used, max_blocks %lu",
			     sb.free_blocks, used, sb.max_blocks);
	sf_probe(&sb);
}

static void sf_stats(char *buf, size_t len)
{
	snprintf(buf, len, "Faults: %lu ENOSPC: %lu Truncates: %lu Fputs: %lu "
		 "Anonymous faults: %lu Unmaps: %lu Zone grows: %lu", s.faults,
		 s.enospc, s.truncates, s.fputs, s.anon_faults, s.anon_unmaps,
		 s.zone_grows);
}

/* Every object and mapping gone: every page back, none on the LRU. */
static void sf_anon_cleanup(void)
{
	struct mm_upstream_stats st;
	int i;

	for (i = 0; i < torture_nr_tasks; i++) {
		sf_anon_check(&s.tasks[i]);
		if (s.tasks[i].vma)
			anon_munmap(s.tasks[i].vma);
		s.anon_faults += s.tasks[i].anon_faults;
		s.anon_unmaps += s.tasks[i].anon_unmaps;
	}
	mm_upstream_stats(&st);
	if (st.lru || st.free + st.pcp + st.lru_add != st.present)
		torture_fail("%lu of %lu pages not given back at the end (%lu "
			     "on the LRU)", st.present - st.free - st.pcp -
			     st.lru_add, st.present, st.lru);
}

static void sf_cleanup(void)
{
	struct shmem_stats sb;
	int i;

	for (i = 0; i < NR_SHARED + torture_nr_tasks; i++)
		sf_put(s.slot[i]);
	for (i = 0; i < torture_nr_tasks; i++) {
		s.faults += s.tasks[i].faults;
		s.enospc += s.tasks[i].enospc;
		s.truncates += s.tasks[i].truncates;
	}
	if (s.anon)
		sf_anon_cleanup();
	s.zone_grows = page_alloc_fresh_calls() - s.fresh_calls;
	if (!shmem_books_balance(s.ops, &sb))
		torture_fail("free_blocks %lu of %lu after every fput",
			     sb.free_blocks, sb.max_blocks);
	if (kscale_warnings() != s.warnings)
		torture_fail("%lu WARN_ONs in the model at the end",
			     kscale_warnings() - s.warnings);
	free(s.slot);
	free(s.tasks);
}

static const struct torture_model shmem_fault_torture = {
	.name		= "shmem_fault",
	.variants	= &shmem_fault_variants,
	.init		= sf_init,
	.op		= sf_op,
	.quiet		= sf_quiet,
	.stats		= sf_stats,
	.cleanup	= sf_cleanup,
};
torture_model_register(shmem_fault_torture);
