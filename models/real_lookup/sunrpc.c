// SPDX-License-Identifier: GPL-2.0
/*
 * 2.6.32 net/sunrpc, a synchronous NFS call as the NFS line's ->lookup()
 * makes it (a GETATTR by file handle: nfs3_proc_getattr() ->
 * rpc_call_sync()), and the nfsd threads that answer it.
 *
 * The client (net/sunrpc/clnt.c, xprt.c): call_reserve() ->
 * xprt_reserve() takes a slot of the transport's table under
 * reserve_lock, xprt->max_reqs of them (xprt_tcp_slot_table_entries,
 * RPC_DEF_SLOT_TABLE 16, the sysctl sunrpc.tcp_slot_table_entries 2..128);
 * with none free the task sleeps on xprt->backlog (rpc_sleep_on()).
 * xprt_transmit() queues the request on xprt->recv under transport_lock,
 * sends it, and under transport_lock again puts the task to sleep on
 * xprt->pending; the reply (xs_tcp_read_reply()) is matched under
 * transport_lock (xprt_lookup_rqst(), xprt_complete_rqst()), which wakes
 * the task.  xprt_release() takes the request off xprt->recv under
 * transport_lock and xprt_free_slot() gives the slot back under
 * reserve_lock, waking the first task of the backlog
 * (rpc_wake_up_next()), which runs call_reserve() again: a task that came
 * meanwhile may have taken the slot, and the woken one sleeps again.
 *
 * The server (net/sunrpc/svc_xprt.c, fs/nfsd): svc_xprt_enqueue() hands a
 * connection with a request to an idle nfsd thread, or queues it for the
 * first thread to finish; svc_recv() reads one request and lets the next
 * thread read the next; nfsd_dispatch() -> nfsd3_proc_getattr() ->
 * fh_verify(), vfs_getattr(); svc_send() the reply.  A server's thread
 * count is rpc.nfsd's argument (8 by the distributions' default).
 *
 * Departures: the server is another machine, so it runs no model code:
 * each request arriving at a (sent + half the round trip) is served from
 * the later of a and the moment its first thread to be free is, for
 * service_ns, by that thread, in order of arrival (a FIFO of
 * sv_nrthreads servers; every request served in the same time: no
 * server cache hits and misses, no disk queue of its own); the reply
 * comes back the other half later.  The network has no bandwidth limit,
 * loss or retransmission, and no TCP.  The transmit's write lock
 * (XPRT_LOCKED, one sender at a time, others asleep on xprt->sending) and
 * the socket's send work are left out: a call's CPU work on the client
 * is the caller's.  The reply's wake-up is the task's own timer (the
 * model's interrupt) where the kernel's softirq wakes it.  The slot table
 * is a count, not a free list of requests.
 */
#include <stdlib.h>

#include "../../lib/kernel/lockstat.h"
#include "../../lib/kernel/sched.h"
#include "../../lib/sys/clock.h"
#include "sunrpc.h"

struct rpc_waiter {
	struct list_head list;
	struct task_struct *task;
};

static uint64_t ktime_get_ns(void)
{
	return (uint64_t)now_ns();
}

struct rpc_xprt *xprt_create(unsigned int slots, uint64_t rtt_ns,
			     unsigned int threads, uint64_t service_ns)
{
	struct rpc_xprt *xprt = calloc(1, sizeof(*xprt));

	spin_lock_init(&xprt->reserve_lock);
	spin_lock_init(&xprt->transport_lock);
	xprt->max_reqs = slots ? slots : 1;
	INIT_LIST_HEAD(&xprt->backlog);
	xprt->rtt_ns = rtt_ns;
	xprt->serv.sv_nrthreads = threads ? threads : 1;
	xprt->serv.service_ns = service_ns;
	xprt->serv.busy_until = calloc(xprt->serv.sv_nrthreads,
				       sizeof(*xprt->serv.busy_until));
	/* the slot table's count and backlog; the list of requests sent */
	lockstat_register(&xprt->reserve_lock, "xprt_reserve_lock", 1,
			  LOCKSTAT_SPIN);
	lockstat_register(&xprt->transport_lock, "xprt_transport_lock", 1,
			  LOCKSTAT_SPIN);
	return xprt;
}

void xprt_destroy(struct rpc_xprt *xprt)
{
	if (!xprt)
		return;
	free(xprt->serv.busy_until);
	free(xprt);
}

void xprt_reserve(struct rpc_xprt *xprt)
{
	struct rpc_waiter w = { .task = current };

	INIT_LIST_HEAD(&w.list);
	spin_lock(&xprt->reserve_lock);
	xprt->nr_calls++;
	if (xprt->num_reqs == xprt->max_reqs)
		xprt->nr_backlogged++;
	while (xprt->num_reqs == xprt->max_reqs) {
		/* rpc_sleep_on(&xprt->backlog): at its tail, again if need be */
		if (list_empty(&w.list))
			list_add_tail(&w.list, &xprt->backlog);
		set_current_state(TASK_UNINTERRUPTIBLE);
		spin_unlock(&xprt->reserve_lock);
		schedule();
		spin_lock(&xprt->reserve_lock);
	}
	if (!list_empty(&w.list))
		list_del(&w.list);
	xprt->num_reqs++;
	spin_unlock(&xprt->reserve_lock);
}

/* xprt_free_slot(): the slot back, the backlog's first woken to retry. */
void xprt_release(struct rpc_xprt *xprt)
{
	struct rpc_waiter *w;

	spin_lock(&xprt->reserve_lock);
	xprt->num_reqs--;
	if (!list_empty(&xprt->backlog)) {
		w = list_first_entry(&xprt->backlog, struct rpc_waiter, list);
		list_del_init(&w->list);
		wake_up_process(w->task);
	}
	spin_unlock(&xprt->reserve_lock);
}

/*
 * transport_lock held: the request arriving at t->sent + half the round
 * trip, served by the thread free first, after the requests before it.
 */
static void svc_process(struct svc_serv *serv, uint64_t arrival,
			struct rpc_timing *t)
{
	uint64_t *thread = &serv->busy_until[serv->next];

	serv->nr_requests++;
	t->start = arrival;
	if (*thread > arrival) {
		t->start = *thread;
		serv->nr_queued++;
	}
	t->finish = t->start + serv->service_ns;
	*thread = t->finish;
	/* every request takes as long: the next to be free is the next */
	serv->next = (serv->next + 1) % serv->sv_nrthreads;
}

/* Asleep on xprt->pending until the reply is in, at t. */
static void rpc_sleep_until(uint64_t t)
{
	uint64_t now;

	while ((now = ktime_get_ns()) < t)
		schedule_timeout_ns(t - now);
}

void rpc_call_sync(struct rpc_xprt *xprt, struct rpc_timing *timing)
{
	struct rpc_timing t;

	xprt_reserve(xprt);
	/* xprt_transmit(): onto xprt->recv, sent, asleep on xprt->pending */
	spin_lock(&xprt->transport_lock);
	xprt->nr_recv++;
	t.sent = ktime_get_ns();
	svc_process(&xprt->serv, t.sent + xprt->rtt_ns / 2, &t);
	spin_unlock(&xprt->transport_lock);
	t.replied = t.finish + (xprt->rtt_ns - xprt->rtt_ns / 2);
	rpc_sleep_until(t.replied);
	/* xprt_complete_rqst(), then xprt_release()'s part */
	spin_lock(&xprt->transport_lock);
	xprt->nr_recv--;
	xprt->call_ns += t.replied - t.sent;
	spin_unlock(&xprt->transport_lock);
	xprt_release(xprt);
	if (timing)
		*timing = t;
}
