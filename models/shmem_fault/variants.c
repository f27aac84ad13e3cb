// SPDX-License-Identifier: GPL-2.0
#include "shmem_fault.h"

KSCALE_VARIANT_TABLE(shmem_fault_variants,
	{ "stat_lock", "2.6.7: the superblock stat_lock on every fault",
	  &shmem_fault_stat_lock, .kernel = "2.6.7" },
	{ "nosbinfo", "the seed: SHMEM_NOSBINFO on dev/zero inodes skips the "
		      "superblock's books", &shmem_fault_nosbinfo,
	  .kernel = "2.6.7" },
	{ "no_sbinfo_mount", "2.6.9 as merged: the internal mount has no "
			     "sbinfo", &shmem_fault_no_sbinfo_mount,
	  .kernel = "2.6.9" },
	{ "upstream", "today: xarray lock, inode i_lock, info->lock; no "
		      "superblock lock", &shmem_fault_upstream,
	  .kernel = "6.18" },
);

void shmem_fault_page_shift(unsigned int shift)
{
	if (shift == mm_page_shift)
		return;
	mm_2_6_7_reset();
	mm_upstream_reset();
	page_alloc_set_shift(shift);
}
