// SPDX-License-Identifier: GPL-2.0
/*
 * 2.6.32 fs/dcache.c, the parts a lookup touches: the hash of dentries
 * by (parent, name) walked under RCU (__d_lookup), d_alloc(), d_add(),
 * dput() and the LRU of unused dentries, with the global dcache_lock
 * where 2.6.32 takes it.  For the parallel variant the same cache takes
 * today's finer locks instead (vfs_scale, 2.6.38 on): a lock per hash
 * bucket (hlist_bl's bit lock), the parent's d_lock for d_subdirs, the
 * LRU's own lock; and 4.7's d_alloc_parallel() with its in-lookup hash.
 *
 * Departures: the cache is bounded by the length of the LRU of unused
 * dentries, pruned by the dput() that makes it too long (2.6.32: at once;
 * today: a shrinker's batch at a time, SHRINK_BATCH around the limit, so
 * that it holds the limit on average)
 * where the kernel prunes from a shrinker under memory pressure; d_count is an atomic_t
 * in both eras (today's lockref takes the same cache line); lookups
 * take d_lock in both eras (today's __d_lookup_rcu compares under a
 * seqcount instead); there are no renames, so d_lookup() needs no
 * rename_lock.  Hashing a dentry also checks its chain for another
 * hashed dentry of the same name (the duplicate counter), a walk the
 * kernel does not make.  The locks are the variant's kernel's
 * (spinlock.h): 2.6.32's ticket lock, or 6.18's queued spinlock for
 * parallel; dcache_init() initialises the static ones again for it.
 */
#include <stdlib.h>
#include <string.h>

#include "../../lib/kernel/lockstat.h"
#include "dcache.h"

#define GOLDEN_RATIO_PRIME	0x9e37fffffffc0001UL
/* Today the shrinker prunes SHRINK_BATCH at a time. */
#define SHRINK_BATCH		128
#define IN_LOOKUP_SHIFT		10

spinlock_t dcache_lock = __SPIN_LOCK_UNLOCKED;

static bool vfs_scale;
static struct hlist_head *dentry_hashtable;
static spinlock_t *d_hash_locks;	/* vfs_scale: hlist_bl bit locks */
static unsigned int d_hash_shift;
static unsigned long max_unused;

/* sb->s_dentry_lru: dcache_lock in 2.6.32, its own lock (list_lru) today */
static struct list_head dentry_lru = LIST_HEAD_INIT(dentry_lru);
static spinlock_t lru_lock = __SPIN_LOCK_UNLOCKED;
/* LRU length: changed under the LRU lock, read without it by dput() */
static unsigned long nr_unused;

static void nr_unused_add(long n)
{
	__atomic_fetch_add(&nr_unused, n, __ATOMIC_RELAXED);
}

static unsigned long nr_unused_read(void)
{
	return __atomic_load_n(&nr_unused, __ATOMIC_RELAXED);
}
static long nr_dentry;
static unsigned long nr_duplicates;

static struct hlist_head in_lookup_hashtable[1 << IN_LOOKUP_SHIFT];
static spinlock_t in_lookup_locks[1 << IN_LOOKUP_SHIFT];

unsigned int full_name_hash(const char *name, unsigned int len)
{
	unsigned long hash = 0, c;

	while (len--) {
		c = (unsigned char)*name++;
		hash = (hash + (c << 4) + (c >> 4)) * 11;
	}
	return (unsigned int)hash;
}

static unsigned long d_hash_index(struct dentry *parent, unsigned long hash)
{
	hash += ((unsigned long)parent ^ GOLDEN_RATIO_PRIME) / L1_CACHE_BYTES;
	hash = hash ^ ((hash ^ GOLDEN_RATIO_PRIME) >> d_hash_shift);
	return hash & ((1UL << d_hash_shift) - 1);
}

/*
 * For lockstat: 2.6.32's dcache_lock, or today's LRU lock, hash bucket
 * and in-lookup locks, each visit two lines: the lock's and a list's
 * (the LRU head and a neighbour dentry's link, a hash chain's head, the
 * parent's d_subdirs).  Sixteen bucket locks share a line, one instance.
 */
