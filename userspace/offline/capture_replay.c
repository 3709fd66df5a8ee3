// SPDX-License-Identifier: MIT
#include "offline/capture_replay.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "capture/capture_read.h"
#include "capture/capture_journal.h"
#include "lib/categories.h"
#include "model/model_facts.h"
#include "io/output_file.h"
#include "session/session.h"
#include "lib/term_safe.h"
#include "session/traced_set.h"
#include "encode/trace_summary.h"

struct replay {
	struct session s;
	struct trace_options o;
	struct trace_output out;
	struct key_map names; /* {tgid, tid} -> NUL-ended name (model_facts_replay) */
	struct trace_facts start; /* FACTS' times */
	char *strings[32];        /* END's strings, kept until the end */
	unsigned n_strings;
	bool begun, ended;
	uint64_t bad_records; /* side records that cannot be true (forged, damaged): left out, said */
	uint64_t last_now;
	uint64_t progress_ms; /* following: when the progress line was last written */
	bool shown_progress;
};

static char *tlv_str(struct replay *r, const unsigned char *p, size_t len)
{
	char *s = malloc(len + 1);

	if (!s)
		return NULL;
	memcpy(s, p, len);
	s[len] = '\0';
	if (r->n_strings < sizeof(r->strings) / sizeof(r->strings[0]))
		r->strings[r->n_strings++] = s;
	else {
		free(s);
		return NULL;
	}
	return s;
}

static void copy_str(char *to, size_t size, const unsigned char *p, size_t len)
{
	size_t n = len < size - 1 ? len : size - 1;

	memcpy(to, p, n);
	to[n] = '\0';
}

/* FACTS: the trace begins (its head written with the capture's times). */
static int begin(struct replay *r, const unsigned char *p, size_t len, const char *out_path,
		 struct trace_summary *summary)
{
	struct session *s = &r->s;
	struct capture_tlv_iter it = { p, len };
	const unsigned char *v;
	uint16_t key;
	size_t n;
	uint64_t from_start = 0;
	int err;

	while (capture_tlv_next(&it, &key, &v, &n)) {
		uint64_t u = capture_tlv_as_u64(v, n);

		switch (key) {
		case CK_START_WALL: r->start.start_wall_ns = u; break;
		case CK_START_MONO: r->start.start_mono_ns = u; break;
		case CK_TARGET_START_WALL: r->start.target_start_wall_ns = u; break;
		case CK_TARGET_START_MONO: r->start.target_start_mono_ns = u; break;
		case CK_TARGET_PID: s->target.pid = (int)u; break;
		case CK_TARGET_NS_PID: s->target.ns_pid = (int)u; break;
		case CK_TARGET_COMM: copy_str(s->target.comm, sizeof(s->target.comm), v, n); break;
		case CK_TARGET_EXE: copy_str(s->target.exe, sizeof(s->target.exe), v, n); break;
		case CK_TARGET_CWD: copy_str(s->target.cwd, sizeof(s->target.cwd), v, n); break;
		case CK_TARGET_CMDLINE:
			free(s->target.cmdline);
			s->target.cmdline = malloc(n ? n : 1);
			if (s->target.cmdline) {
				memcpy(s->target.cmdline, v, n);
				s->target.cmdline_len = n;
			}
			break;
		case CK_TARGET_START_BOOT: s->target.start_boottime_ns = u; break;
		case CK_TRACED_FROM_START: from_start = u; break;
		case CK_NO_BATCH: r->o.no_batch = u != 0; break;
		case CK_MAX_MEMORY: r->o.max_memory = u; break;
		case CK_FIRST_PID: s->first_pid = (int)u; break;
		default: break; /* a key of a later version: not needed to convert */
		}
	}
	r->o.output = out_path;
	r->o.perfetto = output_is_pftrace(out_path);
	err = output_begin(&r->out, out_path,
			   &(struct output_limits){ 0, 0, &s->stats, 0, r->o.perfetto, &r->start }, &s->target);
	if (err < 0)
		return err;
	if (summary)
		trace_fanout_add(&r->out.fan, trace_summary_encoder(summary));
	r->out.facts.from_capture = true;
	s->out = &r->out;
	trace_model_init(&s->model, &r->out.fan, &s->stats);
	s->model_live = true;
	if (from_start)
		trace_model_traced_from_start(&s->model, (uint32_t)from_start);
	s->model.tsc = &s->tsc;
	session_begin_batches(s);
	s->bpath.offline = true;
	trace_model_limit_memory(&s->model, r->o.max_memory, &s->strings.literals, &s->strings.files,
				 &s->bpath.bound);
	r->begun = true;
	return 0;
}

