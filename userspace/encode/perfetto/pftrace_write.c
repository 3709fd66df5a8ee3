// SPDX-License-Identifier: MIT
/* JSON trace -> Perfetto protobuf trace (pftrace.h says how each event maps). */
#include "encode/perfetto/pftrace.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <cjson/cJSON.h>
#include "lib/key_map.h"
#include "perfetto_trace.pb-c.h"

#define SEQ_ID 1 /* one writer, one sequence */
#define SEQ_CLEARED 1
#define SEQ_NEEDS_STATE 2
#define CLOCK_ID_REALTIME 1
#define CLOCK_ID_MONOTONIC 3
#define CLOCK_ID_BOOTTIME 6
/*
 * The writer's state is bounded for a trace of any length: each interning
 * table and the track table hold at most this many entries, then start
 * again empty (counted: metadata.pftrace_tables_cleared); a string or
 * track met again costs its definition sent again.
 */
#define TABLE_MAX (1u << 18)
/* A line of the JSON trace at most (a span and its args; trace_fix.h's bound is larger). */
#define LINE_MAX_BYTES (64u << 20)

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__TrackEvent TrackEvent;
typedef Perfetto__Protos__TrackDescriptor TrackDescriptor;
typedef Perfetto__Protos__DebugAnnotation Annotation;

struct interned {
	struct key_map map; /* string -> iid */
	uint64_t next;
	/* New this packet: sent in its interned_data. */
	Perfetto__Protos__EventName **fresh; /* EventName, EventCategory, DebugAnnotationName: one layout */
	size_t n_fresh, cap_fresh;
};

struct writer {
	/* Packets made and not yet taken (pftrace_stream_take()): whole ones only. */
	uint8_t *obuf;
	size_t olen, ocap;
	struct interned names, cats, keys;
	struct key_map tracks;   /* kind, pid, tid, name -> uuid */
	struct key_map async_pools; /* pid, name -> struct async_pool */
	struct open_async {
		struct async_pool *pool;
		size_t slot;
		uint64_t track;
		bool open;
	} open_async; /* the "b" written, its "e" next */
	uint64_t next_uuid;
	/* Allocations of the packet being built: freed once it is written. */
	void **owned;
	size_t n_owned, cap_owned;
	struct pftrace_counts *counts;
};

static void *own(struct writer *w, void *p)
{
	if (!p)
		abort(); /* out of memory: as key_map does */
	if (w->n_owned == w->cap_owned) {
		w->cap_owned = w->cap_owned ? w->cap_owned * 2 : 64;
		w->owned = realloc(w->owned, w->cap_owned * sizeof(*w->owned));
		if (!w->owned)
			abort();
	}
	w->owned[w->n_owned++] = p;
	return p;
}

static void *own_zalloc(struct writer *w, size_t n)
{
	return own(w, calloc(1, n));
}

/* An untrusted string as valid UTF-8, kept until the packet is written. */
static char *clean(struct writer *w, const char *s)
{
	char *copy;
	const char *c = pftrace_utf8(s ? s : "", &copy);

	if (copy)
		own(w, copy);
	return (char *)c;
}

static uint64_t intern(struct writer *w, struct interned *t, const char *s)
{
	size_t n = strlen(s);
	void *v = key_map_get(&t->map, s, n);
	Perfetto__Protos__EventName *e;

	if (v)
		return (uint64_t)(uintptr_t)v;
	if (t->map.count >= TABLE_MAX) {
		/* Forgotten, not reused: iids keep growing, so a string met again is only sent again. */
		key_map_free(&t->map);
		key_map_init(&t->map);
		w->counts->tables_cleared++;
	}
	t->next++;
	key_map_put(&t->map, s, n, (void *)(uintptr_t)t->next);
	/* EventName's layout for the three (iid 1, name 2), each with its own descriptor. */
	e = own_zalloc(w, sizeof(*e));
	if (t == &w->names)
		perfetto__protos__event_name__init(e);
	else if (t == &w->cats)
		perfetto__protos__event_category__init((Perfetto__Protos__EventCategory *)e);
	else
		perfetto__protos__debug_annotation_name__init((Perfetto__Protos__DebugAnnotationName *)e);
	e->has_iid = true;
	e->iid = t->next;
	e->name = own(w, strdup(s));
	if (t->n_fresh == t->cap_fresh) {
		t->cap_fresh = t->cap_fresh ? t->cap_fresh * 2 : 16;
		t->fresh = realloc(t->fresh, t->cap_fresh * sizeof(*t->fresh));
		if (!t->fresh)
			abort();
	}
	t->fresh[t->n_fresh++] = e;
	return t->next;
}

/* Room for n more bytes of output. */
static uint8_t *out_room(struct writer *w, size_t n)
{
	if (w->olen + n > w->ocap) {
		w->ocap = (w->olen + n) * 2;
		w->obuf = realloc(w->obuf, w->ocap);
		if (!w->obuf)
			abort();
	}
	return w->obuf + w->olen;
}

static void put_varint(struct writer *w, uint64_t v)
{
	uint8_t *q = out_room(w, 10);

	do {
		uint8_t b = v & 0x7f;

		v >>= 7;
		*q++ = v ? b | 0x80 : b;
		w->olen++;
	} while (v);
}