static void dcache_lockstat_register(unsigned long buckets)
{
	unsigned long i;

	if (!vfs_scale) {
		lockstat_register(&dcache_lock, "dcache_lock", 2,
				  LOCKSTAT_SPIN);
		return;
	}
	lockstat_register(&lru_lock, "lru_lock", 2, LOCKSTAT_SPIN);
	for (i = 0; i < buckets; i++)
		lockstat_register(&d_hash_locks[i], "d_hash_lock", 2,
				  LOCKSTAT_SPIN);
	for (i = 0; i < (1UL << IN_LOOKUP_SHIFT); i++)
		lockstat_register(&in_lookup_locks[i], "in_lookup_lock", 2,
				  LOCKSTAT_SPIN);
}

void dcache_init(unsigned long max_dentries, bool scale)
{
	unsigned long i, n;

	for (d_hash_shift = 4; (1UL << d_hash_shift) < 2 * max_dentries;)
		d_hash_shift++;
	n = 1UL << d_hash_shift;
	dentry_hashtable = calloc(n, sizeof(*dentry_hashtable));
	d_hash_locks = calloc(n, sizeof(*d_hash_locks));
	/*
	 * Each lock the variant's kernel's (spinlock.h): 2.6.32's ticket
	 * lock, 6.18's queued spinlock (its hash chains' are bit spinlocks,
	 * test-and-set: a departure, as before).
	 */
	spin_lock_init(&dcache_lock);
	spin_lock_init(&lru_lock);
	for (i = 0; i < n; i++)
		spin_lock_init(&d_hash_locks[i]);
	for (i = 0; i < (1UL << IN_LOOKUP_SHIFT); i++) {
		in_lookup_hashtable[i].first = NULL;
		spin_lock_init(&in_lookup_locks[i]);
	}
	INIT_LIST_HEAD(&dentry_lru);
	nr_duplicates = 0;
	__atomic_store_n(&nr_unused, 0, __ATOMIC_RELAXED);
	nr_dentry = 0;
	max_unused = max_dentries;
	vfs_scale = scale;
	dcache_lockstat_register(n);
}

static bool d_same_name(struct dentry *dentry, struct dentry *parent,
			const struct qstr *name)
{
	return dentry->d_parent == parent && dentry->d_name.len == name->len &&
	       !memcmp(dentry->d_name.name, name->name, name->len);
}

bool d_unhashed(struct dentry *dentry)
{
	return hlist_unhashed(&dentry->d_hash);
}

static void d_free(struct rcu_head *head)
{
	free(container_of(head, struct dentry, d_rcu));
}

/* Hashed dentries of parent/name in its chain; chain writers excluded. */
static int d_count_names(struct hlist_head *b, struct dentry *parent,
			 const struct qstr *name)
{
	struct hlist_node *node;
	int n = 0;

	for (node = b->first; node; node = node->next) {
		struct dentry *d = container_of(node, struct dentry, d_hash);

		n += d->d_name.hash == name->hash && d_same_name(d, parent, name);
	}
	return n;
}

/* Hash the dentry; the caller holds the chain's writer lock. */
static void __d_rehash(struct dentry *entry, struct hlist_head *b)
{
	if (d_count_names(b, entry->d_parent, &entry->d_name))
		__atomic_fetch_add(&nr_duplicates, 1, __ATOMIC_RELAXED);
	hlist_add_head_rcu(&entry->d_hash, b);
}

static struct hlist_head *d_hash(struct dentry *parent, unsigned int hash,
				 spinlock_t **lock)
{
	unsigned long i = d_hash_index(parent, hash);

	*lock = &d_hash_locks[i];
	return &dentry_hashtable[i];
}

static void d_rehash_locked(struct dentry *dentry)
{
	spinlock_t *lock;
	struct hlist_head *b = d_hash(dentry->d_parent, dentry->d_name.hash,
				      &lock);

	if (!vfs_scale) {
		__d_rehash(dentry, b);	/* dcache_lock held */
		return;
	}
	spin_lock(lock);
	__d_rehash(dentry, b);
	spin_unlock(lock);
}

static void __d_drop(struct dentry *dentry)
{
	spinlock_t *lock;

	if (d_unhashed(dentry))
		return;
	if (!vfs_scale) {
		hlist_del_init_rcu(&dentry->d_hash);	/* dcache_lock held */
		return;
	}
	d_hash(dentry->d_parent, dentry->d_name.hash, &lock);
	spin_lock(lock);
	hlist_del_init_rcu(&dentry->d_hash);
	spin_unlock(lock);
}

