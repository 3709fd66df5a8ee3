// SPDX-License-Identifier: MIT
#include "attach/site_set.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "lib/categories.h"
#include "ctrace_site.h"
#include "lib/fd_limit.h"
#include "lib/grow_array.h"
#include "attach/proc_maps.h"
#include "lib/term_safe.h"
#include "attach/usdt_notes.h"

void site_set_free(struct site_set *s)
{
	for (int i = 0; i < KIND_COUNT; i++) {
		free(s->offsets[i]);
		free(s->cookies[i]);
	}
	free(s->armers);
}

static int site_set_add(struct site_set *s, int kind, uint64_t offset, uint64_t cookie)
{
	size_t cap = s->cap[kind];

	/* Two arrays, one capacity: it is raised once both have grown. */
	if (GROW_ARRAY(s->offsets[kind], cap, s->n[kind], 16))
		return -ENOMEM;
	cap = s->cap[kind];
	if (GROW_ARRAY(s->cookies[kind], cap, s->n[kind], 16))
		return -ENOMEM;
	s->cap[kind] = cap;
	s->offsets[kind][s->n[kind]] = offset;
	s->cookies[kind][s->n[kind]++] = cookie;
	return 0;
}

/*
 * A site with a semaphore: it becomes its semaphore's armer if it is that
 * semaphore's highest offset so far (the previous armer an ordinary site).
 */
static int site_set_add_armed(struct site_set *s, int kind, uint64_t offset, uint64_t sema,
			      uint64_t cookie, bool is_default)
{
	struct armer *ar = NULL;

	for (size_t i = 0; i < s->n_armers; i++)
		if (s->armers[i].sema == sema)
			ar = &s->armers[i];
	if (!ar) {
		if (GROW_ARRAY(s->armers, s->cap_armers, s->n_armers, 4))
			return -ENOMEM;
		s->armers[s->n_armers++] = (struct armer){ kind, offset, sema, cookie, is_default };
		return 0;
	}
	if (offset < ar->offset)
		return site_set_add(s, kind, offset, cookie);
	{
		struct armer old = *ar;

		*ar = (struct armer){ kind, offset, sema, cookie, is_default };
		return site_set_add(s, old.kind, old.offset, old.cookie);
	}
}

/*
 * Collects the sites of one object. The semaphore must not turn on before
 * every site is attached, or the program would run sites nobody listens to
 * yet and their events would be lost (an event fired right after
 * CTRACE_ENABLED() turned true must be in the trace). So every site is
 * attached without the reference counter, and one site is attached last,
 * with it: the same one for every tracer (the highest offset), so that two
 * ctrace-bpf on one process agree and the kernel sees one ref_ctr_offset
 * per uprobe. So for each category's semaphore (usdt/ctrace_site.h): the
 * sites of a category --categories leaves out are not attached at all, and
 * their semaphore stays 0.
 */
int collect_sites(const struct mapped_object *obj, const struct site_options *a, struct site_counts *counts,
		  struct site_set *set)
{
	struct usdt_note_list notes = { 0 };
	char err[256];
	int fd, ret = 0;

	memset(set, 0, sizeof(*set));
	fd = mapped_object_open(obj);
	if (fd == -EMFILE || fd == -ENFILE)
		return fd; /* attach_process says it, once */
	if (fd < 0) {
		if (a->verbose)
			fprintf(stderr, "ctrace-bpf: %s: %s\n", TERM_SAFE(obj->path), strerror(-fd));
		return 0;
	}
	if (usdt_notes_read_fd(fd, &notes, err, sizeof(err)) < 0) {
		if (a->verbose)
			fprintf(stderr, "ctrace-bpf: %s: %s\n", TERM_SAFE(obj->path), TERM_SAFE(err));
		close(fd);
		return 0;
	}
	for (size_t i = 0; i < notes.n && !ret; i++) {
		const struct usdt_note *n = &notes.v[i];
		uint64_t offset = n->site_offset + (a->fast ? CTRACE_SITE_NOP5_OFFSET : 0);
		uint64_t cookie;
		bool is_default;
		int kind;

		if (strcmp(n->provider, "ctrace"))
			continue;
		kind = attach_kind_of(n->name);
		if (kind < 0 || !usdt_is_ctrace_site(fd, n->site_offset)) {
			/* A newer header's probe, or a site not built by our header:
			 * its arguments are not where our programs read them. */
			counts->skipped++;
			if (a->verbose)
				fprintf(stderr, "ctrace-bpf: %s: skipping ctrace:%s at 0x%llx (not a site this version knows)\n",
					TERM_SAFE(obj->path), TERM_SAFE(n->name), (unsigned long long)n->site_vaddr);
			continue;
		}
		if (kind == attach_kind_of("batch")) {
			/* Its own semaphore: raised with its last site (attach_object). */
			if (!a->no_batch && n->sema_offset) {
				set->batch_sema = n->sema_offset;
				ret = site_set_add(set, kind, offset, n->site_vaddr);
			}
			continue;
		}
		if (!category_filter_traces(a->categories, n->category)) {
			counts->filtered++;
			continue;
		}
		/* The category's number rides in the cookie's top bits (categories.h). */
		cookie = n->site_vaddr | (uint64_t)category_id(n->category) << CATEGORY_COOKIE_SHIFT;
		is_default = !strcmp(n->category, CATEGORY_DEFAULT);
		counts->other_categories |= !is_default;
		if (n->sema_offset)
			ret = site_set_add_armed(set, kind, offset, n->sema_offset, cookie, is_default);
		else
			ret = site_set_add(set, kind, offset, cookie);
	}
	close(fd);
	usdt_note_list_free(&notes);
	return ret;
}
