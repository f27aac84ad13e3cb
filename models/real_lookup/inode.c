// SPDX-License-Identifier: GPL-2.0
/*
 * 2.6.32 fs/inode.c, what the magic filesystem's ->lookup() needs:
 * iget_locked() finds the inode of an inode number in the in-core inode
 * hash (ifind_fast()), or hashes a new one marked I_NEW after looking
 * again (get_new_inode_fast()), both under the global inode_lock, for its
 * caller to read from disk and unlock_new_inode(); a second task wanting
 * it meanwhile sleeps until then (wait_on_inode()).  So a name missed in
 * one shard's directory whose inode was read through another's costs no
 * I/O, as on ext3.  The last iput() takes inode_lock (atomic_dec_and_lock)
 * and keeps the inode in core, unused, or with --icache=0 evicts it at
 * once (generic_forget_inode() without MS_ACTIVE); prune_icache() marks
 * unused ones I_FREEING under inode_lock and dispose_list() unhashes each
 * under it again, then counts them under it once more.  With an inode
 * cache or without, every inode read and every last iput() goes through
 * inode_lock, as every inode did in 2.6.32.  unlock_new_inode() takes no
 * lock but a bit wait queue's (kernel/wait.c, hashed by the address of
 * i_state), and only if someone waits there.
 *
 * A dentry holds its inode from d_add() until it is killed, so an
 * inode's last iput() comes when its last dentry is pruned, outside
 * dcache_lock (2.6.32's dentry_iput()) or the LRU lock (today's
 * shrink_dentry_list() -> dentry_unlink_inode()).
 *
 * Departures: the cache is bounded at
 * icache_max unused inodes, pruned when a new one is hashed, the least
 * recently found first (the kernel prunes from a shrinker under memory
 * pressure).  i_state's bits are read and cleared with atomics where a
 * waiter tests I_LOCK without inode_lock (the kernel's plain accesses,
 * ordered by its barriers).  Lookups skip an I_FREEING
 * inode where 2.6.32 waits for it to go (__wait_on_freeing_inode()).
 * Today's kernel has inode_hash_lock and i_lock instead: the parallel
 * variant takes the same global lock.
 */
#include <stdlib.h>

#include "../../lib/kernel/list.h"
#include "../../lib/kernel/lockstat.h"
#include "../../lib/kernel/wait.h"
#include "real_lookup.h"

#define I_NEW		8
#define I_FREEING	32
#define __I_LOCK	7
#define I_LOCK		(1 << __I_LOCK)

/* the model's counts: here, at the bottom of namei -> dcache -> inode */
__thread struct lookup_stats lookup_stats;

spinlock_t inode_lock = __SPIN_LOCK_UNLOCKED;
static struct hlist_head *inode_hashtable;
static unsigned long i_hash_mask;
static struct list_head inode_lru = LIST_HEAD_INIT(inode_lru);
/* in the hash, and of those being pruned (still hashed) */
static unsigned long nr_inodes, nr_freeing, icache_max;

/*
 * The hash sized for what can be in core: max_inodes unused ones kept and
 * the pinned ones cached dentries hold (2.6.32 sized it by memory,
 * ihash_entries: chains stay short, as here).
 */
void icache_init(unsigned long max_inodes, unsigned long pinned)
{
	unsigned long n = 16;

	icache_exit();
	/* the variant's kernel's lock (spinlock.h) */
	spin_lock_init(&inode_lock);
	while (n < 2 * (max_inodes + pinned))
		n <<= 1;
	inode_hashtable = calloc(n, sizeof(*inode_hashtable));
	i_hash_mask = n - 1;
	icache_max = max_inodes;
	/* its line, and a hash chain's or the LRU's */
	lockstat_register(&inode_lock, "inode_lock", 2, LOCKSTAT_SPIN);
}

void icache_exit(void)
{
	struct inode *inode;

	while (!list_empty(&inode_lru)) {
		inode = list_entry(inode_lru.next, struct inode, i_lru);
		list_del_init(&inode->i_lru);
		free(inode);
	}
	free(inode_hashtable);
	inode_hashtable = NULL;
	nr_inodes = nr_freeing = icache_max = 0;
}

static struct hlist_head *ihash(unsigned long ino)
{
	return &inode_hashtable[(ino * 0x9e3779b97f4a7c15UL >> 20) &
				i_hash_mask];
}

static struct inode *find_inode_fast(unsigned long ino)
{
	struct hlist_node *node;

	for (node = ihash(ino)->first; node; node = node->next) {
		struct inode *inode = container_of(node,
				struct inode, i_hash);

		if (inode->i_ino == ino &&
		    !(READ_ONCE(inode->i_state) & I_FREEING))
			return inode;
	}
	return NULL;
}

/*
 * inode_lock held: mark the least recently found unused inodes I_FREEING
 * onto freeable, until the cache is back within icache_max.
 */
static void prune_icache(struct list_head *freeable)
{
	struct inode *inode;
	struct list_head *p;

	for (p = inode_lru.prev;
	     nr_inodes - nr_freeing >= icache_max && p != &inode_lru;) {
		inode = list_entry(p, struct inode, i_lru);
		p = p->prev;
		if ((READ_ONCE(inode->i_state) & I_NEW) ||
		    atomic_read(&inode->i_count))
			continue;
		inode->i_state |= I_FREEING;
		list_move(&inode->i_lru, freeable);
		nr_freeing++;
	}
}