static struct dentry *__d_alloc(struct dentry *parent, const struct qstr *name)
{
	struct dentry *dentry = calloc(1, sizeof(*dentry));

	memcpy(dentry->d_iname, name->name, name->len);
	dentry->d_name.name = (const char *)dentry->d_iname;
	dentry->d_name.len = name->len;
	dentry->d_name.hash = name->hash;
	atomic_set(&dentry->d_count, 1);
	spin_lock_init(&dentry->d_lock);
	dentry->d_parent = parent ? parent : dentry;
	INIT_LIST_HEAD(&dentry->d_lru);
	INIT_LIST_HEAD(&dentry->d_subdirs);
	INIT_LIST_HEAD(&dentry->d_child);
	return dentry;
}

struct dentry *d_make_root(struct inode *inode)
{
	struct dentry *root = __d_alloc(NULL, &(struct qstr){ 0, 1, "/" });

	root->d_inode = inode;
	return root;
}

/* A child holds its parent: dget() in 2.6.32, under d_lock today. */
struct dentry *d_alloc(struct dentry *parent, const struct qstr *name)
{
	struct dentry *dentry = __d_alloc(parent, name);

	if (!vfs_scale) {
		lockstat_visit(&parent->d_count);
		atomic_inc(&parent->d_count);
		spin_lock(&dcache_lock);
		list_add(&dentry->d_child, &parent->d_subdirs);
		nr_dentry++;
		spin_unlock(&dcache_lock);
		return dentry;
	}
	spin_lock(&parent->d_lock);
	atomic_inc(&parent->d_count);
	list_add(&dentry->d_child, &parent->d_subdirs);
	spin_unlock(&parent->d_lock);
	__atomic_fetch_add(&nr_dentry, 1, __ATOMIC_RELAXED);
	return dentry;
}

struct dentry *__d_lookup(struct dentry *parent, const struct qstr *name)
{
	spinlock_t *lock;
	struct hlist_head *b = d_hash(parent, name->hash, &lock);
	struct hlist_node *node;
	struct dentry *found = NULL;

	rcu_read_lock();
	for (node = hlist_first_rcu(b); node; node = hlist_next_rcu(node)) {
		struct dentry *dentry = container_of(node, struct dentry,
						     d_hash);

		if (dentry->d_name.hash != name->hash ||
		    dentry->d_parent != parent)
			continue;
		spin_lock(&dentry->d_lock);
		/* non-existing due to RCU? */
		if (!d_unhashed(dentry) && d_same_name(dentry, parent, name)) {
			atomic_inc(&dentry->d_count);
			found = dentry;
		}
		spin_unlock(&dentry->d_lock);
		if (found)
			break;
	}
	rcu_read_unlock();
	return found;
}

struct dentry *d_lookup(struct dentry *parent, const struct qstr *name)
{
	return __d_lookup(parent, name);
}

/*
 * The d_subdirs link goes under dcache_lock, or today the parent's
 * d_lock, and the child's reference on the parent with it.  The parent
 * (a magic directory, held by the benchmark) never loses its last one.
 */
static void d_put_parent(struct dentry *parent)
{
	/* today under the parent's d_lock, on the line it holds */
	if (!vfs_scale)
		lockstat_visit(&parent->d_count);
	WARN_ON(atomic_add_return(-1, &parent->d_count) <= 0);
}

static bool d_unlink_child(struct dentry *dentry)
{
	struct dentry *parent = dentry->d_parent;

	if (!vfs_scale) {
		list_del_init(&dentry->d_child);
		nr_dentry--;
		d_put_parent(parent);
		return true;
	}
	if (!spin_trylock(&parent->d_lock))
		return false;
	list_del_init(&dentry->d_child);
	d_put_parent(parent);
	spin_unlock(&parent->d_lock);
	__atomic_fetch_sub(&nr_dentry, 1, __ATOMIC_RELAXED);
	return true;
}

/*
 * dentry_iput(): a killed dentry's inode reference goes outside the LRU
 * lock, which is dropped and retaken around it: 2.6.32's
 * prune_one_dentry() drops dcache_lock for d_kill(), and today's
 * shrink_dentry_list() kills outside the list_lru lock.
 */
static void prune_iput(struct inode *inode)
{
	spinlock_t *lock = vfs_scale ? &lru_lock : &dcache_lock;

	spin_unlock(lock);
	iput(inode);
	spin_lock(lock);
}

