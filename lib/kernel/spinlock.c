// SPDX-License-Identifier: GPL-2.0
#include "spinlock.h"

void __ticket_spin_wait(spinlock_t *lock, uint16_t ticket)
{
	while (__atomic_load_n(&lock->tickets.head, __ATOMIC_ACQUIRE) != ticket)
		cpu_relax();
}
