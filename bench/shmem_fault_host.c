// SPDX-License-Identifier: GPL-2.0
/*
 * The shmem_fault bench's host side: the rows that make the running
 * kernel fault (`real`, mmap(MAP_SHARED) of /dev/zero, and `real_private`,
 * MAP_PRIVATE), and at start-up the calibration of --fault-work-ns=auto
 * and --anon-work-ns=auto.  bench/shmem_fault.c runs them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "../lib/harness/calibrate.h"
#include "../lib/harness/options.h"
#include "shmem_fault.h"

#define CALIBRATION_PAGES	4096

int devzero = -1;
unsigned long fault_work_auto_ns;
unsigned long anon_work_auto_ns;

static void real_pass_begin(struct kscale_thread *t)
{
	struct fault_run *fr = t->run->priv;
	struct fault_thread *ft = t->priv;
	size_t len = fr->pages * PAGE_SIZE;

	range_of(t);
	if (fr->shared) {
		ft->map = fr->shared_map;
		return;
	}
	ft->map = fr->kind->private ?
		mmap(NULL, len, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) :
		mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, devzero, 0);
	if (ft->map == MAP_FAILED) {
		kscale_fail(t->run, "mmap of %zu bytes: %s", len,
			    strerror(errno));
		ft->map = NULL;
		ft->next = ft->end;
	}
}

static int real_touch(struct kscale_thread *t, unsigned long idx)
{
	struct fault_thread *ft = t->priv;

	((volatile char *)ft->map)[idx * PAGE_SIZE] = 1;
	return 0;
}

static void real_pass_end(struct kscale_thread *t)
{
	struct fault_run *fr = t->run->priv;
	struct fault_thread *ft = t->priv;
	char *start = ft->map + ft->start * PAGE_SIZE;
	size_t len = fr->pages * PAGE_SIZE;

	if (!ft->map)
		return;
	if (!fr->shared)
		munmap(ft->map, len);
	else if (madvise(start, len,
			 fr->kind->private ? MADV_DONTNEED : MADV_REMOVE))
		kscale_fail(t->run, "madvise: %s", strerror(errno));
}

const struct fault_kind real_kind = {
	real_pass_begin, real_touch, real_pass_end,
};

const struct fault_kind real_private_kind = {
	real_pass_begin, real_touch, real_pass_end, .private = true,
};

/*
 * Calibration: --fault-work-ns=auto and --anon-work-ns=auto.  One pass
 * of a real fault loop over an mmap of FLAGS on FD: map, touch every
 * page, unmap.
 */
static long real_pass(int flags, int fd)
{
	size_t len = CALIBRATION_PAGES * PAGE_SIZE;
	char *map = mmap(NULL, len, PROT_READ | PROT_WRITE, flags, fd, 0);
	long i;

	if (map == MAP_FAILED)
		return -1;
	for (i = 0; i < CALIBRATION_PAGES; i++)
		((volatile char *)map)[i * PAGE_SIZE] = 1;
	return munmap(map, len) ? -1 : CALIBRATION_PAGES;
}

/* /dev/zero's shared mapping: a shmem fault a page. */
static long real_fault_round(struct kscale_round *r)
{
	return real_pass(MAP_SHARED, devzero);
}

/* The same pass through the upstream model's shmem path. */
static long model_fault_round(struct kscale_round *r)
{
	long ret = shmem_fault_pass(r->arg, CALIBRATION_PAGES);

	if (ret < 0) {
		errno = -ret;
		return -1;
	}
	return ret;
}

/*
 * The real pass's ns a page less the model's, on today's upstream mount
 * at the host's page size; both recorded as kscale_real_WHAT_ns and
 * kscale_model_WHAT_ns.
 */
static int measure_less(kscale_round_fn *real, kscale_round_fn *model,
			void *model_arg, const char *what, double *ns,
			char *err, size_t len)
{
	double real_ns, model_ns;
	char name[64];

	shmem_fault_page_shift(PAGE_SHIFT);	/* the host's, as real's */
	shmem_fault_upstream.shm_mount(0);
	if (kscale_calibrate_less(real, NULL, model, model_arg, ns, &real_ns,
				  &model_ns, err, len))
		return -1;
	snprintf(name, sizeof(name), "real_%s_ns", what);
	kscale_add_context(name, "%.0f", real_ns);
	snprintf(name, sizeof(name), "model_%s_ns", what);
	kscale_add_context(name, "%.0f", model_ns);
	return 0;
}

/*
 * --fault-work-ns=auto: what a real shared /dev/zero fault costs beyond
 * today's shmem path, i.e. the trap, page-table walk, PTE installation,
 * memcg charge and the rest the models leave out.
 */
static int measure_fault_work(void *arg, double *ns, char *err, size_t len)
{
	return measure_less(real_fault_round, model_fault_round,
			    (void *)&shmem_fault_upstream, "fault", ns, err,
			    len);
}

/* page_fault1's pass in the running kernel: private anonymous memory. */
static long real_anon_round(struct kscale_round *r)
{
	return real_pass(MAP_PRIVATE | MAP_ANONYMOUS, -1);
}

/* The same pass through the model's anonymous path (anon.c). */
static long model_anon_round(struct kscale_round *r)
{
	struct vm_area_struct *vma = anon_mmap(CALIBRATION_PAGES);
	struct page *page;
	long i;

	for (i = 0; i < CALIBRATION_PAGES; i++) {
		if (do_anonymous_page(vma, i, &page)) {
			anon_munmap(vma);
			errno = EFAULT;
			return -1;
		}
		((volatile char *)page_address(page))[0] = 1;
	}
	anon_munmap(vma);
	return CALIBRATION_PAGES;
}

/*
 * --anon-work-ns=auto: what a real anonymous fault and its share of the
 * munmap cost beyond the model's path (today's batch sizes): the trap,
 * page tables, rmap, memcg, the TLB flush.
 */
static int measure_anon_work(void *arg, double *ns, char *err, size_t len)
{
	return measure_less(real_anon_round, model_anon_round, NULL,
			    "anon_fault", ns, err, len);
}

int shmem_fault_init(const struct kscale_options *o, char *err, size_t len)
{
	devzero = open("/dev/zero", O_RDWR);
	if (devzero < 0) {
		snprintf(err, len, "/dev/zero: %s", strerror(errno));
		return -1;
	}
	/* a pinned 0.3 s of faulting: only for the runs that take auto */
	if (kscale_knob_has_value(o, "fault_work_ns", "auto")) {
		if (kscale_auto("shmem_fault.fault_work_ns", NULL,
				&fault_work_auto_ns, measure_fault_work, NULL,
				err, len))
			return -1;
	}
	if (kscale_knob_has_value(o, "anon_work_ns", "auto")) {
		if (kscale_auto("shmem_fault.anon_work_ns", NULL,
				&anon_work_auto_ns, measure_anon_work, NULL,
				err, len))
			return -1;
	}
	kscale_add_context("not_modelled", "TLB, PTE installation, the "
			   "fault's page references, memcg, swap: only their "
			   "time, with --fault-work-ns, uncontended");
	return 0;
}

