// SPDX-License-Identifier: MIT
/* Perfetto protobuf trace (as pftrace_write.c writes it) -> the JSON trace it came from. */
#include "encode/perfetto/pftrace.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <cjson/cJSON.h>
#include "lib/key_map.h"
#include "perfetto_trace.pb-c.h"

/* A packet at most: ours are a span and its args (a line of the JSON at most). */
#define PACKET_MAX (64u << 20)

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__TrackEvent TrackEvent;
typedef Perfetto__Protos__DebugAnnotation Annotation;

struct strings {
	char **v; /* by iid */
	size_t n;
};

struct track {
	char kind; /* 'p' process, 't' thread, 'c' counter, 'a' async */
	uint32_t pid, tid;
	char *name, *cat;
	char id[64]; /* async: the id of the span begun last on it */
};

struct reader {
	FILE *out;
	struct strings names, cats, keys;
	struct key_map tracks; /* uuid -> struct track */
	bool first_event;
	/* The thread slice begun, waiting for its end (the writer puts them together). */
	cJSON *open_x;
	uint64_t open_x_ts, open_x_track;
	uint64_t *flows_out, *flows_in;
	size_t n_out, n_in;
	cJSON *context, *metadata;
	uint64_t damaged;
};

static void strings_set(struct strings *t, uint64_t iid, const char *s)
{
	if (iid > (1u << 26))
		return; /* ours count from 1: no table that large */
	if (iid >= t->n) {
		size_t n = iid * 2 + 16;
		char **v = realloc(t->v, n * sizeof(*v));

		if (!v)
			abort();
		memset(v + t->n, 0, (n - t->n) * sizeof(*v));
		t->v = v;
		t->n = n;
	}
	free(t->v[iid]);
	t->v[iid] = strdup(s ? s : "");
}

static const char *strings_get(const struct strings *t, uint64_t iid)
{
	return iid < t->n && t->v[iid] ? t->v[iid] : "";
}

static void strings_free(struct strings *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->v[i]);
	free(t->v);
}

static struct track *track_of(struct reader *r, uint64_t uuid)
{
	return key_map_get(&r->tracks, &uuid, sizeof(uuid));
}

static cJSON *value_of(const struct reader *r, const Annotation *a);

static const char *key_of(const struct reader *r, const Annotation *a)
{
	return a->name ? a->name : strings_get(&r->keys, a->name_iid);
}

static cJSON *value_of(const struct reader *r, const Annotation *a)
{
	cJSON *v;

	if (a->n_dict_entries) {
		v = cJSON_CreateObject();
		for (size_t i = 0; i < a->n_dict_entries; i++)
			cJSON_AddItemToObject(v, key_of(r, a->dict_entries[i]), value_of(r, a->dict_entries[i]));
	} else if (a->n_array_values) {
		v = cJSON_CreateArray();
		for (size_t i = 0; i < a->n_array_values; i++)
			cJSON_AddItemToArray(v, value_of(r, a->array_values[i]));
	} else if (a->string_value) {
		v = cJSON_CreateString(a->string_value);
	} else if (a->has_bool_value) {
		v = cJSON_CreateBool(a->bool_value);
	} else if (a->has_int_value || a->has_uint_value) {
		char num[32];

		/* As written: a double would round integers past 2^53 */
		if (a->has_int_value)
			snprintf(num, sizeof(num), "%" PRId64, a->int_value);
		else
			snprintf(num, sizeof(num), "%" PRIu64, a->uint_value);
		v = cJSON_CreateRaw(num);
	} else if (a->has_double_value) {
		v = cJSON_CreateNumber(a->double_value);
	} else if (a->legacy_json_value && !strcmp(a->legacy_json_value, "{}")) {
		v = cJSON_CreateObject(); /* the writer's only JSON values: empty containers */
	} else if (a->legacy_json_value && !strcmp(a->legacy_json_value, "[]")) {
		v = cJSON_CreateArray();
	} else {
		v = cJSON_CreateNull();
	}
	return v ? v : cJSON_CreateNull();
}

