// SPDX-License-Identifier: GPL-2.0
/*
 * fault (the seed's test, seed 002): each thread maps --pages of
 * /dev/zero MAP_SHARED, touches every page once (one fault each), unmaps,
 * and starts again.  With --shared-object every thread faults its own
 * range of one object instead, and gives its range back after each pass.
 *
 * Model variants fault through the model's mm (models/shmem_fault/fault.c:
 * handle_mm_fault() around shmem_nopage()/shmem_fault() of their kernel),
 * --fault-work-ns the rest of a real fault as uncontended work.  `real`
 * and `real_private` make the running kernel do it: mmap(MAP_SHARED) of
 * /dev/zero, or MAP_PRIVATE, a write per page, munmap (MADV_REMOVE /
 * MADV_DONTNEED on a shared object's range): these host rows and
 * --fault-work-ns=auto are in shmem_fault_host.c.
 * Operations are successful faults; a failed one (SIGBUS in the kernel)
 * ends the pass and is counted in sigbus_faults.
 *
 * page_fault1 (will-it-scale's, as Daniel Jordan's lru_lock series ran
 * it on 4.16): each task maps --pages of private anonymous memory,
 * writes every page (one fault each), unmaps, and starts again, a
 * process a task.  `upstream` faults through the model's anonymous path
 * (models/shmem_fault/anon.c) on its upstream allocator and LRU with the
 * batch sizes of --pcp-batch, --pcp-high and --lru-add-batch;
 * --anon-work-ns the rest of a real fault and its share of the munmap,
 * outside any lock.  `real` makes the running kernel do it (MAP_PRIVATE |
 * MAP_ANONYMOUS, real_private's steps).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../lib/kernel/tsc.h"
#include "../models/shmem_fault/mm_upstream.h"
#include "../lib/sys/meminfo.h"
#include "shmem_fault.h"

#define MAX_PAGES	(1L << 24)

/* --page-size: the modelled machine's page, 4k or ia64's 16k. */
static int page_shift_of(const char *v)
{
	if (!strcmp(v, "4k"))
		return 12;
	if (!strcmp(v, "16k"))
		return 14;
	return -1;
}

static void model_pass_begin(struct kscale_thread *t)
{
	struct fault_run *fr = t->run->priv;
	struct fault_thread *ft = t->priv;

	ft->file = fr->shared ? fr->shared_file :
		   fr->ops->shmem_zero_setup(fr->pages);
	range_of(t);
}

static int model_touch(struct kscale_thread *t, unsigned long idx)
{
	struct fault_run *fr = t->run->priv;
	struct fault_thread *ft = t->priv;
	int err = handle_mm_fault(fr->ops, ft->file, idx, fr->fault_work_ns);

	if (unlikely(err == FAULT_NOT_CLEARED))
		return kscale_fail(t->run, "page %lu was not cleared", idx);
	return err;
}

static void model_pass_end(struct kscale_thread *t)
{
	struct fault_run *fr = t->run->priv;
	struct fault_thread *ft = t->priv;

	if (fr->shared)
		fr->ops->shmem_release(ft->file, ft->start, ft->end);
	else
		fr->ops->fput(ft->file);
}

static const struct fault_kind model_kind = {
	model_pass_begin, model_touch, model_pass_end,
};

static void anon_pass_begin(struct kscale_thread *t)
{
	struct fault_run *fr = t->run->priv;
	struct fault_thread *ft = t->priv;

	ft->vma = anon_mmap(fr->pages);
	range_of(t);
}

static int anon_touch(struct kscale_thread *t, unsigned long idx)
{
	struct fault_run *fr = t->run->priv;
	struct fault_thread *ft = t->priv;
	int err = handle_anon_fault(ft->vma, idx, fr->fault_work_ns);

	if (unlikely(err == FAULT_NOT_CLEARED))
		return kscale_fail(t->run, "page %lu was not cleared", idx);
	return err;
}

static void anon_pass_end(struct kscale_thread *t)
{
	struct fault_thread *ft = t->priv;

	anon_munmap(ft->vma);
}

static const struct fault_kind anon_kind = {
	anon_pass_begin, anon_touch, anon_pass_end, .private = true,
};

