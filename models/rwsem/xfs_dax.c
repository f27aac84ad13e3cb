// SPDX-License-Identifier: GPL-2.0
/*
 * The I/O path of v4.6 XFS on DAX, as far as it takes the inode's locks:
 * fs/xfs/xfs_file.c (xfs_file_read_iter(), xfs_file_dio_aio_write(),
 * which 4.6's xfs_file_write_iter() sends a DAX write to), xfs_inode.c
 * (xfs_ilock(), xfs_iunlock(): the IOLOCK before the ILOCK, released in
 * reverse), xfs_aops.c (xfs_vm_direct_IO() -> dax_do_io() with
 * xfs_get_blocks_direct() and no DIO_LOCKING), fs/dax.c (dax_do_io()),
 * xfs_iops.c (xfs_vn_update_time(), which file_update_time() calls from
 * xfs_file_aio_write_checks()).
 *
 * Departures: xfs_rw_ilock()'s VFS inode lock before an exclusive IOLOCK
 * is not taken, nor the MMAPLOCK (no I/O here takes it); a read goes
 * straight to dax_do_io() (generic_file_read_iter() -> ->direct_IO for a
 * DAX inode); the block map, the timestamp transaction and the rest of
 * the syscall are ndelay() of the file's ns; the locks and the file's
 * settings come through struct xfs_dax_file, not the inode.
 */
#include <stdlib.h>
#include <string.h>

#include "../../lib/kernel/delay.h"
#include "../../lib/kernel/lockstat.h"
#include "xfs_dax.h"

struct xfs_inode *xfs_inode_alloc(void)
{
	struct xfs_inode *ip = aligned_alloc(SMP_CACHE_BYTES, sizeof(*ip));

	if (ip)
		memset(ip, 0, sizeof(*ip));
	return ip;
}

void xfs_inode_init_locks(struct xfs_inode *ip, const struct rwsem_ops *ops)
{
	ops->init(&ip->i_iolock.mr_lock);
	ops->init(&ip->i_lock.mr_lock);
}

/* mrupdate_nested() or mraccess_nested() */
static void xfs_lock_one(struct xfs_dax_file *f, struct rwsem_storage *sem,
			 bool excl)
{
	excl ? f->ops->down_write(sem) : f->ops->down_read(sem);
}

/* mrunlock_excl() or mrunlock_shared() */
static void xfs_unlock_one(struct xfs_dax_file *f, struct rwsem_storage *sem,
			   bool excl)
{
	excl ? f->ops->up_write(sem) : f->ops->up_read(sem);
}

static void xfs_ilock(struct xfs_dax_file *f, unsigned int lock_flags)
{
	struct xfs_inode *ip = f->ip;

	if (lock_flags & (XFS_IOLOCK_EXCL | XFS_IOLOCK_SHARED))
		xfs_lock_one(f, &ip->i_iolock.mr_lock,
			     lock_flags & XFS_IOLOCK_EXCL);
	if (lock_flags & (XFS_ILOCK_EXCL | XFS_ILOCK_SHARED))
		xfs_lock_one(f, &ip->i_lock.mr_lock,
			     lock_flags & XFS_ILOCK_EXCL);
}

static void xfs_iunlock(struct xfs_dax_file *f, unsigned int lock_flags)
{
	struct xfs_inode *ip = f->ip;

	if (lock_flags & (XFS_ILOCK_EXCL | XFS_ILOCK_SHARED))
		xfs_unlock_one(f, &ip->i_lock.mr_lock,
			       lock_flags & XFS_ILOCK_EXCL);
	if (lock_flags & (XFS_IOLOCK_EXCL | XFS_IOLOCK_SHARED))
		xfs_unlock_one(f, &ip->i_iolock.mr_lock,
			       lock_flags & XFS_IOLOCK_EXCL);
}

/* __xfs_get_blocks(): xfs_bmapi_read() under the ILOCK shared. */
static void __xfs_get_blocks(struct xfs_dax_file *f)
{
	xfs_ilock(f, XFS_ILOCK_SHARED);
	ndelay(f->map_ns);
	xfs_iunlock(f, XFS_ILOCK_SHARED);
}

/* dax_do_io() with DIO_LOCKING off: count the I/O, map, copy. */
static void dax_do_io(struct xfs_dax_file *f, char *buf, size_t off,
		      bool write)
{
	lockstat_visit(&f->ip->i_dio_count);
	atomic_inc(&f->ip->i_dio_count);	/* inode_dio_begin() */
	__xfs_get_blocks(f);
	if (write)
		memcpy(f->data + off, buf, f->bs);
	else
		memcpy(buf, f->data + off, f->bs);
	lockstat_visit(&f->ip->i_dio_count);
	atomic_dec(&f->ip->i_dio_count);	/* inode_dio_end() */
}

static void xfs_file_read_iter(struct xfs_dax_file *f, char *buf, size_t off)
{
	xfs_ilock(f, XFS_IOLOCK_SHARED);
	dax_do_io(f, buf, off, false);
	xfs_iunlock(f, XFS_IOLOCK_SHARED);
}

/* file_update_time() -> xfs_vn_update_time(): a transaction under ILOCK. */
static void xfs_vn_update_time(struct xfs_dax_file *f)
{
	xfs_ilock(f, XFS_ILOCK_EXCL);
	WRITE_ONCE(f->i_mtime, f->i_mtime + 1);
	ndelay(f->update_time_ns);
	xfs_iunlock(f, XFS_ILOCK_EXCL);
}

static void xfs_file_dio_aio_write(struct xfs_dax_file *f, char *buf,
				   size_t off)
{
	xfs_ilock(f, f->iolock_write);
	xfs_vn_update_time(f);
	dax_do_io(f, buf, off, true);
	xfs_iunlock(f, f->iolock_write);
}

void xfs_dax_io(struct xfs_dax_file *f, char *buf, size_t off, bool write)
{
	ndelay(f->io_path_ns[write]);
	if (write)
		xfs_file_dio_aio_write(f, buf, off);
	else
		xfs_file_read_iter(f, buf, off);
}

/*
 * i_lock whole on the line its count shares with i_iolock's, one line a
 * visit (a write hold also stores i_mtime, on the file's line every I/O
 * reads: not counted); i_iolock's count there and its owner on the next
 * line, two; the dio count alone on its line.
 */
void lockstat_register_inode(struct xfs_dax_file *f, bool rwsems)
{
	if (rwsems) {
		lockstat_register(&f->ip->i_lock.mr_lock, "i_lock", 1,
				  LOCKSTAT_RWSEM);
		lockstat_register(&f->ip->i_iolock.mr_lock, "i_iolock", 2,
				  LOCKSTAT_RWSEM);
	}
	lockstat_register(&f->ip->i_dio_count, "i_dio_count", 1,
			  LOCKSTAT_LINE);
}
