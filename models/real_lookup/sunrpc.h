/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The NFS line's round trip (sunrpc.c): 2.6.32's synchronous RPC over
 * one transport, and the server at its other end.
 */
#ifndef KSCALE_REAL_LOOKUP_SUNRPC_H
#define KSCALE_REAL_LOOKUP_SUNRPC_H

#include <stdint.h>

#include "../../lib/kernel/list.h"
#include "../../lib/kernel/spinlock.h"

/*
 * The server: sv_nrthreads nfsd threads, each serving one request at a
 * time for service_ns, the rest waiting in arrival order.  Its state is
 * changed under the client's transport_lock, which orders the arrivals.
 */
struct svc_serv {
	unsigned int sv_nrthreads;
	uint64_t service_ns;
	uint64_t *busy_until;		/* each thread's last request's end */
	unsigned int next;		/* the thread free first */
	unsigned long nr_requests;
	unsigned long nr_queued;	/* found every thread busy */
};

/* The client's transport, as 2.6.32's struct rpc_xprt. */
struct rpc_xprt {
	spinlock_t reserve_lock;	/* the slot table and its backlog */
	unsigned int max_reqs;		/* xprt_tcp_slot_table_entries */
	unsigned int num_reqs;		/* slots in use */
	struct list_head backlog;	/* tasks waiting for a slot */
	unsigned long nr_calls;
	unsigned long nr_backlogged;	/* calls that slept for a slot */
	spinlock_t transport_lock;	/* requests sent, replies matched */
	unsigned int nr_recv;		/* requests awaiting their reply */
	uint64_t rtt_ns;		/* the network's round trip */
	uint64_t call_ns;		/* over calls: request sent to reply */
	struct svc_serv serv;		/* the other end */
};

/* One call's times, CLOCK_MONOTONIC ns. */
struct rpc_timing {
	uint64_t sent;			/* the request left */
	uint64_t start, finish;		/* a server thread served it */
	uint64_t replied;		/* its reply came back */
};

/* A transport of slots slots to a server of threads threads. */
struct rpc_xprt *xprt_create(unsigned int slots, uint64_t rtt_ns,
			     unsigned int threads, uint64_t service_ns);
void xprt_destroy(struct rpc_xprt *xprt);

/* A slot of the table, asleep on the backlog until one is free; its release. */
void xprt_reserve(struct rpc_xprt *xprt);
void xprt_release(struct rpc_xprt *xprt);

/* A call: a slot, the request, the reply; its times into t, if not NULL. */
void rpc_call_sync(struct rpc_xprt *xprt, struct rpc_timing *t);

#endif
