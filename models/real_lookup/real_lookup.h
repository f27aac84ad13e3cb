/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The four lookup designs behind one table: each resolves a name in a
 * magic directory, as open-by-inode does for <mnt>/.inode/<ino>.
 */
#ifndef KSCALE_REAL_LOOKUP_H
#define KSCALE_REAL_LOOKUP_H

#include <stdbool.h>
#include <stdint.h>

#include "../../lib/harness/variant.h"
#include "../../lib/kernel/blkdev.h"
#include "dcache.h"

struct lookup_stats {
	unsigned long hits;		/* found by __d_lookup() */
	unsigned long misses;		/* went to the slow path */
	unsigned long in_lookup_waits;	/* 4.7+: waited for another's lookup */
	unsigned long icache_hits;	/* misses whose inode was in core */
	uint64_t lock_wait;		/* cycles in the directory lock's slow path */
};

extern __thread struct lookup_stats lookup_stats;

struct real_lookup_ops {
	bool vfs_scale;			/* today's dcache locks */
	unsigned int dir_flags;		/* i_flags of the magic directories */
	bool one_dentry_per_name;	/* what the design guarantees */
	/* do_lookup(): a referenced dentry for parent/name */
	struct dentry *(*lookup)(struct dentry *parent, const struct qstr *name);
};

extern const struct real_lookup_ops real_lookup_i_mutex;
extern const struct real_lookup_ops real_lookup_sharded;
extern const struct real_lookup_ops real_lookup_immutable;
extern const struct real_lookup_ops real_lookup_parallel;

/* The model's variant table: each row's .ops a struct real_lookup_ops. */
extern const struct kscale_variant_table real_lookup_variants;

/* The filesystem's ->lookup(): this many ns of work, e.g. parsing an inode, */
extern unsigned long fs_lookup_ns;
/*
 * and with fs_io_ns, a read of that long, asleep, from one of the
 * filesystem's disks: inode ino lives on disk ino % nr_magic_disks.
 */
extern unsigned long fs_io_ns;
extern struct request_queue *magic_disks;
extern unsigned int nr_magic_disks;
/* nr disks, each servicing depth reads at once; and their release. */
void magic_disks_init(unsigned int nr, unsigned int depth);
void magic_disks_exit(void);
struct rpc_xprt;

/*
 * The NFS line's transport and server (sunrpc.h), or NULL: the disks.
 * Then a miss's ->lookup() makes its call whether the inode is in core
 * or not, and the inode cache reads nothing.
 */
extern struct rpc_xprt *magic_xprt;
/*
 * What ->lookup() runs: ndelay(fs_lookup_ns), then the disk's read or the
 * NFS call; or a test's rendezvous.
 */
extern void (*magic_read_inode)(unsigned long ino);

/*
 * The in-core inode cache (inode.c): at most max_inodes unused, 0 for
 * none (every miss reads its inode, unless another task is reading it).
 * magic_iget() runs read_inode() only for an inode not in core, and makes
 * concurrent readers of one wait for the first.  inode_lock is 2.6.32's
 * global lock of the cache.  icache_init() before the first lookup.
 */
extern spinlock_t inode_lock;
void icache_init(unsigned long max_inodes, unsigned long pinned);
void icache_exit(void);
/* A referenced inode, which d_add() hands to the dentry; NULL: no read. */
struct inode *magic_iget(unsigned long ino,
			 void (*read_inode)(unsigned long ino));

/* A magic directory: its inode and its dentry. */
struct dentry *magic_dir_create(const struct real_lookup_ops *ops);
void magic_dir_destroy(struct dentry *dir);

/* The magic filesystem's caches and disks, for magic_fs_init(). */
struct magic_fs {
	unsigned long dcache;		/* unused dentries kept */
	unsigned long icache;		/* unused inodes kept (icache_init()) */
	unsigned long pinned;		/* inodes in use besides those */
	unsigned int disks;		/* magic_disks_init() */
	unsigned int io_depth;
	bool nfs;			/* the NFS line: magic_xprt */
	unsigned int rpc_slots;		/* xprt_create()'s */
	unsigned int nfsd_threads;
	uint64_t nfs_rtt_ns;
	uint64_t nfsd_ns;
};

/*
 * The design's caches sized as fs says, the filesystem's disks or its NFS
 * server, and nr_dirs magic directories into dirs; magic_fs_exit()
 * releases them all.  fs_lookup_ns and fs_io_ns are the caller's to set.
 */
void magic_fs_init(const struct real_lookup_ops *ops, const struct magic_fs *fs,
		   struct dentry **dirs, int nr_dirs);
void magic_fs_exit(struct dentry **dirs, int nr_dirs);

/* A task's lookup_stats into sum. */
void lookup_stats_add(struct lookup_stats *sum, const struct lookup_stats *s);

#endif
