/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Compiler and memory-ordering helpers with the kernel's names
 * (include/linux/compiler.h, arch/x86/include/asm/barrier.h).
 *
 * READ_ONCE/WRITE_ONCE are relaxed C11 atomics rather than volatile
 * accesses: the same instructions on x86, and visible to ThreadSanitizer.
 */
#ifndef KSCALE_KERNEL_COMPILER_H
#define KSCALE_KERNEL_COMPILER_H

#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define L1_CACHE_BYTES		64
#define SMP_CACHE_BYTES		L1_CACHE_BYTES
#define ____cacheline_aligned	__attribute__((aligned(SMP_CACHE_BYTES)))
#define ____cacheline_aligned_in_smp ____cacheline_aligned

#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define READ_ONCE(x)	__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, v) __atomic_store_n(&(x), (v), __ATOMIC_RELAXED)
#define smp_load_acquire(p)	__atomic_load_n((p), __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELEASE)

#define barrier()	__asm__ __volatile__("" ::: "memory")
#define smp_mb()	__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_rmb()	__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_wmb()	__atomic_thread_fence(__ATOMIC_RELEASE)

/*
 * Departure: a waiter that spins on past a tick of the host's coarse
 * clock (looked at every CPU_RELAX_CHECK spins) gives the host CPU to any
 * host thread of its priority queued there (sched_yield(2)) and spins on.
 * Only a model task still in the host can be one, such as one that
 * switched out and took a page fault before it slept, which the host's
 * mmap_lock was granted to while this waiter's lock holder waited to
 * write-lock it (torture at 128 tasks in a 64-vCPU guest,
 * docs/vm-test.md).  The CPU's other model tasks are asleep on futexes
 * or give the CPU straight back (give_back_to_host_sleeper()), so none
 * runs beside the waiter, and, the yield marked, none counts it a host
 * sleep in a section.  The kernel's fault sleeps on its own scheduler
 * and needs no such step.  A count of spins (65536, a few ms here) took
 * seconds in that guest, whose vCPUs qemu runs in turn, a pause running
 * the next one.
 */
#define CPU_RELAX_CHECK		1024

extern __thread int cpu_relax_yielding;	/* sched_common.c */

/*
 * The native definitions of this file, delay.h, tsc.h and sched.h stand
 * behind #ifndef, as the kernel's asm-generic ones do: a build that
 * defines its own first (the simulator's, force-included: lib/sim/arch.h)
 * replaces them.
 */
#ifndef cpu_relax
static __thread unsigned int cpu_relax_spins;
static __thread long cpu_relax_tick;

static inline void cpu_relax(void)
{
	struct timespec ts;

	if (unlikely(!(++cpu_relax_spins % CPU_RELAX_CHECK)) &&
	    !clock_gettime(CLOCK_MONOTONIC_COARSE, &ts) &&
	    ts.tv_nsec != cpu_relax_tick) {
		cpu_relax_tick = ts.tv_nsec;
		WRITE_ONCE(cpu_relax_yielding, 1);
		sched_yield();
		WRITE_ONCE(cpu_relax_yielding, 0);
	}
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("pause" ::: "memory");
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	barrier();
#endif
}
#endif

/*
 * include/asm-generic/barrier.h: spin until cond_expr, which reads VAL,
 * the value last loaded from *ptr, holds; that value.  The _acquire form
 * loads with acquire each time (x86: the same mov), where the kernel's
 * adds smp_acquire__after_ctrl_dep() once: ThreadSanitizer sees an
 * acquire load, not a fence.
 */
#define __smp_cond_load(ptr, cond_expr, order) ({			\
	__typeof__(ptr) __PTR = (ptr);					\
	__typeof__(*(ptr)) VAL;						\
									\
	for (;;) {							\
		VAL = __atomic_load_n(__PTR, order);			\
		if (cond_expr)						\
			break;						\
		cpu_relax();						\
	}								\
	VAL;								\
})
#define smp_cond_load_relaxed(ptr, cond_expr)				\
	__smp_cond_load(ptr, cond_expr, __ATOMIC_RELAXED)
#define smp_cond_load_acquire(ptr, cond_expr)				\
	__smp_cond_load(ptr, cond_expr, __ATOMIC_ACQUIRE)

#define WARN_ON(cond)	kscale_warn_on(!!(cond), #cond, __FILE__, __LINE__)
int kscale_warn_on(int cond, const char *what, const char *file, int line);
unsigned long kscale_warnings(void);

#endif
