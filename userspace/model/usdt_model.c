// SPDX-License-Identifier: MIT
#include "model/usdt_model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model/trace_event.h"
#include "lib/grow_array.h"
#include "encode/json/json_writer.h"
#include "encode/json/typed_args_encode.h"


/* libstdc++'s demangler (the loader links it: stack_symbols.c uses it too). */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

struct usdt_open {
	uint64_t ts_ns;
	uint32_t pid, tid;  /* as shown */
	uint32_t sf;        /* --stacks: the begin's stack (stack_frames.h) */
	char *name, *args;  /* malloc'd */
	size_t name_len, args_len;
};

struct usdt_stack {
	struct usdt_open *v; /* grown as it deepens, at most USDT_DEPTH_MAX */
	size_t n, cap;
};

struct stack_key {
	uint32_t tgid, tid, spec, pad;
};

/* One record's arguments, decoded. */
struct usdt_hit {
	uint64_t value[CTRACE_USDT_ARGS];
	unsigned n;
	struct {
		const char *s;
		size_t len;
		int status; /* CTRACE_USDT_STR_*; -1: not read as a string */
	} str[CTRACE_USDT_ARGS];
};

void usdt_model_init(struct usdt_model *um, const struct usdt_specs *specs)
{
	memset(um, 0, sizeof(*um));
	um->specs = specs;
	key_map_init(&um->stacks);
}

/* The record's values and strings; false if it is not one our BPF program writes. */
static bool decode_hit(const struct ctrace_event *ev, struct usdt_hit *h)
{
	size_t at = 0;

	if (ev->arg[1] > CTRACE_USDT_ARGS || ev->name_len != ev->arg[1] * 8)
		return false;
	h->n = (unsigned)ev->arg[1];
	memcpy(h->value, ev->name, ev->name_len);
	for (int i = 0; i < CTRACE_USDT_ARGS; i++)
		h->str[i].status = -1;
	while (at < ev->args_len) {
		struct ctrace_usdt_str hd;

		if (ev->args_len - at < sizeof(hd))
			return false;
		memcpy(&hd, ev->args + at, sizeof(hd));
		at += sizeof(hd);
		if (hd.arg >= h->n || hd.len > ev->args_len - at || hd.status > CTRACE_USDT_STR_NO_ROOM)
			return false;
		h->str[hd.arg].s = ev->args + at;
		h->str[hd.arg].len = hd.len;
		h->str[hd.arg].status = hd.status;
		at += hd.len;
	}
	return true;
}

/* A C++ type's mangled name (std::type_info's, "St13runtime_error") demangled; NULL if it is not one. */
static char *demangle(const char *s, size_t len)
{
	char *m = malloc(len + 1), *d;
	int status = -1;

	if (!m)
		return NULL;
	memcpy(m, s, len);
	m[len] = '\0';
	/* A type local to a function has its name marked with a leading '*'. */
	d = __cxa_demangle(m[0] == '*' ? m + 1 : m, NULL, NULL, &status);
	free(m);
	return status == 0 ? d : (free(d), NULL);
}

/* True when the probe names some of its arguments (a preset): only those are shown. */
static bool names_some(const struct usdt_probe *pr)
{
	for (int i = 0; i < CTRACE_USDT_ARGS; i++)
		if (pr->arg_names[i][0])
			return true;
	return false;
}

static void hit_args(struct usdt_model *um, const struct usdt_probe *pr,
		     const struct usdt_hit *h, uint64_t unreadable, struct typed_text *t)
{
	bool named_only = names_some(pr);

	typed_text_begin(t);
	for (unsigned i = 0; i < h->n; i++) {
		char argn[16];
		const char *key = pr->arg_names[i][0] ? pr->arg_names[i] : NULL;
		int st = h->str[i].status;

		if (named_only && !key)
			continue;
		if (i && pr->how[i - 1] == CTRACE_USDT_HOW_STR_LEN)
			continue; /* the previous string's length */
		if (!key) {
			snprintf(argn, sizeof(argn), "arg%u", i);
			key = argn;
		}
		if (unreadable >> i & 1) {
			um->unreadable_values++;
			typed_text_flag(t, 'x', key);
			continue;
		}
		if (pr->how[i] == CTRACE_USDT_HOW_VALUE) {
			typed_text_num(t, pr->signed_args >> i & 1 ? 'i' : 'u', key, h->value[i]);
			continue;
		}
		if (st == CTRACE_USDT_STR_FAULT || st < 0) {
			um->unreadable_strings++;
			typed_text_flag(t, h->value[i] ? 'x' : 'n', key);
			continue;
		}
		if (st == CTRACE_USDT_STR_NO_ROOM) {
			um->strings_without_room++;
			typed_text_flag(t, 'x', key);
			continue;
		}
		if (st == CTRACE_USDT_STR_TRUNCATED)
			um->cut_strings++;
		if (pr->demangle[i] && st == CTRACE_USDT_STR_OK) {
			char *d = demangle(h->str[i].s, h->str[i].len);

			if (d) {
				typed_text_str(t, key, d, strlen(d), false);
				free(d);
				continue;
			}
		}
		typed_text_str(t, key, h->str[i].s, h->str[i].len, st == CTRACE_USDT_STR_TRUNCATED);
	}
}

