// SPDX-License-Identifier: GPL-2.0
/*
 * perf record over a host variant's window (perf.h).
 *
 * perf 6.1's --control fifo:CTL,ACK takes "ping", "enable", "disable" and
 * "stop" and acks each; -D -1 starts it with its events off.  Flags that
 * are not about the profile: --no-bpf-event drops the side-band thread
 * that polls for BPF events with a 1 s timeout, which perf otherwise
 * waits out at exit (1 s a run); -B -N skip the build-id pass and cache
 * ($HOME/.debug), which a report of the running kernel does not need.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../sys/clock.h"
#include "fatal.h"
#include "perf.h"
#include "spawn.h"

/* perf's start-up, an ack, its exit or a report: longer is a hang */
#define PERF_TIMEOUT_S	30
#define PERF_FREQ	"4000"
#define PATH_LEN	512

/* NULL unless the bench file has KSCALE_PERF_SYMBOLS: a weak reference */
extern const char *const kscale_perf_symbols[] __attribute__((weak));

static char perf_bin[PATH_LEN];
static bool usable;
/* the named functions this kernel has, and their counters' names */
static const char **symbols;
static char **children_name, **self_name;
static char **children_busy_name, **self_busy_name;
static int nr_symbols;

/* Fixed storage for the undo, which must be async-signal-safe. */
static char dir[PATH_LEN - 16];
static char ctl_path[PATH_LEN], ack_path[PATH_LEN], data_path[PATH_LEN],
	    log_path[PATH_LEN], report_path[PATH_LEN];
static volatile sig_atomic_t dir_made;
static volatile pid_t child;		/* perf record or report, running */

static int ctl_fd = -1, ack_fd = -1;
static bool recording;

static void remove_files(void)
{
	unlink(ctl_path);
	unlink(ack_path);
	unlink(data_path);
	unlink(log_path);
	unlink(report_path);
}

/* A fatal signal, the watchdog, exit. */
static void perf_undo(void)
{
	pid_t pid = child;

	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		child = 0;
	}
	if (dir_made) {
		remove_files();
		rmdir(dir);
		dir_made = 0;
	}
}

/* perf as execvp() would find it; false if PATH has none. */
static bool find_perf(void)
{
	const char *path = getenv("PATH");
	char *copy = strdup(path ? path : "/bin:/usr/bin"), *save = NULL, *d;
	bool found = false;

	for (d = strtok_r(copy, ":", &save); d && !found;
	     d = strtok_r(NULL, ":", &save)) {
		snprintf(perf_bin, sizeof(perf_bin), "%s/perf", d);
		found = !access(perf_bin, X_OK);
	}
	free(copy);
	return found;
}

/* argv, its stdout and stderr to `out`, as the running child. */
static int spawn(char *const argv[], const char *out)
{
	pid_t pid = kscale_spawn(argv, out);

	if (pid > 0)
		child = pid;
	return pid > 0 ? 0 : -1;
}

/* Reap the child: its wait status, or -1 if it had to be killed. */
static int wait_child(void)
{
	double end = now() + PERF_TIMEOUT_S;
	pid_t pid = child, r;
	int status;

	while ((r = waitpid(pid, &status, WNOHANG)) == 0 ||
	       (r < 0 && errno == EINTR)) {
		if (now() > end) {
			kill(pid, SIGKILL);
			r = waitpid(pid, NULL, 0);
			break;
		}
		usleep(1000);
	}
	child = 0;
	return r == pid ? status : -1;
}

/* What perf said in `path`, its first line that says something. */
static const char *perf_said(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[256];

	snprintf(buf, len, "no message");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = '\0';
		if (!*line || !strcmp(line, "Error:") ||
		    !strncmp(line, "Events ", 7) || line[0] == '[')
			continue;
		snprintf(buf, len, "%s", line);
		break;
	}
	if (f)
		fclose(f);
	return buf;
}

static void close_fifos(void)
{
	if (ctl_fd >= 0)
		close(ctl_fd);
	if (ack_fd >= 0)
		close(ack_fd);
	ctl_fd = ack_fd = -1;
	unlink(ctl_path);
	unlink(ack_path);
}