/* Writes one packet as the Trace's field 1 (what a streamed .pftrace is), with the sequence's fields. */
static void emit(struct writer *w, Packet *p)
{
	Perfetto__Protos__InternedData idata = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	size_t n;

	p->has_trusted_packet_sequence_id = true;
	p->trusted_packet_sequence_id = SEQ_ID;
	/*
	 * No SEQ_NEEDS_INCREMENTAL_STATE on the others (2 bytes a packet): the
	 * flag only lets a reader skip packets after a loss of the sequence's
	 * state (Perfetto's proto_trace_reader.cc), which a file written whole
	 * has not; interned names and the defaults are looked up without it.
	 */
	if (w->names.n_fresh || w->cats.n_fresh || w->keys.n_fresh) {
		idata.n_event_names = w->names.n_fresh;
		idata.event_names = w->names.fresh;
		idata.n_event_categories = w->cats.n_fresh;
		idata.event_categories = (Perfetto__Protos__EventCategory **)w->cats.fresh;
		idata.n_debug_annotation_names = w->keys.n_fresh;
		idata.debug_annotation_names = (Perfetto__Protos__DebugAnnotationName **)w->keys.fresh;
		p->interned_data = &idata;
	}
	n = perfetto__protos__trace_packet__get_packed_size(p);
	*out_room(w, 1) = 0x0a; /* field 1, length-delimited */
	w->olen++;
	put_varint(w, n);
	perfetto__protos__trace_packet__pack(p, out_room(w, n));
	w->olen += n;
	w->counts->packets++;
	w->names.n_fresh = w->cats.n_fresh = w->keys.n_fresh = 0;
	for (size_t i = 0; i < w->n_owned; i++)
		free(w->owned[i]);
	w->n_owned = 0;
}

static uint64_t now_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * The first packet: state cleared, CLOCK_MONOTONIC the sequence's clock,
 * and a snapshot of it beside BOOTTIME (Perfetto's trace clock) and
 * REALTIME, so that readers line our times up with others'.
 */
static void emit_start(struct writer *w)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TracePacketDefaults d = PERFETTO__PROTOS__TRACE_PACKET_DEFAULTS__INIT;
	Perfetto__Protos__ClockSnapshot cs = PERFETTO__PROTOS__CLOCK_SNAPSHOT__INIT;
	Perfetto__Protos__ClockSnapshot__Clock c[3], *cp[3];
	static const uint32_t ids[3] = { CLOCK_ID_BOOTTIME, CLOCK_ID_MONOTONIC, CLOCK_ID_REALTIME };
	static const clockid_t clocks[3] = { CLOCK_BOOTTIME, CLOCK_MONOTONIC, CLOCK_REALTIME };

	for (int i = 0; i < 3; i++) {
		perfetto__protos__clock_snapshot__clock__init(&c[i]);
		c[i].has_clock_id = c[i].has_timestamp = true;
		c[i].clock_id = ids[i];
		c[i].timestamp = now_ns(clocks[i]);
		cp[i] = &c[i];
	}
	cs.n_clocks = 3;
	cs.clocks = cp;
	cs.has_primary_trace_clock = true;
	cs.primary_trace_clock = CLOCK_ID_BOOTTIME;
	d.has_timestamp_clock_id = true;
	d.timestamp_clock_id = CLOCK_ID_MONOTONIC;
	p.clock_snapshot = &cs;
	p.trace_packet_defaults = &d;
	p.has_timestamp = true;
	p.timestamp = c[0].timestamp;
	p.has_timestamp_clock_id = true;
	p.timestamp_clock_id = CLOCK_ID_BOOTTIME;
	p.has_first_packet_on_sequence = p.has_incremental_state_cleared = true;
	p.first_packet_on_sequence = p.incremental_state_cleared = true;
	p.has_sequence_flags = true;
	p.sequence_flags = SEQ_CLEARED | SEQ_NEEDS_STATE;
	emit(w, &p);
}

/* ---- tracks ---- */

enum track_kind { TK_PROCESS = 'p', TK_THREAD = 't', TK_COUNTER = 'c' };

struct track_key {
	char kind;
	uint32_t pid, tid;
};

static uint64_t track_lookup(struct writer *w, struct track_key k, const char *name, bool *fresh)
{
	/* kind, pid, tid, name: packed byte by byte (a struct's padding would make equal keys differ) */
	size_t nlen = name ? strlen(name) : 0;
	size_t klen = 9 + nlen;
	char *key = malloc(klen);
	uint64_t uuid;
	void *v;

	if (!key)
		abort();
	key[0] = k.kind;
	memcpy(key + 1, &k.pid, 4);
	memcpy(key + 5, &k.tid, 4);
	if (nlen)
		memcpy(key + 9, name, nlen);
	v = key_map_get(&w->tracks, key, klen);
	*fresh = !v;
	if (v) {
		uuid = (uint64_t)(uintptr_t)v;
	} else {
		if (w->tracks.count >= TABLE_MAX) {
			/* A track met again after this gets a new uuid and descriptor (Perfetto joins a thread's by its tid). */
			key_map_free(&w->tracks);
			key_map_init(&w->tracks);
			w->counts->tables_cleared++;
		}
		uuid = ++w->next_uuid;
		key_map_put(&w->tracks, key, klen, (void *)(uintptr_t)uuid);
	}
	free(key);
	return uuid;
}

static uint64_t process_track(struct writer *w, uint32_t pid)
{
	struct track_key k = { TK_PROCESS, pid, 0 };
	bool fresh;
	uint64_t uuid = track_lookup(w, k, NULL, &fresh);

	if (fresh) {
		Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
		TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
		Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;

		d.has_uuid = true;
		d.uuid = uuid;
		pd.has_pid = true;
		pd.pid = (int32_t)pid;
		d.process = &pd;
		p.track_descriptor = &d;
		emit(w, &p);
	}
	return uuid;
}