/* The event's name: the named string argument(s), else the spec's title. malloc'd. */
static char *hit_name(const struct usdt_spec *sp, const struct usdt_hit *h, size_t *len)
{
	int a = sp->name_arg, b = sp->name_arg2;
	bool have_a = a >= 0 && (h->str[a].status == CTRACE_USDT_STR_OK ||
				 h->str[a].status == CTRACE_USDT_STR_TRUNCATED);
	bool have_b = b >= 0 && (h->str[b].status == CTRACE_USDT_STR_OK ||
				 h->str[b].status == CTRACE_USDT_STR_TRUNCATED);
	char *s;

	if (!have_a) {
		*len = strlen(sp->title);
		return strdup(sp->title);
	}
	*len = h->str[a].len + (have_b ? 1 + h->str[b].len : 0);
	s = malloc(*len + 1);
	if (!s)
		return NULL;
	memcpy(s, h->str[a].s, h->str[a].len);
	if (have_b) {
		s[h->str[a].len] = '.';
		memcpy(s + h->str[a].len + 1, h->str[b].s, h->str[b].len);
	}
	s[*len] = '\0';
	if (sp->dotted)
		for (char *p = s; *p; p++)
			if (*p == '/')
				*p = '.';
	return s;
}

static void oom(void)
{
	fputs("ctrace-bpf: out of memory\n", stderr);
	abort();
}

/* A span (why: NULL) or one that did not end (why it did not). */
static void write_span(const struct usdt_model *um, const struct trace_fanout *out, const struct usdt_open *o,
		       uint64_t end_ns, const struct typed_text *end_args, const char *why)
{
	trace_emit(out, &(struct trace_event){
		.kind = TE_COMPLETE, .pid = o->pid, .tid = o->tid, .ts_ns = o->ts_ns,
		.dur_ns = end_ns > o->ts_ns ? end_ns - o->ts_ns : 0, .name = { o->name, o->name_len, 0 },
		.args = { o->args, o->args_len, 0 },
		.end_args = { end_args ? end_args->b : NULL, end_args ? end_args->n : 0, 0 },
		.unfinished = why, .stack = o->sf, .cat = um->cat,
	});
}

static void open_free(struct usdt_open *o)
{
	free(o->name);
	free(o->args);
}

static void span_begin(struct usdt_model *um, unsigned spec, uint32_t pid, uint32_t tid,
		       const struct ctrace_event *ev, char *name, size_t name_len, const struct typed_text *t)
{
	struct stack_key key = { ev->tgid, ev->tid, spec, 0 };
	struct usdt_stack *st = key_map_get(&um->stacks, &key, sizeof(key));
	struct usdt_open *o;

	if (um->open == USDT_OPEN_MAX || (st && st->n == USDT_DEPTH_MAX)) {
		um->spec[spec].begins_not_kept++;
		free(name);
		return;
	}
	if (!st) {
		st = calloc(1, sizeof(*st));
		if (!st)
			oom();
		key_map_put(&um->stacks, &key, sizeof(key), st);
	}
	if (GROW_ARRAY(st->v, st->cap, st->n, 8))
		oom();
	o = &st->v[st->n++];
	um->open++;
	o->ts_ns = ev->ts_ns;
	o->sf = ev->sf;
	o->pid = pid;
	o->tid = tid;
	o->name = name;
	o->name_len = name_len;
	o->args = malloc(t->n);
	if (!o->args)
		oom();
	memcpy(o->args, t->b, t->n);
	o->args_len = t->n;
}