/* TSC: the ratio now, and the pieces begun since the last. */
static void tsc(struct replay *r, const unsigned char *p, size_t len)
{
	struct tsc_clock *c = &r->s.tsc;
	uint64_t first;
	size_t n;

	if (len < 40 || (len - 40) % 24)
		return;
	memcpy(&c->tsc0, p, 8);
	memcpy(&c->ns0, p + 8, 8);
	memcpy(&c->ticks_per_ns, p + 16, 8);
	memcpy(&c->piece_ns, p + 24, 8);
	memcpy(&first, p + 32, 8);
	n = (len - 40) / 24;
	/* A forged ratio would make the conversion's arithmetic undefined: kept as it was. */
	if (!(c->ticks_per_ns > 1e-6 && c->ticks_per_ns < 1e6))
		c->ticks_per_ns = 1;
	if (first != c->n || !n)
		return; /* pieces are only ever added, in order */
	if (c->n + n > c->cap) {
		size_t cap = c->n + n + 16;
		struct tsc_piece *g = realloc(c->pieces, cap * sizeof(*g));

		if (!g)
			return;
		c->pieces = g;
		c->cap = cap;
	}
	for (size_t i = 0; i < n; i++) {
		struct tsc_piece pc;

		memcpy(&pc.tsc, p + 40 + i * 24, 8);
		memcpy(&pc.ns, p + 48 + i * 24, 8);
		memcpy(&pc.ns_per_tick, p + 56 + i * 24, 8);
		/* In TSC order, with a slope the clock can have (tsc_clock.c's binary search, its casts). */
		if (!(pc.ns_per_tick > 1e-6 && pc.ns_per_tick < 1e6) || (c->n && pc.tsc <= c->pieces[c->n - 1].tsc)) {
			r->bad_records++;
			return;
		}
		c->pieces[c->n++] = pc;
	}
}

static void maps(struct replay *r, const unsigned char *p, size_t len)
{
	uint32_t pid, epoch, n_idents;
	uint64_t dev, ino;
	uint64_t *idents;

	if (len < 32)
		return;
	memcpy(&pid, p, 4);
	memcpy(&epoch, p + 4, 4);
	memcpy(&n_idents, p + 12, 4);
	memcpy(&dev, p + 16, 8);
	memcpy(&ino, p + 24, 8);
	if (n_idents > (len - 32) / 16)
		return;
	idents = malloc(n_idents ? n_idents * 16 : 1);
	if (!idents)
		return;
	memcpy(idents, p + 32, n_idents * 16); /* aligned for the reader */
	file_maps_replay(&r->s.strings.files, pid, epoch, p[8], p[9], (const char *)p + 32 + n_idents * 16,
			 len - 32 - n_idents * 16, dev, ino, idents, n_idents);
	free(idents);
}