static uint64_t thread_track(struct writer *w, uint32_t pid, uint32_t tid)
{
	struct track_key k = { TK_THREAD, pid, tid };
	bool fresh;
	uint64_t parent = process_track(w, pid);
	uint64_t uuid = track_lookup(w, k, NULL, &fresh);

	if (fresh) {
		Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
		TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
		Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;

		d.has_uuid = d.has_parent_uuid = true;
		d.uuid = uuid;
		d.parent_uuid = parent;
		td.has_pid = td.has_tid = true;
		td.pid = (int32_t)pid;
		td.tid = tid;
		d.thread = &td;
		p.track_descriptor = &d;
		emit(w, &p);
	}
	return uuid;
}

/* A counter track per thread, category and name (the JSON's "C" has all three). */
static uint64_t counter_track(struct writer *w, uint32_t pid, uint32_t tid, const char *cat,
			      const char *name)
{
	struct track_key k = { TK_COUNTER, pid, tid };
	uint64_t parent = thread_track(w, pid, tid);
	size_t klen = strlen(cat) + strlen(name) + 2;
	char *key = malloc(klen);
	bool fresh;
	uint64_t uuid;

	if (!key)
		abort();
	/* cat "\x01" name: cJSON's strings hold no NUL, and the JSON writer escapes \x01 */
	snprintf(key, klen, "%s\x01%s", cat, name);
	uuid = track_lookup(w, k, key, &fresh);
	free(key);
	if (fresh) {
		Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
		TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
		Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
		char *cats[1] = { clean(w, cat) };

		d.has_uuid = d.has_parent_uuid = true;
		d.uuid = uuid;
		d.parent_uuid = parent;
		d.name = clean(w, name);
		cd.n_categories = 1;
		cd.categories = cats;
		d.counter = &cd;
		p.track_descriptor = &d;
		emit(w, &p);
	}
	return uuid;
}

/* ---- debug annotations from JSON values ---- */

/*
 * cJSON keeps numbers as doubles: past 15 digits they lose their last ones
 * (a u64 arg, the wall clock in ns, a "ts" in us with its 3 decimals after
 * 104 days of uptime). So before parsing, a number of 16 digits or more
 * outside strings becomes the string BIG_NUM_MARK "its text", read exactly
 * by exact_ns(), fill_value() and num_of(). NULL: the line has none.
 * The mark begins with a raw 0xff, which no string of the JSON writer's
 * holds (it writes valid UTF-8 only, and \u escapes decode to valid
 * UTF-8): the traced program cannot forge it.
 */
#define BIG_NUM_MARK "\xffnum:"
#define BIG_NUM_DIGITS 16

static bool is_number_char(char c)
{
	return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
}

static char *protect_big_numbers(const char *s, size_t n)
{
	char *o = NULL;
	size_t i = 0, at = 0, len = 0, cap = 0;
	bool in_str = false;

	for (; i < n; i++) {
		size_t d, digits = 0;

		if (in_str) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				in_str = false;
			continue;
		}
		if (s[i] == '"') {
			in_str = true;
			continue;
		}
		if (!(s[i] == '-' || (s[i] >= '0' && s[i] <= '9')))
			continue;
		/* A number token (outside strings only numbers have digits): its end, its digits */
		for (d = i; d < n && is_number_char(s[d]); d++)
			digits += s[d] >= '0' && s[d] <= '9';
		if (digits < BIG_NUM_DIGITS) {
			i = d - 1;
			continue;
		}
		if (len + (i - at) + (d - i) + 32 > cap) {
			cap = (cap + n + (d - i) + 32) * 2;
			o = realloc(o, cap);
			if (!o)
				abort();
		}
		memcpy(o + len, s + at, i - at);
		len += i - at;
		len += (size_t)sprintf(o + len, "\"%s%.*s\"", BIG_NUM_MARK, (int)(d - i), s + i);
		at = d;
		i = d - 1;
	}
	if (!o)
		return NULL;
	o = realloc(o, len + (n - at) + 1);
	if (!o)
		abort();
	memcpy(o + len, s + at, n - at);
	o[len + n - at] = 0;
	return o;
}

/* The text of a number protect_big_numbers() marked, or NULL. */
static const char *big_number(const cJSON *v)
{
	if (!cJSON_IsString(v) || strncmp(v->valuestring, BIG_NUM_MARK, strlen(BIG_NUM_MARK)))
		return NULL;
	return v->valuestring + strlen(BIG_NUM_MARK);
}

static cJSON *parse_json(const char *s, size_t n)
{
	char *safe = protect_big_numbers(s, n);
	cJSON *v = cJSON_ParseWithLength(safe ? safe : s, safe ? strlen(safe) : n);

	free(safe);
	return v;
}

static Annotation *annotation(struct writer *w, const cJSON *v);

