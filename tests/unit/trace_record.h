/* SPDX-License-Identifier: MIT */
/*
 * trace_record.h - a recording encoder for the model's unit tests: every
 * typed event (trace_event.h) the model hands the fan-out is kept, its
 * strings copied, so that a test checks what the model said, field by
 * field, without going through any format's text. Header-only: each unit
 * test is one file.
 */
#ifndef CTRACE_TEST_TRACE_RECORD_H
#define CTRACE_TEST_TRACE_RECORD_H

#include <stdlib.h>
#include <string.h>
#include "model/trace_event.h"

struct trace_record {
	struct trace_event *v;
	size_t n, cap;
};

static char *trace_record_dup(const char *s, size_t n)
{
	char *c = malloc(n + 1);

	if (!c)
		abort();
	if (n)
		memcpy(c, s, n);
	c[n] = 0;
	return c;
}

static void trace_record_text(struct ct_text *t)
{
	t->s = trace_record_dup(t->s ? t->s : "", t->n);
}

static void trace_record_event(void *ctx, const struct trace_event *ev)
{
	struct trace_record *r = ctx;
	struct trace_event *c;

	if (r->n == r->cap) {
		r->cap = r->cap ? r->cap * 2 : 64;
		r->v = realloc(r->v, r->cap * sizeof(*r->v));
		if (!r->v)
			abort();
	}
	c = &r->v[r->n++];
	*c = *ev;
	trace_record_text(&c->name);
	trace_record_text(&c->args);
	trace_record_text(&c->end_args);
	if (ev->kind == TE_COMPLETE && ev->unfinished)
		c->unfinished = trace_record_dup(ev->unfinished, strlen(ev->unfinished));
	if (ev->kind == TE_NOTICE && ev->n_notice_args) {
		struct ct_arg *a = malloc(ev->n_notice_args * sizeof(*a));

		if (!a)
			abort();
		for (size_t i = 0; i < ev->n_notice_args; i++) {
			a[i] = ev->notice_args[i];
			a[i].key = trace_record_dup(a[i].key, strlen(a[i].key));
			if (a[i].kind == CT_ARG_STR)
				a[i].s = trace_record_dup(a[i].s, a[i].n);
		}
		c->notice_args = a;
	}
}

static struct trace_encoder trace_record_encoder(struct trace_record *r)
{
	return (struct trace_encoder){ .event = trace_record_event, .ctx = r };
}

/* The n-th (0-based) event of this kind and name, or NULL. */
static const struct trace_event *trace_record_find(const struct trace_record *r, enum trace_event_kind kind,
						   const char *name, int n)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->v[i].kind == kind && r->v[i].name.n == strlen(name) && !memcmp(r->v[i].name.s, name, r->v[i].name.n) &&
		    n-- == 0)
			return &r->v[i];
	return NULL;
}

/* A notice's argument by key, or NULL. */
static const struct ct_arg *trace_record_arg(const struct trace_event *ev, const char *key)
{
	for (size_t i = 0; ev && i < ev->n_notice_args; i++)
		if (!strcmp(ev->notice_args[i].key, key))
			return &ev->notice_args[i];
	return NULL;
}

static void trace_record_free(struct trace_record *r)
{
	for (size_t i = 0; i < r->n; i++) {
		struct trace_event *c = &r->v[i];

		free((char *)c->name.s);
		free((char *)c->args.s);
		free((char *)c->end_args.s);
		if (c->kind == TE_COMPLETE)
			free((char *)c->unfinished);
		for (size_t k = 0; c->kind == TE_NOTICE && k < c->n_notice_args; k++) {
			free((char *)c->notice_args[k].key);
			if (c->notice_args[k].kind == CT_ARG_STR)
				free((char *)c->notice_args[k].s);
		}
		if (c->kind == TE_NOTICE)
			free((struct ct_arg *)c->notice_args);
	}
	free(r->v);
	memset(r, 0, sizeof(*r));
}

#endif
