// SPDX-License-Identifier: MIT
/* Typed trace events -> Perfetto protobuf (pftrace_encode.h; the mapping: pftrace.h). */
#include "encode/perfetto/pftrace_encode.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "lib/categories.h"
#include "encode/json/chrome_trace.h"
#include "ctrace_record.h"
#include "lib/key_map.h"
#include "encode/json/nest_ties.h"
#include "encode/perfetto/pb_write.h"
#include "encode/perfetto/pftrace_annot.h"
#include "encode/perfetto/pftrace_encode_int.h"


static void put_frame(struct pftrace_encoder *e)
{
	/* Trace.packet (field 1): what a streamed .pftrace is; one write, so the file holds whole packets. */
	e->frame.n = 0;
	pb_sub(&e->frame, 1, &e->pk);
	jw_raw(e->w, (const char *)e->frame.p, e->frame.n);
	e->counts.packets++;
	e->counts.bytes += e->frame.n;
}

/* The packet in e->pk, with the sequence's id and the strings interned in it, to the writer. */
void pfe_emit(struct pftrace_encoder *e)
{
	pb_u(&e->pk, TP_SEQ_ID, SEQ_ID);
	if (e->idata.n) {
		pb_sub(&e->pk, TP_INTERNED, &e->idata);
		e->idata.n = 0;
	}
	put_frame(e);
	e->pk.n = 0;
}

static unsigned recent_slot(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	if (!n)
		return 0;
	return (unsigned)(n * 31u + u[0] * 7u + u[n - 1] * 131u + u[n >> 1] * 17u) % RECENT_SLOTS;
}

uint64_t pfe_intern(struct pftrace_encoder *e, struct interned *t, const char *s, size_t n)
{
	struct recent *r = &t->recent[recent_slot(s, n)];
	void *v;

	if (r->iid && r->len == n) {
		size_t i = 0;

		while (i < n && r->s[i] == s[i]) /* names are short: no call */
			i++;
		if (i == n)
			return r->iid;
	}
	v = key_map_get(&t->map, s, n);
	if (v) {
		if (n <= RECENT_LEN) {
			r->iid = (uint64_t)(uintptr_t)v;
			r->len = (uint32_t)n;
			memcpy(r->s, s, n);
		}
		return (uint64_t)(uintptr_t)v;
	}
	if (t->map.count >= TABLE_MAX) {
		/* Forgotten, not reused: iids keep growing, so a string met again is only sent again. */
		key_map_free(&t->map);
		key_map_init(&t->map);
		memset(t->recent, 0, sizeof(t->recent));
		t->gen++;
		pfe_forget_tracks(e); /* counter tracks are known by their name's iid */
		e->counts.tables_cleared++;
	}
	key_map_put(&t->map, s, n, (void *)(uintptr_t)++t->next);
	if (n <= RECENT_LEN) {
		r->iid = t->next;
		r->len = (uint32_t)n;
		memcpy(r->s, s, n);
	}
	e->isub.n = 0;
	pb_u(&e->isub, 1, t->next);
	pb_bytes(&e->isub, 2, s, n);
	pb_sub(&e->idata, t->field, &e->isub);
	return t->next;
}

/* A constant string's iid, kept aside while its table lasts. */
static uint64_t intern_kept(struct pftrace_encoder *e, struct interned *t, struct kept_iid *k, const char *s, size_t n)
{
	if (!k->iid || k->gen != t->gen) {
		k->iid = pfe_intern(e, t, s, n);
		k->gen = t->gen;
	}
	return k->iid;
}

static uint64_t intern_key(void *ctx, const char *k, size_t n)
{
	struct pftrace_encoder *e = ctx;

	return pfe_intern(e, &e->keys, k, n);
}

/* Printable ASCII but '"' and '\\': what the JSON writes as it is (json_writer.c's jw_str()). */
static bool json_as_is(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e || s[i] == '"' || s[i] == '\\')
			return false;
	return true;
}