static void fill_value(struct writer *w, Annotation *a, const cJSON *v)
{
	if (cJSON_IsObject(v) || cJSON_IsArray(v)) {
		size_t n = (size_t)cJSON_GetArraySize(v), i = 0;
		Annotation **list;
		const cJSON *c;

		if (!n) { /* an empty {} or []: no entries tell which */
			a->legacy_json_value = cJSON_IsObject(v) ? "{}" : "[]";
			return;
		}
		list = own_zalloc(w, n * sizeof(*list));
		cJSON_ArrayForEach(c, v) {
			list[i] = annotation(w, c);
			if (cJSON_IsObject(v))
				list[i]->name = clean(w, c->string);
			i++;
		}
		if (cJSON_IsObject(v)) {
			a->n_dict_entries = n;
			a->dict_entries = list;
		} else {
			a->n_array_values = n;
			a->array_values = list;
		}
	} else if (big_number(v)) {
		const char *num = big_number(v);

		if (strpbrk(num, ".eE")) {
			a->has_double_value = true;
			a->double_value = strtod(num, NULL);
		} else if (*num == '-') {
			a->has_int_value = true;
			a->int_value = strtoll(num, NULL, 10);
		} else {
			a->has_uint_value = true;
			a->uint_value = strtoull(num, NULL, 10);
		}
	} else if (cJSON_IsString(v)) {
		a->string_value = clean(w, v->valuestring);
	} else if (cJSON_IsBool(v)) {
		a->has_bool_value = true;
		a->bool_value = cJSON_IsTrue(v);
	} else if (cJSON_IsNumber(v)) {
		double d = v->valuedouble;

		/* Whole numbers as integers (smaller, and shown as the JSON showed them). */
		if (d == floor(d) && fabs(d) < 9.2e18) {
			a->has_int_value = true;
			a->int_value = (int64_t)d;
		} else {
			a->has_double_value = true;
			a->double_value = d;
		}
	} else {
		a->legacy_json_value = "null";
	}
}

static Annotation *annotation(struct writer *w, const cJSON *v)
{
	Annotation *a = own_zalloc(w, sizeof(*a));

	perfetto__protos__debug_annotation__init(a);
	fill_value(w, a, v);
	return a;
}

/* A top-level annotation: its key interned. */
static Annotation *named(struct writer *w, const char *key, const cJSON *v)
{
	Annotation *a = annotation(w, v);

	a->has_name_iid = true;
	a->name_iid = intern(w, &w->keys, clean(w, key));
	return a;
}

/* The annotations of an event: ours (ctrace_*, numbers) first, then its args' members. */
static void set_annotations(struct writer *w, TrackEvent *te, const char *const *ours,
			    const cJSON *const *our_values, size_t n_ours, const cJSON *args)
{
	size_t n = n_ours + (cJSON_IsObject(args) ? (size_t)cJSON_GetArraySize(args) : 0), i = 0;
	const cJSON *c;

	if (!n)
		return;
	te->debug_annotations = own_zalloc(w, n * sizeof(*te->debug_annotations));
	for (; i < n_ours; i++)
		te->debug_annotations[i] = named(w, ours[i], our_values[i]);
	if (cJSON_IsObject(args))
		cJSON_ArrayForEach(c, args)
			te->debug_annotations[i++] = named(w, c->string, c);
	te->n_debug_annotations = i;
}

/* ---- events ---- */

static const char *str_of(const cJSON *o, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	return cJSON_IsString(v) ? v->valuestring : NULL;
}

static double num_of(const cJSON *o, const char *key, bool *ok)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (big_number(v))
		return strtod(big_number(v), NULL);
	if (!cJSON_IsNumber(v)) {
		*ok = false;
		return 0;
	}
	return v->valuedouble;
}

/* Microseconds with three decimals (as chrome_trace.c writes them) to nanoseconds; past 2^64 ns: the most. */
static uint64_t us_to_ns(double us)
{
	if (!(us > 0))
		return 0;
	return us * 1000.0 >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t)llround(us * 1000.0);
}

/* "ts" or "dur" in ns, exactly as written ("123.456" us), whatever its digits; 0: none. */
static uint64_t ns_of(const cJSON *ev, const char *key)
{
	const char *num = big_number(cJSON_GetObjectItemCaseSensitive(ev, key)), *dot;
	unsigned long long us;
	uint64_t ns = 0;
	bool ok = true;

	if (!num)
		return us_to_ns(num_of(ev, key, &ok));
	if (*num == '-' || strpbrk(num, "eE"))
		return us_to_ns(strtod(num, NULL));
	us = strtoull(num, NULL, 10);
	if (us > UINT64_MAX / 1000)
		return UINT64_MAX;
	dot = strchr(num, '.');
	for (int i = 1, scale = 100; dot && i <= 3 && dot[i] >= '0' && dot[i] <= '9'; i++, scale /= 10)
		ns += (uint64_t)(dot[i] - '0') * scale;
	return us * 1000 > UINT64_MAX - ns ? UINT64_MAX : us * 1000 + ns;
}

static void event_init(struct writer *w, Packet *p, TrackEvent *te, const cJSON *ev, int type,
		       uint64_t ts_ns, uint64_t track)
{
	const char *name = str_of(ev, "name"), *cat = str_of(ev, "cat");

	perfetto__protos__track_event__init(te);
	/* An event the JSON gives no time (the model writes none for ts past 2^64-1 ns): none here either */
	p->has_timestamp = cJSON_GetObjectItemCaseSensitive(ev, "ts") != NULL;
	p->timestamp = ts_ns;
	te->has_type = true;
	te->type = type;
	te->has_track_uuid = true;
	te->track_uuid = track;
	if (name) {
		te->has_name_iid = true;
		te->name_iid = intern(w, &w->names, clean(w, name));
	}
	if (cat) {
		uint64_t *iid = own_zalloc(w, sizeof(*iid));

		*iid = intern(w, &w->cats, clean(w, cat));
		te->n_category_iids = 1;
		te->category_iids = iid;
	}
	p->track_event = te;
}

