// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"

/*
 * Signals stay blocked until the child's handlers are reset: none may run
 * the bench's fatal-exit undo in the child.  An exec failure reaches the
 * parent through a close-on-exec pipe.
 */
pid_t kscale_spawn(char *const argv[], const char *out)
{
	pid_t parent = getpid(), pid = -1;
	int fd = -1, pipefd[2], e = 0, sig;
	sigset_t all, old;

	if (out) {
		fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0)
			return -1;
	}
	if (pipe2(pipefd, O_CLOEXEC)) {
		e = errno;
		goto out;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pid = fork();
	if (!pid) {
		for (sig = 1; sig < NSIG; sig++)
			signal(sig, SIG_DFL);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		if (fd >= 0) {
			dup2(fd, STDOUT_FILENO);
			dup2(fd, STDERR_FILENO);
		}
		sigemptyset(&all);
		sigprocmask(SIG_SETMASK, &all, NULL);
		execvp(argv[0], argv);
		e = errno;
		if (write(pipefd[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	if (pid < 0)
		e = errno;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	close(pipefd[1]);
	/* nothing to read: the exec closed the pipe */
	if (pid > 0 && read(pipefd[0], &e, sizeof(e)) == sizeof(e))
		waitpid(pid, NULL, 0);
	else if (pid > 0)
		e = 0;
	close(pipefd[0]);
out:
	if (fd >= 0)
		close(fd);
	if (e) {
		errno = e;
		return -1;
	}
	return pid;
}