static void span_end(struct usdt_model *um, const struct trace_fanout *out, unsigned spec,
		     const struct ctrace_event *ev, const char *name, size_t name_len,
		     const struct typed_text *t)
{
	const struct usdt_spec *sp = &um->specs->spec[spec];
	struct stack_key key = { ev->tgid, ev->tid, spec, 0 };
	struct usdt_stack *st = key_map_get(&um->stacks, &key, sizeof(key));
	size_t at;

	if (!st || !st->n) {
		um->spec[spec].ends_without_begin++;
		return;
	}
	at = st->n - 1;
	if (sp->end_names_match) {
		/* The innermost begin of this name; none: this end's begin never fired. */
		for (at = st->n; at > 0; at--)
			if (st->v[at - 1].name_len == name_len && !memcmp(st->v[at - 1].name, name, name_len))
				break;
		if (!at) {
			um->spec[spec].ends_without_begin++;
			return;
		}
		at--;
	}
	/* Begins inside the one that ends now never ended: they end with it, marked. */
	while (st->n - 1 > at) {
		struct usdt_open *inner = &st->v[--st->n];

		write_span(um, out, inner, ev->ts_ns, NULL, "an outer span ended first (its own end never came)");
		um->spec[spec].begins_not_ended++;
		open_free(inner);
		um->open--;
	}
	write_span(um, out, &st->v[at], ev->ts_ns, t, NULL);
	um->spec[spec].spans++;
	open_free(&st->v[at]);
	st->n--;
	um->open--;
	if (!st->n) {
		key_map_del(&um->stacks, &key, sizeof(key));
		free(st->v);
		free(st);
	}
}

void usdt_model_event(struct usdt_model *um, const struct trace_fanout *out, unsigned cat, uint32_t pid, uint32_t tid,
		      const struct ctrace_event *ev, const char **thread_name, size_t *thread_name_len)
{
	const struct usdt_probe *pr = um->specs ? usdt_probe_of_cookie(um->specs, ev->arg[0]) : NULL;
	static struct typed_text t; /* large: not on the stack; the model runs on one thread */
	const struct usdt_spec *sp;
	struct usdt_hit h;
	char *name;
	size_t name_len;

	*thread_name_len = 0;
	um->cat = cat;
	if (!pr || !decode_hit(ev, &h)) {
		um->unknown_records++;
		return;
	}
	sp = &um->specs->spec[pr->spec];
	um->spec[pr->spec].hits++;
	*thread_name_len = 0;
	if (sp->thread_name_arg >= 0 && h.str[sp->thread_name_arg].status == CTRACE_USDT_STR_OK) {
		*thread_name = h.str[sp->thread_name_arg].s;
		*thread_name_len = h.str[sp->thread_name_arg].len;
	}
	hit_args(um, pr, &h, ev->arg[2], &t);
	name = hit_name(sp, &h, &name_len);
	if (!name)
		oom();
	switch (pr->role) {
	case USDT_ROLE_INSTANT:
		trace_emit(out, &(struct trace_event){
			.kind = TE_INSTANT, .pid = pid, .tid = tid, .ts_ns = ev->ts_ns, .scope = 't',
			.name = { name, name_len, 0 }, .args = { t.b, t.n, 0 }, .stack = ev->sf, .cat = cat,
		});
		free(name);
		break;
	case USDT_ROLE_BEGIN:
		span_begin(um, pr->spec, pid, tid, ev, name, name_len, &t); /* keeps name */
		break;
	case USDT_ROLE_END:
		span_end(um, out, pr->spec, ev, name, name_len, &t);
		free(name);
		break;
	}
}

struct finish_ctx {
	struct usdt_model *um;
	const struct trace_fanout *out;
	uint64_t stop_ns;
};

static void finish_stack(const void *key, size_t len, void *value, void *ctx)
{
	const struct stack_key *k = key;
	struct finish_ctx *f = ctx;
	struct usdt_stack *st = value;

	(void)len;
	for (size_t i = 0; i < st->n; i++) {
		if (f->out)
			write_span(f->um, f->out, &st->v[i], f->stop_ns, NULL, "still open when tracing stopped");
		f->um->spec[k->spec].unfinished++;
		open_free(&st->v[i]);
	}
	free(st->v);
	free(st);
}

