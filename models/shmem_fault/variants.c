// SPDX-License-Identifier: GPL-2.0
#include "shmem_fault.h"

__thread struct lock_class_stats stat_lock_stat;

const struct shmem_fault_ops *const shmem_fault_variants[] = {
	&shmem_fault_stat_lock,
	&shmem_fault_nosbinfo,
	&shmem_fault_no_sbinfo_mount,
	&shmem_fault_upstream,
};

const int shmem_fault_nr_variants =
	sizeof(shmem_fault_variants) / sizeof(shmem_fault_variants[0]);

void shmem_fault_page_shift(unsigned int shift)
{
	if (shift == mm_page_shift)
		return;
	mm_2_6_7_reset();
	mm_upstream_reset();
	page_alloc_set_shift(shift);
}
