/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Lock statistics for the models' shared resources, in the spirit of the
 * kernel's CONFIG_LOCK_STAT (kernel/locking/lockdep.c: lock_acquire(),
 * lock_acquired(), lock_release()) but cheap enough to run beside a
 * benchmark: per-thread accumulators only, no shared writes, and with
 * --profile off one predictable branch per lock operation.
 *
 * A model registers each resource it wants counted where it initialises
 * it: its address, a class name, how many cache lines one visit moves
 * between CPUs (the model knows its layout: stat_lock and the counters it
 * protects share one line, 1; a lock and a separate data line, 2) and
 * what it is:
 *
 *	lockstat_register(&sbinfo->stat_lock, "stat_lock", 1, LOCKSTAT_SPIN);
 *
 * Every instance registered under one name is one class (the i_mutex of
 * 100 directories, a per-CPU lock of every CPU); an instance is a cache
 * line, so two addresses of one class on one line (a dentry's d_lock and
 * d_count) are one instance.  Registration is accounting only, done in a
 * run's set-up before its threads start; with --profile off it is done
 * only under --sim (lockstat.lines: the simulator counts each class's
 * line misses, res_NAME_transfers, for nothing in virtual time), and
 * otherwise allocates nothing and costs nothing.
 *
 * The primitives account themselves: spin_lock() (every kind),
 * struct mutex, the rwsem models through struct rwsem_ops and
 * real_lookup's i_rwsem.  A plain shared atomic's line is counted where
 * the model touches it: lockstat_visit(&mnt->__mnt_writers).  For each
 * registered instance a thread accumulates visits, the cycles it held
 * the lock (acquisition to release) and the cycles it waited (the call to
 * the acquisition), read and write holds of an rwsem apart; a visit to an
 * atomic's line has neither.  The harness (lib/harness/window.c) sums
 * the threads at the window's two snapshots and sets, per class NAME:
 *
 *	res_NAME_visits		exclusive visits (a spinlock or mutex
 *				hold, an rwsem's write hold, an atomic's
 *				line) per operation
 *	res_NAME_hold_ns	mean ns held per exclusive visit
 *	res_NAME_wait_ns	mean ns from the call to the acquisition,
 *				per exclusive visit
 *	res_NAME_lines		cache lines a visit moves, as registered
 *	res_NAME_instances	distinct instances (lines) visited in the
 *				window
 *	res_NAME_sleeps		1 if waiters sleep (mutex, rwsem), else 0
 *	res_NAME_scope		0: any CPU may visit any instance; 1: one
 *				instance per node, visited by its CPUs;
 *				2: one instance per CPU, visited by it
 *	res_NAME_read_visits	rwsems only: read holds per operation,
 *	res_NAME_read_hold_ns	their mean ns held
 *	res_NAME_read_wait_ns	and their mean wait
 *	res_NAME_transfers	simulated runs: misses of its lines
 *				(lockstat_class_lines_sum()) per operation,
 *				--profile or not
 *
 * and lockstat_ns_per_op, what the hooks themselves took of an operation
 * (lockstat_sum()); their own cycles are left out of every hold and wait.
 *
 * Trylocks count when they succeed, with no wait; a downgrade ends a
 * write visit and starts a read visit.  Visits are writes: a read of a
 * line another CPU wrote moves it too, uncounted.  Hold times are those
 * of the window's thread count: at one thread the critical sections
 * alone, with more they include the lines they moved.
 */
#ifndef KSCALE_KERNEL_LOCKSTAT_H
#define KSCALE_KERNEL_LOCKSTAT_H

#include <stdbool.h>
#include <stdint.h>

#include "compiler.h"
#include "torture.h"

#define LOCKSTAT_MAX_CLASSES	16
#define LOCKSTAT_MAX_HELD	8	/* registered locks one thread nests */

/* What a class is: how its waiters wait, who shares an instance. */
#define LOCKSTAT_SLEEPS		(1U << 0)
#define LOCKSTAT_RW		(1U << 1)
#define LOCKSTAT_PER_NODE	(1U << 2)
#define LOCKSTAT_PER_CPU	(1U << 3)

#define LOCKSTAT_SPIN		0U	/* spinlock_t, or one kind's type */
#define LOCKSTAT_LINE		0U	/* an atomic's line: lockstat_visit() */
#define LOCKSTAT_MUTEX		LOCKSTAT_SLEEPS
#define LOCKSTAT_RWSEM		(LOCKSTAT_SLEEPS | LOCKSTAT_RW)

struct lockstat_class {
	const char *name;
	unsigned int lines;		/* moved between CPUs per visit */
	unsigned int flags;
	unsigned long nr_instances;	/* registered */
};

/* One thread's counts for one class; cycles of the TSC. */
struct lockstat_acc {
	uint64_t visits, hold, wait;		/* exclusive */
	uint64_t read_visits, read_hold, read_wait;
};

/*
 * Read by every lock operation, written by the harness twice a run (the
 * window opens and closes): a cache line of its own.
 */
struct lockstat_state {
	bool enabled;			/* --profile */
	bool lines;			/* --sim: registered, never hooked */
	bool window;			/* instances visited are marked */
} ____cacheline_aligned;

extern struct lockstat_state lockstat;

struct lockstat_held;

/*
 * CONFIG_LOCK_STAT's counts for one lock, kept by its taker and counted
 * once the lock is released (spin_unlock_account(), spinlock.h).
 */