static void slice_end(struct writer *w, uint64_t ts_ns, uint64_t track, const char *const *ours,
		      const cJSON *const *vals, size_t n_ours, const cJSON *args)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	TrackEvent te;

	perfetto__protos__track_event__init(&te);
	p.has_timestamp = true;
	p.timestamp = ts_ns;
	te.has_type = te.has_track_uuid = true;
	te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
	te.track_uuid = track;
	set_annotations(w, &te, ours, vals, n_ours, args);
	p.track_event = &te;
	emit(w, &p);
}

/* Flow ids of the "s" (out) and "f" (in) events that follow an "X". */
struct flows {
	uint64_t *out, *in;
	size_t n_out, n_in, cap_out, cap_in;
};

static void flows_add(uint64_t **v, size_t *n, size_t *cap, uint64_t id)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 8;
		*v = realloc(*v, *cap * sizeof(**v));
		if (!*v)
			abort();
	}
	(*v)[(*n)++] = id;
}

static uint64_t hex_id(const char *s)
{
	return s ? strtoull(s, NULL, 16) : 0;
}

static void write_x(struct writer *w, const cJSON *ev, const struct flows *fl)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	TrackEvent te;
	bool ok = true;
	uint32_t pid = (uint32_t)num_of(ev, "pid", &ok), tid = (uint32_t)num_of(ev, "tid", &ok);
	uint64_t ts = ns_of(ev, "ts"), dur = ns_of(ev, "dur");
	uint64_t track = thread_track(w, pid, tid);

	event_init(w, &p, &te, ev, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, ts, track);
	set_annotations(w, &te, NULL, NULL, 0, cJSON_GetObjectItemCaseSensitive(ev, "args"));
	te.n_flow_ids = fl->n_out;
	te.flow_ids = fl->out;
	te.n_terminating_flow_ids = fl->n_in;
	te.terminating_flow_ids = fl->in;
	emit(w, &p);
	slice_end(w, ts + dur, track, NULL, NULL, 0, NULL);
}

/*
 * Async tracks: a span ended on another thread is a slice of a track of
 * its own under its process; a track whose last span ended before this
 * one began takes it (as Perfetto's JSON import does), so that a process
 * with a million such spans has as many tracks as it ever had open at once.
 */
#define ASYNC_POOL_MAX 256 /* tracks per process and name; past it, a new one each span */
#define ASYNC_POOLS_MAX 4096 /* process-and-name pools kept (6 KB each), then all forgotten */

struct async_pool {
	size_t n;
	uint64_t uuid[ASYNC_POOL_MAX], last_end[ASYNC_POOL_MAX];
	int busy[ASYNC_POOL_MAX]; /* its "b" written, its "e" not yet */
};

static uint64_t async_track(struct writer *w, uint32_t pid, const char *name, uint64_t begin_ns,
			    const char *key, size_t kl, struct async_pool **pool_out, size_t *slot)
{
	struct async_pool *pool = key_map_get(&w->async_pools, key, kl);
	Packet dp = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;

	if (!pool) {
		if (w->async_pools.count >= ASYNC_POOLS_MAX) {
			/* Safe: only the pool of the open span is held (open_async), and this "b" replaces it. */
			key_map_free_with_values(&w->async_pools);
			key_map_init(&w->async_pools);
			w->counts->tables_cleared++;
		}
		pool = calloc(1, sizeof(*pool));
		if (!pool)
			abort();
		key_map_put(&w->async_pools, key, kl, pool);
	}
	*pool_out = pool;
	for (size_t i = 0; i < pool->n; i++)
		if (!pool->busy[i] && pool->last_end[i] <= begin_ns) {
			*slot = i;
			pool->busy[i] = 1;
			return pool->uuid[i];
		}
	d.has_uuid = d.has_parent_uuid = true;
	d.parent_uuid = process_track(w, pid);
	d.uuid = ++w->next_uuid;
	d.name = clean(w, name);
	dp.track_descriptor = &d;
	emit(w, &dp);
	*slot = pool->n;
	if (pool->n < ASYNC_POOL_MAX) {
		pool->uuid[pool->n] = d.uuid;
		pool->busy[pool->n++] = 1;
	}
	return d.uuid;
}

/* The span's id ("0x1f") as a number when it reads back the same, else as the string. */
static cJSON *async_id(const char *id)
{
	char *end, again[32];
	unsigned long long v = strtoull(id, &end, 16);

	snprintf(again, sizeof(again), "0x%llx", v);
	return strcmp(again, id) ? cJSON_CreateString(id) : cJSON_CreateNumber((double)v);
}

static void write_async(struct writer *w, const cJSON *ev, bool begin)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	TrackEvent te;
	bool ok = true;
	uint32_t pid = (uint32_t)num_of(ev, "pid", &ok);
	double tid = num_of(ev, "tid", &ok);
	uint64_t ts = ns_of(ev, "ts");
	const char *id = str_of(ev, "id") ? str_of(ev, "id") : "", *name = str_of(ev, "name");
	char key[600];
	int klen = snprintf(key, sizeof(key), "%u/%s", pid, name ? name : "");
	size_t kl = klen < (int)sizeof(key) ? (size_t)klen : sizeof(key) - 1;
	const char *ours[2] = { "ctrace_tid", "ctrace_id" };
	cJSON *vals[2] = { cJSON_CreateNumber(tid), async_id(id) };
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");

	if (begin) {
		struct async_pool *pool;
		size_t slot;
		uint64_t track = async_track(w, pid, name ? name : "", ts, key, kl, &pool, &slot);

		/* The writer puts the "e" right after its "b": one open at a time per pool */
		w->open_async = (struct open_async){ pool, slot, track, true };
		event_init(w, &p, &te, ev, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN, ts, track);
		set_annotations(w, &te, ours, (const cJSON *const *)vals, 2, args);
		emit(w, &p);
	} else if (w->open_async.open) {
		struct open_async *o = &w->open_async;

		/* Its id is its begin's: only which thread ended it */
		slice_end(w, ts, o->track, ours, (const cJSON *const *)vals, 1, args);
		if (o->slot < o->pool->n && o->pool->uuid[o->slot] == o->track) {
			o->pool->busy[o->slot] = 0;
			o->pool->last_end[o->slot] = ts;
		}
		o->open = false;
	} else {
		w->counts->not_converted++; /* an "e" with no "b" before it: the JSON writer never writes one */
		w->counts->events--;
	}
	cJSON_Delete(vals[0]);
	cJSON_Delete(vals[1]);
}