/* New fifos a run, so no command a dead perf left unread reaches the next. */
static int open_fifos(void)
{
	unlink(ctl_path);
	unlink(ack_path);
	if (mkfifo(ctl_path, 0600) || mkfifo(ack_path, 0600))
		return -1;
	/* read-write: the open never waits for perf to open its end */
	ctl_fd = open(ctl_path, O_RDWR | O_CLOEXEC);
	ack_fd = open(ack_path, O_RDWR | O_CLOEXEC);
	return ctl_fd < 0 || ack_fd < 0 ? -1 : 0;
}

/* One command to perf record, and its ack. */
static int control(struct kscale_run *run, const char *cmd)
{
	struct pollfd p = { .fd = ack_fd, .events = POLLIN };
	double end = now() + PERF_TIMEOUT_S;
	ssize_t n = strlen(cmd);
	char buf[256];
	int status;

	if (child <= 0)
		return kscale_fail(run, "perf record is not running");
	if (write(ctl_fd, cmd, n) != n)
		return kscale_fail(run, "perf: %s: %s", ctl_path,
				   strerror(errno));
	while (now() < end) {
		if (poll(&p, 1, 10) > 0 && read(ack_fd, buf, sizeof(buf)) > 0)
			return 0;
		if (waitpid(child, &status, WNOHANG) == child) {
			child = 0;
			return kscale_fail(run, "perf record exited (status "
					   "%#x): %s", status,
					   perf_said(log_path, buf,
						     sizeof(buf)));
		}
	}
	return kscale_fail(run, "perf record did not ack %.*s in %d s",
			   (int)n - 1, cmd, PERF_TIMEOUT_S);
}

int perf_start(struct kscale_run *run, const int *cpus, int nr)
{
	char list[4096], ctl[2 * PATH_LEN + 8];
	char *argv[] = { perf_bin, "record", "-e", "cpu-clock", "-F",
			 PERF_FREQ, "-g", "-C", list, "-D", "-1", "--control",
			 ctl, "-B", "-N", "--no-bpf-event", "-o", data_path,
			 NULL };
	size_t off = 0;
	int i, j;

	/* each CPU once: threads may share them */
	list[0] = '\0';
	for (i = 0; i < nr && off < sizeof(list); i++) {
		for (j = 0; j < i && cpus[j] != cpus[i]; j++)
			;
		if (j == i)
			off += snprintf(list + off, sizeof(list) - off, "%s%d",
					off ? "," : "", cpus[i]);
	}
	snprintf(ctl, sizeof(ctl), "fifo:%s,%s", ctl_path, ack_path);
	unlink(data_path);
	if (open_fifos() || spawn(argv, log_path)) {
		kscale_fail(run, "perf: %s: %s", dir, strerror(errno));
		close_fifos();
		return -1;
	}
	recording = true;
	/* perf has opened its events and reads the fifo: warm-up may start */
	if (control(run, "ping\n")) {
		perf_finish(run);
		return -1;
	}
	return 0;
}

int perf_enable(struct kscale_run *run)
{
	return control(run, "enable\n");
}

int perf_disable(struct kscale_run *run)
{
	return control(run, "disable\n");
}

/* perf record ends, its data written; 0, or -1 with the run failed. */
static int stop_recording(struct kscale_run *run)
{
	char buf[256];
	int status;

	recording = false;
	if (!run->failed)
		control(run, "stop\n");
	/* control() reaps a perf that died: child is then 0, never killed */
	if (child > 0 && run->failed)
		kill(child, SIGKILL);
	status = child > 0 ? wait_child() : -1;
	close_fifos();
	if (run->failed)
		return -1;
	if (status)
		return kscale_fail(run, "perf record failed (status %#x): %s",
				   status, perf_said(log_path, buf,
						     sizeof(buf)));
	return 0;
}

/*
 * Lines "  2.00%  | 0.71%  |fio  |[k] do_syscall_64", shares of every
 * sample: each named function's summed over comms, and the idle task's
 * (swapper) self share.
 */