/*
 * The event's annotations: the first n_ours are ours (the writer puts
 * ctrace_pid, ctrace_tid, ctrace_id there, as the kind of event has them):
 * into *pid, *tid, *id; the others as its args (NULL: none). An arg of
 * the program's named like ours stays an arg: only the count tells.
 */
static cJSON *args_of(const struct reader *r, const TrackEvent *te, size_t n_ours, double *pid,
		      double *tid, char *id, size_t id_len)
{
	cJSON *args = NULL;
	size_t i = 0;

	for (; i < te->n_debug_annotations && i < n_ours; i++) {
		const Annotation *a = te->debug_annotations[i];
		const char *k = key_of(r, a);
		double v = a->has_int_value ? (double)a->int_value : (double)a->uint_value;

		if (!strcmp(k, "ctrace_pid"))
			*pid = v;
		else if (!strcmp(k, "ctrace_tid"))
			*tid = v;
		else if (!strcmp(k, "ctrace_id") && a->string_value)
			snprintf(id, id_len, "%s", a->string_value);
		else if (!strcmp(k, "ctrace_id") && (a->has_int_value || a->has_uint_value))
			snprintf(id, id_len, "0x%" PRIx64, a->has_int_value ? (uint64_t)a->int_value : a->uint_value);
	}
	for (; i < te->n_debug_annotations; i++) {
		if (!args)
			args = cJSON_CreateObject();
		cJSON_AddItemToObject(args, key_of(r, te->debug_annotations[i]),
				      value_of(r, te->debug_annotations[i]));
	}
	return args;
}

static void put_event(struct reader *r, cJSON *ev)
{
	char *s = cJSON_PrintUnformatted(ev);

	if (!s)
		abort();
	fputs(r->first_event ? "" : ",\n", r->out);
	fputs(s, r->out);
	r->first_event = false;
	free(s);
	cJSON_Delete(ev);
}

/* Nanoseconds as chrome_trace.c writes microseconds: three decimals. */
static void add_us(cJSON *ev, const char *key, uint64_t ns)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%" PRIu64 ".%03" PRIu64, ns / 1000, ns % 1000);
	cJSON_AddRawToObject(ev, key, buf);
}

static cJSON *new_event(const char *ph, double pid, double tid, const uint64_t *ts)
{
	cJSON *ev = cJSON_CreateObject();

	cJSON_AddStringToObject(ev, "ph", ph);
	cJSON_AddNumberToObject(ev, "pid", pid);
	cJSON_AddNumberToObject(ev, "tid", tid);
	if (ts)
		add_us(ev, "ts", *ts);
	return ev;
}

static void put_flow_phases(struct reader *r, const cJSON *x, char ph, const uint64_t *ids, size_t n,
			    uint64_t ts)
{
	for (size_t i = 0; i < n; i++) {
		cJSON *ev = new_event(ph == 's' ? "s" : "f", cJSON_GetObjectItem(x, "pid")->valuedouble,
				      cJSON_GetObjectItem(x, "tid")->valuedouble, &ts);
		char id[32];

		cJSON_AddStringToObject(ev, "name", "flow");
		cJSON_AddStringToObject(ev, "cat", "ctrace");
		snprintf(id, sizeof(id), "0x%" PRIx64, ids[i]);
		cJSON_AddStringToObject(ev, "id", id);
		if (ph == 'f')
			cJSON_AddStringToObject(ev, "bp", "e");
		put_event(r, ev);
	}
}

static void copy_ids(uint64_t **to, size_t *n, const uint64_t *from, size_t count)
{
	free(*to);
	*to = NULL;
	*n = count;
	if (!count)
		return;
	*to = malloc(count * sizeof(**to));
	if (!*to)
		abort();
	memcpy(*to, from, count * sizeof(**to));
}

