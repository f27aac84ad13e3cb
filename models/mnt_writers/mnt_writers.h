/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The writer-count designs for r/o bind mounts behind one table, so the
 * openbench workload, torture and the validation tests can drive each.
 * Every variant defines its own struct vfsmount, laid out as in its kernel.
 */
#ifndef KSCALE_MNT_WRITERS_H
#define KSCALE_MNT_WRITERS_H

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/harness/variant.h"
#include "../../lib/kernel/compiler.h"

struct vfsmount;

/* A variant's implementation: its name is its table row's (variants.c). */
struct mnt_writers_ops {
	/* false for `none`: before the series nothing counted writers */
	bool counts_writers;
	/* 2.6.2x's: fs_2_6.h's path around the count, struct vfsmount_2_6 */
	bool era_2_6;
	/*
	 * A bug the code has as posted, which torture must catch: the counts
	 * stay exact only in sum over the mounts.
	 */
	const char *posted_bug;
	void (*init)(void);		/* boot-time setup, e.g. per-CPU data */
	struct vfsmount *(*alloc_vfsmnt)(const char *name);
	void (*free_vfsmnt)(struct vfsmount *mnt);
	/* the reference the path walk takes and __fput() drops */
	void (*mntget)(struct vfsmount *mnt);
	void (*mntput)(struct vfsmount *mnt);
	int (*mnt_want_write)(struct vfsmount *mnt);
	void (*mnt_drop_write)(struct vfsmount *mnt);
	int (*mnt_make_readonly)(struct vfsmount *mnt);
	void (*mnt_make_readwrite)(struct vfsmount *mnt);
	/* Writers held on the mount; exact at a quiet point. */
	long (*mnt_writers)(struct vfsmount *mnt);
};

extern const struct mnt_writers_ops mnt_writers_none;
extern const struct mnt_writers_ops mnt_writers_atomic;
extern const struct mnt_writers_ops mnt_writers_pernode;
extern const struct mnt_writers_ops mnt_writers_percpu;
extern const struct mnt_writers_ops mnt_writers_percpu_seed;
extern const struct mnt_writers_ops mnt_writers_upstream;

/*
 * kmem_cache_zalloc(mnt_cache): cache-line aligned (SLAB_HWCACHE_ALIGN),
 * or each object on pages of its own, so a test can mprotect() one.
 */
extern bool mnt_cache_page_per_object;

/* atomic: the mounts with writers, as its sb->s_mnt_writers counts them */
long mnt_atomic_sb_writers(void);

/* percpu*: times handle_write_count_underflow() coalesced every CPU's count. */
extern unsigned long mnt_underflows_coalesced;
void *mnt_cache_zalloc(size_t size);

/* The model's variant table: each row's .ops a struct mnt_writers_ops. */
extern const struct kscale_variant_table mnt_writers_variants;

#define MNT_READONLY	0x40	/* does the user want this to be r/o? */

/* Every era's struct vfsmount has its flags in ->mnt_flags. */
#define __mnt_is_readonly(mnt)	(READ_ONCE((mnt)->mnt_flags) & MNT_READONLY)

#endif