static void names(struct replay *r, const unsigned char *p, size_t len)
{
	uint32_t tgid, tid, flags;
	uint64_t key;
	char *name;

	if (len < 12 || len > 12 + 64)
		return;
	memcpy(&tgid, p, 4);
	memcpy(&tid, p + 4, 4);
	memcpy(&flags, p + 8, 4);
	name = malloc(len - 12 + 1);
	if (!name)
		return;
	memcpy(name, p + 12, len - 12);
	name[len - 12] = '\0';
	if (flags & CAPTURE_NAMES_PASS)
		trace_model_thread_name(&r->s.model, tgid, tid, name, strlen(name));
	key = (uint64_t)tgid << 32 | tid;
	if (flags & CAPTURE_NAMES_GONE) { /* the live path's look would find nothing from here on */
		free(name);
		free(key_map_del(&r->names, &key, sizeof(key)));
		return;
	}
	free(key_map_put(&r->names, &key, sizeof(key), name));
}

static uint64_t u64_at(const unsigned char *p, size_t len, size_t at)
{
	uint64_t v = 0;

	if (len >= at + 8)
		memcpy(&v, p + at, 8);
	return v;
}

/* END: what the stop found (the facts the trace's end says). */
static void end_facts(struct replay *r, const unsigned char *p, size_t len)
{
	struct session *s = &r->s;
	struct trace_facts *f = &r->out.facts;
	struct capture_tlv_iter it = { p, len };
	const unsigned char *v;
	uint16_t key;
	size_t n;
	unsigned feature = 0;

	while (capture_tlv_next(&it, &key, &v, &n)) {
		uint64_t u = capture_tlv_as_u64(v, n);

		switch (key) {
		case CK_STOP_MONO: s->stats.stop_mono_ns = u; break;
		case CK_STOP_REASON: s->stats.stop_reason = tlv_str(r, v, n); break;
		case CK_PROBES: f->probes_attached = (unsigned)u; break;
		case CK_OBJECTS: f->objects_with_probes = (unsigned)u; break;
		case CK_CATEGORIES: f->categories = tlv_str(r, v, n); break;
		case CK_PROGRAM_SET: f->program_set = tlv_str(r, v, n); break;
		case CK_PROGRAM_SET_WHY: f->program_set_why = tlv_str(r, v, n); break;
		case CK_PROGRAM_SET_FORCED: f->program_set_forced = u != 0; break;
		case CK_PROBE_LINKS: f->probe_links = tlv_str(r, v, n); break;
		case CK_BPF_COOKIES: f->bpf_cookies = u != 0; break;
		case CK_FAST_NOP5: f->fast_nop5 = u != 0; break;
		case CK_EVENT_PATH: f->event_path = tlv_str(r, v, n); break;
		case CK_EVENT_PATH_WHY: f->event_path_why = tlv_str(r, v, n); break;
		case CK_DEATH_WATCH: f->death_watch = tlv_str(r, v, n); break;
		case CK_KERNEL_FEATURE:
			if (n >= 1 && feature < KERNEL_FEATURE_COUNT) {
				f->kernel_features[feature].present = v[0] != 0;
				f->kernel_features[feature++].name = tlv_str(r, v + 1, n - 1);
			}
			break;
		case CK_REMOTE_READS: s->stats.remote_reads = u; break;
		case CK_REMOTE_ABANDONED: s->stats.remote_reads_abandoned = u; break;
		case CK_REMOTE_REFUSED: s->stats.remote_reads_refused = u; break;
		case CK_BATCH_UNWATCHED: s->stats.batch_unwatched = u; break;
		case CK_BATCH_UNREAD: s->stats.batch_unread_at_stop = u; break;
		case CK_UNTRACED: s->stats.untraced_processes = u; break;
		default: break;
		}
	}
	/* What the writer takes as always there, whatever the capture said. */
	if (f->program_set && !f->probe_links)
		f->probe_links = "";
	for (int i = 0; i < KERNEL_FEATURE_COUNT; i++)
		if (!f->kernel_features[i].name)
			f->kernel_features[i].name = "(not in the capture)";
	r->ended = true;
}

