// SPDX-License-Identifier: GPL-2.0
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <unistd.h>

#include "fatal.h"

#define MAX_UNDO	8

static void (*undos[MAX_UNDO])(void);
static volatile sig_atomic_t nr_undos;

/* Last registered first: a user (fio) goes before what it uses (XFS). */
static void undo_all(void)
{
	int i;

	for (i = nr_undos - 1; i >= 0; i--)
		undos[i]();
}

static void undo_and_die(int sig)
{
	undo_all();
	signal(sig, SIG_DFL);
	raise(sig);
}

void fatal_undo(void (*undo)(void))
{
	static const int fatal[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT,
				     SIGABRT, SIGSEGV, SIGBUS };
	size_t i;

	if (!nr_undos) {
		for (i = 0; i < sizeof(fatal) / sizeof(fatal[0]); i++)
			signal(fatal[i], undo_and_die);
		atexit(undo_all);
	}
	if (nr_undos == MAX_UNDO)
		abort();
	undos[nr_undos] = undo;
	nr_undos = nr_undos + 1;
}

void fatal_exit(int status)
{
	undo_all();
	_exit(status);
}
