/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the machine can still give a run: /proc/meminfo's MemAvailable
 * (free memory and the page cache it could reclaim), or free memory
 * where the kernel predates it (3.14).  Bytes; 0 if neither is known.
 */
#ifndef KSCALE_MEMINFO_H
#define KSCALE_MEMINFO_H

unsigned long long mem_available_bytes(void);

#endif