/* A name as the JSON shows it (marked cut, unreadable or renamed), as its reader gets it: *n bytes. */
const char *pfe_shown_name(struct pftrace_encoder *e, const struct ct_text *name, size_t *n)
{
	const char *s;

	if (chrome_trace_name_plain(name) ||
	    (!(name->flags & (CTRACE_STR_FAULT | CTRACE_STR_TRUNCATED)) && json_as_is(name->s, name->n) &&
	     chrome_trace_name_plain(&(struct ct_text){ name->s, name->n, CTRACE_STR_PLAIN }))) {
		*n = name->n;
		return name->s;
	}
	e->text.len = 0;
	chrome_trace_name_json(&e->text, name);
	s = pftrace_annot_string(&e->annot, e->text.buf, e->text.len);
	*n = strlen(s);
	return s;
}

/* A name's iid. */
static uint64_t name_iid(struct pftrace_encoder *e, const struct ct_text *name)
{
	size_t n;
	const char *s = pfe_shown_name(e, name, &n);

	return pfe_intern(e, &e->names, s, n);
}

const char *pfe_cat_name(unsigned cat)
{
	return cat > CATEGORY_DEFAULT_ID ? category_name(cat) : "ctrace";
}

static uint64_t cat_iid(struct pftrace_encoder *e, unsigned cat, bool async)
{
	char buf[160];
	const char *c = pfe_cat_name(cat);

	if (cat <= CATEGORY_DEFAULT_ID) /* most events */
		return async ? intern_kept(e, &e->cats, &e->c_async, "ctrace.async", 12) :
			       intern_kept(e, &e->cats, &e->c_ctrace, "ctrace", 6);

	if (!async)
		return pfe_intern(e, &e->cats, c, strlen(c));
	snprintf(buf, sizeof(buf), "%s.async", c);
	return pfe_intern(e, &e->cats, buf, strlen(buf));
}


/* ---- events ---- */

/* The event's args as the JSON has them, as annotations of e->te (after `ours`, already there). */
static void args(struct pftrace_encoder *e, const struct trace_event *ev, bool end)
{
	static const char key[] = ",\"args\":";
	const struct ct_text *t = end ? &ev->end_args : &ev->args;
	const char *obj;
	size_t len;

	/* One end's args, the program's JSON object as it is (most events with args): read in place. */
	if ((end ? !ev->end_stack : !ev->stack) && !(ev->kind == TE_COMPLETE && ev->unfinished) &&
	    ev->kind != TE_NOTICE &&
	    (ev->kind != TE_COMPLETE || !(ev->end_args.n || ev->end_args.flags)) &&
	    chrome_trace_args_plain(t, &obj, &len)) {
		if (!pftrace_annot_object(&e->annot, &e->te, TE_F_ANNOTATIONS, obj, len, intern_key, e))
			e->counts.not_converted++;
		return;
	}
	e->text.len = 0;
	chrome_trace_args_json(&e->json, &e->text, ev, end);
	if (e->text.len > sizeof(key) - 1 &&
	    !pftrace_annot_object(&e->annot, &e->te, TE_F_ANNOTATIONS, e->text.buf + sizeof(key) - 1,
				  e->text.len - (sizeof(key) - 1), intern_key, e))
		e->counts.not_converted++;
}

static bool has_args(const struct trace_event *ev)
{
	switch (ev->kind) {
	case TE_COMPLETE:
		return ev->args.n || ev->args.flags || ev->end_args.n || ev->end_args.flags || ev->unfinished;
	case TE_NOTICE:
		return ev->n_notice_args;
	default:
		return ev->args.n || ev->args.flags;
	}
}

static void our_int(struct pftrace_encoder *e, struct kept_iid *k, const char *key, size_t len, int64_t v)
{
	uint64_t iid = k ? intern_kept(e, &e->keys, k, key, len) : pfe_intern(e, &e->keys, key, len);

	e->sub.n = 0;
	pb_u(&e->sub, 1, iid);
	pb_u(&e->sub, 4, (uint64_t)v);
	pb_sub(&e->te, TE_F_ANNOTATIONS, &e->sub);
}

/* Starts e->te: type, track (0: the global one), name, category. */
static size_t varint_len(uint64_t v)
{
	return 1 + (size_t)((63 - __builtin_clzll(v | 1)) / 7);
}

