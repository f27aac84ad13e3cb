/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What moving one cache line from one CPU to another costs on this
 * machine, for `kscale predict`'s queueing model (with --profile): the
 * ping-pong of ccbench and ssync.  Two threads pinned to CPUs a and b
 * bounce one line, each waiting to see the other's value before it
 * writes its own; a one-way transfer is half a round trip.  The median
 * of PINGPONG_ROUNDS rounds, after one untimed, for three pairs of the
 * allowed CPUs: a CPU's SMT sibling, another core of its node, a CPU of
 * another node.  Recorded in the context as kscale_line_ns_smt,
 * kscale_line_ns_node and kscale_line_ns_remote (ns, or "none" when the
 * allowed CPUs have no such pair; "none (nodes emulated)" for a remote
 * pair under --numa-emulate, whose nodes are not remote), with
 * kscale_threads_per_core and the CPUs of each pair (kscale_line_pairs).
 */
#ifndef KSCALE_LINELAT_H
#define KSCALE_LINELAT_H

#include "../sys/topology.h"

#define PINGPONG_TRIPS		1000	/* round trips a round */
#define PINGPONG_ROUNDS		7

enum { PAIR_SMT, PAIR_NODE, PAIR_REMOTE, NR_PAIRS };

/* ns one way between CPUs a and b, or a negative number. */
double linelat_pingpong(int a, int b);
/*
 * CPU a's partner of each kind (b[PAIR_*]) among t's, or -1.  Nodes are
 * the real ones, even under --numa-emulate.
 */
void linelat_pairs(const struct topology *t, int a, int *b);
/* The most SMT siblings any of t's CPUs has. */
int linelat_threads_per_core(const struct topology *t);

/* Measure and record; prog names the binary on stderr. */
void linelat_record(const struct topology *t, const char *prog);

#endif
