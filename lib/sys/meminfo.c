// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include <unistd.h>

#include "meminfo.h"

unsigned long long mem_available_bytes(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	unsigned long long kib = 0;
	char line[128];
	long pages;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kib) == 1)
			break;
	if (f)
		fclose(f);
	if (kib)
		return kib << 10;
	pages = sysconf(_SC_AVPHYS_PAGES);
	return pages > 0 ? (unsigned long long)pages * sysconf(_SC_PAGESIZE) : 0;
}
