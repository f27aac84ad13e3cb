// SPDX-License-Identifier: GPL-2.0
/* Flag tables: parsing, defaults, --help and --list (flags.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flags.h"

#define HELP_COLUMN	23	/* where --help's docs start */

/*
 * arg's value if arg is --NAME ("" when bare), else NULL; '_' in name
 * is '-' in arg.
 */
static const char *flag_value(const struct kscale_flag *f, const char *arg)
{
	const char *n = f->name;

	if (f->short_name && arg[0] == '-' && arg[1] == f->short_name &&
	    !arg[2])
		return "";
	if (strncmp(arg, "--", 2))
		return NULL;
	for (arg += 2; *n; n++, arg++)
		if (*arg != (*n == '_' ? '-' : *n))
			return NULL;
	if (*arg == '=')
		return arg + 1;
	return *arg ? NULL : "";
}

/* --NAME as typed, for messages. */
static const char *flag_spelling(const struct kscale_flag *f, char *buf,
				 size_t len)
{
	size_t i;

	snprintf(buf, len, "--%s", f->name);
	for (i = 2; buf[i]; i++)
		if (buf[i] == '_')
			buf[i] = '-';
	return buf;
}

static void range_text(const struct kscale_flag *f, char *buf, size_t len)
{
	snprintf(buf, len, "%s %.15g %s %.15g", f->min_open ? "above" : "from",
		 f->min, f->min_open ? "and at most" : "to", f->max);
}

/* "a, b or c" */
static void choices_text(const struct kscale_flag *f, char *buf, size_t len)
{
	size_t off = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; f->choices[i] && off < len; i++)
		off += snprintf(buf + off, len - off, "%s%s",
				!i ? "" : f->choices[i + 1] ? ", " : " or ",
				f->choices[i]);
}

static bool in_range(const struct kscale_flag *f, double v)
{
	return (f->min_open ? v > f->min : v >= f->min) && v <= f->max;
}

/* "0.5", "2s", "250ms" (seconds); a plain number for DOUBLE. */
static int parse_double(const struct kscale_flag *f, const char *s,
			double *out)
{
	double v, scale = 1.0;
	char *end;

	errno = 0;
	v = strtod(s, &end);
	if (f->type == KSCALE_FLAG_T_SECONDS && !strcmp(end, "ms"))
		scale = 1e-3;
	else if (f->type == KSCALE_FLAG_T_SECONDS && !strcmp(end, "s"))
		;
	else if (*end)
		return -1;
	v *= scale;
	if (!*s || errno || !isfinite(v) || !in_range(f, v))
		return -1;
	*out = v;
	return 0;
}

static int parse_long(const struct kscale_flag *f, const char *s, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (!*s || *end || errno || !in_range(f, v))
		return -1;
	*out = v;
	return 0;
}

static void store_long(const struct kscale_flag *f, long v)
{
	if (f->size == sizeof(int))
		*(int *)f->value = (int)v;
	else
		*(long *)f->value = v;
}

void kscale_list_free(struct knob_values *kv)
{
	while (kv->nr > 0)
		free(kv->value[--kv->nr]);
	free(kv->value);
	kv->value = NULL;
}

/*
 * An empty item ("1,,2", ",1", "1,", "") or a value twice is refused,
 * not skipped: it is a slip of the keyboard, and the run would silently
 * lack the value the user meant, or run one twice.
 */
int kscale_list_split(const char *s, struct knob_values *kv, char *why,
		      size_t len)
{
	const char *end;
	int i;

	kscale_list_free(kv);
	kv->value = calloc(strlen(s) + 1, sizeof(char *));
	if (!kv->value)
		abort();
	for (;;) {
		end = strchrnul(s, ',');
		if (end == s) {
			snprintf(why, len, "an empty item in the list");
			goto fail;
		}
		for (i = 0; i < kv->nr; i++)
			if (!strncmp(kv->value[i], s, end - s) &&
			    !kv->value[i][end - s]) {
				snprintf(why, len, "%s given twice",
					 kv->value[i]);
				goto fail;
			}
		kv->value[kv->nr++] = strndup(s, end - s);
		if (!*end)
			return 0;
		s = end + 1;
	}
fail:
	kscale_list_free(kv);
	return -1;
}

static int bool_syntax(const char *name, const char *v, char *err,
		       size_t len)
{
	snprintf(err, len, "%s=%s: a boolean is %s alone (1) or %s=0|1",
		 name, v, name, name);
	return -1;
}

/* Each value of the list is checked; a refusal names the value. */
static int parse_list(const struct kscale_flag *f, const char *name,
		      const char *v, char *err, size_t len)
{
	struct knob_values *kv = f->value;
	char why[160];
	int i;

	if (kscale_list_split(v, kv, why, sizeof(why))) {
		snprintf(err, len, "%s=%s: %s", name, v, why);
		return -1;
	}
	for (i = 0; f->check && i < kv->nr; i++) {
		if (!f->check(kv->value[i], why, sizeof(why)))
			continue;
		if (f->bare)
			bool_syntax(name, kv->value[i], err, len);
		else
			snprintf(err, len, "%s=%s: %s", name, kv->value[i],
				 why);
		kscale_list_free(kv);
		return -1;
	}
	return 0;
}