/*
 * What a record tells of names /proc would give from here on: a thread's
 * last batch, copied at its death, leaves none (the live path's model asks
 * when it first shows the thread, after the merge, and finds it gone); an
 * exec, the kernel's new comm for the process.
 */
static void thread_gone(struct replay *r, const unsigned char *p, size_t len)
{
	struct ctrace_record rec;
	uint64_t key;

	if (len < sizeof(rec))
		return;
	memcpy(&rec, p, sizeof(rec));
	if (rec.kind == CTRACE_KIND_EXEC && rec.args_len && rec.args_len < 64 &&
	    sizeof(rec) + (size_t)rec.name_len + rec.args_len <= len) {
		/* After an exec /proc names the process as the kernel's comm the record carries. */
		char *comm = malloc(rec.args_len + 1u);

		if (!comm)
			return;
		memcpy(comm, p + sizeof(rec) + rec.name_len, rec.args_len);
		comm[rec.args_len] = '\0';
		key = (uint64_t)rec.arg[0] << 32 | (uint32_t)rec.arg[0];
		free(key_map_put(&r->names, &key, sizeof(key), comm));
		return;
	}
	if (rec.kind != CTRACE_KIND_BATCH ||
	    (rec.arg[2] != CTRACE_BATCH_WHY_EXITING && rec.arg[2] != CTRACE_BATCH_WHY_SIGNAL))
		return;
	key = (uint64_t)rec.tgid << 32 | rec.tid;
	free(key_map_del(&r->names, &key, sizeof(key)));
}

/* What the programs watched: the model must know before the events it changes. */
static void attached(struct replay *r, const unsigned char *p, size_t len)
{
	struct capture_tlv_iter it = { p, len };
	const unsigned char *v;
	uint16_t key;
	size_t n;

	while (capture_tlv_next(&it, &key, &v, &n))
		if (key == CK_RENAMES_TOLD)
			r->out.facts.renames_told = r->s.model.renames_told = capture_tlv_as_u64(v, n) != 0;
}