static void write_instant(struct writer *w, const cJSON *ev)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	TrackEvent te;
	bool ok = true;
	uint32_t pid = (uint32_t)num_of(ev, "pid", &ok), tid = (uint32_t)num_of(ev, "tid", &ok);
	uint64_t ts = ns_of(ev, "ts");
	const char *s = str_of(ev, "s") ? str_of(ev, "s") : "t";
	const char *ours[2] = { "ctrace_pid", "ctrace_tid" };
	cJSON *vals[2] = { cJSON_CreateNumber(pid), cJSON_CreateNumber(tid) };
	uint64_t track;
	size_t n_ours;

	if (*s == 'g') {
		track = 0; /* Perfetto's global track */
		n_ours = 2;
	} else if (*s == 'p') {
		track = process_track(w, pid);
		n_ours = 1;
	} else {
		track = thread_track(w, pid, tid);
		n_ours = 0;
	}
	event_init(w, &p, &te, ev, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT, ts, track);
	set_annotations(w, &te, *s == 'p' ? ours + 1 : ours, *s == 'p' ? (const cJSON *const *)vals + 1 :
				(const cJSON *const *)vals, n_ours,
			cJSON_GetObjectItemCaseSensitive(ev, "args"));
	emit(w, &p);
	cJSON_Delete(vals[0]);
	cJSON_Delete(vals[1]);
}

static void write_counter(struct writer *w, const cJSON *ev)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	TrackEvent te;
	bool ok = true;
	uint32_t pid = (uint32_t)num_of(ev, "pid", &ok), tid = (uint32_t)num_of(ev, "tid", &ok);
	uint64_t ts = ns_of(ev, "ts");
	const char *name = str_of(ev, "name"), *cat = str_of(ev, "cat");
	double v = num_of(cJSON_GetObjectItemCaseSensitive(ev, "args"), "value", &ok);

	perfetto__protos__track_event__init(&te);
	p.has_timestamp = cJSON_GetObjectItemCaseSensitive(ev, "ts") != NULL;
	p.timestamp = ts;
	te.has_type = te.has_track_uuid = true;
	te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
	te.track_uuid = counter_track(w, pid, tid, cat ? cat : "", name ? name : "");
	if (v == floor(v) && fabs(v) < 9.0e15) { /* whole: a varint, 1 to 3 bytes where a double takes 8 */
		te.has_counter_value = true;
		te.counter_value = (int64_t)v;
	} else {
		te.has_double_counter_value = true;
		te.double_counter_value = v;
	}
	p.track_event = &te;
	emit(w, &p);
}

/* A sort index (the program's int64) as Perfetto's int32: the nearest, and counted when not the same. */
static int32_t sort_index(struct writer *w, double v)
{
	if (v >= INT32_MIN && v <= INT32_MAX)
		return (int32_t)v;
	w->counts->sort_indexes_clamped++;
	return v < 0 ? INT32_MIN : INT32_MAX;
}

/* "M": the process's or thread's track again, with the one fact the event gives. */
static void write_meta(struct writer *w, const cJSON *ev)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	TrackDescriptor d = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor td = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	const cJSON *args = cJSON_GetObjectItemCaseSensitive(ev, "args");
	const char *what = str_of(ev, "name") ? str_of(ev, "name") : "";
	bool ok = true;
	uint32_t pid = (uint32_t)num_of(ev, "pid", &ok), tid = (uint32_t)num_of(ev, "tid", &ok);
	double sort = num_of(args, "sort_index", &ok);
	const char *name = str_of(args, "name");
	bool thread = !strncmp(what, "thread_", 7);

	d.has_uuid = true;
	if (thread) {
		d.uuid = thread_track(w, pid, tid);
		d.has_parent_uuid = true;
		d.parent_uuid = process_track(w, pid);
		td.has_pid = td.has_tid = true;
		td.pid = (int32_t)pid;
		td.tid = tid;
		d.thread = &td;
	} else {
		d.uuid = process_track(w, pid);
		pd.has_pid = true;
		pd.pid = (int32_t)pid;
		d.process = &pd;
	}
	if (!strcmp(what, "process_name") && name) {
		pd.process_name = clean(w, name);
	} else if (!strcmp(what, "thread_name") && name) {
		td.thread_name = clean(w, name);
	} else if (!strcmp(what, "process_sort_index") && ok) {
		pd.has_legacy_sort_index = true;
		pd.legacy_sort_index = sort_index(w, sort);
	} else if (!strcmp(what, "thread_sort_index") && ok) {
		td.has_legacy_sort_index = true;
		td.legacy_sort_index = sort_index(w, sort);
	} else {
		w->counts->not_converted++;
		w->counts->events--;
		return;
	}
	p.track_descriptor = &d;
	emit(w, &p);
}

