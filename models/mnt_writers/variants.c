// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "../../lib/kernel/page_alloc.h"
#include "vfsmount_2_6.h"
#include "mnt_writers.h"

spinlock_t vfsmount_lock = __SPIN_LOCK_UNLOCKED;
bool mnt_cache_page_per_object;
unsigned long mnt_underflows_coalesced;

void *mnt_cache_zalloc(size_t size)
{
	size_t align = mnt_cache_page_per_object ? PAGE_SIZE : SMP_CACHE_BYTES;
	size_t total = (size + align - 1) & ~(align - 1);
	void *p = aligned_alloc(align, total);

	if (!p)
		abort();
	memset(p, 0, total);
	return p;
}

void mntget_2_6(struct vfsmount *mnt)
{
	mntget((struct vfsmount_2_6 *)mnt);
}

void mntput_2_6(struct vfsmount *mnt)
{
	struct vfsmount_2_6 *m = (struct vfsmount_2_6 *)mnt;

	mntput(m);
}

const struct mnt_writers_ops *const mnt_writers_variants[] = {
	&mnt_writers_none,
	&mnt_writers_atomic,
	&mnt_writers_pernode,
	&mnt_writers_percpu,
	&mnt_writers_percpu_seed,
	&mnt_writers_upstream,
};

const int mnt_writers_nr_variants =
	sizeof(mnt_writers_variants) / sizeof(mnt_writers_variants[0]);
