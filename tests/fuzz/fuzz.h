/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the libFuzzer harnesses share.  Each harness #includes the lib/
 * sources it fuzzes: one translation unit, which clang (the project
 * compiler is gcc) builds alone with its dependency file complete
 * (tests/fuzz/meson.build), and static parsers are reachable.
 */
#ifndef KSCALE_FUZZ_H
#define KSCALE_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property the parser broke: abort, which libFuzzer reports as a crash. */
#define FUZZ_CHECK(cond)						\
	do {								\
		if (!(cond)) {						\
			fprintf(stderr, "%s:%d: %s: check failed: %s\n",\
				__FILE__, __LINE__, __func__, #cond);	\
			abort();					\
		}							\
	} while (0)

#endif
