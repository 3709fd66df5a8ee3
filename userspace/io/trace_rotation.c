// SPDX-License-Identifier: MIT
/* trace_rotation.c - see trace_rotation.h. */
#include "io/trace_rotation.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "encode/json/chrome_trace.h"
#include "io/output_file.h"

/*
 * The names written of one thread (key pid, tid) or one process (key
 * pid, NO_TID): its name and sort index as written last, and the file they
 * were last written in.
 */
#define NO_TID UINT32_MAX

struct name_key {
	uint32_t pid, tid;
};

struct name_entry {
	struct name_key key;
	unsigned long long file;  /* written in this file already */
	bool has_name, has_sort;
	int64_t sort_index;
	unsigned flags;
	size_t n;
	char *s;
};

/* pattern with its first "%n" as `index`, into buf; -1 if too long. */
static int numbered_name(char *buf, size_t len, const char *pattern, unsigned long long index)
{
	const char *at = strstr(pattern, "%n");
	int n = at ? snprintf(buf, len, "%.*s%llu%s", (int)(at - pattern), pattern, index, at + 2) :
		     snprintf(buf, len, "%s", pattern);

	return n < 0 || (size_t)n >= len ? -1 : 0;
}

int trace_rotation_init(struct trace_rotation *r, const char *pattern,
			unsigned long long max_size, unsigned long long max_files)
{
	memset(r, 0, sizeof(*r));
	key_map_init(&r->names);
	r->pattern = pattern;
	r->max_size = max_size;
	r->max_files = max_files;
	r->numbered = max_size && strstr(pattern, "%n");
	r->index = 1;
	if (r->numbered ? numbered_name(r->path, sizeof(r->path), pattern, 1) < 0 :
			  (size_t)snprintf(r->path, sizeof(r->path), "%s", pattern) >= sizeof(r->path)) {
		fprintf(stderr, "ctrace-bpf: the output's name is too long: %.64s...\n", pattern);
		return -1;
	}
	return 0;
}

void trace_rotation_attach(struct trace_rotation *r, struct chrome_trace *ct, struct json_writer *w,
			   int *fd, const struct trace_facts *facts, struct trace_stats *stats)
{
	r->file = w;
	r->fd = fd;
	r->facts = facts;
	r->stats = stats;
	if (r->max_size)
		ct->rot = r;
}

static void free_entry(const void *key, size_t len, void *value, void *ctx);

void trace_rotation_free(struct trace_rotation *r)
{
	key_map_each(&r->names, free_entry, NULL);
	key_map_free(&r->names);
	if (r->discard.buf)
		jw_free(&r->discard);
}

static void free_entry(const void *key, size_t len, void *value, void *ctx)
{
	struct name_entry *e = value;

	(void)key;
	(void)len;
	(void)ctx;
	free(e->s);
	free(e);
}

void trace_rotation_remember(struct trace_rotation *r, const char *what, uint32_t pid, uint32_t tid,
			     const char *s, size_t n, unsigned flags, int64_t sort_index)
{
	bool process = !strncmp(what, "process_", 8), sort = strstr(what, "sort_index") != NULL;
	struct name_key key = { pid, process ? NO_TID : tid };
	struct name_entry *e;

	if (r->busy)
		return; /* a name written again: already remembered */
	e = key_map_get(&r->names, &key, sizeof(key));
	if (!e) {
		if (r->names.count >= TRACE_ROTATION_NAMES_MAX || !(e = calloc(1, sizeof(*e)))) {
			r->names_not_kept++;
			return;
		}
		e->key = key;
		key_map_put(&r->names, &e->key, sizeof(e->key), e);
	}
	e->file = r->index; /* just written in this file */
	if (sort) {
		e->has_sort = true;
		e->sort_index = sort_index;
		return;
	}
	/* A rename replaces the name: the next file has the latest only, as a viewer shows. */
	free(e->s);
	e->s = malloc(n + 1);
	if (!e->s) {
		e->has_name = false;
		return;
	}
	if (n)
		memcpy(e->s, s, n);
	e->s[n] = '\0';
	e->n = n;
	e->flags = flags;
	e->has_name = true;
}

/* The names of e, written again in this file. */
static void write_again(struct trace_rotation *r, struct chrome_trace *ct, struct name_entry *e)
{
	const struct ct_text t = { e->s, e->n, e->flags };
	bool process = e->key.tid == NO_TID;
	uint32_t tid = process ? e->key.pid : e->key.tid;

	e->file = r->index;
	if (e->has_name && process)
		chrome_trace_process_name(ct, e->key.pid, &t);
	else if (e->has_name)
		chrome_trace_thread_name(ct, e->key.pid, tid, &t);
	if (e->has_sort)
		chrome_trace_sort_index(ct, e->key.pid, tid, !process, e->sort_index);
}