static void fault_loop(struct kscale_thread *t)
{
	struct fault_run *fr = t->run->priv;
	struct fault_thread *ft = t->priv;
	const struct fault_kind *k = fr->kind;

	memset(&stat_lock_stat, 0, sizeof(stat_lock_stat));
	k->pass_begin(t);
	while (kscale_running(t)) {
		if (ft->next == ft->end) {
			k->pass_end(t);
			k->pass_begin(t);
		}
		if (likely(!k->touch(t, ft->next++))) {
			kscale_count(t);
		} else {
			ft->sigbus++;
			ft->next = ft->end;
		}
	}
	k->pass_end(t);
	ft->stat_lock = stat_lock_stat;
}

static int shared_setup(struct kscale_run *run, struct fault_run *fr)
{
	unsigned long pages = fr->pages * run->nr_threads;

	if (fr->ops) {
		fr->shared_file = shmem_zero_setup_shared(fr->ops, pages);
		return 0;
	}
	fr->shared_map = fr->kind->private ?
		mmap(NULL, pages * PAGE_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) :
		mmap(NULL, pages * PAGE_SIZE, PROT_READ | PROT_WRITE,
		     MAP_SHARED, devzero, 0);
	if (fr->shared_map == MAP_FAILED)
		return kscale_fail(run, "mmap of %lu pages: %s", pages,
				   strerror(errno));
	return 0;
}

/*
 * Each thread's whole mapping is in memory at the end of its pass: a row
 * the machine cannot hold is refused here, before the OOM killer ends the
 * bench (256 threads of 4096 pages filled a 4 GB guest).  A tenth is left
 * for the rest of the machine and the model's struct pages.
 */
static int check_memory(struct kscale_run *run, struct fault_run *fr,
			int page_shift)
{
	unsigned long long need = (unsigned long long)run->nr_threads *
				  fr->pages << page_shift;
	unsigned long long avail = mem_available_bytes();

	if (fr->ops && fr->size_limit &&
	    (unsigned long long)fr->size_limit << page_shift < need)
		need = (unsigned long long)fr->size_limit << page_shift;
	if (!avail || need <= avail / 10 * 9)
		return 0;
	return kscale_fail(run, "%d threads of --pages=%lu need %llu MiB, more "
			   "than the %llu MiB available: lower --pages",
			   run->nr_threads, fr->pages, need >> 20, avail >> 20);
}

/*
 * Each node's zone holds, before the tasks run, the pages its tasks can
 * hold at once: a pass's data pages and its object's index pages, within
 * the mount's size limit.
 */
static void zone_reserve(struct kscale_run *run, struct fault_run *fr)
{
	unsigned long index = shmem_index_pages_max(fr->pages), need;
	int node, i, tasks;

	for (node = 0; node < nr_node_ids; node++) {
		for (i = tasks = 0; i < run->nr_threads; i++)
			tasks += cpu_to_node(run->threads[i].cpu) == node;
		if (!tasks)
			continue;
		need = tasks * fr->pages;
		if (fr->size_limit && need > fr->size_limit)
			need = fr->size_limit;
		fr->ops->mm_reserve(node, need + tasks * index);
	}
	fr->fresh_calls = page_alloc_fresh_calls();
}

static int fault_setup(struct kscale_run *run)
{
	const struct kscale_variant *v = kscale_row(run);
	struct fault_run *fr = calloc(1, sizeof(*fr));
	int page_shift = page_shift_of(kscale_knob(run, "page_size"));

	run->priv = fr;
	fr->ops = v->ops;
	fr->kind = v->host ?: &model_kind;
	fr->pages = kscale_knob_long(run, "pages");
	fr->shared = kscale_knob_long(run, "shared_object");
	fr->size_limit = kscale_knob_long(run, "size_limit");
	fr->fault_work_ns = kscale_knob_ns(run, "fault_work_ns",
					   fault_work_auto_ns);
	if (check_memory(run, fr, fr->ops ? page_shift : PAGE_SHIFT))
		return -1;
	if (fr->ops) {
		shmem_fault_page_shift(page_shift);
		fr->ops->shm_mount(fr->size_limit);
		zone_reserve(run, fr);
	}
	return fr->shared ? shared_setup(run, fr) : 0;
}