static void parse_report(FILE *f, double *children, double *self,
			 double *idle)
{
	char *line = NULL, *p, *comm, *name;
	size_t len = 0, n;
	double c, s;
	int i;

	*idle = 0;
	while (getline(&line, &len, f) > 0) {
		c = strtod(line, &p);
		if (*p != '%' || !(p = strchr(p, '|')))
			continue;
		s = strtod(p + 1, &p);
		if (*p != '%' || !(p = strchr(p, '|')))
			continue;
		comm = p + 1 + strspn(p + 1, " ");
		if (!(p = strchr(comm, '|')))
			continue;
		/* the idle task: perf's "swapper", or the kernel's swapper/N */
		if (!strncmp(comm, "swapper", 7) && strchr(" /|", comm[7]))
			*idle += s;
		if (strncmp(p + 1, "[k] ", 4))
			continue;
		name = p + 5;
		name[strcspn(name, " \t\n")] = '\0';
		for (i = 0; i < nr_symbols; i++) {
			n = strlen(symbols[i]);
			/* a compiler's clone or cold part is the function too */
			if (!strncmp(name, symbols[i], n) &&
			    (!name[n] || name[n] == '.')) {
				children[i] += c;
				self[i] += s;
			}
		}
	}
	free(line);
}

static void report(struct kscale_run *run)
{
	char *argv[] = { perf_bin, "report", "-i", data_path, "--children",
			 "--stdio", "-q", "--call-graph=none", "-F",
			 "overhead_children,overhead,comm,sym", "-t", "|",
			 "--no-demangle", NULL };
	double *children = calloc(nr_symbols, sizeof(double));
	double *self = calloc(nr_symbols, sizeof(double));
	double idle, busy;
	char buf[256];
	FILE *f;
	int i;

	if (spawn(argv, report_path)) {
		kscale_fail(run, "perf report: %s", strerror(errno));
	} else if (wait_child()) {
		kscale_fail(run, "perf report failed: %s",
			    perf_said(report_path, buf, sizeof(buf)));
	} else if (!(f = fopen(report_path, "r"))) {
		kscale_fail(run, "%s: %s", report_path, strerror(errno));
	} else {
		parse_report(f, children, self, &idle);
		fclose(f);
		busy = idle < 100 ? 100 - idle : 0;
		for (i = 0; i < nr_symbols; i++) {
			kscale_set_counter(run, children_name[i], children[i]);
			kscale_set_counter(run, self_name[i], self[i]);
			kscale_set_counter(run, children_busy_name[i], busy ?
					   100 * children[i] / busy : 0);
			kscale_set_counter(run, self_busy_name[i], busy ?
					   100 * self[i] / busy : 0);
		}
	}
	free(children);
	free(self);
}

void perf_finish(struct kscale_run *run)
{
	if (!recording)
		return;
	if (!stop_recording(run))
		report(run);
	remove_files();
}

bool perf_usable(void)
{
	return usable;
}

static int read_int(const char *path)
{
	FILE *f = fopen(path, "r");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/*
 * Which named functions this kernel has (a clone, "name.isra.0", counts):
 * how many, or -1 if /proc/kallsyms hides every address (all 0), as perf
 * would see it.
 */
static int kernel_symbols(const char *const *named, bool *present)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	unsigned long long addr, any = 0;
	char name[256];
	int i, nr = 0;
	size_t n;

	if (!f)
		return -1;
	while (fscanf(f, "%llx %*s %255s%*[^\n]", &addr, name) == 2) {
		any |= addr;
		for (i = 0; named[i]; i++) {
			n = strlen(named[i]);
			if (!present[i] && !strncmp(name, named[i], n) &&
			    (!name[n] || name[n] == '.')) {
				present[i] = true;
				nr++;
			}
		}
	}
	fclose(f);
	return any ? nr : -1;
}

/* A recording started and stopped on `cpu`: 0, or -1 with why not. */
static int probe(int cpu, char *why, size_t len)
{
	struct kscale_run run = { 0 };
	const char *tmp = getenv("TMPDIR");

	if (!find_perf()) {
		snprintf(why, len, "unavailable: perf not found in PATH");
		return -1;
	}
	fatal_undo(perf_undo);
	snprintf(dir, sizeof(dir), "%s/kscale-perf.XXXXXX",
		 tmp && *tmp ? tmp : "/tmp");
	dir_made = 1;		/* before it exists: a signal finds it */
	if (!mkdtemp(dir)) {
		dir_made = 0;
		snprintf(why, len, "unavailable: %s: %s", dir,
			 strerror(errno));
		return -1;
	}
	snprintf(ctl_path, sizeof(ctl_path), "%s/ctl", dir);
	snprintf(ack_path, sizeof(ack_path), "%s/ack", dir);
	snprintf(data_path, sizeof(data_path), "%s/perf.data", dir);
	snprintf(log_path, sizeof(log_path), "%s/record.log", dir);
	snprintf(report_path, sizeof(report_path), "%s/report.txt", dir);
	if (perf_start(&run, &cpu, 1) || stop_recording(&run)) {
		remove_files();
		snprintf(why, len, "unavailable: %s (perf_event_paranoid=%d%s)",
			 run.error,
			 read_int("/proc/sys/kernel/perf_event_paranoid"),
			 geteuid() ? ", not root" : "");
		return -1;
	}
	remove_files();
	return 0;
}

