/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Force-included (-include) into every C file of the simulator's build
 * (-DKSCALE_SIM) but the engine's own: each __atomic builtin becomes an
 * event on its address's cache line before it is done, and every __thread
 * variable a global in one section, which the engine saves and restores
 * at each switch between tasks (sim.c: tls_load()).
 *
 * So every READ_ONCE/WRITE_ONCE, smp_load_acquire/smp_store_release,
 * atomic_t and atomic_long_t operation, cmpxchg/xchg, and the ticket,
 * byte, mutex, rwsem and OSQ locks built on them are instrumented where
 * they are written, with no model file changed.  A builtin's name inside
 * its own macro is not expanded again (C11 6.10.3.4).  Plain loads and
 * stores are not events: they cost their basic blocks' time (code.c) and
 * are not ordered against
 * other CPUs' events beyond the program order of the one host thread,
 * which makes every run sequentially consistent (a store-buffering bug
 * does not show here; torture and TSan are for those).
 */
#if !defined(KSCALE_SIM_INSTRUMENT_H) && !defined(__ASSEMBLER__)
#define KSCALE_SIM_INSTRUMENT_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

void sim_access(const volatile void *p, size_t size, int kind);
void *sim_memcpy(void *dst, const void *src, size_t n);
void *sim_memset(void *dst, int c, size_t n);
int sim_clock_gettime(clockid_t clock, struct timespec *ts);

#define __thread	__attribute__((section("kscale_tls")))

#define __SIM_ACCESS(p, kind)						\
	({ __typeof__(p) __sim_p = (p);					\
	   sim_access(__sim_p, sizeof(*__sim_p), (kind)); __sim_p; })

#define __atomic_load_n(p, m)	 __atomic_load_n(__SIM_ACCESS(p, 0), m)
#define __atomic_load(p, r, m)	 __atomic_load(__SIM_ACCESS(p, 0), r, m)
#define __atomic_store_n(p, v, m) __atomic_store_n(__SIM_ACCESS(p, 1), v, m)
#define __atomic_store(p, v, m)	 __atomic_store(__SIM_ACCESS(p, 1), v, m)
#define __atomic_exchange_n(p, v, m) \
	__atomic_exchange_n(__SIM_ACCESS(p, 2), v, m)
#define __atomic_compare_exchange_n(p, e, d, w, s, f) \
	__atomic_compare_exchange_n(__SIM_ACCESS(p, 2), e, d, w, s, f)
#define __atomic_compare_exchange(p, e, d, w, s, f) \
	__atomic_compare_exchange(__SIM_ACCESS(p, 2), e, d, w, s, f)
#define __atomic_fetch_add(p, v, m) __atomic_fetch_add(__SIM_ACCESS(p, 2), v, m)
#define __atomic_fetch_sub(p, v, m) __atomic_fetch_sub(__SIM_ACCESS(p, 2), v, m)
#define __atomic_fetch_and(p, v, m) __atomic_fetch_and(__SIM_ACCESS(p, 2), v, m)
#define __atomic_fetch_or(p, v, m)  __atomic_fetch_or(__SIM_ACCESS(p, 2), v, m)
#define __atomic_fetch_xor(p, v, m) __atomic_fetch_xor(__SIM_ACCESS(p, 2), v, m)
#define __atomic_add_fetch(p, v, m) __atomic_add_fetch(__SIM_ACCESS(p, 2), v, m)
#define __atomic_sub_fetch(p, v, m) __atomic_sub_fetch(__SIM_ACCESS(p, 2), v, m)
#define __atomic_and_fetch(p, v, m) __atomic_and_fetch(__SIM_ACCESS(p, 2), v, m)
#define __atomic_or_fetch(p, v, m)  __atomic_or_fetch(__SIM_ACCESS(p, 2), v, m)
#define __atomic_xor_fetch(p, v, m) __atomic_xor_fetch(__SIM_ACCESS(p, 2), v, m)

/*
 * A copy or a clear is work: this machine's measured speed, scaled as
 * ndelay() is (sim.h).  The model's data moves between a task's own
 * buffers; the lines it touches are not events.
 */
#define memcpy(d, s, n)		sim_memcpy((d), (s), (n))
#define memset(d, c, n)		sim_memset((d), (c), (n))
#define __builtin_memset(d, c, n) sim_memset((d), (c), (n))

/* The model's clocks are the running CPU's virtual clock. */
#define clock_gettime(c, ts)	sim_clock_gettime((c), (ts))

/* And lib/kernel's platform: its counter, delays, spins and current. */
#include "arch.h"

#endif
