/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Saving and restoring a thread's CPU affinity.  The mask is sized by the
 * kernel's possible CPUs, not the allowed ones: sched_getaffinity() fails
 * with EINVAL when the buffer is shorter than the kernel's cpumask (a
 * cpuset, or a VM with more possible than online CPUs), and a mask that
 * was never read must never be "restored".
 */
#ifndef KSCALE_AFFINITY_H
#define KSCALE_AFFINITY_H

#include <sched.h>
#include <stddef.h>

struct affinity {
	cpu_set_t *set;
	size_t size;
};

/* Bits in the kernel's cpumask (libnuma's possible CPUs). */
int affinity_possible_cpus(void);
/* The calling thread's mask into a; 0 or -errno (a is then empty). */
int affinity_save(struct affinity *a);
/* Back to a and free it; 0 or -errno.  An empty a is an error. */
int affinity_restore(struct affinity *a);
/* The calling thread on cpu alone; 0 or -errno. */
int affinity_pin(int cpu);

#endif
