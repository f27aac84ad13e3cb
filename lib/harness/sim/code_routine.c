// SPDX-License-Identifier: GPL-2.0
/*
 * The code whose basic blocks set what a block costs (code_here.c): built
 * twice, as the host runs it (in here's measures) and with the model's
 * code, its blocks counted (instrument.h force-included: the other name).
 *
 * It is the models' plain code, with no event in it: a hash table of
 * names with chains (the dcache, the inode hash), a compare of names a
 * byte at a time, a list walk, a switch, calls through a pointer.
 */
#include "code_here.h"

#ifdef KSCALE_SIM_INSTRUMENT_H
#define sim_code_routine	sim_code_routine_counted
#endif

#define NAMES		256
#define NAME_LEN	12
#define BUCKETS		64

struct entry {
	struct entry *next;
	unsigned int hash;
	unsigned char name[NAME_LEN];
	long count;
};

static struct entry entries[NAMES];
static struct entry *table[BUCKETS];

static unsigned int name_hash(const unsigned char *name)
{
	unsigned int h = 0;
	int i;

	for (i = 0; i < NAME_LEN && name[i]; i++)
		h = (h + name[i]) * 2654435761u;
	return h;
}

static int name_cmp(const unsigned char *a, const unsigned char *b)
{
	int i;

	for (i = 0; i < NAME_LEN; i++) {
		if (a[i] != b[i])
			return a[i] - b[i];
		if (!a[i])
			break;
	}
	return 0;
}

static long op_count(struct entry *e, long x)
{
	return e->count += x & 7;
}

static long op_reset(struct entry *e, long x)
{
	e->count = x & 1;
	return e->count;
}

static long (*const ops[])(struct entry *, long) = { op_count, op_reset };

static struct entry *lookup(const unsigned char *name)
{
	unsigned int h = name_hash(name);
	struct entry *e;

	for (e = table[h % BUCKETS]; e; e = e->next)
		if (e->hash == h && !name_cmp(e->name, name))
			return e;
	return NULL;
}

long sim_code_routine(long rounds)
{
	unsigned char name[NAME_LEN];
	unsigned long x = 1;
	long r, sum = 0;
	struct entry *e;
	int i, j;

	for (i = 0; i < BUCKETS; i++)
		table[i] = NULL;
	for (i = 0; i < NAMES; i++) {
		e = &entries[i];
		for (j = 0; j < NAME_LEN - 1; j++)
			e->name[j] = 'a' + (i >> (j % 4 * 2)) % 4 + j % 3;
		e->name[NAME_LEN - 1] = 0;
		e->hash = name_hash(e->name);
		e->count = 0;
		e->next = table[e->hash % BUCKETS];
		table[e->hash % BUCKETS] = e;
	}
	for (r = 0; r < rounds; r++) {
		x = x * 6364136223846793005ull + 1442695040888963407ull;
		for (j = 0; j < NAME_LEN; j++)
			name[j] = entries[(x >> 33) % NAMES].name[j];
		if ((x >> 20) % 4 == 0)
			name[(x >> 24) % (NAME_LEN - 1)] = 'z';
		e = lookup(name);
		switch ((x >> 40) % 3) {
		case 0:
			sum += e ? ops[(x >> 50) % 2](e, (long)x) : -1;
			break;
		case 1:
			sum += e ? e->count : 0;
			break;
		default:
			sum ^= (long)(x >> 3);
			break;
		}
	}
	return sum;
}