/*
 * The count under d_lock, where a fast_dput() may just have dropped it
 * without: an x86 load, an acquire, that pairs with lockref_put_return()'s
 * release (the kernel's lock word, at the lockref's address, did it for
 * C11's and TSan's eyes; here the count is there).
 */
static int d_count_read(struct dentry *dentry)
{
	return smp_load_acquire(&dentry->d_count.counter);
}

/*
 * Evict from the LRU tail until it is short enough: referenced ones get a
 * second chance if flags has DCACHE_REFERENCED (2.6.32's
 * __shrink_dcache_sb() flags), busy ones leave the LRU.  LRU lock held
 * (dcache_lock in 2.6.32); lock order d_lock -> LRU, hence the trylock.
 * A dentry whose d_lock is busy goes to the head, where today's walk
 * skips it (LRU_SKIP): its d_lru changes under the LRU lock alone.
 */
static void prune_dcache(unsigned long target, unsigned int flags)
{
	struct dentry *dentry;
	unsigned long scan = 2 * nr_unused_read();

	while (nr_unused_read() > target && scan--) {
		dentry = list_last_entry(&dentry_lru, struct dentry, d_lru);
		if (!spin_trylock(&dentry->d_lock)) {
			list_move(&dentry->d_lru, &dentry_lru);
			continue;
		}
		if (d_count_read(dentry)) {
			WRITE_ONCE(dentry->d_flags,
				   dentry->d_flags & ~DCACHE_LRU_LIST);
			list_del_init(&dentry->d_lru);
			nr_unused_add(-1);
		} else if ((flags & DCACHE_REFERENCED) &&
			   (dentry->d_flags & DCACHE_REFERENCED)) {
			WRITE_ONCE(dentry->d_flags,
				   dentry->d_flags & ~DCACHE_REFERENCED);
			list_move(&dentry->d_lru, &dentry_lru);
		} else if (d_unlink_child(dentry)) {
			struct inode *inode = dentry->d_inode;

			WRITE_ONCE(dentry->d_flags,
				   dentry->d_flags & ~DCACHE_LRU_LIST);
			list_del_init(&dentry->d_lru);
			nr_unused_add(-1);
			__d_drop(dentry);
			dentry->d_inode = NULL;
			/* lockref_mark_dead(): a fast_dput() at 0 leaves it */
			atomic_set(&dentry->d_count, -128);
			spin_unlock(&dentry->d_lock);
			call_rcu(&dentry->d_rcu, d_free);
			if (inode)
				prune_iput(inode);
			continue;
		} else {
			list_move(&dentry->d_lru, &dentry_lru);
		}
		spin_unlock(&dentry->d_lock);
	}
}

static void shrink_dcache(unsigned long nr, unsigned int flags)
{
	spinlock_t *lock = vfs_scale ? &lru_lock : &dcache_lock;
	unsigned long unused;

	spin_lock(lock);
	unused = nr_unused_read();
	prune_dcache(unused > nr ? unused - nr : 0, flags);
	spin_unlock(lock);
}

/* Memory pressure: 2.6.32 shrink_dcache_memory(), today's super_cache_scan() */
void shrink_dcache_memory(unsigned long nr)
{
	shrink_dcache(nr, DCACHE_REFERENCED);
}

/* umount, remount: every unused dentry, referenced or not */
void shrink_dcache_sb(void)
{
	shrink_dcache(-1UL, 0);
}

/*
 * Today's retain_dentry(), d_lock held: LRU fodder.  The LRU lock only to
 * join the LRU, not referenced yet; a dentry already on it is marked
 * referenced, which needs only d_lock.  On the LRU or not is the
 * DCACHE_LRU_LIST flag, under d_lock: d_lru itself changes under the LRU
 * lock alone when a neighbour leaves or prune_dcache() moves it.
 */
static void retain_dentry(struct dentry *dentry)
{
	if (unlikely(!(dentry->d_flags & DCACHE_LRU_LIST))) {
		WRITE_ONCE(dentry->d_flags, dentry->d_flags | DCACHE_LRU_LIST);
		spin_lock(&lru_lock);
		list_add(&dentry->d_lru, &dentry_lru);
		nr_unused_add(1);
		spin_unlock(&lru_lock);
	} else if (unlikely(!(dentry->d_flags & DCACHE_REFERENCED))) {
		WRITE_ONCE(dentry->d_flags,
			   dentry->d_flags | DCACHE_REFERENCED);
	}
}