static void track_event(struct reader *r, const Packet *p)
{
	const TrackEvent *te = p->track_event;
	uint64_t ts = p->timestamp, uuid = te->track_uuid;
	const uint64_t *tsp = p->has_timestamp ? &ts : NULL; /* none: the JSON had none */
	struct track *t = uuid ? track_of(r, uuid) : NULL;
	const char *name = te->has_name_iid ? strings_get(&r->names, te->name_iid) : NULL;
	const char *cat = te->n_category_iids ? strings_get(&r->cats, te->category_iids[0]) : NULL;
	double pid = t ? t->pid : 0, tid = t ? t->tid : 0;
	char id[64] = "";
	/* ours first (pftrace_write.c): async spans' tid and id, "p" instants' tid, "g" instants' pid and tid */
	bool facts = cat && !strcmp(cat, PFTRACE_FACTS_CAT);
	size_t n_ours = facts ? 0 : !t ? 2 : t->kind == 'p' ? 1 : 0;

	if (t && t->kind != 't' && t->kind != 'p' && t->kind != 'c') /* async: tid and id at its begin, tid at its end */
		n_ours = te->type == PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN ? 2 : 1;
	cJSON *args = args_of(r, te, n_ours, &pid, &tid, id, sizeof(id)), *ev;

	/* A track never declared; or none (the global track) for anything but an instant */
	if ((uuid && !t) || (!t && te->type != PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT)) {
		r->damaged++;
		cJSON_Delete(args);
		return;
	}
	switch (te->type) {
	case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN:
		if (t->kind == 't') {
			if (r->open_x)
				r->damaged++, cJSON_Delete(r->open_x);
			ev = r->open_x = new_event("X", pid, tid, tsp);
			r->open_x_ts = ts;
			r->open_x_track = uuid;
			copy_ids(&r->flows_out, &r->n_out, te->flow_ids, te->n_flow_ids);
			copy_ids(&r->flows_in, &r->n_in, te->terminating_flow_ids, te->n_terminating_flow_ids);
		} else {
			ev = new_event("b", pid, tid, tsp);
			free(t->cat);
			t->cat = strdup(cat ? cat : "");
			snprintf(t->id, sizeof(t->id), "%s", id);
		}
		if (name)
			cJSON_AddStringToObject(ev, "name", name);
		if (cat)
			cJSON_AddStringToObject(ev, "cat", cat);
		if (t->kind != 't') {
			cJSON_AddStringToObject(ev, "id", id);
			if (args)
				cJSON_AddItemToObject(ev, "args", args);
			put_event(r, ev);
		} else if (args) {
			cJSON_AddItemToObject(ev, "args", args);
		}
		return;
	case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END:
		if (t->kind == 't') {
			cJSON *x = r->open_x;

			cJSON_Delete(args);
			if (!x || r->open_x_track != uuid) {
				r->damaged++;
				return;
			}
			r->open_x = NULL;
			{
				/* "dur" before "args", as the JSON writer puts it */
				cJSON *a = cJSON_DetachItemFromObjectCaseSensitive(x, "args");
				cJSON *place = new_event("X", cJSON_GetObjectItem(x, "pid")->valuedouble,
							 cJSON_GetObjectItem(x, "tid")->valuedouble, NULL);

				add_us(x, "dur", ts - r->open_x_ts);
				if (a)
					cJSON_AddItemToObject(x, "args", a);
				put_event(r, x);
				/* Its flows, as the JSON has them: a phase event each, at its start. */
				put_flow_phases(r, place, 's', r->flows_out, r->n_out, r->open_x_ts);
				put_flow_phases(r, place, 'f', r->flows_in, r->n_in, r->open_x_ts);
				cJSON_Delete(place);
			}
			return;
		}
		ev = new_event("e", pid, tid, tsp);
		cJSON_AddStringToObject(ev, "name", t->name ? t->name : "");
		cJSON_AddStringToObject(ev, "cat", t->cat ? t->cat : "");
		cJSON_AddStringToObject(ev, "id", t->id);
		if (args)
			cJSON_AddItemToObject(ev, "args", args);
		put_event(r, ev);
		return;
	case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT:
		if (facts) {
			cJSON **to = name && strstr(name, "context") ? &r->context : &r->metadata;

			cJSON_Delete(*to);
			*to = args ? args : cJSON_CreateObject();
			return;
		}
		ev = new_event("I", pid, tid, tsp);
		if (name)
			cJSON_AddStringToObject(ev, "name", name);
		if (cat)
			cJSON_AddStringToObject(ev, "cat", cat);
		cJSON_AddStringToObject(ev, "s", !t ? "g" : t->kind == 'p' ? "p" : "t");
		if (args)
			cJSON_AddItemToObject(ev, "args", args);
		put_event(r, ev);
		return;
	case PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER:
		cJSON_Delete(args);
		if (!t || t->kind != 'c') {
			r->damaged++;
			return;
		}
		ev = new_event("C", pid, tid, tsp);
		cJSON_AddStringToObject(ev, "name", t->name ? t->name : "");
		cJSON_AddStringToObject(ev, "cat", t->cat ? t->cat : "");
		args = cJSON_CreateObject();
		cJSON_AddNumberToObject(args, "value",
					te->has_counter_value ? (double)te->counter_value : te->double_counter_value);
		cJSON_AddItemToObject(ev, "args", args);
		put_event(r, ev);
		return;
	default:
		cJSON_Delete(args);
		r->damaged++;
	}
}

