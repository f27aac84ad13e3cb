// SPDX-License-Identifier: GPL-2.0
/*
 * 2.6.32 fs/namei.c: do_lookup() -> __d_lookup() on the fast path,
 * real_lookup() on a miss: dir->i_mutex, a recheck with d_lookup(),
 * d_alloc(), the filesystem's ->lookup(), d_add().  With the seed's patch
 * (Quentin Barnes, 2010) real_lookup() skips i_mutex on an S_IMMUTABLE
 * directory.  And 4.7's parallel lookups (Al Viro): lookup_slow() takes
 * i_rwsem shared and d_alloc_parallel() makes concurrent misses on one
 * name wait for the first.
 *
 * The filesystem is a magic directory whose ->lookup() costs fs_lookup_ns
 * of busy work and, with fs_io_ns, reads the inode from a model block
 * device (blkdev.h), sleeping until the read completes, as ext3 reading
 * an inode would; it always finds the file.  Its inodes are spread over
 * nr_magic_disks disks by inode number (the seed's "depending on the
 * number of disks configured"), each servicing its own reads.
 *
 * The NFS line (magic_xprt set): the seed's ".file_handle" directory on
 * NFS, whose ->lookup() makes a round trip to the server for every miss,
 * a GETATTR of the handle the name is (sunrpc.c: a slot of the
 * transport, the server's threads, the network), then nfs_fhget()'s
 * iget5_locked() from the reply's attributes: the inode cache saves no
 * call, only the inode.  It is the seed's own lookup, not 2.6.32's
 * nfs_lookup(): that one holds nfs_block_sillyrename() on the directory
 * across its call (fs/nfs/unlink.c: silly_count from 1 to 0, waiters in
 * wait_event() on nfsi->waitqueue), and nfs_unblock_sillyrename() gives
 * it back without a wake-up, i_mutex having kept lookups apart; with the
 * bypass, two concurrent misses there would leave the second asleep
 * until an unlink in the directory completed, not 2.5x faster.
 *
 * No d_revalidate() (NFS's revalidation of a cached dentry, by its
 * attribute cache's timeout, makes no call here), no permission checks,
 * no path walk around the one component.
 */
#include <errno.h>
#include <stdlib.h>

#include "../../lib/kernel/delay.h"
#include "../../lib/kernel/lockstat.h"
#include "real_lookup.h"
#include "sunrpc.h"

#define ERR_PTR(e)	((void *)(long)(e))
#define IS_IMMUTABLE(inode)	((inode)->i_flags & S_IMMUTABLE)
#define IS_DEADDIR(inode)	((inode)->i_flags & S_DEAD)

unsigned long fs_lookup_ns;
unsigned long fs_io_ns;
struct request_queue *magic_disks;
unsigned int nr_magic_disks;
struct rpc_xprt *magic_xprt;

void magic_disks_init(unsigned int nr, unsigned int depth)
{
	unsigned int i;

	magic_disks_exit();
	magic_disks = calloc(nr, sizeof(*magic_disks));
	nr_magic_disks = nr;
	for (i = 0; i < nr; i++)
		blk_queue_init(&magic_disks[i], depth);
}

void magic_disks_exit(void)
{
	free(magic_disks);
	magic_disks = NULL;
	nr_magic_disks = 0;
}

static void magic_read_inode_delay(unsigned long ino)
{
	ndelay(fs_lookup_ns);
	if (magic_xprt)
		rpc_call_sync(magic_xprt, NULL);
	else if (fs_io_ns)
		blk_read_sync(&magic_disks[ino % nr_magic_disks], fs_io_ns);
}

void (*magic_read_inode)(unsigned long ino) = magic_read_inode_delay;

/* The name is the inode number, as in <mnt>/.inode/<ino>. */
static struct dentry *magic_lookup(struct inode *dir, struct dentry *dentry)
{
	unsigned long ino = strtoul(dentry->d_name.name, NULL, 10);
	struct inode *inode;

