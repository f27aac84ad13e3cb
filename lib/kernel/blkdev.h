/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A model block device for paths that wait on I/O (a filesystem reading an
 * inode): a read is serviced for a fixed time, at most `depth` reads are
 * serviced at once, and the rest queue in FIFO order.  The submitter sleeps
 * in the model scheduler for all of it, as in submit_bio_wait() ->
 * io_schedule(); the end of its service is a timer (the device's
 * interrupt), whose completion hands the slot to the first queued read.
 * Nothing spins.  No elevator, no merging, no request allocation.
 */
#ifndef KSCALE_KERNEL_BLKDEV_H
#define KSCALE_KERNEL_BLKDEV_H

#include <stdint.h>

#include "list.h"
#include "spinlock.h"

struct request_queue {
	spinlock_t queue_lock;
	unsigned int depth;		/* reads serviced at once */
	unsigned int in_flight;
	struct list_head queued;	/* struct blk_waiter, FIFO */
	unsigned long nr_reads;
	unsigned long nr_queued;	/* reads that waited for a slot */
};

void blk_queue_init(struct request_queue *q, unsigned int depth);
/* Read for service_ns on the device; returns when it completed. */
void blk_read_sync(struct request_queue *q, uint64_t service_ns);

#endif