/* Every pass ended: whether the mount has a superblock stat_lock at all. */
static bool check_books(struct kscale_run *run, struct fault_run *fr)
{
	struct shmem_stats st;

	if (!shmem_books_balance(fr->ops, &st))
		kscale_fail(run, "free_blocks %lu of %lu after every unmap",
			    st.free_blocks, st.max_blocks);
	return st.has_sbinfo;
}

static void fault_counters(struct kscale_run *run, struct fault_run *fr,
			   bool has_stat_lock)
{
	double wait_ns = 0, sigbus = 0, taken = 0, faults = 0;
	int i;

	kscale_set_counter(run, "faults_per_sec_per_cpu",
			   kscale_counter(run, "ops_per_sec_per_cpu"));
	for (i = 0; i < run->nr_threads; i++) {
		struct fault_thread *ft = run->threads[i].priv;

		wait_ns += cycles_to_ns(ft->stat_lock.waittime);
		taken += ft->stat_lock.acquisitions;
		faults += run->threads[i].ops;
		sigbus += ft->sigbus;
	}
	if (has_stat_lock) {
		kscale_set_counter(run, "stat_lock_wait_pct",
				   kscale_loop_pct(run, wait_ns));
		kscale_set_counter(run, "stat_lock_per_fault",
				   faults ? taken / faults : 0);
	}
	if (fr->size_limit)
		kscale_set_counter(run, "sigbus_faults", sigbus);
	if (fr->ops)
		kscale_set_counter(run, "zone_grows",
				   page_alloc_fresh_calls() - fr->fresh_calls);
}

static int fault_teardown(struct kscale_run *run)
{
	struct fault_run *fr = run->priv;

	if (fr->shared_file)
		fr->ops->fput(fr->shared_file);
	if (fr->shared_map && fr->shared_map != MAP_FAILED)
		munmap(fr->shared_map, fr->pages * run->nr_threads * PAGE_SIZE);
	fault_counters(run, fr, fr->ops && check_books(run, fr));
	free(fr);
	return run->failed ? -1 : 0;
}

/* page_fault1 runs today's allocator (upstream) and the running kernel. */
static bool page_fault1_runs(const struct kscale_variant *row)
{
	return row->host ? row->host == &real_kind :
	       row->ops == &shmem_fault_upstream;
}

static int page_fault1_setup(struct kscale_run *run)
{
	const struct kscale_variant *v = kscale_row(run);
	struct fault_run *fr = calloc(1, sizeof(*fr));
	int page_shift = page_shift_of(kscale_knob(run, "page_size"));

	run->priv = fr;
	fr->ops = v->ops;
	fr->kind = v->host ? &real_private_kind : &anon_kind;
	fr->pages = kscale_knob_long(run, "pages");
	fr->fault_work_ns = kscale_knob_ns(run, "anon_work_ns",
					   anon_work_auto_ns);
	if (check_memory(run, fr, fr->ops ? page_shift : PAGE_SHIFT))
		return -1;
	if (fr->ops) {
		shmem_fault_page_shift(page_shift);
		fr->ops->shm_mount(0);
		mm_upstream_set_batch(kscale_knob_long(run, "pcp_batch"),
				      kscale_knob_long(run, "pcp_high"),
				      kscale_knob_long(run, "lru_add_batch"));
		zone_reserve(run, fr);
	}
	return 0;
}

/*
 * Every mapping unmapped: each page the zones took is free again (on a
 * free or per-CPU list), none left on the LRU, bar those a per-CPU
 * folio_add_lru() batch still holds.
 */
static int page_fault1_teardown(struct kscale_run *run)
{
	struct fault_run *fr = run->priv;
	struct mm_upstream_stats st;

	if (fr->ops) {
		mm_upstream_stats(&st);
		if (st.lru || st.free + st.pcp + st.lru_add != st.present)
			kscale_fail(run, "%lu of %lu pages not given back "
				    "after every unmap (%lu on the LRU)",
				    st.present - st.free - st.pcp - st.lru_add,
				    st.present, st.lru);
	}
	fault_counters(run, fr, false);
	free(fr);
	return run->failed ? -1 : 0;
}