/*
 * A span whose ends came mostly without their begin: its begin probe does
 * not fire for every call. Debian 12's python3.11 fires function__return
 * for every call and function__entry for almost none (CPython gh-98894):
 * said, instead of spans that pair the wrong calls (an end closes only its
 * own function's begin: end_names_match).
 */
static void check_pairing(struct usdt_model *um)
{
	for (size_t i = 0; i < um->specs->n; i++) {
		const struct usdt_spec *sp = &um->specs->spec[i];
		const struct usdt_spec_counts *c = &um->spec[i];
		const struct usdt_probe *b = &um->specs->probe[sp->begin];
		const struct usdt_probe *e = &um->specs->probe[sp->end[0]];

		if (!sp->span || c->ends_without_begin < 20 || c->ends_without_begin < 2 * c->spans)
			continue;
		snprintf(um->warning, sizeof(um->warning),
			 "%" PRIu64 " of %" PRIu64 " %s:%s had no %s:%s before them: %s; those calls are not shown as spans",
			 c->ends_without_begin, c->ends_without_begin + c->spans, e->provider, e->name,
			 b->provider, b->name,
			 !strcmp(b->provider, "python") && !strcmp(b->name, "function__entry") ?
				 "this python fires function__entry for almost no call (CPython gh-98894, Debian 12's python3.11)" :
				 "the begin probe does not fire for every call");
		return;
	}
}

void usdt_model_finish(struct usdt_model *um, const struct trace_fanout *out, unsigned cat, uint64_t stop_ns)
{
	struct finish_ctx f = { um, out, stop_ns };

	um->cat = cat;
	if (!um->specs)
		return;
	key_map_each(&um->stacks, finish_stack, &f);
	key_map_free(&um->stacks);
	um->open = 0;
	check_pairing(um);
	if (um->warning[0])
		fprintf(stderr, "ctrace-bpf: --usdt: %s\n", um->warning);
}

static void kv_u64(struct json_writer *w, const char *key, uint64_t v)
{
	jw_lit(w, ",\"");
	jw_lit(w, key);
	jw_lit(w, "\":");
	jw_u64(w, v);
}

void usdt_model_write_metadata(const struct usdt_model *um, struct json_writer *w)
{
	if (!um || !um->specs)
		return;
	jw_lit(w, ",\"usdt\":{\"given\":");
	jw_str(w, um->specs->given, strlen(um->specs->given), NULL);
	kv_u64(w, "unknown_records", um->unknown_records);
	kv_u64(w, "unreadable_values", um->unreadable_values);
	kv_u64(w, "unreadable_strings", um->unreadable_strings);
	kv_u64(w, "cut_strings", um->cut_strings);
	kv_u64(w, "strings_without_room", um->strings_without_room);
	if (um->warning[0]) {
		jw_lit(w, ",\"warning\":");
		jw_str(w, um->warning, strlen(um->warning), NULL);
	}
	jw_lit(w, ",\"specs\":[");
	for (size_t i = 0; i < um->specs->n; i++) {
		const struct usdt_spec *sp = &um->specs->spec[i];
		const struct usdt_spec_counts *c = &um->spec[i];
		const struct usdt_probe *b = &um->specs->probe[sp->begin];
		char probe[2 * USDT_WORD_MAX + 2];

		jw_lit(w, i ? ",{\"probe\":" : "{\"probe\":");
		snprintf(probe, sizeof(probe), "%s:%s", b->provider, b->name);
		jw_str(w, probe, strlen(probe), NULL);
		jw_lit(w, ",\"title\":");
		jw_str(w, sp->title, strlen(sp->title), NULL);
		kv_u64(w, "hits", c->hits);
		if (sp->begin_fires_rarely) {
			/* usdt_attach.c: a preset's such span is not attached where its begin is rare. */
			jw_lit(w, ",\"begin_fires_rarely\":");
			jw_str(w, sp->begin_fires_rarely, strlen(sp->begin_fires_rarely), NULL);
			jw_lit(w, sp->preset ? ",\"attached\":false" : ",\"attached\":true");
		}
		if (sp->span) {
			kv_u64(w, "spans", c->spans);
			kv_u64(w, "ends_without_begin", c->ends_without_begin);
			kv_u64(w, "unfinished", c->unfinished);
			kv_u64(w, "begins_not_ended", c->begins_not_ended);
			kv_u64(w, "begins_not_kept", c->begins_not_kept);
		}
		jw_lit(w, "}");
	}
	jw_lit(w, "]}");
}
