// SPDX-License-Identifier: MIT
/* categories.c - --categories and the numbers of category names (see categories.h). */
#include "lib/categories.h"

#include "capture/capture_journal.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

bool category_name_valid(const char *s, size_t len)
{
	if (len == 0 || len >= CATEGORY_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* Calls each(name, len, left_out, ctx) for the names of a list, until it returns false. */
static bool each_name(const char *list, bool (*each)(const char *, size_t, bool, void *), void *ctx)
{
	for (const char *p = list;;) {
		size_t len = strcspn(p, ",");
		bool out = *p == '-';

		if (!each(p + out, len - out, out, ctx))
			return false;
		if (!p[len])
			return true;
		p += len + 1;
	}
}

static bool check_name(const char *name, size_t len, bool out, void *ctx)
{
	struct category_filter *f = ctx;

	f->any_included |= !out;
	return category_name_valid(name, len);
}

int category_filter_parse(struct category_filter *f, const char *text, char *err, size_t errlen)
{
	memset(f, 0, sizeof(*f));
	if (!each_name(text, check_name, f)) {
		snprintf(err, errlen,
			 "--categories takes names (letters, digits, _) separated by commas, "
			 "each optionally after '-' to leave it out, e.g. net,db or -verbose; not '%s'",
			 text);
		memset(f, 0, sizeof(*f));
		return -EINVAL;
	}
	f->list = text;
	return 0;
}

struct lookup {
	const char *name;
	bool named, left_out;
};

static bool match_name(const char *name, size_t len, bool out, void *ctx)
{
	struct lookup *l = ctx;

	if (strlen(l->name) == len && !memcmp(l->name, name, len)) {
		l->named |= !out;
		l->left_out |= out;
	}
	return true;
}

bool category_filter_traces(const struct category_filter *f, const char *name)
{
	struct lookup l = { name, false, false };

	if (!f || !f->list)
		return true;
	each_name(f->list, match_name, &l);
	return !l.left_out && (l.named || !f->any_included);
}

/* [0] unused; [1] the default. */
static char names[CATEGORY_IDS_MAX + 1][CATEGORY_NAME_MAX] = { "", CATEGORY_DEFAULT };
static unsigned n_names = 2;
static bool overflowed; /* a category got no number: 0, unknown */

unsigned category_id(const char *name)
{
	for (unsigned i = 1; i < n_names; i++)
		if (!strcmp(names[i], name))
			return i;
	if (n_names > CATEGORY_IDS_MAX) {
		overflowed = true;
		return 0;
	}
	snprintf(names[n_names], sizeof(names[n_names]), "%s", name);
	capture_note_category(names[n_names]); /* the conversion gives the same numbers */
	return n_names++;
}

unsigned category_traced(const char *s, size_t len)
{
	if (len >= CATEGORY_NAME_MAX)
		return 0;
	for (unsigned i = 1; i < n_names; i++)
		if (!strncmp(names[i], s, len) && !names[i][len])
			return i;
	return 0;
}

const char *category_name(unsigned id)
{
	if (id == CATEGORY_UNKNOWN_ID)
		return CATEGORY_UNKNOWN;
	return id > 0 && id < n_names ? names[id] : CATEGORY_DEFAULT;
}

bool category_others_attached(void)
{
	return n_names > 2 || overflowed;
}