/* The context: how the profile was taken and how to read it. */
static void add_context(const char *const *named, const bool *present)
{
	char fns[1024] = "", missing[1024] = "";
	size_t off = 0, moff = 0;
	int i;

	for (i = 0; named[i]; i++) {
		if (present[i] && off < sizeof(fns))
			off += snprintf(fns + off, sizeof(fns) - off, "%s%s",
					off ? ", " : "", named[i]);
		else if (!present[i] && moff < sizeof(missing))
			moff += snprintf(missing + moff, sizeof(missing) - moff,
					 "%s%s", moff ? ", " : "", named[i]);
	}
	kscale_add_context("perf", "perf record -e cpu-clock -F " PERF_FREQ
			   " -g -C <the run's CPUs>, over each host variant "
			   "run's window only (events on at its first "
			   "snapshot, off at its last); cpu-clock is a "
			   "software event, an hrtimer sampled on-CPU (no "
			   "PMU here): time a task sleeps is not seen. "
			   "kernel_<function>_children_pct and _self_pct are "
			   "shares of every sample on those CPUs, idle "
			   "included; _children_busy_pct and _self_busy_pct "
			   "of the samples not of the idle task (swapper), "
			   "as perf report shows a workload's; 0 is no "
			   "sample. Functions: %s%s%s",
			   fns, moff ? "; not in this kernel, no counter: " :
			   "", missing);
}

void perf_init(const struct kscale_model *m, const struct kscale_options *o,
	       int cpu)
{
	const char *const *named = kscale_perf_symbols;
	bool host = false, *present;
	char why[512];
	int i, n = 0, found;

	for (i = 0; i < kscale_variants.nr; i++)
		host |= kscale_variants.rows[i].host && o->variant_on[i];
	while (named && named[n])
		n++;
	if (!o->perf) {
		kscale_add_context("perf", "off (--perf=0)");
		return;
	}
	if (!host || !n) {
		kscale_add_context("perf", "not used: %s", !host ?
				   "no host variant runs" :
				   "the model names no kernel function");
		return;
	}
	present = calloc(n, sizeof(bool));
	found = kernel_symbols(named, present);
	if (found < 0)
		snprintf(why, sizeof(why), "unavailable: /proc/kallsyms hides "
			 "kernel addresses (kptr_restrict=%d, "
			 "perf_event_paranoid=%d%s)",
			 read_int("/proc/sys/kernel/kptr_restrict"),
			 read_int("/proc/sys/kernel/perf_event_paranoid"),
			 geteuid() ? ", not root" : "");
	else if (!found)
		snprintf(why, sizeof(why), "not used: no function %s names is "
			 "in this kernel's /proc/kallsyms", m->name);
	else if (!probe(cpu, why, sizeof(why)))
		usable = true;
	if (!usable) {
		fprintf(stderr, "%s: perf: %s; no kernel_* counters\n",
			m->name, why);
		kscale_add_context("perf", "%s", why);
		free(present);
		return;
	}
	symbols = calloc(n, sizeof(char *));
	children_name = calloc(n, sizeof(char *));
	self_name = calloc(n, sizeof(char *));
	children_busy_name = calloc(n, sizeof(char *));
	self_busy_name = calloc(n, sizeof(char *));
	for (i = 0; i < n; i++) {
		if (!present[i])
			continue;
		symbols[nr_symbols] = named[i];
		if (asprintf(&children_name[nr_symbols],
			     "kernel_%s_children_pct", symbols[nr_symbols]) < 0 ||
		    asprintf(&self_name[nr_symbols], "kernel_%s_self_pct",
			     symbols[nr_symbols]) < 0 ||
		    asprintf(&children_busy_name[nr_symbols],
			     "kernel_%s_children_busy_pct",
			     symbols[nr_symbols]) < 0 ||
		    asprintf(&self_busy_name[nr_symbols],
			     "kernel_%s_self_busy_pct",
			     symbols[nr_symbols]) < 0)
			abort();
		nr_symbols++;
	}
	add_context(named, present);
	free(present);
}
