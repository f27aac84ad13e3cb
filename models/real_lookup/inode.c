// SPDX-License-Identifier: GPL-2.0
/*
 * 2.6.32 fs/inode.c, what the magic filesystem's ->lookup() needs:
 * iget_locked() finds the inode of an inode number in the in-core inode
 * hash, or hashes a new one marked I_NEW for its caller to read from disk
 * and unlock_new_inode(); a second task wanting it meanwhile sleeps until
 * then (wait_on_inode()).  So a name missed in one shard's directory whose
 * inode was read through another's costs no I/O, as on ext3.
 *
 * Departures: the hash is bounded at icache_max inodes, the least
 * recently found evicted first (the kernel frees unused inodes under
 * memory pressure); one global lock covers the hash and each inode's
 * state (2.6.32's inode_lock; today's inode_hash_lock plus i_lock).
 */
#include <stdlib.h>

#include "../../lib/kernel/list.h"
#include "../../lib/kernel/lockstat.h"
#include "../../lib/kernel/wait.h"
#include "real_lookup.h"

#define I_NEW	(1UL << 3)

struct icache_inode {
	struct hlist_node i_hash;
	struct list_head i_lru;
	unsigned long i_ino;
	unsigned long i_state;		/* inode_lock */
	int i_count;			/* waiters holding it: not evicted */
	wait_queue_head_t *i_wait;	/* while I_NEW: its reader's */
};

static spinlock_t inode_lock = __SPIN_LOCK_UNLOCKED;
static struct hlist_head *inode_hashtable;
static unsigned long i_hash_mask;
static struct list_head inode_lru = LIST_HEAD_INIT(inode_lru);
static unsigned long nr_inodes, icache_max;

void icache_init(unsigned long max_inodes)
{
	unsigned long n = 16;

	icache_exit();
	while (n < 2 * max_inodes)
		n <<= 1;
	inode_hashtable = calloc(n, sizeof(*inode_hashtable));
	i_hash_mask = n - 1;
	icache_max = max_inodes;
	/* its line, and a hash chain's or the LRU's */
	if (max_inodes)
		lockstat_register(&inode_lock, "inode_lock", 2, LOCKSTAT_SPIN);
}

void icache_exit(void)
{
	struct icache_inode *inode;

	while (!list_empty(&inode_lru)) {
		inode = list_entry(inode_lru.next, struct icache_inode, i_lru);
		list_del_init(&inode->i_lru);
		free(inode);
	}
	free(inode_hashtable);
	inode_hashtable = NULL;
	nr_inodes = icache_max = 0;
}

static struct hlist_head *ihash(unsigned long ino)
{
	return &inode_hashtable[(ino * 0x9e3779b97f4a7c15UL >> 20) &
				i_hash_mask];
}

static struct icache_inode *find_inode_fast(unsigned long ino)
{
	struct hlist_node *node;

	for (node = ihash(ino)->first; node; node = node->next) {
		struct icache_inode *inode = container_of(node,
				struct icache_inode, i_hash);

		if (inode->i_ino == ino)
			return inode;
	}
	return NULL;
}

/* inode_lock held: make room, the least recently found unused one first. */
static void prune_icache(void)
{
	struct icache_inode *inode;
	struct list_head *p;

	for (p = inode_lru.prev; nr_inodes >= icache_max && p != &inode_lru;) {
		inode = list_entry(p, struct icache_inode, i_lru);
		p = p->prev;
		if ((inode->i_state & I_NEW) || inode->i_count)
			continue;
		hlist_del_init_rcu(&inode->i_hash);
		list_del_init(&inode->i_lru);
		nr_inodes--;
		free(inode);
	}
}

/* inode_lock held, dropped while asleep: until its reader unlocks it. */
static void wait_on_inode(struct icache_inode *inode)
{
	DECLARE_WAITQUEUE(wait, current);

	inode->i_count++;		/* __iget() */
	add_wait_queue(inode->i_wait, &wait);
	for (;;) {
		set_current_state(TASK_UNINTERRUPTIBLE);
		if (!(inode->i_state & I_NEW))
			break;
		spin_unlock(&inode_lock);
		schedule();
		spin_lock(&inode_lock);
	}
	__set_current_state(TASK_RUNNING);
	inode->i_count--;		/* iput() */
}

/* inode_lock held: in core, waited for if its read is under way. */
static struct icache_inode *find_and_wait(unsigned long ino)
{
	struct icache_inode *inode = find_inode_fast(ino);

	if (inode) {
		if (inode->i_state & I_NEW)
			wait_on_inode(inode);
		list_move(&inode->i_lru, &inode_lru);
	}
	return inode;
}

/*
 * iget_locked(): the in-core inode (NULL), or a new one hashed I_NEW for
 * the caller to read and unlock_new_inode().  Allocated outside the
 * lock, then looked up again, as the kernel does.
 */
static struct icache_inode *iget_locked(unsigned long ino,
					 wait_queue_head_t *wq)
{
	struct icache_inode *inode, *old;

	spin_lock(&inode_lock);
	old = find_and_wait(ino);
	spin_unlock(&inode_lock);
	if (old)
		return NULL;
	inode = calloc(1, sizeof(*inode));	/* alloc_inode() */
	spin_lock(&inode_lock);
	old = find_and_wait(ino);
	if (old) {
		spin_unlock(&inode_lock);
		free(inode);
		return NULL;
	}
	prune_icache();
	inode->i_ino = ino;
	inode->i_state = I_NEW;
	inode->i_wait = wq;
	hlist_add_head_rcu(&inode->i_hash, ihash(ino));
	list_add(&inode->i_lru, &inode_lru);
	nr_inodes++;
	spin_unlock(&inode_lock);
	return inode;
}

static void unlock_new_inode(struct icache_inode *inode)
{
	spin_lock(&inode_lock);
	inode->i_state &= ~I_NEW;
	wake_up_all(inode->i_wait);
	inode->i_wait = NULL;
	spin_unlock(&inode_lock);
}

/* The magic filesystem's inode read: from the inode cache, or the disk. */
void magic_iget(unsigned long ino, void (*read_inode)(unsigned long ino))
{
	struct icache_inode *inode;
	wait_queue_head_t wq;

	if (!icache_max) {
		read_inode(ino);
		return;
	}
	init_waitqueue_head(&wq);
	inode = iget_locked(ino, &wq);
	if (!inode) {
		lookup_stats.icache_hits++;
		return;
	}
	read_inode(ino);
	unlock_new_inode(inode);
}