/*
 * lockref_put_return(): the count less one by cmpxchg on the whole word,
 * only while the lock is free; -1 if it was held.
 */
static int lockref_put_return(struct dentry *dentry)
{
	uint64_t old = __atomic_load_n(&dentry->d_lockref, __ATOMIC_RELAXED);
	uint32_t count;

	lockstat_visit(&dentry->d_lockref);
	for (;;) {
		if (!spin_value_unlocked(&dentry->d_lock, old >> 32))
			return -1;
		count = (uint32_t)old - 1;
		if (__atomic_compare_exchange_n(&dentry->d_lockref, &old,
						(old & ~0xffffffffull) | count,
						false, __ATOMIC_RELEASE,
						__ATOMIC_RELAXED))
			return (int)count;
	}
}

/*
 * fast_dput() (4.2+): drop the reference without d_lock where the lock is
 * free; a last one needs no lock either if the dentry stays as it is,
 * hashed, on the LRU and referenced.  Returns true when done; false with
 * d_lock held and the count 0.  The dentry cannot be freed meanwhile: we
 * are inside an RCU read-side section (QSBR: until our next quiescent
 * state), and dentries are freed through call_rcu().
 */
static bool fast_dput(struct dentry *dentry)
{
	int ret = lockref_put_return(dentry);

	if (unlikely(ret < 0)) {
		spin_lock(&dentry->d_lock);
		if (atomic_add_return(-1, &dentry->d_count))
			goto unlock;
		goto locked;
	}
	if (ret)
		return true;
#ifndef KSCALE_SANITIZE
	/*
	 * The kernel's lockless read of flags written under d_lock; under
	 * ThreadSanitizer the locked path below decides instead.
	 */
	if ((READ_ONCE(dentry->d_flags) &
	     (DCACHE_REFERENCED | DCACHE_LRU_LIST)) ==
	    (DCACHE_REFERENCED | DCACHE_LRU_LIST) && !d_unhashed(dentry))
		return true;
#endif
	spin_lock(&dentry->d_lock);
locked:
	if (!d_count_read(dentry))
		return false;
unlock:
	spin_unlock(&dentry->d_lock);
	return true;
}

/*
 * 2.6.32 dput(), d_lock held, the last reference gone: a dentry joining
 * the LRU is marked referenced; one still on it (a hit the shrinker has
 * not taken off yet) is left as it is, unlike today's retain_dentry().
 */
static void dentry_lru_add(struct dentry *dentry)
{
	if (!list_empty(&dentry->d_lru))
		return;
	dentry->d_flags |= DCACHE_REFERENCED;
	list_add(&dentry->d_lru, &dentry_lru);
	nr_unused_add(1);
}

/*
 * The last reference to a dentry nobody can find (never hashed, e.g. the
 * spare of a lost d_alloc_parallel() race) kills it.  Unreachable, so it
 * needs no lock but the one for its parent's d_subdirs: in 2.6.32
 * dcache_lock, held on entry and dropped, as d_kill() does, before the
 * inode's reference goes (dentry_iput()).
 */
static void dentry_kill(struct dentry *dentry)
{
	struct dentry *parent = dentry->d_parent;
	struct inode *inode = dentry->d_inode;

	if (vfs_scale) {
		spin_lock(&parent->d_lock);
		list_del_init(&dentry->d_child);
		d_put_parent(parent);
		spin_unlock(&parent->d_lock);
		__atomic_fetch_sub(&nr_dentry, 1, __ATOMIC_RELAXED);
	} else {
		list_del_init(&dentry->d_child);	/* dcache_lock held */
		nr_dentry--;
		d_put_parent(parent);
		spin_unlock(&dcache_lock);
	}
	call_rcu(&dentry->d_rcu, d_free);
	if (inode)
		iput(inode);
}

