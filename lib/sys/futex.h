/* SPDX-License-Identifier: GPL-2.0 */
/*
 * futex(2) on a process-private 32-bit word: the model scheduler's sleeps
 * and wake-ups, and the window's gate.  FUTEX_WAIT_BITSET's timeout, when
 * given, is absolute on CLOCK_MONOTONIC.
 */
#ifndef KSCALE_FUTEX_H
#define KSCALE_FUTEX_H

#include <linux/futex.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static inline long futex(uint32_t *uaddr, int op, uint32_t val,
			 const struct timespec *abs)
{
	return syscall(SYS_futex, uaddr, op | FUTEX_PRIVATE_FLAG, val, abs,
		       NULL, FUTEX_BITSET_MATCH_ANY);
}

#endif