static inline uint8_t *put_varint(uint8_t *q, uint64_t v)
{
	while (v >= 0x80) {
		*q++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*q++ = (uint8_t)v;
	return q;
}

/* On every event's way: one room check for its four fields (each a one-byte key and a varint). */
static void te_head(struct pftrace_encoder *e, unsigned type, uint64_t track, uint64_t name, uint64_t cat)
{
	uint8_t *q;

	e->te.n = 0;
	pb_room(&e->te, 4 * 11);
	q = e->te.p;
	*q++ = TE_F_TYPE << 3 | PB_VARINT;
	*q++ = (uint8_t)type;
	*q++ = TE_F_TRACK << 3 | PB_VARINT;
	q = put_varint(q, track);
	if (name) {
		*q++ = TE_F_NAME_IID << 3 | PB_VARINT;
		q = put_varint(q, name);
	}
	if (cat) {
		*q++ = TE_F_CATEGORY_IIDS << 3 | PB_VARINT;
		q = put_varint(q, cat);
	}
	e->te.n = (size_t)(q - e->te.p);
}

/*
 * The packet of e->te at ts, written straight into the writer's buffer
 * (the same bytes emit() makes through e->pk and e->frame, without their
 * two copies): most events' way.
 */
static void emit_te(struct pftrace_encoder *e, uint64_t ts)
{
	/* A time past 2^64-1 ns: none, as the JSON writes none (pftrace_write.c did the same) */
	bool has_ts = ts != UINT64_MAX;
	size_t te = e->te.n, id = e->idata.n;
	size_t pk = (has_ts ? 1 + varint_len(ts) : 0) + 2 + 1 + varint_len(te) + te + (id ? 1 + varint_len(id) + id : 0);
	size_t total = 1 + varint_len(pk) + pk;
	uint8_t *q = (uint8_t *)jw_reserve(e->w, total);

	if (has_ts)
		e->last_ts = ts;
	if (!q) { /* the buffer full: handed on first, by jw_raw() */
		if (has_ts)
			pb_u(&e->pk, TP_TIMESTAMP, ts);
		pb_sub(&e->pk, TP_TRACK_EVENT, &e->te);
		pfe_emit(e);
		return;
	}
	*q++ = 0x0a;
	q = put_varint(q, pk);
	if (has_ts) {
		*q++ = TP_TIMESTAMP << 3 | PB_VARINT;
		q = put_varint(q, ts);
	}
	*q++ = TP_TRACK_EVENT << 3 | PB_LEN;
	q = put_varint(q, te);
	for (size_t i = 0; i < te; i++) /* a dozen bytes or so: no call */
		q[i] = e->te.p[i];
	q += te;
	*q++ = TP_SEQ_ID << 3 | PB_VARINT;
	*q++ = SEQ_ID;
	if (id) {
		*q++ = TP_INTERNED << 3 | PB_LEN;
		q = put_varint(q, id);
		memcpy(q, e->idata.p, id);
		q += id;
		e->idata.n = 0;
	}
	jw_commit(e->w, (char *)q);
	e->counts.packets++;
	e->counts.bytes += total;
}

/* The X held for its flows: its BEGIN (flow ids in) and END. */
static void flush_x(struct pftrace_encoder *e)
{
	if (!e->x_held)
		return;
	e->x_held = false;
	pb_sub(&e->pk, TP_TRACK_EVENT, &e->te); /* its BEGIN, its timestamp in e->pk already */
	pfe_emit(e);
	te_head(e, TYPE_SLICE_END, e->x_track, 0, 0);
	emit_te(e, e->x_end_ns);
}

static void complete(struct pftrace_encoder *e, const struct trace_event *ev)
{
	uint64_t ts = ev->ts_ns, end = ev->ts_ns + ev->dur_ns;
	uint64_t track = pfe_thread_track(e, ev->pid, ev->tid);
	uint64_t name = name_iid(e, &ev->name), cat = cat_iid(e, ev->cat, false);

	ts = ev->open_at_dump ? nest_ties_begin_open(&e->ties, ev->pid, ev->tid, ts, end) :
				nest_ties_begin(&e->ties, ev->pid, ev->tid, ts, end);
	te_head(e, TYPE_SLICE_BEGIN, track, name, cat);
	if (has_args(ev))
		args(e, ev, false);
	e->events++;
	if (ts == UINT64_MAX) /* no time in the JSON: its end where the JSON's reader puts it, at its "dur" */
		end -= ts;
	if (ev->flow.id) { /* its flow steps follow: their ids go into this packet */
		if (ts != UINT64_MAX)
			pb_u(&e->pk, TP_TIMESTAMP, ts);
		e->x_held = true;
		e->x_end_ns = end;
		e->x_track = track;
		e->last_ts = ts;
		return;
	}
	emit_te(e, ts);
	te_head(e, TYPE_SLICE_END, track, 0, 0);
	emit_te(e, end);
}

static void flow_step(struct pftrace_encoder *e, const struct trace_event *ev)
{
	e->events++;
	if (!e->x_held) {
		e->counts.not_converted++; /* the model puts every step right after its X */
		return;
	}
	pb_fixed64(&e->te, ev->flow_out ? TE_F_FLOW_IDS : TE_F_TERMINATING_FLOW_IDS, ev->id);
}

static void async_pair(struct pftrace_encoder *e, const struct trace_event *ev)
{
	size_t n;
	const char *s = pfe_shown_name(e, &ev->name, &n);
	uint64_t name = pfe_intern(e, &e->names, s, n), cat = cat_iid(e, ev->cat, true), track;

	track = pfe_async_track(e, ev->pid, name, s, n, ev->ts_ns, ev->end_ns);
	te_head(e, TYPE_SLICE_BEGIN, track, name, cat);
	our_int(e, &e->k_tid, "ctrace_tid", 10, ev->tid);
	our_int(e, &e->k_id, "ctrace_id", 9, (int64_t)ev->id);
	if (ev->args.n || ev->args.flags)
		args(e, ev, false);
	emit_te(e, ev->ts_ns);
	te_head(e, TYPE_SLICE_END, track, 0, 0);
	our_int(e, &e->k_tid, "ctrace_tid", 10, ev->end_tid);
	if (ev->end_args.n || ev->end_args.flags)
		args(e, ev, true);
	emit_te(e, ev->end_ns);
	e->events += 2;
}

static void instant(struct pftrace_encoder *e, const struct trace_event *ev, bool notice)
{
	uint64_t name, cat = notice ? cat_iid(e, 0, false) : cat_iid(e, ev->cat, false), track;

	if (notice)
		name = pfe_intern(e, &e->names, ev->name.s, ev->name.n);
	else
		name = name_iid(e, &ev->name);
	track = ev->scope == 'g' ? 0 : ev->scope == 'p' ? pfe_process_track(e, ev->pid) : pfe_thread_track(e, ev->pid, ev->tid);
	te_head(e, TYPE_INSTANT, track, name, cat);
	if (ev->scope == 'g')
		our_int(e, &e->k_pid, "ctrace_pid", 10, ev->pid);
	if (ev->scope == 'g' || ev->scope == 'p')
		our_int(e, &e->k_tid, "ctrace_tid", 10, ev->tid);
	if (has_args(ev))
		args(e, ev, false);
	emit_te(e, ev->ts_ns);
	e->events++;
}

static void counter(struct pftrace_encoder *e, const struct trace_event *ev)
{
	uint64_t track = pfe_counter_track(e, ev->pid, ev->tid, ev->cat, &ev->name);
	double v = ev->value;

	te_head(e, TYPE_COUNTER, track, 0, 0);
	if (v == floor(v) && fabs(v) < 9.0e15) /* whole: a varint, 1 to 3 bytes where a double takes 8 */
		pb_u(&e->te, TE_F_COUNTER, (uint64_t)(int64_t)v);
	else
		pb_double(&e->te, TE_F_DOUBLE_COUNTER, v);
	emit_te(e, ev->ts_ns);
	e->events++;
}

/* A name event's name (process_name, thread_name) as the JSON's args.name. */
static void meta_name(struct pftrace_encoder *e, const struct ct_text *t, const char **s, size_t *n)
{
	*s = t->s;
	*n = t->n;
	if ((t->flags & (CTRACE_STR_PLAIN | CTRACE_STR_TRUNCATED)) == CTRACE_STR_PLAIN ||
	    (!(t->flags & CTRACE_STR_TRUNCATED) && json_as_is(t->s, t->n)))
		return;
	e->text.len = 0;
	jw_str(&e->text, t->s, t->n, (t->flags & CTRACE_STR_TRUNCATED) ? JW_TRUNC_SUFFIX : NULL);
	*s = pftrace_annot_string(&e->annot, e->text.buf, e->text.len);
	*n = strlen(*s);
}

static int32_t sort_index(struct pftrace_encoder *e, int64_t v)
{
	if (v >= INT32_MIN && v <= INT32_MAX)
		return (int32_t)v;
	e->counts.sort_indexes_clamped++;
	return v < 0 ? INT32_MIN : INT32_MAX;
}

static void names(struct pftrace_encoder *e, const struct trace_event *ev)
{
	const char *s = NULL;
	size_t n = 0;
	bool thread = ev->kind == TE_THREAD_NAME || (ev->kind == TE_SORT_INDEX && ev->thread);
	bool sort = ev->kind == TE_SORT_INDEX;
	int32_t si = sort ? sort_index(e, ev->sort_index) : 0;

	if (!sort) {
		meta_name(e, &ev->name, &s, &n);
		/* Strings in the packet must be UTF-8: the JSON's rendering made them so, or they were plain. */
	}
	if (thread) {
		uint64_t uuid = pfe_thread_track(e, ev->pid, ev->tid);

		pfe_thread_desc(e, uuid, pfe_process_track(e, ev->pid), ev->pid, ev->tid, s, n, sort, si);
	} else {
		pfe_process_desc(e, pfe_process_track(e, ev->pid), ev->pid, s, n, sort, si);
	}
	e->events++;
}

static void encode_event(void *ctx, const struct trace_event *ev)
{
	struct pftrace_encoder *e = ctx;

	if (ev->kind == TE_FLOW_STEP) {
		flow_step(e, ev);
		return;
	}
	flush_x(e);
	switch (ev->kind) {
	case TE_COMPLETE: complete(e, ev); break;
	case TE_ASYNC: async_pair(e, ev); break;
	case TE_INSTANT: instant(e, ev, false); break;
	case TE_NOTICE: instant(e, ev, true); break;
	case TE_COUNTER: counter(e, ev); break;
	case TE_PROCESS_NAME:
	case TE_THREAD_NAME:
	case TE_SORT_INDEX: names(e, ev); break;
	case TE_FLOW_STEP: break;
	}
}

/* ---- the frame: the first packet, the context and the metadata ---- */

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/*
 * The first packet: state cleared, CLOCK_MONOTONIC the sequence's clock,
 * and a snapshot of it beside BOOTTIME (Perfetto's trace clock) and
 * REALTIME, so that readers line our times up with others'.
 */
static void emit_start(struct pftrace_encoder *e)
{
	static const uint32_t ids[3] = { CLOCK_ID_BOOTTIME, CLOCK_ID_MONOTONIC, CLOCK_ID_REALTIME };
	static const clockid_t clocks[3] = { CLOCK_BOOTTIME, CLOCK_MONOTONIC, CLOCK_REALTIME };
	uint64_t boot = 0;

	e->desc.n = 0;
	for (int i = 0; i < 3; i++) {
		uint64_t t = now_ns(clocks[i]);

		if (!i)
			boot = t;
		e->sub.n = 0;
		pb_u(&e->sub, 1, ids[i]);
		pb_u(&e->sub, 2, t);
		pb_sub(&e->desc, 1, &e->sub);
	}
	pb_u(&e->desc, 2, CLOCK_ID_BOOTTIME);
	pb_sub(&e->pk, TP_CLOCK_SNAPSHOT, &e->desc);
	pb_u(&e->pk, TP_TIMESTAMP, boot);
	pb_u(&e->pk, TP_SEQ_FLAGS, SEQ_CLEARED | SEQ_NEEDS_STATE);
	pb_u(&e->pk, TP_STATE_CLEARED, 1);
	pb_u(&e->pk, TP_TS_CLOCK, CLOCK_ID_BOOTTIME);
	e->sub.n = 0;
	pb_u(&e->sub, TP_TS_CLOCK, CLOCK_ID_MONOTONIC);
	pb_sub(&e->pk, TP_DEFAULTS, &e->sub);
	pb_u(&e->pk, TP_FIRST_ON_SEQ, 1);
	pfe_emit(e);
}

/* "context" or "metadata": an instant on the global track, the JSON object's members as its annotations. */
static void write_facts(struct pftrace_encoder *e, const char *name, const char *obj, size_t n, uint64_t ts,
			bool counts)
{
	te_head(e, TYPE_INSTANT, 0, pfe_intern(e, &e->names, name, strlen(name)),
		pfe_intern(e, &e->cats, PFTRACE_FACTS_CAT, strlen(PFTRACE_FACTS_CAT)));
	if (!pftrace_annot_object(&e->annot, &e->te, TE_F_ANNOTATIONS, obj, n, intern_key, e))
		e->counts.not_converted++;
	if (counts) {
		our_int(e, NULL, "pftrace_events_not_converted", 28, (int64_t)e->counts.not_converted);
		our_int(e, NULL, "pftrace_sort_indexes_clamped", 28, (int64_t)e->counts.sort_indexes_clamped);
		our_int(e, NULL, "pftrace_tables_cleared", 22, (int64_t)e->counts.tables_cleared);
	}
	emit_te(e, ts);
}

static void encode_begin(void *ctx, const struct trace_facts *facts)
{
	struct pftrace_encoder *e = ctx;
	static const char head[] = "{\"context\":";
	const char *end;

	emit_start(e);
	e->text.len = 0;
	chrome_trace_write_head(&e->text, facts);
	/* {"context":{...},\n"traceEvents":[\n */
	end = memmem(e->text.buf, e->text.len, ",\n\"traceEvents\"", 15);
	if (end)
		write_facts(e, "ctrace: context", e->text.buf + sizeof(head) - 1,
			    (size_t)(end - e->text.buf) - (sizeof(head) - 1), facts->start_mono_ns, false);
}

static void encode_end(void *ctx, const struct trace_facts *facts, const struct trace_stats *stats)
{
	struct pftrace_encoder *e = ctx;
	static const char key[] = "\"metadata\":";
	const char *m;

	flush_x(e);
	e->json.ties = e->ties; /* metadata.slice_begin_ties_*: this encoder's, the same as the JSON's */
	e->text.len = 0;
	chrome_trace_write_end(&e->json, &e->text, e->events, facts, stats);
	m = memmem(e->text.buf, e->text.len, key, sizeof(key) - 1);
	if (m) {
		m += sizeof(key) - 1;
		/* ...}}\n: the metadata's object, without the document's brace */
		write_facts(e, "ctrace: metadata", m, (size_t)(e->text.buf + e->text.len - m) - 2,
			    stats->stop_mono_ns ? stats->stop_mono_ns : e->last_ts, true);
	}
	e->counts.events = e->events;
}

struct trace_encoder pftrace_encoder(struct pftrace_encoder *e)
{
	return (struct trace_encoder){ .begin = encode_begin, .event = encode_event, .end = encode_end, .ctx = e };
}

struct pftrace_encoder *pftrace_encoder_new(struct json_writer *w)
{
	struct pftrace_encoder *e = calloc(1, sizeof(*e));

	if (!e)
		return NULL;
	if (jw_init(&e->text, -1, 1u << 20) < 0) {
		free(e);
		return NULL;
	}
	e->w = w;
	e->names.field = ID_NAMES;
	e->cats.field = ID_CATEGORIES;
	e->keys.field = ID_KEYS;
	key_map_init(&e->names.map);
	key_map_init(&e->cats.map);
	key_map_init(&e->keys.map);
	key_map_init(&e->tracks);
	key_map_init(&e->async_pools);
	nest_ties_init(&e->ties);
	e->json.w = &e->text;
	return e;
}

uint64_t pftrace_encoder_events(const struct pftrace_encoder *e)
{
	return e->events;
}

void pftrace_encoder_free(struct pftrace_encoder *e)
{
	if (!e)
		return;
	key_map_free(&e->names.map);
	key_map_free(&e->cats.map);
	key_map_free(&e->keys.map);
	key_map_free(&e->tracks);
	key_map_free_with_values(&e->async_pools);
	pftrace_annot_free(&e->annot);
	jw_free(&e->text);
	free(e->pk.p);
	free(e->te.p);
	free(e->idata.p);
	free(e->desc.p);
	free(e->sub.p);
	free(e->frame.p);
	free(e->isub.p);
	free(e);
}
