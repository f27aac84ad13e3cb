// SPDX-License-Identifier: GPL-2.0
#include <sched.h>

#include "spinlock.h"

void __ticket_spin_wait(spinlock_t *lock, uint16_t ticket)
{
	unsigned int loops = 0;

	while (__atomic_load_n(&lock->tickets.head, __ATOMIC_ACQUIRE) != ticket) {
		cpu_relax();
		if (unlikely(++loops == SPIN_YIELD_LOOPS)) {
			loops = 0;
			sched_yield();
		}
	}
}