void dput(struct dentry *dentry)
{
	if (!vfs_scale) {
		lockstat_visit(&dentry->d_count);
		if (!atomic_dec_and_lock(&dentry->d_count, &dcache_lock))
			return;
		if (d_unhashed(dentry)) {
			dentry_kill(dentry);
			return;
		}
		spin_lock(&dentry->d_lock);
		dentry_lru_add(dentry);
		spin_unlock(&dentry->d_lock);
		prune_dcache(max_unused, DCACHE_REFERENCED);
		spin_unlock(&dcache_lock);
		return;
	}
	if (fast_dput(dentry))
		return;
	if (d_unhashed(dentry)) {
		spin_unlock(&dentry->d_lock);
		dentry_kill(dentry);
		return;
	}
	retain_dentry(dentry);
	spin_unlock(&dentry->d_lock);
	if (unlikely(nr_unused_read() > max_unused + SHRINK_BATCH / 2)) {
		spin_lock(&lru_lock);
		prune_dcache(max_unused > SHRINK_BATCH / 2 ?
			     max_unused - SHRINK_BATCH / 2 : 0,
			     DCACHE_REFERENCED);
		spin_unlock(&lru_lock);
	}
}

static unsigned long in_lookup_index(struct dentry *parent, unsigned int hash)
{
	unsigned long h = hash + (unsigned long)parent / L1_CACHE_BYTES;

	return (uint32_t)(h * 0x61C88647u) >> (32 - IN_LOOKUP_SHIFT);
}

/* 4.7+: make the in-lookup dentry a normal one and wake its waiters. */
static void __d_lookup_done(struct dentry *dentry)
{
	unsigned long i = in_lookup_index(dentry->d_parent, dentry->d_name.hash);

	spin_lock(&in_lookup_locks[i]);
	WRITE_ONCE(dentry->d_flags, dentry->d_flags & ~DCACHE_PAR_LOOKUP);
	hlist_del_init_rcu(&dentry->d_in_lookup_hash);
	wake_up_all(dentry->d_wait);
	dentry->d_wait = NULL;
	spin_unlock(&in_lookup_locks[i]);
}

void d_lookup_done(struct dentry *dentry)
{
	if (!d_in_lookup(dentry))
		return;
	spin_lock(&dentry->d_lock);
	__d_lookup_done(dentry);
	spin_unlock(&dentry->d_lock);
}

static unsigned long start_dir_add(struct inode *dir)
{
	lockstat_visit(&dir->i_dir_seq);
	for (;;) {
		unsigned long n = READ_ONCE(dir->i_dir_seq);

		if (!(n & 1) && cmpxchg(&dir->i_dir_seq, n, n + 1) == n)
			return n;
		cpu_relax();
	}
}

static void end_dir_add(struct inode *dir, unsigned long n)
{
	smp_store_release(&dir->i_dir_seq, n + 2);
}

static void __d_add(struct dentry *dentry, struct inode *inode)
{
	struct inode *dir = NULL;
	unsigned long n = 0;

	spin_lock(&dentry->d_lock);
	if (d_in_lookup(dentry)) {
		dir = dentry->d_parent->d_inode;
		n = start_dir_add(dir);
		__d_lookup_done(dentry);
	}
	dentry->d_inode = inode;
	d_rehash_locked(dentry);
	if (dir)
		end_dir_add(dir, n);
	spin_unlock(&dentry->d_lock);
}

/* d_instantiate() and d_rehash(): dcache_lock in 2.6.32. */
void d_add(struct dentry *dentry, struct inode *inode)
{
	if (vfs_scale) {
		__d_add(dentry, inode);
		return;
	}
	spin_lock(&dcache_lock);
	spin_lock(&dentry->d_lock);
	dentry->d_inode = inode;
	spin_unlock(&dentry->d_lock);
	spin_unlock(&dcache_lock);
	spin_lock(&dcache_lock);
	spin_lock(&dentry->d_lock);
	d_rehash_locked(dentry);
	spin_unlock(&dentry->d_lock);
	spin_unlock(&dcache_lock);
}

static void d_wait_lookup(struct dentry *dentry)
{
	if (d_in_lookup(dentry)) {
		DECLARE_WAITQUEUE(wait, current);

		add_wait_queue(dentry->d_wait, &wait);
		do {
			set_current_state(TASK_UNINTERRUPTIBLE);
			spin_unlock(&dentry->d_lock);
			schedule();
			spin_lock(&dentry->d_lock);
		} while (d_in_lookup(dentry));
	}
}

/* An in-lookup dentry for parent/name, or NULL; its chain lock held. */
static struct dentry *in_lookup_find(struct hlist_head *b,
				     struct dentry *parent,
				     const struct qstr *name)
{
	struct hlist_node *node;

	for (node = b->first; node; node = node->next) {
		struct dentry *dentry = container_of(node, struct dentry,
						     d_in_lookup_hash);

		if (dentry->d_name.hash == name->hash &&
		    d_same_name(dentry, parent, name))
			return dentry;
	}
	return NULL;
}

