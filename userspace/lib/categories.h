/* SPDX-License-Identifier: MIT */
/*
 * categories.h - the categories of a trace (include/ctrace.h's
 * CTRACE_CATEGORY): which ones --categories selects, and the small
 * numbers that stand for their names on the way from a uprobe to the
 * trace's "cat" field.
 *
 * A site's category travels as its uprobe's BPF cookie's top byte (bits
 * 48-55, above any user address; the site's address stays below), which
 * the BPF program copies into the record's flags (bits 8-15). 0: not
 * known: no BPF cookies on this kernel. A batched event of another
 * category than the default carries the address of its category's name
 * (include/ctrace.h), read by the loader and looked up with
 * category_traced(): the number its sites' cookies have.
 */
#ifndef CTRACE_CATEGORIES_H
#define CTRACE_CATEGORIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CATEGORY_DEFAULT "ctrace"
/* Longest name, its NUL included. */
#define CATEGORY_NAME_MAX 64
#define CATEGORY_DEFAULT_ID 1
/*
 * An event whose site's category is not known (no cookies) while sites of
 * other categories than the default are attached: written as "(unknown)"
 * and counted in metadata.events_of_unknown_category.
 */
#define CATEGORY_UNKNOWN_ID 256
#define CATEGORY_UNKNOWN "(unknown)"
#define CATEGORY_IDS_MAX 255
#define CATEGORY_COOKIE_SHIFT 48

/* True for a name the header can make: [A-Za-z_][A-Za-z0-9_]*, shorter than CATEGORY_NAME_MAX. */
bool category_name_valid(const char *s, size_t len);

/*
 * --categories LIST: names to trace, or names prefixed with '-' to leave
 * out (all others traced). Both in one list: the named ones, less the
 * left-out ones.
 */
struct category_filter {
	bool any_included; /* some names without '-': only those */
	const char *list;  /* the option's text (kept, not copied: argv lives as long) */
};

/*
 * 0, or -EINVAL with a one-line reason in err (f is then no filter). An
 * empty list or name is refused. `text` must outlive f.
 */
int category_filter_parse(struct category_filter *f, const char *text, char *err, size_t errlen);
/* True if sites of category `name` are to be traced (no filter: all). */
bool category_filter_traces(const struct category_filter *f, const char *name);

/*
 * The number that stands for a category's name in this trace (1: the
 * default), given out in the order categories are first attached; 0 once
 * CATEGORY_IDS_MAX are taken: their events are then of unknown category.
 */
unsigned category_id(const char *name);
/*
 * The number category_id() gave the name s (len bytes, no NUL needed); 0
 * if it gave none: no site of that category is attached in this trace.
 */
unsigned category_traced(const char *s, size_t len);
/* A number's name: CATEGORY_UNKNOWN's for CATEGORY_UNKNOWN_ID, the default's for 0 and numbers not given out. */
const char *category_name(unsigned id);
/* True once a category other than the default has a number (its sites are attached). */
bool category_others_attached(void);

#endif