static void add_track(struct reader *r, uint64_t uuid, char kind, uint32_t pid, uint32_t tid,
		      const char *name, const char *cat)
{
	struct track *t = track_of(r, uuid);

	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			abort();
		key_map_put(&r->tracks, &uuid, sizeof(uuid), t);
	}
	t->kind = kind;
	t->pid = pid;
	t->tid = tid;
	if (name) {
		free(t->name);
		t->name = strdup(name);
	}
	if (cat) {
		free(t->cat);
		t->cat = strdup(cat);
	}
}

/* A track declared, or a process's or thread's one fact ("M"). */
static void track_descriptor(struct reader *r, const Perfetto__Protos__TrackDescriptor *d)
{
	const struct track *parent = d->has_parent_uuid ? track_of(r, d->parent_uuid) : NULL;
	cJSON *ev = NULL, *args = cJSON_CreateObject();

	if (d->process) {
		uint32_t pid = (uint32_t)d->process->pid;

		add_track(r, d->uuid, 'p', pid, 0, NULL, NULL);
		if (d->process->process_name) {
			ev = new_event("M", pid, pid, NULL);
			cJSON_AddStringToObject(ev, "name", "process_name");
			cJSON_AddStringToObject(args, "name", d->process->process_name);
		} else if (d->process->has_legacy_sort_index) {
			ev = new_event("M", pid, pid, NULL);
			cJSON_AddStringToObject(ev, "name", "process_sort_index");
			cJSON_AddNumberToObject(args, "sort_index", d->process->legacy_sort_index);
		}
	} else if (d->thread) {
		uint32_t pid = (uint32_t)d->thread->pid, tid = (uint32_t)d->thread->tid;

		add_track(r, d->uuid, 't', pid, tid, NULL, NULL);
		if (d->thread->thread_name) {
			ev = new_event("M", pid, tid, NULL);
			cJSON_AddStringToObject(ev, "name", "thread_name");
			cJSON_AddStringToObject(args, "name", d->thread->thread_name);
		} else if (d->thread->has_legacy_sort_index) {
			ev = new_event("M", pid, tid, NULL);
			cJSON_AddStringToObject(ev, "name", "thread_sort_index");
			cJSON_AddNumberToObject(args, "sort_index", d->thread->legacy_sort_index);
		}
	} else if (d->counter && parent) {
		add_track(r, d->uuid, 'c', parent->pid, parent->tid, d->name,
			  d->counter->n_categories ? d->counter->categories[0] : "");
	} else if (parent) {
		add_track(r, d->uuid, 'a', parent->pid, 0, d->name, NULL);
	} else {
		r->damaged++;
	}
	if (ev) {
		cJSON_AddItemToObject(ev, "args", args);
		put_event(r, ev);
	} else {
		cJSON_Delete(args);
	}
}

