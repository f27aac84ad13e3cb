/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sched_task_run() and sched_task_exit() (sched.h), the same in both
 * implementations of the model scheduler: included once by each, sched.c
 * and lib/sim/sched.c, after its own steps, which these are made of:
 * switched_in(), switched_out(), deactivate_task() and task_left(), what
 * else leaving the model's class takes.
 */
#ifndef KSCALE_KERNEL_SCHED_TASK_H
#define KSCALE_KERNEL_SCHED_TASK_H

void sched_task_run(void)
{
	switched_in(current);
}

void sched_task_exit(void)
{
	struct task_struct *p = current;

	if (!p->rq)
		return;
	switched_out(p);
	deactivate_task(p->rq);
	p->rq = NULL;
	task_left(p);
}

#endif
