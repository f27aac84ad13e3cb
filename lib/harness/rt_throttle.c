// SPDX-License-Identifier: GPL-2.0
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fatal.h"
#include "rt_throttle.h"

#define RT_RUNTIME	"/proc/sys/kernel/sched_rt_runtime_us"

static char saved[24];		/* the host's value while lifted */
static volatile sig_atomic_t lifted;
static bool installed;

static int read_runtime(char *buf, size_t len)
{
	int fd = open(RT_RUNTIME, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, len - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* Async-signal-safe: open, write, close. */
static int write_runtime(const char *value)
{
	int fd = open(RT_RUNTIME, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, value, strlen(value));
	close(fd);
	return n == (ssize_t)strlen(value) ? 0 : -1;
}

void rt_throttle_restore(void)
{
	if (lifted && !write_runtime(saved))
		lifted = 0;
}

int rt_throttle_lift(void)
{
	char now[24];

	if (lifted)
		return 0;
	if (read_runtime(now, sizeof(now)))
		return -1;
	if (!strcmp(now, "-1"))
		return 0;
	if (!installed) {
		fatal_undo(rt_throttle_restore);
		installed = true;
	}
	memcpy(saved, now, sizeof(saved));
	lifted = 1;
	if (write_runtime("-1")) {
		lifted = 0;
		return -1;
	}
	return 0;
}

const char *rt_throttle_note(void)
{
	static char note[160];
	char now[24];

	if (read_runtime(now, sizeof(now)))
		return "unknown (no " RT_RUNTIME ")";
	if (!strcmp(now, "-1"))
		return "off";
	if (!access(RT_RUNTIME, W_OK))
		snprintf(note, sizeof(note), "lifted during model runs "
			 "(host: %s us a second)", now);
	else
		snprintf(note, sizeof(note), "on (%s us a second): model "
			 "tasks may all stop for the rest of each second", now);
	return note;
}