/* v into f's value; -1 with "--NAME=V: why" in err. */
static int parse_value(const struct kscale_flag *f, const char *name,
		       const char *v, char *err, size_t len)
{
	char range[96];
	double d;
	long l;
	int i;

	switch (f->type) {
	case KSCALE_FLAG_T_SECONDS:
	case KSCALE_FLAG_T_DOUBLE:
		if (parse_double(f, v, &d))
			break;
		*(double *)f->value = d;
		return 0;
	case KSCALE_FLAG_T_INT:
		if (parse_long(f, v, &l))
			break;
		store_long(f, l);
		return 0;
	case KSCALE_FLAG_T_BOOL:
		if (strcmp(v, "0") && strcmp(v, "1"))
			return bool_syntax(name, v, err, len);
		*(bool *)f->value = *v == '1';
		return 0;
	case KSCALE_FLAG_T_STRING:
		*(const char **)f->value = v;
		return 0;
	case KSCALE_FLAG_T_CHOICE:
		for (i = 0; f->choices[i]; i++)
			if (!strcmp(v, f->choices[i])) {
				*(int *)f->value = i;
				return 0;
			}
		choices_text(f, range, sizeof(range));
		snprintf(err, len, "%s=%s: expected %s", name, v, range);
		return -1;
	case KSCALE_FLAG_T_LIST:
		return parse_list(f, name, v, err, len);
	}
	range_text(f, range, sizeof(range));
	if (f->type == KSCALE_FLAG_T_SECONDS)
		snprintf(err, len, "%s=%s: expected seconds %s (e.g. 0.5, 2s, "
			 "250ms)", name, v, range);
	else
		snprintf(err, len, "%s=%s: expected a %s %s", name, v,
			 f->type == KSCALE_FLAG_T_INT ? "whole number" :
			 "number", range);
	return -1;
}

int kscale_flags_defaults(const struct kscale_flag *flags, int nr, char *err,
			  size_t len)
{
	char name[96];
	int i;

	for (i = 0; i < nr; i++)
		if (flags[i].def && flags[i].value &&
		    parse_value(&flags[i], flag_spelling(&flags[i], name,
							 sizeof(name)),
				flags[i].def, err, len))
			return -1;
	return 0;
}

int kscale_flags_parse(const struct kscale_flag *flags, int nr,
		       const char *arg, char *err, size_t len)
{
	const struct kscale_flag *f;
	const char *v = NULL;
	char name[96];
	int i;

	for (i = 0; i < nr && !(v = flag_value(&flags[i], arg)); i++)
		;
	if (i == nr)
		return 0;
	f = &flags[i];
	flag_spelling(f, name, sizeof(name));
	if (!*v && !strchr(arg, '=')) {
		/* bare: a boolean's 1, else a value is missing */
		if (f->type == KSCALE_FLAG_T_BOOL || f->bare)
			v = "1";
		else {
			snprintf(err, len, "%s needs a value (%s%s)", name,
				 name, f->metavar);
			return -1;
		}
	}
	if (!*v && f->type != KSCALE_FLAG_T_BOOL) {
		snprintf(err, len, "%s= needs a value (%s%s)", name, name,
			 f->metavar);
		return -1;
	}
	return parse_value(f, name, v, err, len) ? -1 : 1;
}

/* The default as --help and --list say it, or NULL. */
static const char *stated_default(const struct kscale_flag *f)
{
	return f->def ? f->def : f->def_doc;
}

void kscale_flags_help(FILE *out, const struct kscale_flag *flags, int nr)
{
	const struct kscale_flag *f;
	const char *doc, *nl;
	char name[96];
	int i, col;

	for (i = 0; i < nr; i++) {
		f = &flags[i];
		flag_spelling(f, name, sizeof(name));
		col = fprintf(out, "  %s%s%s",
			      f->short_name ? (char[]){ '-', f->short_name,
							',', ' ', 0 } : "",
			      name, f->metavar);
		if (col >= HELP_COLUMN) {
			fputc('\n', out);
			col = 0;
		}
		for (doc = f->doc;; doc = nl + 1) {
			fprintf(out, "%*s", HELP_COLUMN - col, "");
			nl = strchrnul(doc, '\n');
			fprintf(out, "%.*s", (int)(nl - doc), doc);
			col = 0;
			if (!*nl)
				break;
			fputc('\n', out);
		}
		if (stated_default(f))
			fprintf(out, " (default %s)", stated_default(f));
		fputc('\n', out);
	}
}

void kscale_flags_list(FILE *out, const char *kind,
		       const struct kscale_flag *flags, int nr)
{
	const struct kscale_flag *f;
	const char *doc, *def;
	int i;

	for (i = 0; i < nr; i++) {
		f = &flags[i];
		def = stated_default(f);
		if (!def)
			def = f->type == KSCALE_FLAG_T_STRING ? "none" : "0";
		fprintf(out, "  %-8s %-12s ", kind, f->name);
		/* one line: the doc's line breaks are spaces */
		for (doc = f->doc; *doc; doc++)
			fputc(*doc == '\n' ? ' ' : *doc, out);
		fprintf(out, " (default %s)\n", def);
	}
}