static void interned(struct reader *r, const Perfetto__Protos__InternedData *d)
{
	for (size_t i = 0; i < d->n_event_names; i++)
		strings_set(&r->names, d->event_names[i]->iid, d->event_names[i]->name);
	for (size_t i = 0; i < d->n_event_categories; i++)
		strings_set(&r->cats, d->event_categories[i]->iid, d->event_categories[i]->name);
	for (size_t i = 0; i < d->n_debug_annotation_names; i++)
		strings_set(&r->keys, d->debug_annotation_names[i]->iid, d->debug_annotation_names[i]->name);
}

/*
 * Every string of a packet made valid UTF-8, in place (a .pftrace may come
 * from anywhere: report reads any file, and the JSON it makes must be valid).
 * protobuf-c's unpack with no allocator gives malloc()ed strings, freed by
 * free_unpacked(): a cleaned copy takes the place of the one it frees.
 */
static void clean_strings(ProtobufCMessage *m)
{
	const ProtobufCMessageDescriptor *md = m->descriptor;

	for (unsigned i = 0; i < md->n_fields; i++) {
		const ProtobufCFieldDescriptor *f = &md->fields[i];
		char *base = (char *)m + f->offset;
		size_t n = f->label == PROTOBUF_C_LABEL_REPEATED ? *(size_t *)((char *)m + f->quantifier_offset) : 1;

		if (f->type != PROTOBUF_C_TYPE_STRING && f->type != PROTOBUF_C_TYPE_MESSAGE)
			continue;
		for (size_t k = 0; k < n; k++) {
			void **slot = f->label == PROTOBUF_C_LABEL_REPEATED ? &(*(void ***)base)[k] : (void **)base;
			char *copy;

			if (!*slot)
				continue;
			if (f->type == PROTOBUF_C_TYPE_MESSAGE) {
				clean_strings(*slot);
			} else if (pftrace_utf8(*slot, &copy) != *slot) {
				free(*slot);
				*slot = copy;
			}
		}
	}
}

/* "context" or "metadata" (they are no events of the trace). */
static bool is_facts(const struct reader *r, const TrackEvent *te)
{
	return te->n_category_iids && !strcmp(strings_get(&r->cats, te->category_iids[0]), PFTRACE_FACTS_CAT);
}

/* A varint of the file's framing: 0, or -1 at its end (or a cut one). */
static int read_varint(FILE *in, uint64_t *v)
{
	*v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		int c = fgetc(in);

		if (c == EOF)
			return -1;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return 0;
	}
	return -1;
}

static void free_track(const void *key, size_t len, void *value, void *ctx)
{
	struct track *t = value;

	(void)key, (void)len, (void)ctx;
	free(t->name);
	free(t->cat);
	free(t);
}

static void put_object_line(FILE *out, const char *head, const cJSON *o, const char *tail)
{
	char *s = cJSON_PrintUnformatted(o);

	if (!s)
		abort();
	fprintf(out, "%s%s%s", head, s, tail);
	free(s);
}

/* The JSON's head: the context (an empty one when the file had none), and the events' opening. */
static void put_head(FILE *out, const cJSON *context)
{
	cJSON *empty = context ? NULL : cJSON_CreateObject();

	put_object_line(out, "{\"context\":", context ? context : empty, ",\n\"traceEvents\":[\n");
	cJSON_Delete(empty);
}