/* 2.6.32's: each unhashed under inode_lock, then counted under it. */
static void dispose_list(struct list_head *head)
{
	struct inode *inode;
	unsigned long nr_disposed = 0;

	while (!list_empty(head)) {
		inode = list_entry(head->next, struct inode, i_lru);
		list_del(&inode->i_lru);
		spin_lock(&inode_lock);
		hlist_del_init_rcu(&inode->i_hash);
		spin_unlock(&inode_lock);
		free(inode);		/* destroy_inode() */
		nr_disposed++;
	}
	if (!nr_disposed)
		return;
	spin_lock(&inode_lock);
	nr_inodes -= nr_disposed;
	nr_freeing -= nr_disposed;
	spin_unlock(&inode_lock);
}

/* fs/fs-writeback.c */
static int inode_wait(void *word)
{
	schedule();
	return 0;
}

/* include/linux/writeback.h: until its reader unlocks it. */
static void wait_on_inode(struct inode *inode)
{
	might_sleep();
	wait_on_bit(&inode->i_state, __I_LOCK, inode_wait,
		    TASK_UNINTERRUPTIBLE);
}

/* inode_lock held: a reference, the inode now the most recently found. */
static void __iget(struct inode *inode)
{
	atomic_inc(&inode->i_count);
	list_move(&inode->i_lru, &inode_lru);
}

/* The in-core inode, referenced and read, or NULL. */
static struct inode *ifind_fast(unsigned long ino)
{
	struct inode *inode;

	spin_lock(&inode_lock);
	inode = find_inode_fast(ino);
	if (inode) {
		__iget(inode);
		spin_unlock(&inode_lock);
		wait_on_inode(inode);
		return inode;
	}
	spin_unlock(&inode_lock);
	return NULL;
}

/*
 * Allocated outside the lock, then looked up again, as the kernel does:
 * a new inode hashed I_NEW, or the one another task hashed meanwhile.
 */
static struct inode *get_new_inode_fast(unsigned long ino)
{
	struct inode *inode = calloc(1, sizeof(*inode)), *old;
	struct list_head freeable = LIST_HEAD_INIT(freeable);

	spin_lock(&inode_lock);
	/* We released the lock, so.. */
	old = find_inode_fast(ino);
	if (!old) {
		if (icache_max)
			prune_icache(&freeable);
		inode->i_ino = ino;
		atomic_set(&inode->i_count, 1);
		inode->i_state = I_LOCK | I_NEW;
		hlist_add_head_rcu(&inode->i_hash, ihash(ino));
		list_add(&inode->i_lru, &inode_lru);
		nr_inodes++;
		spin_unlock(&inode_lock);
		dispose_list(&freeable);
		return inode;
	}
	/*
	 * Uhhuh, somebody else created the same inode under
	 * us. Use the old inode instead of the one we just
	 * allocated.
	 */
	__iget(old);
	spin_unlock(&inode_lock);
	free(inode);		/* destroy_inode() */
	wait_on_inode(old);
	return old;
}

/* A referenced inode: I_NEW for the caller to read and unlock_new_inode(). */
static struct inode *iget_locked(unsigned long ino)
{
	struct inode *inode = ifind_fast(ino);

	if (inode)
		return inode;
	return get_new_inode_fast(ino);
}

static void wake_up_inode(struct inode *inode)
{
	/*
	 * Prevent speculative execution through spin_unlock(&inode_lock);
	 */
	smp_mb();
	wake_up_bit(&inode->i_state, __I_LOCK);
}

/*
 * No inode_lock: nobody else changes the state of an inode while it is
 * locked, as its reader just created it.
 */
static void unlock_new_inode(struct inode *inode)
{
	smp_mb();
	__atomic_fetch_and(&inode->i_state, ~(unsigned long)(I_LOCK | I_NEW),
			   __ATOMIC_RELEASE);
	wake_up_inode(inode);
}

/*
 * generic_drop_inode(), inode_lock held and released: an unused inode
 * stays in core, or with no inode cache is evicted now.
 */
static void iput_final(struct inode *inode)
{
	if (icache_max) {
		spin_unlock(&inode_lock);
		return;
	}
	hlist_del_init_rcu(&inode->i_hash);
	list_del_init(&inode->i_lru);
	inode->i_state |= I_FREEING;
	nr_inodes--;
	spin_unlock(&inode_lock);
	free(inode);		/* clear_inode(), destroy_inode() */
}

void iput(struct inode *inode)
{
	if (atomic_dec_and_lock(&inode->i_count, &inode_lock))
		iput_final(inode);
}

/* The magic filesystem's inode read: from the inode cache, or the disk. */
struct inode *magic_iget(unsigned long ino,
			 void (*read_inode)(unsigned long ino))
{
	struct inode *inode;

	inode = iget_locked(ino);
	/* only its reader clears I_NEW */
	if (inode->i_state & I_NEW) {
		if (read_inode)
			read_inode(ino);
		unlock_new_inode(inode);
	} else {
		lookup_stats.icache_hits++;
	}
	return inode;
}