	if (magic_xprt) {
		/* the call first, then nfs_fhget() from its attributes */
		magic_read_inode(ino);
		inode = magic_iget(ino, NULL);
	} else {
		inode = magic_iget(ino, magic_read_inode);
	}
	/* every name in a magic directory is an existing file */
	d_add(dentry, inode);
	return NULL;
}

static struct dentry *real_lookup(struct dentry *parent,
				  const struct qstr *name)
{
	struct dentry *result;
	struct inode *dir = parent->d_inode;
	int dir_locked = 0;

	if (likely(!IS_IMMUTABLE(dir))) {
		mutex_lock_account(&dir->i_mutex, &lookup_stats.lock_wait);
		dir_locked = 1;
	}
	/*
	 * First re-do the cached lookup just in case it was created
	 * while we waited for the directory semaphore..
	 */
	result = d_lookup(parent, name);
	if (!result) {
		struct dentry *dentry;

		/* Don't create child dentry for a dead directory. */
		result = ERR_PTR(-ENOENT);
		if (IS_DEADDIR(dir))
			goto out_unlock;

		dentry = d_alloc(parent, name);
		result = magic_lookup(dir, dentry);
		if (result)
			dput(dentry);
		else
			result = dentry;
out_unlock:
		if (likely(dir_locked))
			mutex_unlock(&dir->i_mutex);
		return result;
	}

	/*
	 * Uhhuh! Nasty case: the cache was re-populated while
	 * we waited on the semaphore.
	 */
	if (likely(dir_locked))
		mutex_unlock(&dir->i_mutex);
	return result;
}

/*
 * The walk holds the directory it looks in: __d_lookup() found it in its
 * own parent (d_lock, d_count++), and path_put() drops it once the child
 * is found.  One hot line per directory, which sharding spreads.
 */
static void walk_hold(struct dentry *dir)
{
	spin_lock(&dir->d_lock);
	atomic_inc(&dir->d_count);
	spin_unlock(&dir->d_lock);
}

static struct dentry *do_lookup(struct dentry *parent, const struct qstr *name)
{
	struct dentry *dentry;

	walk_hold(parent);
	dentry = __d_lookup(parent, name);
	if (dentry) {
		lookup_stats.hits++;
	} else {
		lookup_stats.misses++;
		dentry = real_lookup(parent, name);
	}
	dput(parent);
	return dentry;
}

static struct dentry *__lookup_slow(const struct qstr *name,
				    struct dentry *dir)
{
	struct dentry *dentry, *old;
	struct inode *inode = dir->d_inode;
	wait_queue_head_t wq;

	init_waitqueue_head(&wq);
	dentry = d_alloc_parallel(dir, name, &wq,
				  &lookup_stats.in_lookup_waits);
	if (!d_in_lookup(dentry))
		return dentry;
	old = magic_lookup(inode, dentry);
	d_lookup_done(dentry);
	if (old) {
		dput(dentry);
		dentry = old;
	}
	return dentry;
}

static struct dentry *lookup_slow(const struct qstr *name, struct dentry *dir)
{
	struct inode *inode = dir->d_inode;
	struct dentry *res;

	down_read_account(&inode->i_rwsem, &lookup_stats.lock_wait);
	res = __lookup_slow(name, dir);
	up_read(&inode->i_rwsem);
	return res;
}

/*
 * walk_component(): lookup_fast(), then lookup_slow() on a miss.  The RCU
 * walk holds no reference; a miss leaves it (try_to_unlazy()), which
 * takes the directory's lockref until the walk moves on.
 */
static struct dentry *walk_component(struct dentry *parent,
				     const struct qstr *name)
{
	struct dentry *dentry = __d_lookup(parent, name);

	if (dentry) {
		lookup_stats.hits++;
		return dentry;
	}
	lookup_stats.misses++;
	walk_hold(parent);
	dentry = lookup_slow(name, parent);
	dput(parent);
	return dentry;
}

/*
 * For lockstat, each directory's lock is an instance of its class, one
 * line a visit (the mutex's count, or i_rwsem's): what it guards is
 * counted by the dcache's own locks.  i_dir_seq, which every 4.7 miss
 * bumps, sits on i_rwsem's line.  The dentry's line is visited by every
 * lookup's walk (d_lock and d_count, one word today).
 */
