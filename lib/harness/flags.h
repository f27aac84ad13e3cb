/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A program's flags, each declared once in a table (perf's OPT_* tables,
 * Google Benchmark's DEFINE_*): the table parses the command line, sets
 * the defaults and prints --help and --list, so that none can drift.
 *
 * One syntax: --name=VALUE; a boolean is --name alone (1) or --name=0|1.
 * A flag's name has '-' between words; '_' in a name (a model knob's)
 * is spelled '-' on the command line.
 */
#ifndef KSCALE_FLAGS_H
#define KSCALE_FLAGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A comma list's values, e.g. a knob's "1,2". */
struct knob_values {
	char **value;
	int nr;
};

enum kscale_flag_type {
	KSCALE_FLAG_T_SECONDS,	/* double: "0.5", "2s", "250ms" */
	KSCALE_FLAG_T_DOUBLE,	/* double */
	KSCALE_FLAG_T_INT,	/* int or long: a whole number */
	KSCALE_FLAG_T_BOOL,	/* bool */
	KSCALE_FLAG_T_STRING,	/* const char *, not empty */
	KSCALE_FLAG_T_CHOICE,	/* int: the index in choices[] */
	KSCALE_FLAG_T_LIST,	/* struct knob_values: distinct values */
};

struct kscale_flag {
	const char *name;
	enum kscale_flag_type type;
	const char *metavar;		/* --help's "=LIST" after the name */
	void *value;			/* where the flag stores */
	size_t size;			/* INT: sizeof(*value) */
	/* Parsed into *value before the command line; NULL leaves it. */
	const char *def;
	const char *def_doc;		/* the default said, if def is NULL */
	const char *doc;		/* '\n' between --help's lines */
	double min, max;		/* SECONDS, DOUBLE, INT */
	bool min_open;			/* min itself is out of range */
	char short_name;		/* -h as well as --help */
	const char *const *choices;	/* CHOICE: NULL-terminated */
	/* LIST: one value; 0, or -1 with a reason in err. */
	int (*check)(const char *value, char *err, size_t len);
	bool bare;			/* LIST: --name alone is =1 */
};

/* _ptr, which must point to a _type (a constant: a static table may use it). */
#define KSCALE_FLAG_PTR(_type, _ptr)	(1 ? (_ptr) : (_type *)0)

/* A range: [min, max], or (min, max] with KSCALE_ABOVE. */
#define KSCALE_FROM(_min, _max)	.min = (_min), .max = (_max)
#define KSCALE_ABOVE(_min, _max) \
	.min = (_min), .max = (_max), .min_open = true

#define KSCALE_FLAG_SECONDS(_name, _metavar, _ptr, _range, _def, _doc)	\
	{ .name = (_name), .type = KSCALE_FLAG_T_SECONDS,		\
	  .metavar = "=" _metavar, .value = KSCALE_FLAG_PTR(double, _ptr),	\
	  _range, .def = (_def), .doc = (_doc) }

#define KSCALE_FLAG_DOUBLE(_name, _metavar, _ptr, _range, _def, _doc)	\
	{ .name = (_name), .type = KSCALE_FLAG_T_DOUBLE,		\
	  .metavar = "=" _metavar, .value = KSCALE_FLAG_PTR(double, _ptr),	\
	  _range, .def = (_def), .doc = (_doc) }

/* An int or a long; _def_doc says the default a zero stands for. */
#define KSCALE_FLAG_INT(_name, _metavar, _ptr, _range, _def_doc, _doc)	\
	{ .name = (_name), .type = KSCALE_FLAG_T_INT,			\
	  .metavar = "=" _metavar, .value = (_ptr),			\
	  .size = sizeof(*(_ptr)) +					\
		  0 * sizeof(char[sizeof(*(_ptr)) == sizeof(int) ||	\
				  sizeof(*(_ptr)) == sizeof(long) ? 1 : -1]), \
	  _range, .def_doc = (_def_doc), .doc = (_doc) }

#define KSCALE_FLAG_BOOL(_name, _ptr, _def, _doc)			\
	{ .name = (_name), .type = KSCALE_FLAG_T_BOOL,			\
	  .metavar = "[=0|1]", .value = KSCALE_FLAG_PTR(bool, _ptr),		\
	  .def = (_def), .doc = (_doc) }

/* A boolean that is an action (--help, --list): no default to show. */
#define KSCALE_FLAG_ACTION(_name, _short, _ptr, _doc)			\
	{ .name = (_name), .type = KSCALE_FLAG_T_BOOL, .metavar = "",	\
	  .value = KSCALE_FLAG_PTR(bool, _ptr), .short_name = (_short),		\
	  .doc = (_doc) }

#define KSCALE_FLAG_STRING(_name, _metavar, _ptr, _def, _def_doc, _doc)	\
	{ .name = (_name), .type = KSCALE_FLAG_T_STRING,		\
	  .metavar = "=" _metavar, .value = KSCALE_FLAG_PTR(const char *, _ptr),	\
	  .def = (_def), .def_doc = (_def_doc), .doc = (_doc) }

#define KSCALE_FLAG_CHOICE(_name, _metavar, _ptr, _choices, _def, _doc)	\
	{ .name = (_name), .type = KSCALE_FLAG_T_CHOICE,		\
	  .metavar = "=" _metavar, .value = KSCALE_FLAG_PTR(int, _ptr),		\
	  .choices = (_choices), .def = (_def), .doc = (_doc) }

/* *value from each flag's def. */
int kscale_flags_defaults(const struct kscale_flag *flags, int nr, char *err,
			  size_t len);
/*
 * arg, if it is one of the flags: 1 when it is and parsed, 0 when it is
 * none of them, -1 with the reason in err (a line, the flag first).
 */
int kscale_flags_parse(const struct kscale_flag *flags, int nr,
		       const char *arg, char *err, size_t len);
/* --help's lines of the flags: the name and metavar, then the doc. */
void kscale_flags_help(FILE *f, const struct kscale_flag *flags, int nr);
/* --list's "  KIND     NAME         DOC (default DEF)", a line a flag. */
void kscale_flags_list(FILE *f, const char *kind,
		       const struct kscale_flag *flags, int nr);

/*
 * s = "a,b" into kv's "a", "b", replacing kv's values; -1 with the
 * reason in why (an empty item, a value twice), kv then empty.
 */
int kscale_list_split(const char *s, struct knob_values *kv, char *why,
		      size_t len);
void kscale_list_free(struct knob_values *kv);

#endif