/* "context" or "metadata": an instant on the global track, the object as its annotations. */
static void write_facts(struct writer *w, const char *name, const cJSON *facts, uint64_t ts_ns)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	TrackEvent te;
	cJSON *ev = cJSON_CreateObject();

	cJSON_AddStringToObject(ev, "name", name);
	cJSON_AddStringToObject(ev, "cat", PFTRACE_FACTS_CAT);
	event_init(w, &p, &te, ev, PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT, ts_ns, 0);
	p.has_timestamp = true; /* ev has no "ts": the time is the trace's start or stop */
	set_annotations(w, &te, NULL, NULL, 0, facts);
	emit(w, &p);
	cJSON_Delete(ev);
}

/* ---- the JSON trace, line by line ---- */

struct pending_x {
	cJSON *ev;
	struct flows fl;
};

static void flush_x(struct writer *w, struct pending_x *x)
{
	if (!x->ev)
		return;
	write_x(w, x->ev, &x->fl);
	cJSON_Delete(x->ev);
	x->ev = NULL;
	x->fl.n_out = x->fl.n_in = 0;
}

static bool same_place(const cJSON *a, const cJSON *b)
{
	bool ok = true;

	return num_of(a, "pid", &ok) == num_of(b, "pid", &ok) && num_of(a, "tid", &ok) == num_of(b, "tid", &ok) &&
	       ns_of(a, "ts") == ns_of(b, "ts") && ok;
}

static void write_event(struct writer *w, cJSON *ev, struct pending_x *x)
{
	const char *ph = str_of(ev, "ph");

	w->counts->events++;
	if (ph && (!strcmp(ph, "s") || !strcmp(ph, "f")) && x->ev && same_place(ev, x->ev)) {
		/* A flow phase event of the X before it: a flow id of that slice. */
		if (*ph == 's')
			flows_add(&x->fl.out, &x->fl.n_out, &x->fl.cap_out, hex_id(str_of(ev, "id")));
		else
			flows_add(&x->fl.in, &x->fl.n_in, &x->fl.cap_in, hex_id(str_of(ev, "id")));
		cJSON_Delete(ev);
		return;
	}
	flush_x(w, x);
	if (!ph || ph[1]) {
		w->counts->not_converted++;
		w->counts->events--;
	} else if (*ph == 'X') {
		x->ev = ev;
		return;
	} else if (*ph == 'b' || *ph == 'e') {
		write_async(w, ev, *ph == 'b');
	} else if (*ph == 'I') {
		write_instant(w, ev);
	} else if (*ph == 'C') {
		write_counter(w, ev);
	} else if (*ph == 'M') {
		write_meta(w, ev);
	} else {
		w->counts->not_converted++;
		w->counts->events--;
	}
	cJSON_Delete(ev);
}

/* A line without its trailing ",", spaces and newline. */
static size_t trim(char *s, size_t n)
{
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == ','))
		s[--n] = 0;
	return n;
}

static cJSON *parse_prefixed(char *line, size_t n, const char *prefix, size_t strip_end)
{
	size_t pl = strlen(prefix);

	if (n < pl + strip_end || strncmp(line, prefix, pl))
		return NULL;
	return parse_json(line + pl, n - pl - strip_end);
}

static void free_writer(struct writer *w)
{
	struct interned *t[3] = { &w->names, &w->cats, &w->keys };

	for (int i = 0; i < 3; i++) {
		key_map_free(&t[i]->map);
		free(t[i]->fresh);
	}
	key_map_free(&w->tracks);
	key_map_free_with_values(&w->async_pools);
	for (size_t i = 0; i < w->n_owned; i++)
		free(w->owned[i]);
	free(w->owned);
	free(w->obuf);
}

/* ---- the stream: JSON bytes in as the writer sends them, whole packets out ---- */

struct pftrace_stream {
	struct writer w;
	struct pftrace_counts counts;
	struct pending_x x;       /* the last "X", until the line after it (its flows come first) */
	bool context_seen;
	cJSON *metadata;          /* the last line: nothing after it is read */
	uint64_t last_ts;
	/* The line being received: the writer hands its buffer on mid-line. */
	char *line;
	size_t len, cap;
	bool skipping;            /* a line past LINE_MAX_BYTES: dropped up to its newline */
};

struct pftrace_stream *pftrace_stream_new(void)
{
	struct pftrace_stream *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->w.counts = &s->counts;
	key_map_init(&s->w.names.map);
	key_map_init(&s->w.cats.map);
	key_map_init(&s->w.keys.map);
	key_map_init(&s->w.tracks);
	key_map_init(&s->w.async_pools);
	emit_start(&s->w);
	return s;
}

