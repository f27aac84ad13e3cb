/* SPDX-License-Identifier: GPL-2.0 */
/* Doubly linked lists and hash lists, as include/linux/list.h. */
#ifndef KSCALE_KERNEL_LIST_H
#define KSCALE_KERNEL_LIST_H

#include "compiler.h"

struct list_head {
	struct list_head *next, *prev;
};

#define LIST_HEAD_INIT(name)	{ &(name), &(name) }
#define container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))
#define list_entry(ptr, type, member)	container_of(ptr, type, member)
#define list_first_entry(ptr, type, member) \
	list_entry((ptr)->next, type, member)
#define list_last_entry(ptr, type, member) \
	list_entry((ptr)->prev, type, member)
#define list_next_entry(pos, member) \
	list_entry((pos)->member.next, __typeof__(*(pos)), member)

#define list_for_each_entry(pos, head, member)				\
	for (pos = list_first_entry(head, __typeof__(*pos), member);	\
	     &pos->member != (head);					\
	     pos = list_next_entry(pos, member))

/* Safe against removal of pos: n is loaded before the body runs. */
#define list_for_each_entry_safe(pos, n, head, member)			\
	for (pos = list_first_entry(head, __typeof__(*pos), member),	\
		n = list_next_entry(pos, member);			\
	     &pos->member != (head);					\
	     pos = n, n = list_next_entry(n, member))

/* As the kernel's: next, which list_empty() reads unlocked, by WRITE_ONCE. */
static inline void INIT_LIST_HEAD(struct list_head *list)
{
	WRITE_ONCE(list->next, list);
	list->prev = list;
}

static inline void __list_add(struct list_head *new, struct list_head *prev,
			      struct list_head *next)
{
	next->prev = new;
	new->next = next;
	new->prev = prev;
	WRITE_ONCE(prev->next, new);
}

static inline void list_add(struct list_head *new, struct list_head *head)
{
	__list_add(new, head, head->next);
}

static inline void list_add_tail(struct list_head *new, struct list_head *head)
{
	__list_add(new, head->prev, head);
}

static inline void __list_del_entry(struct list_head *entry)
{
	entry->next->prev = entry->prev;
	WRITE_ONCE(entry->prev->next, entry->next);
}

/* The kernel poisons the pointers (LIST_POISON1/2); NULL faults as well. */
static inline void list_del(struct list_head *entry)
{
	__list_del_entry(entry);
	entry->next = NULL;
	entry->prev = NULL;
}

static inline void list_del_init(struct list_head *entry)
{
	__list_del_entry(entry);
	INIT_LIST_HEAD(entry);
}

/* Never empty on the way: a reader without the list's lock sees it listed. */
static inline void list_move(struct list_head *entry, struct list_head *head)
{
	__list_del_entry(entry);
	list_add(entry, head);
}

static inline void list_move_tail(struct list_head *entry,
				  struct list_head *head)
{
	__list_del_entry(entry);
	list_add_tail(entry, head);
}

/*
 * list_cut_before (4.18): move the entries of head before entry (none if
 * entry is the first) onto list, which need not be initialised.
 */
static inline void list_cut_before(struct list_head *list,
				   struct list_head *head,
				   struct list_head *entry)
{
	if (head->next == entry) {
		INIT_LIST_HEAD(list);
		return;
	}
	list->next = head->next;
	list->next->prev = list;
	list->prev = entry->prev;
	list->prev->next = list;
	WRITE_ONCE(head->next, entry);
	entry->prev = head;
}

static inline bool list_empty(const struct list_head *head)
{
	return READ_ONCE(head->next) == head;
}

static inline bool list_is_singular(const struct list_head *head)
{
	return !list_empty(head) && (head->next == head->prev);
}

/* Hash lists whose readers walk without locks: publish with a release. */
struct hlist_node {
	struct hlist_node *next, **pprev;
};

struct hlist_head {
	struct hlist_node *first;
};

static inline bool hlist_unhashed(const struct hlist_node *h)
{
	return !READ_ONCE(h->pprev);
}

static inline void hlist_add_head_rcu(struct hlist_node *n,
				      struct hlist_head *h)
{
	struct hlist_node *first = h->first;

	n->next = first;
	WRITE_ONCE(n->pprev, &h->first);
	if (first)
		WRITE_ONCE(first->pprev, &n->next);
	__atomic_store_n(&h->first, n, __ATOMIC_RELEASE);
}

/* Readers still on n may walk on: n->next is left as it was. */
static inline void hlist_del_init_rcu(struct hlist_node *n)
{
	struct hlist_node *next = n->next;

	if (hlist_unhashed(n))
		return;
	WRITE_ONCE(*n->pprev, next);
	if (next)
		WRITE_ONCE(next->pprev, n->pprev);
	WRITE_ONCE(n->pprev, NULL);
}

#define hlist_first_rcu(h)	__atomic_load_n(&(h)->first, __ATOMIC_ACQUIRE)
#define hlist_next_rcu(n)	__atomic_load_n(&(n)->next, __ATOMIC_ACQUIRE)

#endif
