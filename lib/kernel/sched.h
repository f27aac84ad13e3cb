/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The model's scheduler, with the kernel's names (kernel/sched/core.c,
 * include/linux/sched.h, include/linux/preempt.h).
 *
 * A model task is a host thread pinned to its CPU and run SCHED_FIFO at
 * one priority, so the host switches it out only where it blocks or
 * yields: where the kernel would switch a task out.
 *  - schedule() sleeps on the task's state word (futex) until a
 *    wake_up_process(), or polls it (sched_wake_poll); schedule_timeout_ns()
 *    sleeps on it until a timer too;
 *  - at a preemption point (cond_resched(), the end of an operation: the
 *    return to user space, preempt_enable() back to 0 with
 *    sched_preempt_full) a task yields if need_resched();
 *  - never while preempt_count() is non-zero (spinlocks, get_cpu_var()):
 *    BUG: scheduling while atomic.
 * Each CPU's struct rq counts the model tasks runnable there.  A wake-up
 * onto a CPU where a task runs sets that CPU's need_resched; so does the
 * tick (a thread per CPU above the tasks, as the timer interrupt is) once
 * the running task has had its slice with others waiting, or
 * sched_lone_ns alone (the kernel's own threads, which a model CPU has
 * not).
 * on_cpu is true exactly while the task runs on its CPU.
 *
 * Departures: the host still takes the CPU for its interrupts and for a
 * higher-priority thread (the harness's controller), as interrupts take a
 * kernel CPU.  A timer that wakes a task runs as that task raised above
 * the others ("the interrupt"), then queues it behind the running task, or
 * runs it at once where its CPU is idle in the model.  Without CAP_SYS_NICE the
 * tasks stay SCHED_OTHER and the host may switch them out anywhere
 * (sched_fifo is false): the accounting still works, the guarantee not.
 * So do sanitizer builds, whose runtime sleeps inside atomics.
 */
#ifndef KSCALE_KERNEL_SCHED_H
#define KSCALE_KERNEL_SCHED_H

#include <stdint.h>

#include "compiler.h"
#include "lockstat.h"
#include "tsc.h"

#define TASK_RUNNING		0
#define TASK_UNINTERRUPTIBLE	2
#define TASK_ASLEEP		0x100	/* in schedule(): taken off its rq */
#define TASK_WAKING		0x200	/* being queued by its waker */
#define TASK_POLLING		0x400	/* asleep polling it: no futex wake */

/* Host SCHED_FIFO priorities: tasks, the timer "interrupt", the harness. */
#define SCHED_PRIO_TASK		1
#define SCHED_PRIO_IRQ		2
#define SCHED_PRIO_CONTROL	3

struct rq {
	int need_resched;		/* TIF_NEED_RESCHED of the running one */
	uint32_t nr_running;		/* model tasks runnable here */
	int cpu;
	int ticking;			/* the tick's thread started */
	uint64_t slice_start;		/* ns: the running task switched in */
	unsigned long nr_switches;	/* yields and sleeps here */
	unsigned long host_sleeps;	/* sections the host slept in */
	struct task_struct *curr;	/* the task switched in last */
} ____cacheline_aligned;

struct task_struct {
	uint32_t state;			/* the futex word */
	int on_cpu;
	int cpu;
	struct rq *rq;			/* NULL: not a model task */
	unsigned long nvcsw, nivcsw;	/* sleeps, preemptions */
	const int *preempt_count;	/* its __preempt_count */
	const int *relax_yielding;	/* its cpu_relax_yielding */
	uint64_t woken_ns;		/* polling: when its waker came */
} ____cacheline_aligned;

extern __thread struct task_struct current_task;
extern __thread int __preempt_count;
extern uint64_t sched_slice_ns;
extern bool sched_preempt_full;
extern bool sched_fifo;

/*
 * A task that has run sched_lone_ns alone on its CPU gets need_resched
 * from the tick (the host's scheduler; 0, the default: never).  The
 * kernel's own threads want every CPU now and then (vmstat_update()'s
 * kworker, every sysctl_stat_interval = HZ on a CPU whose counters
 * moved, mm/vmstat.c: SCHED_LONE_NS); a model CPU has none, and a spinner
 * whose wake-up never comes would spin for good.  The benches and the
 * torture set it; the tests that play a spin step by step leave it off.
 * Set before the tasks run, and in the simulator's build before
 * sched_set_slice_ns(), which hands it to the engine's tick.
 */
#define SCHED_LONE_NS	1000000000ull
extern uint64_t sched_lone_ns;

/*
 * How a wake-up reaches a task asleep in schedule(), set before the tasks
 * run: false (default), the host's futex (its cost is the host's: tens of
 * us in a VM); true, the sleeper polls its state word, leaving the CPU to
 * any model task runnable there meanwhile, and runs sched_wake_poll_ns
 * after its waker's wake_up_process().  Only the delivery of a wake-up
 * changes (the waker also skips its FUTEX_WAKE); what is woken, and when,
 * is the caller's.  The host sees the poller's CPU busy.
 */
extern bool sched_wake_poll;
extern uint64_t sched_wake_poll_ns;

#ifndef get_current
#define get_current()		(&current_task)
#endif
#define current			get_current()

static inline bool need_resched(void)
{
	struct rq *rq = current->rq;

	return rq && unlikely(READ_ONCE(rq->need_resched));
}

/*
 * smp_store_mb(): the condition re-read after it must not be loaded
 * before the store is visible (a seq_cst store alone lets a later plain
 * load pass it off x86).
 */
static inline void set_current_state(uint32_t state)
{
	if (state != TASK_RUNNING)
		lockstat_sleep_window();
	__atomic_store_n(&current->state, state, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}

static inline void __set_current_state(uint32_t state)
{
	if (state != TASK_RUNNING)
		lockstat_sleep_window();
	WRITE_ONCE(current->state, state);
}

static inline int preempt_count(void)
{
	return __preempt_count;
}

/*
 * Each implementation's switch at a preemption point: p to the back of
 * its CPU's queue, still runnable.  The preemption points below are it.
 */
void preempt_switch(struct task_struct *p);

static inline void preempt_schedule(void)
{
	preempt_switch(current);
}

/*
 * Where the host may sleep (malloc, a first touch, a syscall): a task with
 * preemption disabled must not get here, as in the kernel.
 */
void __might_sleep(const char *file, int line);
#define might_sleep()							\
	do {								\
		if (unlikely(preempt_count()))				\
			__might_sleep(__FILE__, __LINE__);		\
	} while (0)

static inline void preempt_disable(void)
{
	__preempt_count++;
	barrier();
}

static inline void preempt_enable(void)
{
	barrier();
	if (--__preempt_count == 0 && unlikely(sched_preempt_full) &&
	    need_resched())
		preempt_schedule();
}

static inline void preempt_enable_no_resched(void)
{
	barrier();
	__preempt_count--;
}

/*
 * A section that owns its CPU, as the kernel's local_irq_save() (and a
 * get_cpu_var() section working on a per-CPU list) does: preempt_disable(),
 * which is enough under SCHED_FIFO, where the CPU's other tasks cannot run
 * meanwhile.  Without it (sanitizer builds, no CAP_SYS_NICE) the host may
 * run two of one CPU's tasks at once: then, and only then, a per-CPU word
 * taken at the outermost section keeps them apart.  Sections nest.
 */
void __cpu_own(void);
void __cpu_unown(void);

static inline void preempt_disable_cpu(void)
{
	preempt_disable();
	if (unlikely(!sched_fifo))
		__cpu_own();
}

static inline void preempt_enable_cpu(void)
{
	if (unlikely(!sched_fifo))
		__cpu_unown();
	preempt_enable();
}

#define local_irq_save(flags)	do { (void)(flags); preempt_disable_cpu(); } while (0)
#define local_irq_restore(flags) do { (void)(flags); preempt_enable_cpu(); } while (0)

void schedule(void);
/* Sleep until woken or ns have passed (model I/O, a timer). */
void schedule_timeout_ns(uint64_t ns);
int wake_up_process(struct task_struct *p);

static inline void yield(void)
{
	preempt_switch(current);
}

static inline void __cond_resched(void)
{
	preempt_switch(current);
}

/* should_resched(0): never inside a spinlock or get_cpu_var(). */
static inline void cond_resched(void)
{
	if (!preempt_count() && need_resched())
		__cond_resched();
}

/* The calling thread becomes a model task on cpu; 0 or -errno. */
int sched_task_start(int cpu);
/* After the start barrier: the task runs from here on. */
void sched_task_run(void);
/* Leaves its rq and the model's scheduling class. */
void sched_task_exit(void);
/*
 * Moves the running task to cpu (set_cpus_allowed_ptr); a host thread is
 * pinned there.  0 or -errno.
 */
int sched_migrate_task(int cpu);

/*
 * A run queue per possible CPU, once per process, after the first
 * percpu_setup(); probes whether SCHED_FIFO is permitted.
 */
void sched_init(void);
/* The slice, once per run: 0 for CFS's default on nr_cpus. */
void sched_set_slice_ns(uint64_t ns, int nr_cpus);
struct rq *cpu_rq(int cpu);

/* A model scheduler BUG (scheduling while atomic...): said, then abort(). */
void sched_bug(const char *what) __attribute__((noreturn));
/* BUG if preemption is disabled: never switch a task out there. */
void schedule_debug(void);
/*
 * sched_task_start()'s part both implementations share, after
 * kscale_set_cpu(): current set up as rq's CPU's task (its rq, counts,
 * preempt_count), not yet runnable.
 */
void sched_task_init(struct rq *rq);

/* The default slice: sysctl_sched_min_granularity scaled for nr_cpus. */
uint64_t sched_default_slice_ns(int nr_cpus);

/*
 * How many times, over every CPU, a task given the CPU found the one
 * before it asleep in the host inside a section, and gave it back.
 */
unsigned long sched_host_sleeps(void);

#endif
