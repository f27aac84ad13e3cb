// SPDX-License-Identifier: GPL-2.0
/*
 * The v4.6 XFS/DAX path of models/rwsem/xfs_dax.c on its own, through a
 * lock vector that records each lock operation (over v4.6's rwsem) and
 * the inode's i_dio_count at that moment: a read takes the IOLOCK
 * shared, then the ILOCK shared inside the dio count; a write takes the
 * IOLOCK in its iolock_write mode, the ILOCK exclusive for the timestamp
 * before the I/O is counted, then the read's map; each lock is released
 * in reverse, the IOLOCK last, the count back to 0, the data copied.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../models/rwsem/rwsem.h"
#include "../models/rwsem/xfs_dax.h"
#include "helpers.h"

#define BS	4096
#define SIZE	(16 * BS)

struct lock_event {
	const struct rwsem_storage *sem;
	char op;			/* r, w: taken; R, W: released */
	int dio_count;
};

static struct topology machine;
static struct optimistic_spin_node main_node;
static struct xfs_dax_file file;
static struct lock_event events[16];
static int nr_events;

static void record(struct rwsem_storage *sem, char op)
{
	assert_true(nr_events < (int)(sizeof(events) / sizeof(events[0])));
	events[nr_events++] = (struct lock_event){
		sem, op, atomic_read(&file.ip->i_dio_count) };
}

static void rec_init(struct rwsem_storage *sem)
{
	rwsem_v4_6_ops.init(sem);
}

static void rec_down_read(struct rwsem_storage *sem)
{
	rwsem_v4_6_ops.down_read(sem);
	record(sem, 'r');
}

static void rec_up_read(struct rwsem_storage *sem)
{
	record(sem, 'R');
	rwsem_v4_6_ops.up_read(sem);
}

static void rec_down_write(struct rwsem_storage *sem)
{
	rwsem_v4_6_ops.down_write(sem);
	record(sem, 'w');
}

static void rec_up_write(struct rwsem_storage *sem)
{
	record(sem, 'W');
	rwsem_v4_6_ops.up_write(sem);
}

static const struct rwsem_ops recording_ops = {
	.name		= "recording",
	.init		= rec_init,
	.down_read	= rec_down_read,
	.up_read	= rec_up_read,
	.down_write	= rec_down_write,
	.up_write	= rec_up_write,
};

static int file_setup(void **state)
{
	memset(&file, 0, sizeof(file));
	file.ops = &recording_ops;
	file.size = SIZE;
	file.bs = BS;
	file.iolock_write = XFS_IOLOCK_SHARED;
	file.ip = xfs_inode_alloc();
	file.data = calloc(1, SIZE);
	assert_non_null(file.ip);
	assert_non_null(file.data);
	xfs_inode_init_locks(file.ip, file.ops);
	nr_events = 0;
	return 0;
}

static int file_teardown(void **state)
{
	free(file.ip);
	free(file.data);
	return 0;
}

/* The events of one I/O: "IOLOCK r" etc., each with its dio count. */
static void assert_events(const char *const *want, const int *dio, int nr)
{
	int i;

	assert_int_equal(nr_events, nr);
	for (i = 0; i < nr; i++) {
		const struct rwsem_storage *sem = want[i][0] == 'O' ?
			&file.ip->i_iolock.mr_lock : &file.ip->i_lock.mr_lock;

		assert_ptr_equal(events[i].sem, sem);
		assert_int_equal(events[i].op, want[i][1]);
		assert_int_equal(events[i].dio_count, dio[i]);
	}
}

static void assert_unlocked(void)
{
	struct rwsem_state st;

	assert_int_equal(atomic_read(&file.ip->i_dio_count), 0);
	rwsem_v4_6_state(&file.ip->i_iolock.mr_lock, &st);
	assert_true(st.unlocked);
	rwsem_v4_6_state(&file.ip->i_lock.mr_lock, &st);
	assert_true(st.unlocked);
}

static void test_read(void **state)
{
	static const char *const want[] = { "Or", "Ir", "IR", "OR" };
	static const int dio[] = { 0, 1, 1, 0 };
	char buf[BS];

	memset(file.data + 3 * BS, 0x5a, BS);
	memset(buf, 0, sizeof(buf));
	xfs_dax_io(&file, buf, 3 * BS, false);
	assert_events(want, dio, 4);
	assert_unlocked();
	assert_int_equal(buf[0], 0x5a);
	assert_int_equal(buf[BS - 1], 0x5a);
	assert_int_equal(file.i_mtime, 0);
}

static void test_write(unsigned int iolock, char take, char release)
{
	const char want_take[] = { 'O', take, 0 };
	const char want_release[] = { 'O', release, 0 };
	const char *const want[] = {
		want_take, "Iw", "IW", "Ir", "IR", want_release };
	static const int dio[] = { 0, 0, 0, 1, 1, 0 };
	char buf[BS];

	file.iolock_write = iolock;
	memset(buf, 0xa5, sizeof(buf));
	xfs_dax_io(&file, buf, 5 * BS, true);
	assert_events(want, dio, 6);
	assert_unlocked();
	assert_int_equal((unsigned char)file.data[5 * BS], 0xa5);
	assert_int_equal((unsigned char)file.data[6 * BS - 1], 0xa5);
	assert_int_equal(file.data[6 * BS], 0);
	assert_int_equal(file.i_mtime, 1);
}

/* 4.6's aligned DAX write: the IOLOCK shared. */
static void test_write_iolock_shared(void **state)
{
	test_write(XFS_IOLOCK_SHARED, 'r', 'R');
}

/* --iolock-write=exclusive: today's buffered write. */
static void test_write_iolock_exclusive(void **state)
{
	test_write(XFS_IOLOCK_EXCL, 'w', 'W');
}

static int setup(void **state)
{
	test_machine(&machine, 8, 2);
	osq_thread_init(&main_node, 0);
	return 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_read, file_setup,
						file_teardown),
		cmocka_unit_test_setup_teardown(test_write_iolock_shared,
						file_setup, file_teardown),
		cmocka_unit_test_setup_teardown(test_write_iolock_exclusive,
						file_setup, file_teardown),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
