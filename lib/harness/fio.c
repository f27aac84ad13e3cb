// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fatal.h"
#include "fio.h"
#include "spawn.h"
#include "window_run.h"

/* The running fio, killed if the bench dies (async-signal-safe). */
static volatile pid_t running;

/* Reaped too: a fio still in a system call could write after the unmount. */
static void fio_undo(void)
{
	pid_t pid = running;

	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		running = 0;
	}
}

int fio_layout(const char *path, size_t size, char *err, size_t len)
{
	const size_t chunk = 1 << 20;
	char *buf = calloc(1, chunk);
	size_t off;
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	for (off = 0; fd >= 0 && buf && off < size; off += chunk)
		if (pwrite(fd, buf, size - off < chunk ? size - off : chunk,
			   (off_t)off) < 0)
			break;
	free(buf);
	if (fd < 0 || !buf || off < size || fsync(fd)) {
		snprintf(err, len, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

int fio_file(struct kscale_run *run, struct fio_job *job, const char *dir)
{
	struct stat st;
	char err[300];

	snprintf(job->filename, sizeof(job->filename), "%s/fio.%zu", dir,
		 job->size);
	if (!stat(job->filename, &st) && (size_t)st.st_size == job->size)
		return 0;
	if (fio_layout(job->filename, job->size, err, sizeof(err)))
		return kscale_fail(run, "%s", err);
	return 0;
}

int fio_spawn(const struct fio_job *job, struct fio_proc *p, char *err,
	      size_t len)
{
	static unsigned long generation;
	static bool undo_registered;
	char file[450], rw[32], bs[32], size[32], mix[32], jobs[32],
	     runtime[48], ramp[48], cpus[4200], out[500];
	char *argv[] = { "fio", "--name=kscale", file, rw, bs, size, mix, jobs,
			 "--thread", "--ioengine=psync", "--invalidate=0",
			 "--time_based", runtime, ramp, cpus,
			 "--cpus_allowed_policy=split", "--output-format=json",
			 out, NULL };
	if (!undo_registered) {
		fatal_undo(fio_undo);
		undo_registered = true;
	}
	snprintf(file, sizeof(file), "--filename=%s", job->filename);
	snprintf(rw, sizeof(rw), "--rw=%s", job->rw);
	snprintf(bs, sizeof(bs), "--bs=%zu", job->bs);
	snprintf(size, sizeof(size), "--size=%zu", job->size);
	snprintf(mix, sizeof(mix), "--rwmixread=%u", job->rwmixread);
	snprintf(jobs, sizeof(jobs), "--numjobs=%d", job->nr_jobs);
	snprintf(runtime, sizeof(runtime), "--runtime=%ldms",
		 (long)(job->runtime * 1000));
	snprintf(ramp, sizeof(ramp), "--ramp_time=%ldms",
		 (long)(job->ramp * 1000));
	snprintf(cpus, sizeof(cpus), "--cpus_allowed=%s", job->cpus);
	snprintf(p->json, sizeof(p->json), "%s.%d.%lu.json", job->filename,
		 (int)getpid(), ++generation);
	snprintf(out, sizeof(out), "--output=%s", p->json);
	p->pid = kscale_spawn(argv, NULL);
	if (p->pid < 0) {
		snprintf(err, len, "cannot run fio: %s (install it: sudo "
			 "apt-get install fio)", strerror(errno));
		return -1;
	}
	running = p->pid;
	return 0;
}

int fio_start(struct kscale_run *run, struct fio_job *job, struct fio_proc *p)
{
	char err[256];
	size_t off = 0;
	int i;

	for (i = 0; i < run->nr_threads && off < sizeof(job->cpus); i++)
		off += snprintf(job->cpus + off, sizeof(job->cpus) - off,
				"%s%d", i ? "," : "", run->threads[i].cpu);
	job->nr_jobs = run->nr_threads;
	job->runtime = kscale_window_seconds(run);
	job->ramp = kscale_warmup_seconds(run);
	if (fio_spawn(job, p, err, sizeof(err)))
		return kscale_fail(run, "%s", err);
	return 0;
}

struct fio_side {
	double io_bytes, bw_bytes, iops, total_ios;
};

/* The number after the next `"<key>" : ` from p, or -1. */
static double fio_json_number(const char *p, const char *key)
{
	char k[32];

	snprintf(k, sizeof(k), "\"%s\" : ", key);
	p = strstr(p, k);
	return p ? strtod(p + strlen(k), NULL) : -1;
}

/* The next `"<side>" : {` object's counters, from fio's JSON output. */
static const char *fio_json_side(const char *p, const char *side,
				 struct fio_side *s)
{
	char key[32];

	snprintf(key, sizeof(key), "\"%s\" : {", side);
	p = strstr(p, key);
	if (!p)
		return NULL;
	s->io_bytes = fio_json_number(p, "io_bytes");
	s->bw_bytes = fio_json_number(p, "bw_bytes");
	s->iops = fio_json_number(p, "iops");
	s->total_ios = fio_json_number(p, "total_ios");
	if (s->io_bytes < 0 || s->bw_bytes < 0 || s->iops < 0 ||
	    s->total_ios < 0)
		return NULL;
	return p + strlen(key);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0;

	if (f && getdelim(&buf, &len, '\0', f) < 0) {
		free(buf);
		buf = NULL;
	}
	if (f)
		fclose(f);
	return buf;
}

int fio_wait(struct fio_proc *p, struct fio_totals *t, char *err, size_t len)
{
	struct fio_side r, w;
	double io, iops, cpu;
	char *json, *s;
	int status;

	memset(t, 0, sizeof(*t));
	t->io_min = t->cpu_min = t->iops_min = -1;
	if (waitpid(p->pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status)) {
		running = 0;
		unlink(p->json);
		snprintf(err, len, "fio failed (status %d)", status);
		return -1;
	}
	running = 0;
	json = slurp(p->json);
	unlink(p->json);
	s = json ? strstr(json, "\"jobs\"") : NULL;
	while (s && (s = (char *)fio_json_side(s, "read", &r)) &&
	       (s = (char *)fio_json_side(s, "write", &w))) {
		t->jobs++;
		t->read_bw += r.bw_bytes;
		t->write_bw += w.bw_bytes;
		iops = r.iops + w.iops;
		t->iops += iops;
		min_max_add(iops, &t->iops_min, &t->iops_max);
		t->ios += r.total_ios + w.total_ios;
		io = r.io_bytes + w.io_bytes;
		min_max_add(io, &t->io_min, &t->io_max);
		/* the job's CPU time, as a share of its equal runtime */
		cpu = fio_json_number(s, "usr_cpu") +
		      fio_json_number(s, "sys_cpu");
		min_max_add(cpu, &t->cpu_min, &t->cpu_max);
		t->cpu += cpu;
		t->ctx += fio_json_number(s, "ctx");
	}
	free(json);
	if (!t->jobs) {
		snprintf(err, len, "fio: no job in its output");
		return -1;
	}
	return 0;
}

void fio_finish(struct kscale_run *run, struct fio_proc *p)
{
	struct fio_totals t;
	char err[256];

	if (fio_wait(p, &t, err, sizeof(err))) {
		kscale_fail(run, "%s", err);
		return;
	}
	if (t.jobs != run->nr_threads) {
		kscale_fail(run, "fio: %d jobs, expected %d", t.jobs,
			    run->nr_threads);
		return;
	}
	kscale_set_counter(run, "read_MBps", t.read_bw / (1 << 20));
	kscale_set_counter(run, "write_MBps", t.write_bw / (1 << 20));
	kscale_set_counter(run, "total_MBps",
			   (t.read_bw + t.write_bw) / (1 << 20));
	kscale_set_counter(run, "iops", t.iops);
	kscale_set_counter(run, "ops_per_sec", t.iops);
	kscale_set_counter(run, "ops_per_sec_per_cpu",
			   t.iops / kscale_nr_distinct_cpus(run));
	kscale_set_counter(run, "fairness", min_over_max(t.io_min, t.io_max));
	set_thread_spread(run, t.iops_min, t.iops / t.jobs, t.iops_max);
	kscale_set_counter(run, "cpu_fairness",
			   min_over_max(t.cpu_min, t.cpu_max));
	kscale_set_counter(run, "switches_per_io", t.ios ? t.ctx / t.ios : 0);
	kscale_set_counter(run, "cpu_busy_pct",
			   t.cpu / kscale_nr_distinct_cpus(run));
}
