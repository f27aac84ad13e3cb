/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The rwsem versions of the model side by side in one binary: v4.6's
 * rwsem-xadd (rwsem_xadd.c), v5.1's (rwsem_v5_1.c), v5.3's rwsem
 * (rwsem_v5_3.c) and today's (rwsem_upstream.c).  Each keeps its own
 * struct rw_semaphore and the kernel's names for its functions, so they
 * cannot share a header; a caller drives any through its struct
 * rwsem_ops.  A lock lives in a struct rwsem_storage: 40 bytes, as every
 * one of these kernels' struct rw_semaphore is on x86_64 (each
 * file checks that its own fits), so a structure embedding one keeps the
 * kernel's layout whichever version runs in it.  The ops account each
 * hold to lockstat (lockstat.h): a downgrade ends a write visit and
 * starts a read visit.
 */
#ifndef KSCALE_RWSEM_OPS_H
#define KSCALE_RWSEM_OPS_H

#include <stdbool.h>

#include "../../lib/harness/variant.h"
#include "../../lib/kernel/lockstat.h"

struct task_struct;

/* 48: spinlock_t's kind byte (spinlock.h) grows the kernels' 40 by 8 */
#define RWSEM_STORAGE_SIZE	48

struct rwsem_storage {
	_Alignas(8) unsigned char __opaque[RWSEM_STORAGE_SIZE];
};

struct rwsem_ops {
	const char *name;
	void (*init)(struct rwsem_storage *sem);
	void (*down_read)(struct rwsem_storage *sem);
	int (*down_read_trylock)(struct rwsem_storage *sem);
	void (*up_read)(struct rwsem_storage *sem);
	void (*down_write)(struct rwsem_storage *sem);
	int (*down_write_trylock)(struct rwsem_storage *sem);
	void (*up_write)(struct rwsem_storage *sem);
	void (*downgrade_write)(struct rwsem_storage *sem);
};

/*
 * In a version's file: its ops, from its own init_rwsem(), down_read(),
 * down_read_trylock(), up_read(), down_write(), down_write_trylock(),
 * up_write() and downgrade_write() on its struct rw_semaphore.
 */
#define DEFINE_RWSEM_OPS(_ops, _name)					\
_Static_assert(sizeof(struct rw_semaphore) <= RWSEM_STORAGE_SIZE &&	\
	       _Alignof(struct rw_semaphore) <=				\
	       _Alignof(struct rwsem_storage),				\
	       _name "'s struct rw_semaphore must fit the storage");	\
static void _ops##_init(struct rwsem_storage *s)			\
{									\
	init_rwsem((struct rw_semaphore *)s);				\
}									\
static void _ops##_down_read(struct rwsem_storage *s)			\
{									\
	lockstat_acquire(s, true, down_read((struct rw_semaphore *)s));	\
}									\
static int _ops##_down_read_trylock(struct rwsem_storage *s)		\
{									\
	int ret = down_read_trylock((struct rw_semaphore *)s);		\
									\
	lockstat_trylock(s, true, ret);					\
	return ret;							\
}									\
static void _ops##_up_read(struct rwsem_storage *s)			\
{									\
	lockstat_release(s);						\
	up_read((struct rw_semaphore *)s);				\
}									\
static void _ops##_down_write(struct rwsem_storage *s)			\
{									\
	lockstat_acquire(s, false, down_write((struct rw_semaphore *)s)); \
}									\
static int _ops##_down_write_trylock(struct rwsem_storage *s)		\
{									\
	int ret = down_write_trylock((struct rw_semaphore *)s);		\
									\
	lockstat_trylock(s, false, ret);				\
	return ret;							\
}									\
static void _ops##_up_write(struct rwsem_storage *s)			\
{									\
	lockstat_release(s);						\
	up_write((struct rw_semaphore *)s);				\
}									\
static void _ops##_downgrade_write(struct rwsem_storage *s)		\
{									\
	lockstat_release(s);						\
	downgrade_write((struct rw_semaphore *)s);			\
	lockstat_trylock(s, true, true);				\
}									\
const struct rwsem_ops _ops = {						\
	.name			= _name,				\
	.init			= _ops##_init,				\
	.down_read		= _ops##_down_read,			\
	.down_read_trylock	= _ops##_down_read_trylock,		\
	.up_read		= _ops##_up_read,			\
	.down_write		= _ops##_down_write,			\
	.down_write_trylock	= _ops##_down_write_trylock,		\
	.up_write		= _ops##_up_write,			\
	.downgrade_write	= _ops##_downgrade_write,		\
}

extern const struct rwsem_ops rwsem_upstream_ops;	/* "upstream" */
extern const struct rwsem_ops rwsem_v4_6_ops;		/* "v4.6" */
extern const struct rwsem_ops rwsem_v5_1_ops;		/* "v5.1" */
extern const struct rwsem_ops rwsem_v5_3_ops;		/* "v5.3" */

/*
 * A lock as its version's fields say it, for the tests and end-of-run
 * checks (neither struct rw_semaphore is visible outside its file).  The
 * wait list is walked under wait_lock; count and owner are single loads,
 * so a lock in use may move on meanwhile.
 */
struct rwsem_state {
	long count;			/* the raw count */
	unsigned long owner;		/* the raw owner, flags included */
	struct task_struct *owner_task;	/* owner with its flags masked off */
	long active;			/* holders the count says: readers,
					 * or 1 for a writer (v4.6: its
					 * active part) */
	bool unlocked;			/* count is RWSEM_UNLOCKED_VALUE */
	bool writer_locked;		/* RWSEM_WRITER_LOCKED; v4.6: a writer
					 * in the owner field */
	bool reader_owned;		/* RWSEM_READER_OWNED in owner */
	bool nonspinnable;		/* writers may not spin on readers:
					 * RWSEM_NONSPINNABLE (upstream),
					 * RWSEM_WR_NONSPINNABLE (v5.3) */
	bool flag_waiters;		/* RWSEM_FLAG_WAITERS; v4.6, v5.1:
					 * waiters queued (WAITING_BIAS) */
	bool flag_handoff;		/* RWSEM_FLAG_HANDOFF (v5.3, upstream) */
	int nr_waiters;			/* entries on wait_list */
	int nr_write_waiters;		/* of which writers */
	bool osq_locked;		/* spinners hold or queue on the OSQ */
};

void rwsem_upstream_state(struct rwsem_storage *sem, struct rwsem_state *st);
void rwsem_v4_6_state(struct rwsem_storage *sem, struct rwsem_state *st);
void rwsem_v5_1_state(struct rwsem_storage *sem, struct rwsem_state *st);
void rwsem_v5_3_state(struct rwsem_storage *sem, struct rwsem_state *st);

/*
 * A row's implementation in the model's variant table (variants.c): the
 * version, the seed's patch switch (rwsem_reader_owned_patch, set before
 * any use) and whether readers then mark the owner RWSEM_READER_OWNED.
 */
struct rwsem_variant {
	const struct rwsem_ops *ops;
	bool reader_owned_patch;
	bool reader_mark;
	void (*state)(struct rwsem_storage *sem, struct rwsem_state *st);
};

extern const struct kscale_variant_table rwsem_variants;

#endif