/* Someone is looking parent/name up: wait, then take theirs if it is ours. */
static struct dentry *d_wait_for(struct dentry *dentry, struct dentry *parent,
				 const struct qstr *name)
{
	spin_lock(&dentry->d_lock);
	d_wait_lookup(dentry);
	if (d_unhashed(dentry) || !d_same_name(dentry, parent, name)) {
		spin_unlock(&dentry->d_lock);
		dput(dentry);
		return NULL;
	}
	spin_unlock(&dentry->d_lock);
	return dentry;
}

/*
 * 4.7+ fs/dcache.c: a found dentry, or `new` put in the in-lookup hash so
 * that others missing on the same name wait for it (*waits counts that).
 */
struct dentry *d_alloc_parallel(struct dentry *parent, const struct qstr *name,
				wait_queue_head_t *wq, unsigned long *waits)
{
	unsigned long i = in_lookup_index(parent, name->hash);
	struct hlist_head *b = &in_lookup_hashtable[i];
	struct dentry *new = d_alloc(parent, name);
	struct dentry *dentry;
	unsigned long seq;

retry:
	rcu_read_lock();
	seq = smp_load_acquire(&parent->d_inode->i_dir_seq);
	dentry = __d_lookup(parent, name);
	if (dentry) {
		rcu_read_unlock();
		dput(new);
		return dentry;
	}
	if (seq & 1) {
		rcu_read_unlock();
		goto retry;
	}
	spin_lock(&in_lookup_locks[i]);
	if (READ_ONCE(parent->d_inode->i_dir_seq) != seq) {
		spin_unlock(&in_lookup_locks[i]);
		rcu_read_unlock();
		goto retry;
	}
	dentry = in_lookup_find(b, parent, name);
	if (dentry) {
		atomic_inc(&dentry->d_count);
		spin_unlock(&in_lookup_locks[i]);
		rcu_read_unlock();
		(*waits)++;
		dentry = d_wait_for(dentry, parent, name);
		if (!dentry)
			goto retry;
		dput(new);
		return dentry;
	}
	rcu_read_unlock();
	new->d_flags |= DCACHE_PAR_LOOKUP;
	new->d_wait = wq;
	hlist_add_head_rcu(&new->d_in_lookup_hash, b);
	spin_unlock(&in_lookup_locks[i]);
	return new;
}

/* Is d the first of its name in its chain? */
static bool d_first_of_name(struct hlist_head *b, struct dentry *d)
{
	struct hlist_node *node;

	for (node = b->first; node != &d->d_hash; node = node->next) {
		struct dentry *e = container_of(node, struct dentry, d_hash);

		if (e->d_name.hash == d->d_name.hash &&
		    d_same_name(e, d->d_parent, &d->d_name))
			return false;
	}
	return true;
}

/* Names with more than one hashed dentry; no lookup may be running. */
static unsigned long names_with_duplicates(void)
{
	unsigned long i, n = 0;
	struct hlist_node *node;

	for (i = 0; i < (1UL << d_hash_shift); i++)
		for (node = dentry_hashtable[i].first; node; node = node->next) {
			struct dentry *d = container_of(node, struct dentry,
							d_hash);
			struct hlist_head *b = &dentry_hashtable[i];

			n += d_first_of_name(b, d) &&
			     d_count_names(b, d->d_parent, &d->d_name) > 1;
		}
	return n;
}

void dcache_stats(struct dcache_stats *st)
{
	st->nr_dentry = READ_ONCE(nr_dentry);
	st->duplicates = __atomic_load_n(&nr_duplicates, __ATOMIC_RELAXED);
	st->names_with_duplicates = names_with_duplicates();
}

/* Free every dentry of the cache (no one is using it any more). */
void dcache_exit(void)
{
	unsigned long i;
	struct hlist_node *node, *next;

	rcu_barrier();
	for (i = 0; i < (1UL << d_hash_shift); i++)
		for (node = dentry_hashtable[i].first; node; node = next) {
			next = node->next;
			free(container_of(node, struct dentry, d_hash));
		}
	free(dentry_hashtable);
	free(d_hash_locks);
	dentry_hashtable = NULL;
}