void trace_rotation_first_in_file(struct trace_rotation *r, struct chrome_trace *ct, uint32_t pid,
				  uint32_t tid)
{
	/*
	 * The process's main thread too: the process_name written here has its
	 * pid and tid, and so fills the cache for it.
	 */
	struct name_key keys[3] = { { pid, NO_TID }, { pid, pid }, { pid, tid } };

	if (r->busy || r->index == 1)
		return; /* the first file has every name where the model wrote it */
	r->busy = true;
	for (int i = 0; i < (tid == pid ? 2 : 3); i++) {
		struct name_entry *e = key_map_get(&r->names, &keys[i], sizeof(keys[i]));

		if (e && e->file != r->index)
			write_again(r, ct, e);
	}
	r->busy = false;
}

static uint64_t now_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Errors end the trace as a write error would: the session's loop sees w->err. */
static void fail(struct trace_rotation *r, int err)
{
	if (!r->file->err)
		r->file->err = err;
}

/* The current file is full: closed as a whole trace, and the next one begun. */
static void rotate(struct trace_rotation *r, struct chrome_trace *ct)
{
	const char *reason = r->stats->stop_reason;
	uint64_t stop = r->stats->stop_mono_ns;
	char next[PATH_MAX], old[PATH_MAX];
	bool created;
	int fd;

	if (numbered_name(next, sizeof(next), r->pattern, r->index + 1) < 0) {
		fail(r, ENAMETOOLONG);
		return;
	}
	r->busy = true;
	/* This file's end says why it ends here, and when. */
	r->stats->stop_reason = "--max-size: continued in the next file";
	r->stats->stop_mono_ns = now_mono_ns();
	chrome_trace_end(ct, r->facts, r->stats);
	r->events_before += ct->events;
	r->stats->stop_reason = reason;
	r->stats->stop_mono_ns = stop;
	if (jw_finish(r->file) < 0) {
		r->busy = false;
		return; /* w->err stops the trace */
	}
	r->bytes_before += r->file->written;
	fd = output_open(next, &created);
	if (fd < 0) {
		fail(r, EIO);
		r->busy = false;
		return;
	}
	close(*r->fd);
	*r->fd = fd;
	if (jw_reopen(r->file, fd) < 0) {
		fail(r, ENOMEM);
		r->busy = false;
		return;
	}
	r->index++;
	r->rotations++;
	memcpy(r->path, next, sizeof(r->path));
	/* --max-files N: file index - N goes (unlink of a file already gone is no matter). */
	if (r->max_files && r->index > r->max_files &&
	    numbered_name(old, sizeof(old), r->pattern, r->index - r->max_files) == 0)
		unlink(old);
	/* The names follow each thread's first event in the new file (trace_rotation_first_in_file()). */
	chrome_trace_restart(ct, r->facts);
	r->busy = false;
}

bool trace_rotation_before_event(struct trace_rotation *r, struct chrome_trace *ct)
{
	if (r->busy)
		return false;
	if (r->full) {
		/* Forgotten as it is written: the writer starts empty at each event. */
		r->discard.len = 0;
		r->discard.err = 0;
		r->events_past_limit++;
		return true;
	}
	if (jw_size_bound(r->file) + TRACE_ROTATION_RESERVE <= r->max_size)
		return false;
	/* The bound counts what is not compressed yet as if it did not compress: know exactly. */
	jw_flush(r->file);
	if (jw_size_bound(r->file) + TRACE_ROTATION_RESERVE <= r->max_size || r->file->err)
		return false;
	if (r->numbered) {
		rotate(r, ct);
		return false;
	}
	/* A plain name: the file is full; what comes now is counted, and the session stops. */
	if (jw_init(&r->discard, -1, 64 * 1024) < 0) {
		fail(r, ENOMEM);
		return false;
	}
	r->full = true;
	ct->w = &r->discard;
	fprintf(stderr, "ctrace-bpf: %s is full (--max-size %llu bytes): tracing stops; for new files instead, put %%n in the name (-o trace-%%n.json.gz)\n",
		r->path, r->max_size);
	r->events_past_limit++;
	return true;
}

void trace_rotation_at_end(struct trace_rotation *r, struct chrome_trace *ct)
{
	if (r->full)
		ct->w = r->file;
	r->busy = true; /* the end's own writing is not checked */
}

void trace_rotation_metadata(const struct trace_rotation *r, struct json_writer *w)
{
	jw_lit(w, ",\"output\":{\"max_size\":");
	jw_u64(w, r->max_size);
	jw_lit(w, ",\"file\":");
	jw_u64(w, r->index);
	jw_lit(w, r->numbered ? ",\"numbered\":true" : ",\"numbered\":false");
	jw_lit(w, ",\"max_files\":");
	jw_u64(w, r->max_files);
	jw_lit(w, ",\"events_past_max_size\":");
	jw_u64(w, r->events_past_limit);
	jw_lit(w, ",\"names_not_repeated\":");
	jw_u64(w, r->names_not_kept);
	jw_lit(w, "}");
}