int pftrace_to_json(FILE *in, FILE *out, char *why, size_t why_len)
{
	struct reader r = { .out = out, .first_event = true };
	uint8_t *buf = NULL;
	int events_at = -1; /* the head written: 1 */
	uint64_t tag, len;
	int ret = 0;

	key_map_init(&r.tracks);
	/*
	 * The head waits for the context (the first event packet after the
	 * track of the target): written once known, events kept aside till then
	 * in a temp file would cost a copy; the writer puts the context first.
	 */
	while (read_varint(in, &tag) == 0) {
		Packet *p;

		if (tag == 0x0a && read_varint(in, &len) < 0) {
			r.damaged++; /* cut in a packet's length */
			break;
		}
		if (tag != 0x0a || len > PACKET_MAX) {
			snprintf(why, why_len, "not a Perfetto trace ctrace-bpf wrote (a field other than packet, or a packet over %u bytes)",
				 PACKET_MAX);
			ret = -1;
			break;
		}
		free(buf);
		buf = malloc(len ? len : 1);
		if (!buf)
			abort();
		if (fread(buf, 1, len, in) != len) {
			r.damaged++; /* cut short: what came before stands */
			break;
		}
		p = perfetto__protos__trace_packet__unpack(NULL, len, buf);
		if (!p) {
			r.damaged++;
			continue;
		}
		clean_strings(&p->base);
		if (p->interned_data)
			interned(&r, p->interned_data);
		if (p->track_descriptor) {
			if (events_at < 0)
				goto head;
			track_descriptor(&r, p->track_descriptor);
		} else if (p->track_event) {
			if (events_at < 0 && !is_facts(&r, p->track_event))
				goto head;
			track_event(&r, p);
		}
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
		continue;
head:
		/* The first event or track: the context packet came before it, if there was one. */
		put_head(out, r.context);
		events_at = 1;
		if (p->track_descriptor)
			track_descriptor(&r, p->track_descriptor);
		else
			track_event(&r, p);
		perfetto__protos__trace_packet__free_unpacked(p, NULL);
	}
	free(buf);
	if (events_at < 0)
		put_head(out, r.context);
	if (r.open_x)
		r.damaged++;
	if (!r.metadata)
		r.metadata = cJSON_CreateObject();
	if (r.damaged)
		cJSON_AddNumberToObject(r.metadata, "pftrace_damaged_packets", (double)r.damaged);
	put_object_line(out, "\n],\n\"metadata\":", r.metadata, "}\n");
	if (fflush(out) || ferror(out)) {
		snprintf(why, why_len, "writing the JSON failed");
		ret = -1;
	}
	cJSON_Delete(r.open_x);
	cJSON_Delete(r.context);
	cJSON_Delete(r.metadata);
	free(r.flows_out);
	free(r.flows_in);
	strings_free(&r.names);
	strings_free(&r.cats);
	strings_free(&r.keys);
	key_map_each(&r.tracks, free_track, NULL);
	key_map_free(&r.tracks);
	return ret;
}

bool pftrace_looks_like(const unsigned char *head, size_t n)
{
	/* Field 1, length-delimited (0x0a), then a length: neither '{' (JSON) nor 0x1f 0x8b (gzip) start so. */
	return n >= 2 && head[0] == 0x0a;
}

/* The length of a valid UTF-8 sequence at s (RFC 3629: no overlongs, surrogates, or past U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *s)
{
	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		return (s[1] & 0xc0) == 0x80 ? 2 : 0;
	if (s[0] >= 0xe0 && s[0] <= 0xef) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))
			return 0;
		return 3;
	}
	if (s[0] >= 0xf0 && s[0] <= 0xf4) {
		if ((s[1] & 0xc0) != 0x80 || (s[2] & 0xc0) != 0x80 || (s[3] & 0xc0) != 0x80)
			return 0;
		if ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

const char *pftrace_utf8(const char *s, char **copy)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n = strlen(s), o = 0, l;
	char *c;

	*copy = NULL;
	while (i < n && (l = utf8_len(u + i)))
		i += l;
	if (i == n)
		return s;
	c = malloc(n * 3 + 1); /* each bad byte becomes 3 */
	if (!c)
		abort();
	for (i = 0; i < n;) {
		l = utf8_len(u + i);
		if (l) {
			memcpy(c + o, s + i, l);
			o += l;
			i += l;
		} else {
			memcpy(c + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		}
	}
	c[o] = 0;
	*copy = c;
	return c;
}
