// SPDX-License-Identifier: GPL-2.0
// The only C++ in kscale: a thin layer between C bench code and Google
// Benchmark 1.7.1 (see gbench.h).
#include <algorithm>
#include <atomic>
#include <iostream>
#include <cstring>
#include <sstream>
#include <unistd.h>
#include <benchmark/benchmark.h>

#include "gbench.h"

static std::atomic<int> kb_errors;
static bool kb_console = true;

// The console table as Google Benchmark prints it, but its context block
// (machine, caches, every custom context line) on stdout beside the
// table instead of on stderr: stderr keeps progress and errors.
class KbConsoleReporter : public benchmark::ConsoleReporter {
public:
	explicit KbConsoleReporter(OutputOptions opts)
		: benchmark::ConsoleReporter(opts) {}

	bool ReportContext(const Context &context) override
	{
		SetErrorStream(&GetOutputStream());
		return benchmark::ConsoleReporter::ReportContext(context);
	}
};

static void kb_threads_body(benchmark::State &state, kb_thread_fn fn,
			    void *arg)
{
	struct kb_result res = {};

	for (auto _ : state) {
		fn(arg, state.thread_index(), &res);
		state.SetIterationTime(res.seconds);
	}
	if (res.error) {
		if (state.thread_index() == 0)
			kb_errors++;
		state.SkipWithError(res.error);
		return;
	}
	for (int i = 0; i < res.nr_counters; i++)
		state.counters[res.counters[i].name] = res.counters[i].value;
}

static void kb_batch_body(benchmark::State &state, kb_batch_fn fn, void *arg)
{
	while (state.KeepRunningBatch(state.max_iterations))
		fn(arg, state.max_iterations);
}

extern "C" void kb_register_threads(const char *name, int threads,
				    kb_thread_fn fn, void *arg)
{
	benchmark::RegisterBenchmark(name, kb_threads_body, fn, arg)
		->Threads(threads)
		->Iterations(1)
		->UseManualTime();
}

extern "C" void kb_register_batch(const char *name, kb_batch_fn fn,
				  void *arg)
{
	benchmark::RegisterBenchmark(name, kb_batch_body, fn, arg);
}

extern "C" void kb_add_context(const char *key, const char *value)
{
	benchmark::AddCustomContext(key, value);
}

extern "C" int kb_initialize(int *argc, char **argv, char *why, size_t len)
{
	std::ostringstream err;
	std::streambuf *cerr = std::cerr.rdbuf(err.rdbuf());

	for (int i = 1; i < *argc; i++)
		if (!strncmp(argv[i], "--benchmark_format=", 19) &&
		    strcmp(argv[i] + 19, "console"))
			kb_console = false;
	// a bad value is said on std::cerr and its flag left over
	benchmark::Initialize(argc, argv);
	std::cerr.rdbuf(cerr);
	if (*argc <= 1)
		return 0;
	std::string s = err.str();
	s.erase(std::min(s.find('\n'), s.size()));
	if (s.empty())
		s = std::string("unknown option '") + argv[1] +
		    "' (see --help)";
	snprintf(why, len, "%s", s.c_str());
	return -1;
}

extern "C" int kb_run(int *nr_run, char *why, size_t len)
{
	KbConsoleReporter console(isatty(STDOUT_FILENO) ?
				  benchmark::ConsoleReporter::OO_Color :
				  benchmark::ConsoleReporter::OO_None);
	std::ostringstream err;

	// why nothing ran (no match, a bad regex): the caller's one line
	console.SetErrorStream(&err);
	*nr_run = (int)(kb_console ?
			benchmark::RunSpecifiedBenchmarks(&console) :
			benchmark::RunSpecifiedBenchmarks());
	benchmark::Shutdown();
	std::string s = err.str();
	s.erase(s.find_last_not_of("\n") + 1);
	snprintf(why, len, "%s", s.c_str());
	return kb_errors.load();
}
