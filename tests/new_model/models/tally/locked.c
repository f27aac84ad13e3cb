// SPDX-License-Identifier: GPL-2.0
/* tally's one design: a plain count under a ticket spinlock. */
#include "../../lib/kernel/spinlock.h"
#include "tally.h"

static spinlock_t lock = __SPIN_LOCK_UNLOCKED;
static unsigned long count;

static void reset(void)
{
	spin_lock_init(&lock);
	WRITE_ONCE(count, 0);
}

static void add(void)
{
	spin_lock(&lock);
	count++;
	spin_unlock(&lock);
}

static unsigned long read(void)
{
	return READ_ONCE(count);
}

const struct tally_ops tally_locked = {
	.reset = reset,
	.add = add,
	.read = read,
};