static void one_record(struct replay *r, uint32_t type, const unsigned char *p, size_t len)
{
	struct session *s = &r->s;

	switch (type) {
	case CAPTURE_RING:
		s->stats.records++;
		session_decoded_record(s, p, len);
		record_strings_forget_kept(&s->strings);
		thread_gone(r, p, len);
		break;
	case CAPTURE_LATE:
		if (len >= 16) {
			uint32_t tgid, flags;

			memcpy(&tgid, p, 4);
			memcpy(&flags, p + 4, 4);
			record_strings_keep_late(&s->strings, tgid, u64_at(p, len, 8), (const char *)p + 16, len - 16,
						 flags & 1);
		}
		break;
	case CAPTURE_UNREAD:
		/* Left unread at the stop: a batch's events counted lost by their numbers. */
		if (!s->bpath.on || !batch_path_count_unread(&s->bpath, p, len))
			s->unread_at_stop++;
		break;
	case CAPTURE_TSC:
		tsc(r, p, len);
		break;
	case CAPTURE_MAPS:
		maps(r, p, len);
		break;
	case CAPTURE_NAMES:
		names(r, p, len);
		break;
	case CAPTURE_TICK:
		if (len == 16) {
			r->last_now = u64_at(p, len, 0);
			batch_path_tick(&s->bpath, r->last_now, u64_at(p, len, 8));
		}
		break;
	case CAPTURE_DROPS:
		if (len == 16) {
			s->kernel_dropped = u64_at(p, len, 8);
			session_report_drops(s, s->kernel_dropped, u64_at(p, len, 0));
		}
		break;
	case CAPTURE_UNTRACED:
		if (len == 16 && u64_at(p, len, 8) > s->untraced_reported) {
			uint64_t now = u64_at(p, len, 0), total = u64_at(p, len, 8);

			traced_set_report_full(s->model.out, (uint32_t)s->first_pid, now,
					       total - s->untraced_reported, total);
			s->untraced_reported = total;
			s->stats.untraced_processes = total;
		}
		break;
	case CAPTURE_STOP:
		if (len == 8) {
			s->stop_ns = u64_at(p, len, 0);
			s->stats.stop_mono_ns = s->stop_ns;
		}
		break;
	case CAPTURE_TARGET:
		if (len == 4) {
			uint32_t pid;

			memcpy(&pid, p, 4);
			model_facts_process(&s->model, pid);
			trace_model_add_process(&s->model, pid);
		}
		break;
	case CAPTURE_CATEGORY:
		if (len && len < 256) {
			char name[256];

			memcpy(name, p, len);
			name[len] = '\0';
			category_id(name);
		}
		break;
	case CAPTURE_UNSEEN:
		if (len % sizeof(struct batch_unseen) == 0) {
			struct batch_unseen *v = malloc(len ? len : 1);

			if (v) {
				memcpy(v, p, len);
				batch_path_finish_with(&s->bpath, v, len / sizeof(*v));
				free(v);
			}
		}
		break;
	case CAPTURE_BUFFER:
		if (len >= 32) {
			uint32_t tgid, tid;

			memcpy(&tgid, p, 4);
			memcpy(&tid, p + 4, 4);
			batch_path_copy(&s->bpath, tgid, tid, u64_at(p, len, 8), p + 32, len - 32, u64_at(p, len, 16),
					p[24], p[25]);
		}
		break;
	case CAPTURE_ADOPT:
		if (len == 24 + 64) {
			uint32_t tgid;
			unsigned char header[64]; /* batch_header_parse reads these only */

			memcpy(&tgid, p, 4);
			memset(header, 0, sizeof(header));
			memcpy(header, p + 24, 64);
			batch_path_adopt(&s->bpath, tgid, u64_at(p, len, 8), header, u64_at(p, len, 16));
		}
		break;
	case CAPTURE_ATTACHED:
		attached(r, p, len);
		break;
	case CAPTURE_END:
		end_facts(r, p, len);
		break;
	default:
		break; /* a type of a later version of this format: nothing a conversion needs */
	}
}

static void free_name(const void *key, size_t len, void *value, void *ctx)
{
	(void)key, (void)len, (void)ctx;
	free(value);
}

static int convert(const char *in, int writer_alive, int files_from, const char *out_path,
		   struct trace_summary *summary, struct capture_convert_result *res);

/* Following a capture, all of it converted so far: out to the file, as the live loop's rounds do. */
static void written_out(void *ctx)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	output_flush_every(ctx, (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec);
}

/*
 * Following a capture whose tracer has stopped: on a terminal, how much is
 * left to convert, on one line rewritten twice a second.
 */
static void catching_up(struct replay *r, const struct capture_reader *cr)
{
	struct timespec now;
	struct stat st;
	uint64_t ms;

	if (cr->writer_alive >= 0 || !isatty(STDERR_FILENO) || fstat(fileno(cr->f), &st) != 0)
		return;
	clock_gettime(CLOCK_MONOTONIC, &now);
	ms = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec / 1000000;
	if (ms < r->progress_ms + 500)
		return;
	r->progress_ms = ms;
	r->shown_progress = true;
	fprintf(stderr, "\rctrace-bpf: tracing stopped; converting what it captured: %llu of %llu MiB",
		(unsigned long long)(cr->offset >> 20), (unsigned long long)((uint64_t)st.st_size >> 20));
}

int capture_convert(const char *in, const char *out_path, struct trace_summary *summary,
		    struct capture_convert_result *res)
{
	return convert(in, -1, -1, out_path, summary, res);
}

int capture_convert_following(const char *in, int writer_alive, int files_from, const char *out_path,
			      struct trace_summary *summary, struct capture_convert_result *res)
{
	return convert(in, writer_alive, files_from, out_path, summary, res);
}

