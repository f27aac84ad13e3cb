// SPDX-License-Identifier: GPL-2.0
/*
 * The simulated process's heap: every allocation on lines of its own.
 *
 * The simulator's lines are the host addresses of the model's memory
 * (sim.c), so which of two objects share a line is the host allocator's
 * choice.  glibc packs small chunks, and where a run's objects land
 * depends on everything the process allocated and freed before them:
 * the length of a temp file's name (it carries the pid), Google
 * Benchmark's worker threads handing their chunks back as they exit in
 * whatever order the host ran them.  Measured: one malloc(16) more at
 * start-up moved shmem_fault's simulated ops_per_sec at 64 CPUs of the
 * 512-CPU machine by +0.09% to +0.56% (page_fault1's by -1.1% to +0.07%),
 * and a loaded host made two runs of one command and seed disagree.
 *
 * So the simulator's build replaces malloc() and its kin: each
 * allocation starts at a boundary of the longest line a machine may have,
 * and so no other starts in its lines; glibc (__libc_memalign) still does
 * the work, and its free() and malloc_usable_size() stay.  No two allocations
 * share a line, whatever came before: only an object's own layout, the
 * model's struct as the kernel lays it out, decides what shares one.
 * The departure from the kernel: its small kmalloc caches pack objects
 * into shared lines; the hot objects the models allocate (dentries,
 * inodes, per-node counters) are a line or more, or the kernel aligns
 * them.  The allocator's own writes are not simulated (not instrumented).
 */
#include <errno.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine.h"

/* the engine's own copy and clear are not the model's work (instrument.h) */
#undef memcpy
#undef memset

void *__libc_memalign(size_t align, size_t size);

static void *lines(size_t align, size_t size)
{
	return __libc_memalign(align > SIM_LINE_BYTES_MAX ? align :
			       SIM_LINE_BYTES_MAX, size);
}

void *malloc(size_t size)
{
	return lines(0, size);
}

/* n * size into *total, or ENOMEM and true if it does not fit */
static bool overflows(size_t n, size_t size, size_t *total)
{
	if (!__builtin_mul_overflow(n, size, total))
		return false;
	errno = ENOMEM;
	return true;
}

void *calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (overflows(n, size, &total))
		return NULL;
	p = lines(0, total);
	if (p)
		memset(p, 0, total);
	return p;
}

void *realloc(void *old, size_t size)
{
	size_t have;
	void *p;

	if (!old)
		return malloc(size);
	if (!size) {
		free(old);
		return NULL;
	}
	have = malloc_usable_size(old);
	if (size <= have)
		return old;
	p = malloc(size);
	if (p) {
		memcpy(p, old, have);
		free(old);
	}
	return p;
}

void *reallocarray(void *old, size_t n, size_t size)
{
	size_t total;

	return overflows(n, size, &total) ? NULL : realloc(old, total);
}

void *aligned_alloc(size_t align, size_t size)
{
	return lines(align, size);
}

void *memalign(size_t align, size_t size)
{
	return lines(align, size);
}

int posix_memalign(void **p, size_t align, size_t size)
{
	if (!align || (align & (align - 1)) || align % sizeof(void *))
		return EINVAL;
	*p = lines(align, size);
	return *p ? 0 : ENOMEM;
}

void *valloc(size_t size)
{
	return lines(sysconf(_SC_PAGESIZE), size);
}

void *pvalloc(size_t size)
{
	size_t page = sysconf(_SC_PAGESIZE);

	return lines(page, (size + page - 1) & ~(page - 1));
}
