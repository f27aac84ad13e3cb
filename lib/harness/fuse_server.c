// SPDX-License-Identifier: GPL-2.0
/*
 * The FUSE protocol spoken directly on /dev/fuse (linux/fuse.h): Debian
 * 12's libfuse 3.14 does not send FUSE_PARALLEL_DIROPS in its INIT reply
 * whatever the filesystem wants (strace of the reply: flags 0x40409029
 * with and without), and that flag is this server's whole point.  The
 * filesystem needs five requests, so they are answered here.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/fuse.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../kernel/delay.h"
#include "fatal.h"
#include "fuse_server.h"

#define MAX_MOUNTS	4
#define MNT_LEN		256
#define ROOT_INO	FUSE_ROOT_ID
#define DIR_INO(i)	((uint64_t)(i) + 2)
#define BUF_SIZE	(FUSE_MIN_READ_BUFFER + 65536)
#define ATTR_VALID	3600

struct fuse_server {
	struct fuse_server_config cfg;
	int fd;				/* /dev/fuse */
	pthread_t *threads;
	int nr_threads;
	bool granted;			/* FUSE_PARALLEL_DIROPS in effect */
	unsigned long lookups;
	char mnt[MNT_LEN];
	char (*dir)[MNT_LEN + 16];
	int slot;
};

/*
 * Mount points to undo from a signal handler, fixed storage: a slot is
 * claimed once its directory exists, mounted once the mount is.
 */
static char mounts[MAX_MOUNTS][MNT_LEN];
static volatile sig_atomic_t claimed[MAX_MOUNTS], mounted[MAX_MOUNTS];

static void unmount_all(void)
{
	int i;

	for (i = 0; i < MAX_MOUNTS; i++) {
		if (mounted[i])
			umount2(mounts[i], MNT_DETACH);
		if (claimed[i])
			rmdir(mounts[i]);
		mounted[i] = claimed[i] = 0;
	}
}

const char *fuse_server_unavailable(void)
{
	if (access("/dev/fuse", R_OK | W_OK))
		return "no usable /dev/fuse";
	if (geteuid())
		return "not root: the benchmark mounts FUSE itself";
	return NULL;
}

static void reply(struct fuse_server *fs, uint64_t unique, int error,
		  const void *arg, size_t len)
{
	struct fuse_out_header out = {
		.len = sizeof(out) + len, .error = error, .unique = unique,
	};
	struct iovec iov[2] = { { &out, sizeof(out) }, { (void *)arg, len } };

	/* ENOENT: the request was interrupted; nothing to do */
	if (writev(fs->fd, iov, len ? 2 : 1) < 0 && errno != ENOENT)
		perror("kscale: fuse reply");
}

static void dir_attr(uint64_t ino, struct fuse_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->ino = ino;
	attr->mode = S_IFDIR | 0755;
	attr->nlink = 2;
	attr->blksize = 4096;
}

static void do_init(struct fuse_server *fs, const struct fuse_in_header *in,
		    const struct fuse_init_in *arg)
{
	struct fuse_init_out out = {
		.major = FUSE_KERNEL_VERSION,
		.minor = arg->minor < FUSE_KERNEL_MINOR_VERSION ?
			 arg->minor : FUSE_KERNEL_MINOR_VERSION,
		.max_readahead = arg->max_readahead,
		.max_write = 65536,
		.time_gran = 1,
	};

	if (fs->cfg.parallel_dirops && (arg->flags & FUSE_PARALLEL_DIROPS))
		out.flags |= FUSE_PARALLEL_DIROPS;
	fs->granted = out.flags & FUSE_PARALLEL_DIROPS;
	reply(fs, in->unique, 0, &out, sizeof(out));
}

/*
 * The root's directory `name` ("d007", as fuse_server_start() names them),
 * or -1: "d7", "d007x" or "d4294967303" is no other name for d007.
 */
static int dir_index(const struct fuse_server *fs, const char *name)
{
	char canon[24];
	long i;

	if (name[0] != 'd' || name[1] < '0' || name[1] > '9')
		return -1;
	i = strtol(name + 1, NULL, 10);
	if (i >= fs->cfg.dirs)
		return -1;
	snprintf(canon, sizeof(canon), "d%03ld", i);
	return strcmp(name, canon) ? -1 : (int)i;
}

static void do_lookup(struct fuse_server *fs, const struct fuse_in_header *in,
		      const char *name)
{
	struct timespec io = { fs->cfg.io_us / 1000000,
			       fs->cfg.io_us % 1000000 * 1000 };
	struct fuse_entry_out e;
	int i;

	if (in->nodeid == ROOT_INO) {
		i = dir_index(fs, name);
		if (i < 0) {
			reply(fs, in->unique, -ENOENT, NULL, 0);
			return;
		}
		memset(&e, 0, sizeof(e));
		e.nodeid = DIR_INO(i);
		e.entry_valid = e.attr_valid = ATTR_VALID;
		dir_attr(e.nodeid, &e.attr);
		reply(fs, in->unique, 0, &e, sizeof(e));
		return;
	}
	__atomic_fetch_add(&fs->lookups, 1, __ATOMIC_RELAXED);
	ndelay(fs->cfg.lookup_ns);
	if (fs->cfg.io_us)
		nanosleep(&io, NULL);
	reply(fs, in->unique, -ENOENT, NULL, 0);
}

