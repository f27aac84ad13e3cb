/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The shmem_fault bench's two files: its workload (shmem_fault.c) and
 * its host side (shmem_fault_host.c): the rows that fault in the running
 * kernel, /dev/zero, and the calibration of --fault-work-ns=auto.
 */
#ifndef KSCALE_BENCH_SHMEM_FAULT_H
#define KSCALE_BENCH_SHMEM_FAULT_H

#include <stdbool.h>
#include <stddef.h>

#include "../lib/harness/kscale.h"
#include "../lib/kernel/percpu.h"
#include "../models/shmem_fault/anon.h"
#include "../models/shmem_fault/shmem_fault.h"

struct fault_run;

/* The step vector (variant.h): the model's, or a host row's. */
struct fault_kind {
	void (*pass_begin)(struct kscale_thread *t);
	int (*touch)(struct kscale_thread *t, unsigned long idx);
	void (*pass_end)(struct kscale_thread *t);
	bool private;		/* MAP_PRIVATE: anonymous memory */
};

struct fault_run {
	const struct fault_kind *kind;
	const struct shmem_fault_ops *ops;	/* model variants */
	unsigned long pages;
	unsigned long size_limit;
	unsigned long fault_work_ns;	/* half before the shmem path, half after */
	bool shared;
	struct file *shared_file;
	char *shared_map;
	unsigned long fresh_calls;	/* page_alloc_fresh()'s, after set-up */
};

/*
 * Written on every fault by its thread only: each on its own pair of
 * lines (the adjacent-line prefetcher's 128 bytes), as SMP_CACHE_BYTES
 * keeps the kernel's per-task state apart.
 */
#define FAULT_THREAD_ALIGN	(2 * SMP_CACHE_BYTES)

struct fault_thread {
	struct file *file;
	struct vm_area_struct *vma;	/* page_fault1's model mapping */
	char *map;			/* real: the mapping's first page */
	unsigned long next, end;	/* pages of this pass: [next, end) */
	unsigned long start;
	unsigned long sigbus;
	struct lock_class_stats stat_lock;
} __attribute__((aligned(FAULT_THREAD_ALIGN)));

_Static_assert(sizeof(struct fault_thread) % FAULT_THREAD_ALIGN == 0 &&
	       _Alignof(struct fault_thread) == FAULT_THREAD_ALIGN &&
	       _Alignof(struct kscale_thread) % FAULT_THREAD_ALIGN == 0,
	       "struct fault_thread shares a prefetch pair");

static inline void range_of(struct kscale_thread *t)
{
	struct fault_run *fr = t->run->priv;
	struct fault_thread *ft = t->priv;

	ft->start = fr->shared ? t->id * fr->pages : 0;
	ft->next = ft->start;
	ft->end = ft->start + fr->pages;
}

/* shmem_fault_host.c: the host rows' steps. */
extern const struct fault_kind real_kind;
extern const struct fault_kind real_private_kind;

/* shmem_fault_host.c: /dev/zero, opened by the init. */
extern int devzero;

/* shmem_fault_host.c: --fault-work-ns=auto, measured by the init. */
extern unsigned long fault_work_auto_ns;
/* shmem_fault_host.c: --anon-work-ns=auto, measured by the init. */
extern unsigned long anon_work_auto_ns;

/* shmem_fault_host.c: /dev/zero and, if a run takes them, the auto work. */
int shmem_fault_init(const struct kscale_options *o, char *err, size_t len);

#endif
