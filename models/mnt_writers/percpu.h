/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the seed's per-CPU writer counts are the same in, as posted
 * (percpu_seed.c) and as merged in 2.6.26 (percpu.c, which defines these):
 * the struct vfsmount with __mnt_writers, the per-CPU struct mnt_writer,
 * their set-up, unlocking every CPU's writer, and clearing MNT_READONLY.
 */
#ifndef KSCALE_MNT_WRITERS_PERCPU_H
#define KSCALE_MNT_WRITERS_PERCPU_H

#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/percpu.h"
#include "../../lib/kernel/spinlock.h"
#include "vfsmount_2_6.h"

#define MNT_WRITER_UNDERFLOW_LIMIT -(1<<16)

struct vfsmount {
	VFSMOUNT_2_6_FIELDS;
	/*
	 * This value is not stable unless all of the mnt_writers[] spinlocks
	 * are held, and all mnt_writer[]s on this mount have 0 as their
	 * ->count
	 */
	atomic_t __mnt_writers;
};

struct mnt_writer {
	/*
	 * If holding multiple instances of this lock, they
	 * must be ordered by cpu number.
	 */
	spinlock_t lock;
	unsigned long count;
	struct vfsmount *mnt;
} ____cacheline_aligned_in_smp;

/* DEFINE_PER_CPU(struct mnt_writer, mnt_writers), allocated at "boot". */
extern struct mnt_writer __percpu *mnt_writers;

void init_mnt_writers(void);
struct vfsmount *alloc_vfsmnt_percpu(const char *name);
void unlock_mnt_writers(void);
void __mnt_unmake_readonly_percpu(struct vfsmount *mnt);

#endif