struct lock_class_stats {
	unsigned long acquisitions;
	unsigned long contentions;
	uint64_t waittime;		/* cycles, waits only */
};

/* The hooks: out of line, called with lockstat_hooked() only. */
struct lockstat_held *lock_acquire(const void *lock, bool read);
void lock_acquired(struct lockstat_held *held);
void lock_acquired_try(const void *lock, bool read);
void lock_release(const void *lock);
void lock_visit(const void *addr);

/*
 * The torture hooks exist only in code built for kscale torture
 * (-DKSCALE_TORTURE: torture/meson.build, the sanitizer builds): in a
 * bench binary, even branches never taken changed how a contended
 * spinlock hands over, and shmem_fault's stat_lock -> nosbinfo ratio on
 * 2 CPUs went from 1.74x to 1.45-1.52x (commit bf499f4).
 */
#ifdef KSCALE_TORTURE
#define lockstat_hooked()	(lockstat.enabled || torture_hooks)
#else
#define lockstat_hooked()	lockstat.enabled
#endif

/*
 * `acquire` (a statement that takes lock) timed: the call, then the
 * acquisition (for torture too: lock_acquire() times its own record).
 * It is expanded twice so that with the hooks off it costs one branch,
 * nothing more.
 */
#define lockstat_acquire(lock, read, acquire) do {			\
	if (unlikely(lockstat_hooked())) {				\
		struct lockstat_held *__held = lock_acquire(lock, read); \
									\
		acquire;						\
		if (__held)						\
			lock_acquired(__held);				\
	} else {							\
		acquire;						\
	}								\
} while (0)

/* After a trylock: a visit with no wait if it took the lock. */
static inline void lockstat_trylock(const void *lock, bool read, bool taken)
{
	if (unlikely(lockstat.enabled) && taken)
		lock_acquired_try(lock, read);
#ifdef KSCALE_TORTURE
	else if (unlikely(torture_hooks) && taken)
		torture_hooks->lock_acquired(0);
#endif
}

/* Before the store that releases lock: torture holds it longer. */
static inline void lockstat_release(const void *lock)
{
	if (unlikely(lockstat.enabled))
		lock_release(lock);
#ifdef KSCALE_TORTURE
	else if (unlikely(torture_hooks))
		torture_hooks->lock_release();
#endif
}

/*
 * After the store that released lock, preemption still off: torture's
 * interrupt, which widens the window between a release and what the
 * releaser does next (a waiter's task state set after its wait_lock).
 */
static inline void lockstat_released(void)
{
#ifdef KSCALE_TORTURE
	if (unlikely(torture_hooks))
		torture_hooks->lock_released();
#endif
}

/*
 * A sleeper's windows, widened by torture (sched.h): just before a task
 * stores a sleeping state, between the condition it checked and the
 * state a waker's wake-up must find; and in schedule(), between reading
 * that state and committing to sleep, where a wake-up may land after the
 * sleeper dropped its lock.  Correct code has nothing to lose in either;
 * a slow path that checks, sets its state or drops its lock in the wrong
 * order loses a wake-up there (torture: "no progress", "not parked").
 */
static inline void lockstat_sleep_window(void)
{
#ifdef KSCALE_TORTURE
	if (unlikely(torture_hooks))
		torture_hooks->sleep_window();
#endif
}

/* A locked operation on a registered shared line (an atomic_t). */
static inline void lockstat_visit(const void *addr)
{
	if (unlikely(lockstat.enabled))
		lock_visit(addr);
}

/*
 * In a run's set-up: count addr as an instance of class `name`.  A name
 * is one class: registering it again with other lines or flags is a bug
 * (WARN_ON); an address registered twice stays in its first class.
 */
void lockstat_register(const void *addr, const char *name, unsigned int lines,
		       unsigned int flags);

/*
 * The harness's side (lib/harness/window.c), and the tests'.  Enabling
 * measures the hooks' own cost in a hold and in a wait (the TSC rate
 * known), which every visit's then leaves out: lockstat_floor_ns().
 */
void lockstat_enable(bool on);
/* Registration on whatever lockstat_enable() says (--sim's line misses). */
void lockstat_register_lines(bool on);
void lockstat_floor_ns(double *hold_ns, double *wait_ns);
/* A new run: forget every class, instance and thread's counts. */
void lockstat_reset(void);
/* After the set-up's registrations: accumulators for nr threads; 0 or -1. */
int lockstat_threads_init(int nr);
/* The calling thread counts into accumulator id, until it detaches. */
void lockstat_thread_attach(int id);
void lockstat_thread_detach(void);
/* Mark the instances visited from now on (open), or stop. */
void lockstat_window(bool open);
int lockstat_nr_classes(void);
const struct lockstat_class *lockstat_class(int c);
/*
 * Every attached accumulator summed, per class: sum[lockstat_nr_classes()];
 * returns the cycles the hooks took meanwhile (estimated: each hook's
 * cost, measured when enabled, counted where it ran).
 */
uint64_t lockstat_sum(struct lockstat_acc *sum);
/* Distinct instances visited while the window was open, per class. */
void lockstat_instances_seen(unsigned long *seen);
/*
 * fn() of each line class c registered an instance on, summed: what a
 * caller knows of lines that lockstat does not (the simulator's
 * transfers of them, lib/harness/sim/window.c).
 */
uint64_t lockstat_class_lines_sum(int c, uint64_t (*fn)(const void *line));

#endif
