// SPDX-License-Identifier: MIT
/* categories.c - --categories and the numbers of category names (see categories.h). */
#include "categories.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "usdt_notes.h"

int category_filter_parse(struct category_filter *f, const char *text, char *err, size_t errlen)
{
	size_t len = strlen(text);
	char *p;

	memset(f, 0, sizeof(*f));
	f->list = malloc(len + 1);
	if (!f->list) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memcpy(f->list, text, len + 1);
	for (p = f->list;; p++) {
		char *end = strchr(p, ',');
		bool out = *p == '-';
		const char *name = p + out;

		if (end)
			*end = '\0';
		if (!usdt_category_valid(name, strlen(name))) {
			snprintf(err, errlen,
				 "--categories takes names (letters, digits, _) separated by commas, "
				 "each optionally after '-' to leave it out, e.g. net,db or -verbose; not '%s'",
				 text);
			category_filter_free(f);
			return -EINVAL;
		}
		f->any_included |= !out;
		f->n++;
		if (!end)
			break;
		p = end;
	}
	return 0;
}

bool category_filter_traces(const struct category_filter *f, const char *name)
{
	bool named = false;
	const char *p;

	if (!f || !f->list)
		return true;
	p = f->list;
	for (unsigned i = 0; i < f->n; i++, p += strlen(p) + 1) {
		if (p[0] == '-' && !strcmp(p + 1, name))
			return false;
		if (p[0] != '-' && !strcmp(p, name))
			named = true;
	}
	return named || !f->any_included;
}

void category_filter_free(struct category_filter *f)
{
	free(f->list);
	memset(f, 0, sizeof(*f));
}

/* [0] unused; [1] the default. */
static char names[CATEGORY_IDS_MAX + 1][USDT_CATEGORY_MAX] = { "", CATEGORY_DEFAULT };
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
	return n_names++;
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
