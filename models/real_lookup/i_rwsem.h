/* SPDX-License-Identifier: GPL-2.0 */
/*
 * i_rwsem as far as parallel lookups use it: today's reader fast path,
 * one atomic add of RWSEM_READER_BIAS (kernel/locking/rwsem.c).  The
 * writer side, which the lookup workload never takes, spins and yields
 * instead of queueing; the full rwsem is the rwsem model's business.
 */
#ifndef KSCALE_REAL_LOOKUP_I_RWSEM_H
#define KSCALE_REAL_LOOKUP_I_RWSEM_H

#include "../../lib/kernel/atomic.h"
#include "../../lib/kernel/lockstat.h"
#include "../../lib/kernel/sched.h"
#include "../../lib/kernel/tsc.h"

#define RWSEM_WRITER_LOCKED	(1L << 0)
#define RWSEM_READER_BIAS	(1L << 8)

struct rw_semaphore {
	atomic_long_t count;
};

static inline void init_rwsem(struct rw_semaphore *sem)
{
	atomic_long_set(&sem->count, 0);
}

static inline void down_read_slowpath(struct rw_semaphore *sem)
{
	while (atomic_long_add_return(RWSEM_READER_BIAS, &sem->count) &
	       RWSEM_WRITER_LOCKED) {
		atomic_long_add_return(-RWSEM_READER_BIAS, &sem->count);
		yield();
	}
}

static inline void __down_read_account(struct rw_semaphore *sem,
				       uint64_t *wait)
{
	uint64_t t0;

	if (likely(!(atomic_long_add_return(RWSEM_READER_BIAS, &sem->count) &
		     RWSEM_WRITER_LOCKED)))
		return;
	atomic_long_add_return(-RWSEM_READER_BIAS, &sem->count);
	t0 = rdtsc_ordered();
	down_read_slowpath(sem);
	*wait += rdtsc_ordered() - t0;
}

/* down_read() that adds the cycles of its slow path to *wait. */
static inline void down_read_account(struct rw_semaphore *sem, uint64_t *wait)
{
	lockstat_acquire(sem, true, __down_read_account(sem, wait));
}

static inline void up_read(struct rw_semaphore *sem)
{
	lockstat_release(sem);
	atomic_long_add_return(-RWSEM_READER_BIAS, &sem->count);
}

static inline void __down_write(struct rw_semaphore *sem)
{
	while (cmpxchg(&sem->count.counter, 0L, RWSEM_WRITER_LOCKED) != 0)
		yield();
}

static inline void down_write(struct rw_semaphore *sem)
{
	lockstat_acquire(sem, false, __down_write(sem));
}

static inline void up_write(struct rw_semaphore *sem)
{
	lockstat_release(sem);
	atomic_long_add_return(-RWSEM_WRITER_LOCKED, &sem->count);
}

#endif