static void handle(struct fuse_server *fs, const struct fuse_in_header *in)
{
	const void *arg = in + 1;
	struct fuse_attr_out attr;
	struct fuse_open_out open;

	switch (in->opcode) {
	case FUSE_INIT:
		do_init(fs, in, arg);
		break;
	case FUSE_LOOKUP:
		do_lookup(fs, in, arg);
		break;
	case FUSE_GETATTR:
		memset(&attr, 0, sizeof(attr));
		attr.attr_valid = ATTR_VALID;
		dir_attr(in->nodeid, &attr.attr);
		reply(fs, in->unique, 0, &attr, sizeof(attr));
		break;
	case FUSE_OPENDIR:
		memset(&open, 0, sizeof(open));
		reply(fs, in->unique, 0, &open, sizeof(open));
		break;
	case FUSE_RELEASEDIR:
	case FUSE_DESTROY:
		reply(fs, in->unique, 0, NULL, 0);
		break;
	case FUSE_FORGET:
	case FUSE_BATCH_FORGET:
	case FUSE_INTERRUPT:
		break;			/* no reply */
	default:
		reply(fs, in->unique, -ENOSYS, NULL, 0);
	}
}

/* One of the server's threads; the unmount's abort ends it (ENODEV). */
static void *serve(void *arg)
{
	struct fuse_server *fs = arg;
	char *buf = malloc(BUF_SIZE);
	ssize_t n;

	for (;;) {
		n = read(fs->fd, buf, BUF_SIZE);
		if (n < 0 && (errno == EINTR || errno == ENOENT ||
			      errno == EAGAIN))
			continue;
		if (n < (ssize_t)sizeof(struct fuse_in_header))
			break;
		handle(fs, (struct fuse_in_header *)buf);
	}
	free(buf);
	return NULL;
}

/* A slot for the mount point, claimed before the directory exists. */
static int claim_slot(struct fuse_server *fs)
{
	static bool undo_registered;
	const char *tmp;
	int i;

	for (i = 0; i < MAX_MOUNTS && claimed[i]; i++)
		;
	if (i == MAX_MOUNTS)
		return -1;
	if (!undo_registered) {
		fatal_undo(unmount_all);
		undo_registered = true;
	}
	fs->slot = i;
	tmp = getenv("TMPDIR");
	if (snprintf(mounts[i], sizeof(mounts[i]), "%s/kscale-fuse.XXXXXX",
		     tmp && *tmp ? tmp : "/tmp") >= (int)sizeof(mounts[i])) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* claimed first, made in place: a signal never misses the directory */
	claimed[i] = 1;
	if (!mkdtemp(mounts[i])) {
		claimed[i] = 0;
		return -1;
	}
	memcpy(fs->mnt, mounts[i], sizeof(fs->mnt));
	return 0;
}

static void release_slot(struct fuse_server *fs)
{
	claimed[fs->slot] = 0;
	rmdir(fs->mnt);
}

static int fuse_mount(struct fuse_server *fs, char *err, size_t len)
{
	char opts[128];

	fs->fd = open("/dev/fuse", O_RDWR | O_CLOEXEC);
	if (fs->fd < 0) {
		snprintf(err, len, "/dev/fuse: %s", strerror(errno));
		return -1;
	}
	snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,"
		 "group_id=0,default_permissions", fs->fd);
	mounted[fs->slot] = 1;		/* before the mount, for a signal */
	if (mount("kscale", fs->mnt, "fuse.kscale", MS_NOSUID | MS_NODEV,
		  opts)) {
		mounted[fs->slot] = 0;
		snprintf(err, len, "mount FUSE at %s: %s", fs->mnt,
			 strerror(errno));
		close(fs->fd);
		return -1;
	}
	return 0;
}

struct fuse_server *fuse_server_start(const struct fuse_server_config *cfg,
				      char *err, size_t len)
{
	struct fuse_server *fs = calloc(1, sizeof(*fs));
	struct stat st;
	int i;

	fs->cfg = *cfg;
	if (claim_slot(fs)) {
		snprintf(err, len, "FUSE mount point: %s", strerror(errno));
		free(fs);
		return NULL;
	}
	if (fuse_mount(fs, err, len)) {
		release_slot(fs);
		free(fs);
		return NULL;
	}
	fs->threads = calloc(cfg->max_threads, sizeof(*fs->threads));
	for (i = 0; i < cfg->max_threads; i++)
		if (!pthread_create(&fs->threads[i], NULL, serve, fs))
			fs->nr_threads++;
	fs->dir = calloc(cfg->dirs, sizeof(*fs->dir));
	for (i = 0; i < cfg->dirs; i++)
		snprintf(fs->dir[i], sizeof(fs->dir[i]), "%s/d%03d", fs->mnt, i);
	/* the first request waits for INIT, so the flags are settled */
	if (!fs->nr_threads || stat(fs->dir[0], &st)) {
		snprintf(err, len, "%s: %s", fs->dir[0], strerror(errno));
		fuse_server_stop(fs);
		return NULL;
	}
	return fs;
}

const char *fuse_server_dir(const struct fuse_server *fs, int i)
{
	return fs->dir[i];
}

bool fuse_server_parallel_dirops(const struct fuse_server *fs)
{
	return fs->granted;
}

unsigned long fuse_server_lookups(const struct fuse_server *fs)
{
	return __atomic_load_n(&fs->lookups, __ATOMIC_RELAXED);
}

/* The unmount ends the connection: every server thread's read fails. */
void fuse_server_stop(struct fuse_server *fs)
{
	int i;

	umount2(fs->mnt, MNT_DETACH);
	mounted[fs->slot] = 0;
	for (i = 0; i < fs->nr_threads; i++)
		pthread_join(fs->threads[i], NULL);
	close(fs->fd);
	release_slot(fs);
	free(fs->threads);
	free(fs->dir);
	free(fs);
}
