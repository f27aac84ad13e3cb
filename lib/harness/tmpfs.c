// SPDX-License-Identifier: GPL-2.0
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fatal.h"
#include "tmpfs.h"

static char base[256];
static struct tmpfs_dirs *cleanup_dirs;

/*
 * A fatal signal: unmount and rmdir (async-signal-safe); the mounts are
 * empty once detached, and so are the directories.  Without mounts the
 * files stay; the normal exit below removes them.
 */
static void tmpfs_dirs_undo(void)
{
	int i;

	for (i = 0; cleanup_dirs && i < cleanup_dirs->nr; i++) {
		umount2(cleanup_dirs->path[i], MNT_DETACH);
		rmdir(cleanup_dirs->path[i]);
	}
	if (base[0])
		rmdir(base);
}

static void tmpfs_dirs_remove(void)
{
	char cmd[512];
	int i;

	for (i = 0; cleanup_dirs && i < cleanup_dirs->nr; i++)
		umount2(cleanup_dirs->path[i], MNT_DETACH);
	/* the directories hold only the benchmark's own small files */
	snprintf(cmd, sizeof(cmd), "rm -rf -- '%s'", base);
	if (base[0] && system(cmd))
		fprintf(stderr, "kscale: could not remove %s\n", base);
}

/*
 * A SIGKILLed bench undoes nothing: its mounts die with its namespace but
 * its directories stay.  They carry its pid; once that pid is gone, the
 * next bench removes them.
 */
static void reap_dead(const char *root)
{
	DIR *dir = opendir(root);
	struct dirent *e;
	char cmd[600], *end;
	long pid;

	while (dir && (e = readdir(dir))) {
		if (strncmp(e->d_name, "kscale.", 7))
			continue;
		pid = strtol(e->d_name + 7, &end, 10);
		if (end == e->d_name + 7 || *end != '.' || pid <= 0 ||
		    !kill(pid, 0) || errno != ESRCH)
			continue;
		snprintf(cmd, sizeof(cmd), "rm -rf -- '%s/%s'", root,
			 e->d_name);
		if (system(cmd))
			fprintf(stderr, "kscale: could not remove %s/%s\n",
				root, e->d_name);
	}
	if (dir)
		closedir(dir);
}

static bool private_namespace(void)
{
	return !unshare(CLONE_NEWNS) &&
	       !mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL);
}

static int mount_all(struct tmpfs_dirs *d)
{
	int i;

	for (i = 0; i < d->nr; i++)
		if (mount("kscale", d->path[i], "tmpfs", 0, NULL))
			return -1;
	return 0;
}

int tmpfs_dirs_create(struct tmpfs_dirs *d, int nr, char *err, size_t len)
{
	const char *root = access("/dev/shm", W_OK) ? "/tmp" : "/dev/shm";
	int i, why = 0;

	d->nr = nr;
	reap_dead(root);
	/* the undo first: a signal may come as soon as base exists */
	snprintf(base, sizeof(base), "%s/kscale.%d.XXXXXX", root,
		 (int)getpid());
	atexit(tmpfs_dirs_remove);
	fatal_undo(tmpfs_dirs_undo);
	if (!mkdtemp(base)) {
		snprintf(err, len, "cannot create a directory in %s: %s",
			 root, strerror(errno));
		base[0] = '\0';
		return -1;
	}
	for (i = 0; i < nr; i++)
		snprintf(d->path[i], sizeof(d->path[i]), "%s/m%d", base, i);
	cleanup_dirs = d;
	for (i = 0; i < nr; i++)
		mkdir(d->path[i], 0700);
	d->mounted = private_namespace() && !mount_all(d);
	if (!d->mounted)
		why = errno;
	snprintf(d->how, sizeof(d->how), d->mounted ?
		 "%d tmpfs mounts in a private mount namespace" :
		 "%d directories on one mount (%s; cannot mount: %s)", nr,
		 root, strerror(why));
	return 0;
}