static int check_page_size(const char *v, char *err, size_t len)
{
	if (page_shift_of(v) >= 0)
		return 0;
	snprintf(err, len, "'%s' is not a page size (4k or 16k)", v);
	return -1;
}

static int check_pages(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 1, MAX_PAGES, err, len);
}

static int check_pcp(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 1, 1 << 16, err, len);
}

static int check_lru_add_batch(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 1, FOLIO_BATCH_SIZE, err, len);
}

static int check_size_limit(const char *v, char *err, size_t len)
{
	return kscale_check_long(v, 0, MAX_PAGES * 64, err, len);
}

static const struct kscale_workload workloads[] = {
	{
		.name = "fault",
		.doc = "map /dev/zero shared, touch every page once, unmap, "
		       "again",
		.setup = fault_setup,
		.loop = fault_loop,
		.teardown = fault_teardown,
		.thread_size = sizeof(struct fault_thread),
	},
	{
		.name = "page_fault1",
		.doc = "will-it-scale page_fault1: map anonymous memory "
		       "private, write every page once, unmap, again",
		.setup = page_fault1_setup,
		.loop = fault_loop,
		.teardown = page_fault1_teardown,
		.thread_size = sizeof(struct fault_thread),
		.runs = page_fault1_runs,
	},
};

static const struct kscale_variant host_variants[] = {
	{ "real", "the running kernel: mmap(MAP_SHARED) of /dev/zero",
	  .host = &real_kind },
	{ "real_private", "the running kernel: MAP_PRIVATE (anonymous "
			  "memory), for contrast", .host = &real_private_kind },
};

static const struct kscale_knob knobs[] = {
	{ "pages", "4096", "pages per mapping (per thread's range with "
	  "--shared-object)", check_pages },
	{ "shared_object", "0", "1: every thread faults its own range of one "
	  "object", kscale_check_bool, "fault" },
	{ "size_limit", "0", "pages the internal mount may hold, 0 for "
	  "unlimited (only stat_lock keeps count)", check_size_limit,
	  "fault" },
	{ "page_size", "4k", "the modelled machine's page, 4k or 16k (ia64, "
	  "the seed's Altix): what a fault clears and 2.6.7's index geometry "
	  "(model variants; real keeps the host's)", check_page_size },
	{ "fault_work_ns", "0", "ns of the rest of a fault (trap, page tables, "
	  "PTE, memcg) outside any lock, or auto (a real shared /dev/zero "
	  "fault minus the upstream model's shmem path, measured)",
	  kscale_check_ns_or_auto, "fault" },
	{ "anon_work_ns", "0", "ns of the rest of an anonymous fault and its "
	  "share of the munmap (trap, page tables, rmap, memcg, TLB) outside "
	  "any lock, or auto (a real anonymous fault minus the model's path, "
	  "measured)", kscale_check_ns_or_auto, "page_fault1" },
	{ "pcp_batch", "63", "pages a per-CPU list takes from or gives back "
	  "to the zone under zone->lock (today's zone_batchsize(): 63; "
	  "4.16's: 31)", check_pcp, "page_fault1" },
	{ "pcp_high", "252", "pages on a per-CPU list before it gives a batch "
	  "back (today's floor, batch << 2: 252; 4.16's 6 * batch: 186)",
	  check_pcp, "page_fault1" },
	{ "lru_add_batch", "31", "pages a CPU gathers before it takes the LRU "
	  "lock to add them (today's folio batch: 31; 4.16's PAGEVEC_SIZE: "
	  "14)", check_lru_add_batch, "page_fault1" },
};

KSCALE_PRIMARY_METRIC("faults_per_sec_per_cpu");
KSCALE_PERF_SYMBOLS("shmem_fault", "shmem_get_folio_gfp");

KSCALE_MODEL("shmem_fault",
	     "/dev/zero shared-mapping faults and the shmem stat_lock "
	     "(seed 002, 2.6.7 mm/shmem.c)",
	     shmem_fault_init, &shmem_fault_variants);
