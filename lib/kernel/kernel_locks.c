// SPDX-License-Identifier: GPL-2.0
/* Which spinlock_t each kernel spun on, and the one a lock is given. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spinlock.h"

enum spin_lock_kind spin_lock_init_kind = SPIN_TICKET;

static const char *const spin_lock_kind_names[NR_SPIN_LOCK_KINDS] = {
	[SPIN_TICKET]		= "ticket",
	[SPIN_DECB]		= "decb",
	[SPIN_QUEUED_V4_6]	= "qspinlock-v4.6",
	[SPIN_QUEUED]		= "qspinlock-6.18",
	[SPIN_IA64]		= "ia64",
};

const char *spin_lock_kind_name(enum spin_lock_kind kind)
{
	return (unsigned int)kind < NR_SPIN_LOCK_KINDS ?
	       spin_lock_kind_names[kind] : NULL;
}

/*
 * The kernels the models follow and the spinlock each spun on: the one
 * place a model variant's lock is chosen (its row names its kernel,
 * lib/harness/variant.h).  On x86, tickets came in 2.6.25, queued
 * spinlocks in 4.2; 4.18-4.20 reworked their slow path into 6.18's
 * (pending set unconditionally, a bounded wait for the pending->locked
 * hand-over, one try_cmpxchg at the queue's head) and 5.1 added the
 * fallback past four nested contexts: 5.1 and 5.3 spin on 6.18's slow
 * path.  2.6.7 and 2.6.9 are followed as the seed's SGI Altix ran them
 * (shmem_fault: seed 002 measured 2.6.7 there, and 2.6.9 is its fix as
 * merged, run on the same machine), so their lock is ia64's cmpxchg
 * lock (spinlock_ia64.h), not x86's byte lock of those kernels.
 */
static const struct {
	const char *kernel;
	enum spin_lock_kind kind;
} kernel_locks[] = {
	{ "2.6.7",	SPIN_IA64 },
	{ "2.6.9",	SPIN_IA64 },
	{ "2.6.22",	SPIN_DECB },
	{ "2.6.26",	SPIN_TICKET },
	{ "2.6.32",	SPIN_TICKET },
	{ "4.6",	SPIN_QUEUED_V4_6 },
	{ "4.8",	SPIN_QUEUED_V4_6 },	/* the slow path as v4.6's */
	{ "5.1",	SPIN_QUEUED },	/* the slow path as 6.18's (above) */
	{ "5.3",	SPIN_QUEUED },
	{ "6.18",	SPIN_QUEUED },
};

int spin_lock_kind_of(const char *kernel)
{
	size_t i;

	for (i = 0; i < sizeof(kernel_locks) / sizeof(kernel_locks[0]); i++)
		if (kernel && !strcmp(kernel_locks[i].kernel, kernel))
			return kernel_locks[i].kind;
	return -1;
}

void spin_lock_account_bug(int kind)
{
	fprintf(stderr, "BUG: spin_lock_account() on a %s lock: only the "
		"retrying locks (decb, ia64) time their waits\n",
		spin_lock_kind_name(kind));
	abort();
}