/* One whole line of the JSON trace (its newline cut off). */
static void stream_line(struct pftrace_stream *s, char *line, size_t n)
{
	cJSON *ev;

	n = trim(line, n);
	if (s->metadata || !n || !strcmp(line, "]") || !strcmp(line, "\"traceEvents\":["))
		return;
	if (!s->context_seen && (ev = parse_prefixed(line, n, "{\"context\":", 0))) {
		const cJSON *t = cJSON_GetObjectItemCaseSensitive(ev, "trace_start_monotonic_ns");

		s->context_seen = true;
		write_facts(&s->w, "ctrace: context", ev,
			    big_number(t) ? strtoull(big_number(t), NULL, 10) : cJSON_IsNumber(t) ? (uint64_t)t->valuedouble : 0);
		cJSON_Delete(ev);
		return;
	}
	if ((s->metadata = parse_prefixed(line, n, "\"metadata\":", 1))) {
		flush_x(&s->w, &s->x); /* the end: no flow can follow it now */
		return;
	}
	ev = line[0] == '{' ? parse_json(line, n) : NULL;
	if (!cJSON_IsObject(ev)) {
		if (line[0] == '{')
			s->counts.not_converted++;
		cJSON_Delete(ev);
		return;
	}
	if (ns_of(ev, "ts") > s->last_ts)
		s->last_ts = ns_of(ev, "ts");
	write_event(&s->w, ev, &s->x);
}

/* Appends p[0, n) to the line being received (or drops it, for a line past the bound). */
static void line_append(struct pftrace_stream *s, const char *p, size_t n)
{
	if (s->skipping)
		return;
	if (s->len + n > LINE_MAX_BYTES) {
		s->skipping = true;
		s->len = 0;
		s->counts.not_converted++;
		return;
	}
	if (s->len + n + 1 > s->cap) {
		s->cap = (s->len + n + 1) * 2;
		s->line = realloc(s->line, s->cap);
		if (!s->line)
			abort();
	}
	memcpy(s->line + s->len, p, n);
	s->len += n;
	s->line[s->len] = 0;
}

void pftrace_stream_feed(struct pftrace_stream *s, const char *p, size_t n)
{
	while (n > 0) {
		const char *nl = memchr(p, '\n', n);
		size_t part = nl ? (size_t)(nl - p) : n;

		if (nl && !s->len && !s->skipping && part < 4096) {
			/* A whole line in p (most are): parsed from a copy on the stack, not the line buffer */
			char small[4096];

			memcpy(small, p, part);
			small[part] = 0;
			stream_line(s, small, part);
		} else {
			line_append(s, p, part);
			if (nl && !s->skipping)
				stream_line(s, s->line, s->len);
		}
		if (!nl)
			return;
		s->len = 0;
		s->skipping = false;
		p += part + 1;
		n -= part + 1;
	}
}

const void *pftrace_stream_take(struct pftrace_stream *s, size_t *n)
{
	*n = s->w.olen;
	s->counts.bytes += s->w.olen;
	s->w.olen = 0; /* the bytes stay valid until the next call on s */
	return s->w.obuf;
}

void pftrace_stream_end(struct pftrace_stream *s, struct pftrace_counts *counts)
{
	cJSON *metadata;
	const cJSON *t;
	uint64_t stop;

	if (s->len && !s->skipping) /* a last line without its newline */
		stream_line(s, s->line, s->len);
	s->len = 0;
	flush_x(&s->w, &s->x);
	metadata = s->metadata;
	s->metadata = NULL;
	if (!metadata) {
		/* A trace cut short (the tracer killed): what was read, and that the end is missing. */
		metadata = cJSON_CreateObject();
		cJSON_AddStringToObject(metadata, "pftrace_note", "the JSON trace had no metadata: cut short");
	}
	cJSON_AddNumberToObject(metadata, "pftrace_events_not_converted", (double)s->counts.not_converted);
	cJSON_AddNumberToObject(metadata, "pftrace_sort_indexes_clamped", (double)s->counts.sort_indexes_clamped);
	cJSON_AddNumberToObject(metadata, "pftrace_tables_cleared", (double)s->counts.tables_cleared);
	t = cJSON_GetObjectItemCaseSensitive(metadata, "trace_stop_monotonic_ns");
	stop = big_number(t) ? strtoull(big_number(t), NULL, 10) :
	       cJSON_IsNumber(t) && t->valuedouble > 0 ? (uint64_t)t->valuedouble : 0;
	write_facts(&s->w, "ctrace: metadata", metadata, stop ? stop : s->last_ts);
	cJSON_Delete(metadata);
	s->metadata = cJSON_CreateObject(); /* ended: anything fed after is ignored */
	if (counts)
		*counts = s->counts;
}

void pftrace_stream_free(struct pftrace_stream *s)
{
	if (!s)
		return;
	cJSON_Delete(s->metadata);
	free(s->x.fl.out);
	free(s->x.fl.in);
	free(s->line);
	free_writer(&s->w);
	free(s);
}

/* The stream over whole files: what the tests, the fuzz harnesses and the bench convert. */
int pftrace_from_json(FILE *in, FILE *out, struct pftrace_counts *counts, char *why, size_t why_len)
{
	struct pftrace_stream *s = pftrace_stream_new();
	char buf[64 * 1024];
	const void *bytes;
	size_t got, n;
	bool write_failed = false;
	int ret = 0;

	if (!s)
		abort();
	while ((got = fread(buf, 1, sizeof(buf), in)) > 0) {
		pftrace_stream_feed(s, buf, got);
		bytes = pftrace_stream_take(s, &n);
		write_failed |= fwrite(bytes, 1, n, out) != n;
	}
	pftrace_stream_end(s, counts);
	bytes = pftrace_stream_take(s, &n);
	write_failed |= fwrite(bytes, 1, n, out) != n;
	counts->bytes = s->counts.bytes;
	if (ferror(in)) {
		snprintf(why, why_len, "reading the JSON trace failed");
		ret = -1;
	} else if (write_failed || fflush(out) || ferror(out)) {
		snprintf(why, why_len, "writing the Perfetto trace failed");
		ret = -1;
	}
	pftrace_stream_free(s);
	return ret;
}
