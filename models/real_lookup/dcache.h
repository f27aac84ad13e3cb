/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The dentry cache of the real_lookup model: structures of 2.6.32
 * include/linux/dcache.h, plus what 4.7's parallel lookups added
 * (d_in_lookup_hash, d_wait, the inode's i_dir_seq and i_rwsem).
 * Which era's locks are taken is chosen per run (dcache_init()).
 */
#ifndef KSCALE_REAL_LOOKUP_DCACHE_H
#define KSCALE_REAL_LOOKUP_DCACHE_H

#include <stdint.h>

#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/list.h"
#include "../../lib/kernel/mutex.h"
#include "../../lib/kernel/rcu.h"
#include "../../lib/kernel/wait.h"
#include "i_rwsem.h"

#define DNAME_INLINE_LEN	24
#define S_IMMUTABLE		8	/* Immutable file */
#define S_DEAD			16	/* removed, but still open directory */

#define DCACHE_REFERENCED	0x0008	/* Recently used, don't discard. */
#define DCACHE_LRU_LIST		0x00080000 /* on the LRU (3.12+, d_lock) */
#define DCACHE_PAR_LOOKUP	0x10000000 /* being looked up (4.7+) */

struct qstr {
	unsigned int hash;
	unsigned int len;
	const char *name;
};

/* A magic directory's, or (hashed by i_ino, inode.c) a file's. */
struct inode {
	struct hlist_node i_hash;
	struct list_head i_lru;		/* in core, or a dispose list */
	unsigned long i_ino;
	unsigned long i_state;		/* inode_lock; I_LOCK cleared without */
	atomic_t i_count;		/* raised under inode_lock */
	unsigned int i_flags;
	struct mutex i_mutex;		/* 2.6.32 */
	struct rw_semaphore i_rwsem;	/* 4.7+ */
	unsigned long i_dir_seq;	/* 4.7+: odd while a lookup completes */
};

struct dentry {
	/*
	 * today's lockref: lock and count in one word, for fast_dput().
	 * Departure: the count is its low half, the lock word its high one
	 * (the kernel's: the other way round), so that spinlock_t's kind
	 * byte (spinlock.h) lies past the word, not in it.
	 */
	union {
		uint64_t d_lockref;
		struct {
			atomic_t d_count;
			spinlock_t d_lock;	/* per dentry lock */
		};
	};
	/*
	 * Protected by d_lock; read without it by d_in_lookup() and
	 * fast_dput(), as the kernel's: WRITE_ONCE where those race.
	 */
	unsigned int d_flags;
	struct inode *d_inode;		/* Where the name belongs to - NULL is
					 * negative */
	struct hlist_node d_hash;	/* lookup hash list */
	struct dentry *d_parent;	/* parent directory */
	struct qstr d_name;
	struct list_head d_lru;		/* LRU list */
	struct list_head d_child;	/* child of parent list */
	struct list_head d_subdirs;	/* our children */
	struct hlist_node d_in_lookup_hash; /* 4.7+: in-lookup ones only */
	wait_queue_head_t *d_wait;	/* 4.7+: in-lookup ones only */
	struct rcu_head d_rcu;
	unsigned char d_iname[DNAME_INLINE_LEN]; /* small names */
};

struct dcache_stats {
	unsigned long nr_dentry;
	unsigned long duplicates;	/* times a name got a second dentry */
	unsigned long names_with_duplicates;	/* at a quiet point */
};

extern spinlock_t dcache_lock;

/*
 * vfs_scale: false for 2.6.32's global dcache_lock on allocation, hashing,
 * the last dput and pruning; true for today's finer locks (a lock per
 * hash bucket, the parent's d_lock, the LRU's own lock).
 */
void dcache_init(unsigned long max_dentries, bool vfs_scale);
void dcache_exit(void);
void dcache_stats(struct dcache_stats *st);

unsigned int full_name_hash(const char *name, unsigned int len);
struct dentry *d_make_root(struct inode *inode);
struct dentry *d_alloc(struct dentry *parent, const struct qstr *name);
struct dentry *__d_lookup(struct dentry *parent, const struct qstr *name);
struct dentry *d_lookup(struct dentry *parent, const struct qstr *name);
void d_add(struct dentry *dentry, struct inode *inode);
void dput(struct dentry *dentry);
/* fs/inode.c: the last reference under inode_lock (iput_final()). */
void iput(struct inode *inode);
/* The shrinkers: nr unused dentries (referenced last), or every one. */
void shrink_dcache_memory(unsigned long nr);
void shrink_dcache_sb(void);
bool d_unhashed(struct dentry *dentry);

/* 4.7+ parallel lookups */
struct dentry *d_alloc_parallel(struct dentry *parent, const struct qstr *name,
				wait_queue_head_t *wq, unsigned long *waits);
void d_lookup_done(struct dentry *dentry);

static inline bool d_in_lookup(struct dentry *dentry)
{
	return READ_ONCE(dentry->d_flags) & DCACHE_PAR_LOOKUP;
}

#endif