static int convert(const char *in, int writer_alive, int files_from, const char *out_path,
		   struct trace_summary *summary, struct capture_convert_result *res)
{
	struct replay *r = calloc(1, sizeof(*r));
	struct capture_reader cr;
	struct session *s;
	const unsigned char *p;
	uint32_t type;
	size_t len;
	int err, code = 0;

	memset(res, 0, sizeof(*res));
	if (!r) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		return -ENOMEM;
	}
	s = &r->s;
	s->o = &r->o;
	s->replay = true;
	key_map_init(&r->names);
	record_strings_init(&s->strings, &s->stats);
	s->strings.offline = true;
	s->strings.files.files_from = files_from;
	err = writer_alive >= 0 ? capture_reader_open_following(&cr, in, writer_alive) : capture_reader_open(&cr, in);
	if (err < 0)
		goto out;
	if (!capture_reader_next(&cr, &type, &p, &len) || type != CAPTURE_FACTS) {
		fprintf(stderr, "ctrace-bpf: %s: the capture has no start (its first record): nothing to convert\n",
			TERM_SAFE(in));
		err = -EINVAL;
		goto out;
	}
	model_facts_replay(&r->names);
	err = begin(r, p, len, out_path, summary);
	if (err < 0)
		goto out;
	cr.idle = written_out;
	cr.idle_ctx = &r->out;
	while (!r->ended && capture_reader_next(&cr, &type, &p, &len)) {
		one_record(r, type, p, len);
		if (cr.following && !(cr.records & 0xffff))
			catching_up(r, &cr);
	}
	if (r->shown_progress)
		fputs("\n", stderr);
	if (!r->ended) {
		/* Cut short (the tracer killed, a full disk): what came, up to the last record. */
		res->cut = true;
		fprintf(stderr, "ctrace-bpf: %s: %s; converted up to its last whole record (%llu records)\n",
			TERM_SAFE(in), cr.cut[0] ? cr.cut : "it ends before the tracer's stop (cut short)",
			(unsigned long long)cr.records);
		if (!s->stats.stop_mono_ns)
			s->stats.stop_mono_ns = s->stop_ns ? s->stop_ns : r->last_now;
		s->stats.stop_reason = "capture cut short";
		batch_path_finish_with(&s->bpath, NULL, 0);
	}
	if (r->bad_records)
		fprintf(stderr, "ctrace-bpf: %s: %llu damaged records of the capture were left out\n", TERM_SAFE(in),
			(unsigned long long)r->bad_records);
	s->stats.batch_lost = s->bpath.lost;
	s->stats.records_unread_at_stop = s->unread_at_stop;
	s->stats.dropped = s->kernel_dropped + s->unread_at_stop + s->bpath.lost;
	trace_model_finish(&s->model, s->stats.stop_mono_ns);
	s->model_live = false;
	err = output_end(&r->out, &s->stats);
	res->records = s->stats.records;
	res->events = r->out.tf.events;
	res->dropped = s->stats.dropped;
	res->unfinished_spans = s->stats.unfinished_spans;
	res->unmatched_ends = s->stats.unmatched_ends;
	for (unsigned i = 0; i < s->stats.n_bounds; i++)
		res->evicted += s->stats.bounds[i]->evicted;
	snprintf(res->stop_reason, sizeof(res->stop_reason), "%s",
		 s->stats.stop_reason ? s->stats.stop_reason : "");
out:
	if (r->begun)
		output_close(&r->out, err < 0);
	if (s->model_live)
		trace_model_finish(&s->model, 0);
	model_facts_replay(NULL);
	capture_reader_close(&cr);
	batch_path_free(&s->bpath);
	record_strings_free(&s->strings);
	tsc_clock_free(&s->tsc);
	proc_facts_free(&s->target);
	key_map_each(&r->names, free_name, NULL);
	key_map_free(&r->names);
	for (unsigned i = 0; i < r->n_strings; i++)
		free(r->strings[i]);
	free(r);
	(void)code;
	return err;
}
