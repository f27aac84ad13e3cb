// SPDX-License-Identifier: GPL-2.0
// The reference for shim_overhead.c: a native Google Benchmark loop.
#include <benchmark/benchmark.h>

static void null_native(benchmark::State &state)
{
	for (auto _ : state)
		asm volatile("" ::: "memory");
}
BENCHMARK(null_native)->Name("shim_overhead/null/native");
