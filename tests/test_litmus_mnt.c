// SPDX-License-Identifier: GPL-2.0
/*
 * A memory-order litmus test of today's mount write path
 * (models/mnt_writers/upstream.c), its own code run under x86-TSO by the
 * litmus engine (litmus.h): a writer's mnt_get_write_access() on CPU 0
 * against mnt_make_readonly() on CPU 1, every interleaving and every
 * store-buffer flush of their shared accesses.
 *
 * The pattern is store buffering: the writer increments its CPU's
 * mnt_writers, then reads MNT_WRITE_HOLD; the remount sets
 * MNT_WRITE_HOLD, then sums mnt_writers.  With each side's smp_mb()
 * between its store and its load, one of them sees the other's store: the
 * writer waits for the hold and then sees MNT_READONLY (-EROFS), or the
 * remount sees the writer (-EBUSY).  Without either barrier both loads can
 * pass the stores in the buffers, and a writer gets write access to a
 * mount that has just been made read-only.  On x86 hardware the window is
 * a few instructions wide and a race test seldom hits it; here every run
 * finds it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "../lib/kernel/compiler.h"
#include "../lib/kernel/percpu.h"
#include "helpers.h"
#include "litmus.h"

/* The model's shared accesses, steps of the litmus engine. */
#undef READ_ONCE
#undef WRITE_ONCE
#undef smp_mb
#undef smp_rmb
#undef smp_wmb
#undef this_cpu_add
#define READ_ONCE(x)		LITMUS_READ_ONCE(x)
#define WRITE_ONCE(x, v)	LITMUS_WRITE_ONCE(x, v)
#define smp_mb()		litmus_fence()
/* x86-TSO keeps loads in order and stores in order: compiler barriers */
#define smp_rmb()		barrier()
#define smp_wmb()		barrier()
#define cpu_relax()		litmus_spin()
/* one instruction, not locked: the store waits in the buffer */
#define this_cpu_add(lval, i)	litmus_add(&(lval), (i), sizeof(lval), false)

/* A copy of the model's table under a name of its own. */
#define mnt_writers_upstream	litmus_mnt_writers_upstream
#include "../models/mnt_writers/upstream.c"

struct remount_race {
	struct vfsmount *mnt;
	int want_write;		/* the writer's mnt_want_write() */
	int make_readonly;	/* the remount's mnt_make_readonly() */
};

static void setup(void *arg)
{
	struct remount_race *r = arg;

	kscale_set_cpu(0);
	r->mnt = alloc_vfsmnt("litmus");
	r->want_write = r->make_readonly = 1;
}

static void writer(void *arg)
{
	struct remount_race *r = arg;

	r->want_write = mnt_get_write_access(r->mnt);
}

static void remount(void *arg)
{
	struct remount_race *r = arg;

	r->make_readonly = mnt_make_readonly(r->mnt);
}

static const char *check(void *arg)
{
	struct remount_race *r = arg;
	int writers = mnt_writers(r->mnt);

	if (r->want_write == 0 && r->make_readonly == 0)
		return "a writer inside a mount made read-only";
	if (r->want_write != 0 && r->want_write != -EROFS)
		return "mnt_want_write() failed other than -EROFS";
	if (r->make_readonly != 0 && r->make_readonly != -EBUSY)
		return "mnt_make_readonly() failed other than -EBUSY";
	if (writers != !r->want_write)
		return "mnt_writers() is not the writers inside";
	if (r->mnt->mnt_flags & MNT_WRITE_HOLD)
		return "MNT_WRITE_HOLD left set";
	return NULL;
}

static void teardown(void *arg)
{
	struct remount_race *r = arg;

	/* back to one reference and no writer, as free_vfsmnt() wants */
	if (!r->want_write)
		per_cpu_ptr(real_mount(r->mnt)->mnt_pcp, 0)->mnt_writers--;
	free_vfsmnt(r->mnt);
}

static void test_remount_against_a_writer_under_tso(void **state)
{
	static struct remount_race race;
	static const struct litmus l = {
		.name = "mnt_want_write/mnt_make_readonly",
		.nr_threads = 2,
		.tso = true,
		.arg = &race,
		.setup = setup,
		.thread = { writer, remount },
		.cpu = { 0, 1 },
		.check = check,
		.teardown = teardown,
	};
	struct litmus_result r;

	litmus_assert_allowed(&l, &r);
	/* both outcomes of the race, and the writer held up by the remount */
	assert_true(r.executions > 10);
}

int main(void)
{
	static struct topology machine;
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_remount_against_a_writer_under_tso),
	};

	test_machine(&machine, 2, 1);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
