/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The v4.6 XFS-on-DAX I/O path whose inode ILOCK is the seed's contended
 * rwsem (fs/xfs/xfs_file.c, xfs_inode.c, xfs_aops.c, xfs_iops.c,
 * fs/xfs/xfs_inode.h and mrlock.h, fs/dax.c; xfs_dax.c).  A read takes
 * the IOLOCK shared, then dax_do_io() counts the I/O in i_dio_count and
 * maps the blocks under the ILOCK shared, then copies; a write takes the
 * IOLOCK shared (an aligned DAX write in 4.6) or exclusive, updates the
 * file time under the ILOCK exclusive, then does what a read does.  The
 * work the model does not reproduce is ndelay() of the caller's ns.
 */
#ifndef KSCALE_RWSEM_XFS_DAX_H
#define KSCALE_RWSEM_XFS_DAX_H

#include <stdbool.h>
#include <stddef.h>

#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/compiler.h"
#include "rwsem_ops.h"

/*
 * Offsets in v4.6's struct xfs_inode: i_lock after i_mount .. i_itemp
 * (144), i_iolock 40 bytes on, at 184 (the counts of both in one cache
 * line); i_vnode.i_dio_count about 690 bytes in (config-dependent;
 * estimated).  Departure: spinlock_t's kind byte (spinlock.h) makes each
 * rwsem 48 bytes, so i_lock starts 8 bytes early, at 136: i_iolock stays
 * at 184 and every field of both locks on its kernel's line.
 */
#define XFS_I_LOCK_OFFSET	136
#define XFS_I_IOLOCK_OFFSET	184
#define XFS_I_DIO_COUNT_OFFSET	692

#define XFS_IOLOCK_EXCL		(1 << 0)
#define XFS_IOLOCK_SHARED	(1 << 1)
#define XFS_ILOCK_EXCL		(1 << 2)
#define XFS_ILOCK_SHARED	(1 << 3)

/* The lock is the variant's struct rw_semaphore: 40 bytes, 48 here. */
typedef struct {
	struct rwsem_storage mr_lock;
} mrlock_t;

/*
 * v4.6 struct xfs_inode (x86_64, no lockdep, no XFS_DEBUG), cache-line
 * aligned as xfs_inode_zone (KM_ZONE_HWALIGN) allocates it: the fields
 * the I/O path does not touch are padding here.
 */
struct xfs_inode {
	char i_mount_to_itemp[XFS_I_LOCK_OFFSET];
	mrlock_t i_lock;		/* inode lock */
	mrlock_t i_iolock;		/* inode IO lock */
	char i_mmaplock_to_vnode[XFS_I_DIO_COUNT_OFFSET - XFS_I_LOCK_OFFSET -
				 2 * sizeof(mrlock_t)];
	atomic_t i_dio_count;		/* i_vnode.i_dio_count */
} ____cacheline_aligned;

_Static_assert(offsetof(struct xfs_inode, i_lock) == XFS_I_LOCK_OFFSET &&
	       offsetof(struct xfs_inode, i_iolock) == XFS_I_IOLOCK_OFFSET &&
	       offsetof(struct xfs_inode, i_dio_count) ==
	       XFS_I_DIO_COUNT_OFFSET, "v4.6's struct xfs_inode layout");

/*
 * One file on the DAX device: its inode and data, and what the caller
 * sets before any I/O (the model reads no knob).  ops takes both
 * mrlocks: a variant's rwsem, or a host's locks behind the same vector
 * (the path uses init, down_read, up_read, down_write and up_write).
 * i_mtime lives here, not in the inode: a write hold stores it on a line
 * every I/O reads (the bench's layout before the move, kept).
 */
struct xfs_dax_file {
	struct xfs_inode *ip;
	const struct rwsem_ops *ops;
	unsigned long i_mtime;
	char *data;			/* size bytes: the NVDIMM */
	size_t size, bs;
	unsigned int iolock_write;	/* XFS_IOLOCK_SHARED or _EXCL */
	unsigned long update_time_ns;	/* the timestamp transaction */
	unsigned long map_ns;		/* xfs_bmapi_read() */
	unsigned long io_path_ns[2];	/* outside the locks: [write] */
};

/* A zeroed inode, aligned as the zone's: NULL without memory. */
struct xfs_inode *xfs_inode_alloc(void);

/* Both mrlocks through ops (mrlock_init() in the zone's constructor). */
void xfs_inode_init_locks(struct xfs_inode *ip, const struct rwsem_ops *ops);

/*
 * One I/O of bs at off, buf to or from the file: io_path_ns[write] of
 * the rest of the syscall, then the read or the write path.
 */
void xfs_dax_io(struct xfs_dax_file *f, char *buf, size_t off, bool write);

/*
 * For lockstat, as xfs_inode lays them out; the two mrlocks only when
 * they are rwsems (a host's locks are not counted).
 */
void lockstat_register_inode(struct xfs_dax_file *f, bool rwsems);

#endif
