/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a bench process must undo however it ends (a fatal signal, the
 * watchdog, exit): the host's RT throttling, a half-written output file.
 * Every undo must be async-signal-safe; the last registered runs first.
 */
#ifndef KSCALE_FATAL_H
#define KSCALE_FATAL_H

void fatal_undo(void (*undo)(void));
/* Undo everything and leave now, whatever the other threads are doing. */
_Noreturn void fatal_exit(int status);

#endif
