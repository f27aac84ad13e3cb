// SPDX-License-Identifier: GPL-2.0
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "fatal.h"

#define MAX_UNDO	8

static void (*undos[MAX_UNDO])(void);
static volatile sig_atomic_t nr_undos;
static const int fatal[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE,
			     SIGABRT, SIGSEGV, SIGBUS };
static sigset_t fatal_set;
static int dying;

/* Last registered first: a user (fio) goes before what it uses (XFS). */
static void undo_all(void)
{
	int i;

	for (i = nr_undos - 1; i >= 0; i--)
		undos[i]();
}

/*
 * One thread undoes and ends the process: a second fatal signal (^C and the
 * runner's SIGTERM, a write to the closed pipe) waits, in this thread by
 * the handler's mask, in any other here.
 */
static void claim_dying(void)
{
	if (__atomic_exchange_n(&dying, 1, __ATOMIC_SEQ_CST))
		for (;;)
			pause();
}

static void undo_and_die(int sig)
{
	claim_dying();
	undo_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

void fatal_undo(void (*undo)(void))
{
	struct sigaction sa = { .sa_handler = undo_and_die,
				.sa_flags = SA_RESTART };
	size_t i;

	if (!nr_undos) {
		sigemptyset(&fatal_set);
		for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			sigaddset(&fatal_set, fatal[i]);
		sa.sa_mask = fatal_set;
		for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			sigaction(fatal[i], &sa, NULL);
		atexit(undo_all);
	}
	if (nr_undos == MAX_UNDO)
		abort();
	undos[nr_undos] = undo;
	nr_undos = nr_undos + 1;
}

void fatal_exit(int status)
{
	pthread_sigmask(SIG_BLOCK, &fatal_set, NULL);
	claim_dying();
	undo_all();
	_exit(status);
}
