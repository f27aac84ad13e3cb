// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: real_lookup's FUSE server (fuse_server.c) answering a
 * request as read() from /dev/fuse gives it: a fuse_in_header and its
 * argument.  The input is the request; as the kernel would, the harness
 * sets the header's len, and ends the argument with zeros (a NUL-ended
 * name, INIT's fields).  The replies go down a pipe.  Beyond not
 * crashing: FORGET, BATCH_FORGET and INTERRUPT get no reply, any other
 * request one, to its `unique`, as long as it says; INIT offers no minor
 * version above ours and grants only FUSE_PARALLEL_DIROPS, when asked; a
 * LOOKUP in the root finds exactly the directories the server names,
 * "d000".."d099", each under that one name; one elsewhere is a miss,
 * counted.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../../lib/harness/fuse_server.c"
#include "fuzz.h"

#define DIRS		100
#define PAD		(sizeof(struct fuse_init_in) + 1)

/* fuse_server.c's ndelay() (lookup_ns 0 here) and signal undo */
double tsc_per_ns = 1;

void fatal_undo(void (*undo)(void))
{
}

static struct fuse_server fs = {
	.cfg = { .dirs = DIRS, .parallel_dirops = true },
};
static int pipe_rd;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	int p[2];

	FUZZ_CHECK(!pipe2(p, O_NONBLOCK | O_CLOEXEC));
	pipe_rd = p[0];
	fs.fd = p[1];
	return 0;
}

/* The directory the server would name `name` in the root, or -1. */
static int named_dir(const char *name)
{
	char canon[16];
	int i;

	for (i = 0; i < DIRS; i++) {
		snprintf(canon, sizeof(canon), "d%03d", i);
		if (!strcmp(name, canon))
			return i;
	}
	return -1;
}

static void check_lookup(const struct fuse_in_header *in,
			 const struct fuse_out_header *out, const void *arg,
			 unsigned long lookups)
{
	const struct fuse_entry_out *e = (const void *)(out + 1);
	int dir;

	if (in->nodeid != ROOT_INO) {
		FUZZ_CHECK(out->error == -ENOENT);
		FUZZ_CHECK(fs.lookups == lookups + 1);
		return;
	}
	FUZZ_CHECK(fs.lookups == lookups);
	dir = named_dir(arg);
	if (dir < 0) {
		FUZZ_CHECK(out->error == -ENOENT);
		return;
	}
	FUZZ_CHECK(!out->error && out->len == sizeof(*out) + sizeof(*e));
	FUZZ_CHECK(e->nodeid == DIR_INO(dir) && e->attr.ino == e->nodeid);
}

static void check_init(const struct fuse_init_in *arg,
		       const struct fuse_out_header *out)
{
	const struct fuse_init_out *init = (const void *)(out + 1);

	FUZZ_CHECK(!out->error && out->len == sizeof(*out) + sizeof(*init));
	FUZZ_CHECK(init->major == FUSE_KERNEL_VERSION);
	FUZZ_CHECK(init->minor <= FUSE_KERNEL_MINOR_VERSION &&
		   init->minor <= arg->minor);
	FUZZ_CHECK(!(init->flags & ~FUSE_PARALLEL_DIROPS));
	FUZZ_CHECK(!!(init->flags & FUSE_PARALLEL_DIROPS) ==
		   !!(arg->flags & FUSE_PARALLEL_DIROPS));
	FUZZ_CHECK(fs.granted == !!init->flags);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t len = size + PAD;
	struct fuse_in_header *in;
	struct fuse_out_header *out;
	char reply[4096];
	unsigned long lookups = fs.lookups;
	ssize_t n;

	if (size < sizeof(*in) || size > 65536)
		return -1;
	in = calloc(1, len);
	memcpy(in, data, size);
	in->len = len;
	handle(&fs, in);
	n = read(pipe_rd, reply, sizeof(reply));
	switch (in->opcode) {
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		FUZZ_CHECK(n < 0 && errno == EAGAIN);
		free(in);
		return 0;
	}
	out = (struct fuse_out_header *)reply;
	FUZZ_CHECK(n >= (ssize_t)sizeof(*out) && out->len == n);
	FUZZ_CHECK(out->unique == in->unique);
	/* one reply only */
	FUZZ_CHECK(read(pipe_rd, reply + n, sizeof(reply) - n) < 0);
	switch (in->opcode) {
	case FUSE_INIT:
		check_init((const void *)(in + 1), out);
		break;
	case FUSE_LOOKUP:
		check_lookup(in, out, in + 1, lookups);
		break;
	case FUSE_GETATTR:
	case FUSE_OPENDIR:
	case FUSE_RELEASEDIR:
	case FUSE_DESTROY:
		FUZZ_CHECK(!out->error);
		break;
	default:
		FUZZ_CHECK(out->error == -ENOSYS);
	}
	free(in);
	return 0;
}
