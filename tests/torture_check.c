// SPDX-License-Identifier: GPL-2.0
/*
 * A torture model that is broken on purpose, so tests/test_torture.sh
 * can show that the framework catches each kind of failure: a lock that
 * lets two holders in, a count a quiet point finds wrong, a lost
 * wake-up.  "sound" is the same model unbroken: it must pass.  Two claim
 * a posted bug: "posted" has it (the unlocked one), and must end in the
 * expected FAILURE; "posted_missed" is sound, so torture missed it.
 */
#include <stdlib.h>

#include "../lib/kernel/delay.h"
#include "../lib/kernel/sched.h"
#include "../lib/kernel/spinlock.h"
#include "../torture/torture.h"

enum broken { SOUND, UNLOCKED, BAD_COUNT, LOST_WAKEUP, POSTED, POSTED_MISSED,
	      NR_BROKEN };

static const enum broken hows[NR_BROKEN] = {
	SOUND, UNLOCKED, BAD_COUNT, LOST_WAKEUP, POSTED, POSTED_MISSED,
};

static const struct kscale_variant broken_rows[] = {
	{ "sound", "a correct spinlock", &hows[SOUND], .kernel = "2.6.26" },
	{ "unlocked", "no lock at all", &hows[UNLOCKED], .kernel = "2.6.26" },
	{ "bad_count", "a count the quiet check finds wrong",
	  &hows[BAD_COUNT], .kernel = "2.6.26" },
	{ "lost_wakeup", "a sleeper never woken", &hows[LOST_WAKEUP],
	  .kernel = "2.6.26" },
	{ "posted", "a posted bug torture must catch", &hows[POSTED],
	  .kernel = "2.6.26" },
	{ "posted_missed", "a posted bug the variant does not have",
	  &hows[POSTED_MISSED], .kernel = "2.6.26" },
#ifdef BROKEN_ROW
	{ "typo", "a row whose implementation was left out",
	  .kernel = "2.6.26" },
#endif
};

static const struct kscale_variant_table broken_variants = {
	broken_rows, sizeof(broken_rows) / sizeof(broken_rows[0]),
};

static struct {
	enum broken how;
	spinlock_t lock;
	int owner;
	unsigned long count, taken;
} b;

static int broken_init(const void *variant, int nr_tasks)
{
	b.how = *(const enum broken *)variant;
	spin_lock_init(&b.lock);
	b.owner = -1;
	b.count = b.taken = 0;
	return 0;
}

static void broken_op(struct torture_task *t)
{
	bool skip = (b.how == UNLOCKED || b.how == POSTED) &&
		    torture_random() % 64 == 0;

	if (b.how == LOST_WAKEUP && t->id == 0 && t->ops == 1000) {
		/* asleep with nobody to wake it */
		set_current_state(TASK_UNINTERRUPTIBLE);
		schedule();
	}
	if (!skip)
		spin_lock(&b.lock);
	if (READ_ONCE(b.owner) != -1)
		torture_fail("task %d took the lock task %d holds", t->id,
			     READ_ONCE(b.owner));
	WRITE_ONCE(b.owner, t->id);
	ndelay(torture_random() % 200);
	b.count += b.how == BAD_COUNT && torture_random() % 4096 == 0 ? 2 : 1;
	b.taken++;
	WRITE_ONCE(b.owner, -1);
	if (!skip)
		spin_unlock(&b.lock);
}

static void broken_quiet(void)
{
	if (b.count != b.taken)
		torture_fail("count %lu, taken %lu", b.count, b.taken);
}

static const char *broken_posted_bug(const void *variant)
{
	enum broken how = *(const enum broken *)variant;

	return how == POSTED || how == POSTED_MISSED ?
	       "spin_lock() skipped now and then" : NULL;
}

static const struct torture_model broken_torture = {
	.name		= "broken",
	.variants	= &broken_variants,
	.init		= broken_init,
	.op		= broken_op,
	.quiet		= broken_quiet,
	.posted_bug	= broken_posted_bug,
};
torture_model_register(broken_torture);
