/* SPDX-License-Identifier: GPL-2.0 */
/*
 * atomic_t with the kernel's names (arch/x86/include/asm/atomic.h).
 * Read-modify-write operations are fully ordered, as the x86 lock-prefixed
 * instructions the kernel uses are; atomic_read/atomic_set are plain.
 */
#ifndef KSCALE_KERNEL_ATOMIC_H
#define KSCALE_KERNEL_ATOMIC_H

#include "compiler.h"

typedef struct {
	int counter;
} atomic_t;

typedef struct {
	long counter;
} atomic_long_t;

#define ATOMIC_INIT(i)	{ (i) }

#define atomic_read(v)		READ_ONCE((v)->counter)
#define atomic_set(v, i)	WRITE_ONCE((v)->counter, (i))
#define atomic_add(i, v)	((void)__atomic_fetch_add(&(v)->counter, (i), __ATOMIC_SEQ_CST))
#define atomic_sub(i, v)	((void)__atomic_fetch_sub(&(v)->counter, (i), __ATOMIC_SEQ_CST))
#define atomic_inc(v)		atomic_add(1, v)
#define atomic_dec(v)		atomic_sub(1, v)
#define atomic_add_return(i, v)	__atomic_add_fetch(&(v)->counter, (i), __ATOMIC_SEQ_CST)
#define atomic_xchg(v, i)	__atomic_exchange_n(&(v)->counter, (i), __ATOMIC_SEQ_CST)

#define atomic_long_read(v)	READ_ONCE((v)->counter)
#define atomic_long_set(v, i)	WRITE_ONCE((v)->counter, (i))
#define atomic_long_add(i, v) \
	((void)__atomic_fetch_add(&(v)->counter, (i), __ATOMIC_SEQ_CST))
#define atomic_long_add_return(i, v) \
	__atomic_add_fetch(&(v)->counter, (i), __ATOMIC_SEQ_CST)
#define atomic_long_fetch_add(i, v) \
	__atomic_fetch_add(&(v)->counter, (i), __ATOMIC_SEQ_CST)
#define atomic_long_or(i, v) \
	((void)__atomic_fetch_or(&(v)->counter, (i), __ATOMIC_SEQ_CST))
#define atomic_long_andnot(i, v) \
	((void)__atomic_fetch_and(&(v)->counter, ~(long)(i), __ATOMIC_SEQ_CST))
/*
 * try_cmpxchg(): true if *old was found; otherwise *old is updated to
 * the value found, as the kernel's.
 */
#define atomic_long_try_cmpxchg(v, old, new)				\
	__atomic_compare_exchange_n(&(v)->counter, (old), (new), false,	\
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)

/*
 * The _acquire and _release forms are the same lock-prefixed
 * instructions on x86: fully ordered, as every RMW here.
 */
#define atomic_long_add_return_acquire	atomic_long_add_return
#define atomic_long_fetch_add_acquire	atomic_long_fetch_add
#define atomic_long_add_return_release	atomic_long_add_return
#define atomic_long_fetch_add_release	atomic_long_fetch_add
#define atomic_long_try_cmpxchg_acquire	atomic_long_try_cmpxchg

/* cmpxchg(): returns the value found, like the kernel's. */
#define cmpxchg(ptr, old, new) ({					\
	__typeof__(*(ptr)) __old = (old);				\
	__atomic_compare_exchange_n((ptr), &__old, (new), false,	\
				    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);\
	__old;								\
})
#define xchg(ptr, v)	__atomic_exchange_n((ptr), (v), __ATOMIC_SEQ_CST)

#define atomic_cmpxchg(v, old, new)	cmpxchg(&(v)->counter, (old), (new))
#define atomic_long_cmpxchg(v, old, new) cmpxchg(&(v)->counter, (old), (new))

/* smp_cond_load_*() on the counter: VAL is its value (compiler.h). */
#define atomic_cond_read_relaxed(v, c)	smp_cond_load_relaxed(&(v)->counter, (c))
#define atomic_cond_read_acquire(v, c)	smp_cond_load_acquire(&(v)->counter, (c))

/* x86's locked RMWs are full barriers already; elsewhere, a fence. */
#if defined(__x86_64__) || defined(__i386__)
#define smp_mb__after_atomic()	barrier()
#else
#define smp_mb__after_atomic()	smp_mb()
#endif

/* Add a to v unless v was u; non-zero if it added (2.6.26 x86). */
static inline int atomic_add_unless(atomic_t *v, int a, int u)
{
	int c, old;

	c = atomic_read(v);
	for (;;) {
		if (unlikely(c == u))
			break;
		old = atomic_cmpxchg(v, c, c + a);
		if (likely(old == c))
			break;
		c = old;
	}
	return c != u;
}

#endif