struct dentry *magic_dir_create(const struct real_lookup_ops *ops)
{
	struct inode *inode = calloc(1, sizeof(*inode));
	struct dentry *dir;

	mutex_init(&inode->i_mutex);
	init_rwsem(&inode->i_rwsem);
	inode->i_flags = ops->dir_flags;
	if (ops->vfs_scale) {
		/* its waiters yield the CPU, as sleepers would */
		lockstat_register(&inode->i_rwsem, "i_rwsem", 1,
				  LOCKSTAT_RWSEM);
		lockstat_register(&inode->i_dir_seq, "i_dir_seq", 1,
				  LOCKSTAT_LINE);
	} else if (!IS_IMMUTABLE(inode)) {
		lockstat_register(&inode->i_mutex, "i_mutex", 1,
				  LOCKSTAT_MUTEX);
	}
	dir = d_make_root(inode);
	lockstat_register(&dir->d_lock, "dir_dentry", 1, LOCKSTAT_SPIN);
	lockstat_register(&dir->d_count, "dir_dentry", 1, LOCKSTAT_SPIN);
	return dir;
}

void magic_dir_destroy(struct dentry *dir)
{
	free(dir->d_inode);
	free(dir);
}

void magic_fs_init(const struct real_lookup_ops *ops, const struct magic_fs *fs,
		   struct dentry **dirs, int nr_dirs)
{
	int i;

	icache_init(fs->icache, fs->pinned);
	magic_disks_init(fs->disks, fs->io_depth);
	xprt_destroy(magic_xprt);
	magic_xprt = fs->nfs ? xprt_create(fs->rpc_slots, fs->nfs_rtt_ns,
					   fs->nfsd_threads, fs->nfsd_ns) :
			       NULL;
	dcache_init(fs->dcache, ops->vfs_scale);
	for (i = 0; i < nr_dirs; i++)
		dirs[i] = magic_dir_create(ops);
}

void magic_fs_exit(struct dentry **dirs, int nr_dirs)
{
	int i;

	dcache_exit();
	icache_exit();
	magic_disks_exit();
	xprt_destroy(magic_xprt);
	magic_xprt = NULL;
	for (i = 0; i < nr_dirs; i++)
		magic_dir_destroy(dirs[i]);
}

void lookup_stats_add(struct lookup_stats *sum, const struct lookup_stats *s)
{
	sum->hits += s->hits;
	sum->misses += s->misses;
	sum->in_lookup_waits += s->in_lookup_waits;
	sum->icache_hits += s->icache_hits;
	sum->lock_wait += s->lock_wait;
}

const struct real_lookup_ops real_lookup_i_mutex = {
	.one_dentry_per_name = true,
	.lookup = do_lookup,
};

const struct real_lookup_ops real_lookup_sharded = {
	.one_dentry_per_name = true,
	.lookup = do_lookup,
};

const struct real_lookup_ops real_lookup_immutable = {
	.dir_flags = S_IMMUTABLE,
	.lookup = do_lookup,
};

const struct real_lookup_ops real_lookup_parallel = {
	.vfs_scale = true,
	.one_dentry_per_name = true,
	.lookup = walk_component,
};

KSCALE_VARIANT_TABLE(real_lookup_variants,
	{ "i_mutex", "2.6.32: real_lookup() under the directory's i_mutex",
	  &real_lookup_i_mutex, .kernel = "2.6.32" },
	{ "sharded", "--dirs identical magic directories, requests "
		     "round-robin (seed: 5-10x)", &real_lookup_sharded,
	  .kernel = "2.6.32" },
	{ "immutable", "the seed's bypass: no i_mutex on an S_IMMUTABLE "
		       "directory (seed: 2.5x)", &real_lookup_immutable,
	  .kernel = "2.6.32" },
	{ "parallel", "4.7+: i_rwsem shared, d_alloc_parallel(), in-lookup "
		      "waiters", &real_lookup_parallel,
	  .kernel = "6.18" },
);
