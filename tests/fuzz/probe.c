// SPDX-License-Identifier: GPL-2.0
/* meson's check that clang links a libFuzzer target (tests/fuzz). */
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return 0;
}
