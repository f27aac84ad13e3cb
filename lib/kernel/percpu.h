/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Per-CPU data and "this CPU" with the kernel's names
 * (include/linux/percpu-defs.h, include/linux/smp.h).
 *
 * Every model thread is pinned, so smp_processor_id() is a per-thread
 * variable set when the thread is placed (and again if the workload
 * migrates it).  get_cpu_var() disables preemption until put_cpu_var(),
 * as the kernel's does; the model scheduler (sched.h) keeps the task on
 * its CPU meanwhile.  Each CPU's slot sits on its own pair of cache lines
 * (the adjacent-line prefetcher fetches pairs); the slots of one node's
 * CPUs share one mapping on that node when nodes are real (not emulated):
 * one mapping per slot would take 512 of max_map_count per object.
 *
 * this_cpu_add() is one non-locked x86 instruction, as the kernel's
 * %gs-relative op: atomic against preemption on its own CPU, not against
 * other CPUs.  Sanitizer builds use relaxed atomics so races stay visible.
 */
#ifndef KSCALE_KERNEL_PERCPU_H
#define KSCALE_KERNEL_PERCPU_H

#include "compiler.h"
#include "sched.h"

struct topology;

#define __percpu

extern __thread int kscale_this_cpu;
extern __thread int kscale_this_node;
extern const struct topology *kscale_topology;

#define smp_processor_id()	kscale_this_cpu
#define numa_node_id()		kscale_this_node

/* Probes each node's binding: a refusal unbinds memory, t says why. */
void percpu_setup(struct topology *t);
void kscale_set_cpu(int cpu);
int cpu_to_node(int cpu);

void *kzalloc_node(size_t size, int node);
void kfree_node(void *ptr);

struct percpu_area {
	void **node_block;	/* [nr_node_ids]: each node's CPUs' slots */
	void *ptr[];		/* [nr_cpu_ids] */
};

void *__alloc_percpu(size_t size);
void free_percpu(void __percpu *ptr);

static inline void *__per_cpu_ptr(void __percpu *ptr, int cpu)
{
	return ((struct percpu_area *)ptr)->ptr[cpu];
}

#define alloc_percpu(type)	((type __percpu *)__alloc_percpu(sizeof(type)))
#define per_cpu_ptr(ptr, cpu)	((__typeof__(ptr))__per_cpu_ptr((ptr), (cpu)))
#define this_cpu_ptr(ptr)	per_cpu_ptr((ptr), smp_processor_id())
#define per_cpu(var, cpu)	(*per_cpu_ptr((var), (cpu)))
#define get_cpu_var(var)	(*({ preempt_disable(); this_cpu_ptr(var); }))
#define put_cpu_var(var)	do { (void)(var); preempt_enable(); } while (0)

int kscale_nr_possible_cpus(void);
int kscale_possible_cpu(int i);

/* In ascending CPU order, as the kernel's cpumask walks are. */
#define for_each_possible_cpu(cpu)					\
	for (int __i = 0; __i < kscale_nr_possible_cpus() &&		\
	     ((cpu) = kscale_possible_cpu(__i), 1); __i++)

int kscale_nr_online_nodes(void);
int kscale_online_node(int i);
extern int nr_node_ids;

/* Nodes holding allowed CPUs, ascending (emulated ones under emulation). */
#define for_each_online_node(node)					\
	for (int __n = 0; __n < kscale_nr_online_nodes() &&		\
	     ((node) = kscale_online_node(__n), 1); __n++)

#if (defined(__x86_64__) || defined(__i386__)) && !defined(KSCALE_SANITIZE)
static inline void __this_cpu_add_int(int *p, int i)
{
	__asm__ __volatile__("addl %1, %0" : "+m"(*p) : "ri"(i));
}
#else
static inline void __this_cpu_add_int(int *p, int i)
{
	__atomic_fetch_add(p, i, __ATOMIC_RELAXED);
}
#endif

#define this_cpu_add(lval, i)	__this_cpu_add_int(&(lval), (i))
#define this_cpu_inc(lval)	this_cpu_add(lval, 1)
#define this_cpu_dec(lval)	this_cpu_add(lval, -1)

#endif
