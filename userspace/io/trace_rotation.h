/* SPDX-License-Identifier: MIT */
/*
 * trace_rotation.h - --max-size: no trace file grows past SIZE bytes.
 *
 * With "%n" in the output's name (trace-%n.json.gz), a full file is closed
 * as a whole trace (its metadata, the gzip trailer) and the next one,
 * numbered 1, 2, ..., begins with the context; the names of a process
 * and a thread (process_name, thread_name, sort indexes, as written last)
 * come again before its first event in each file, so each opens alone,
 * and a file does not list every process that ever had a name (a program
 * that makes a pseudo-process per request has thousands). A span open at a rotation is written,
 * whole, in the file where it ends. --max-files N removes the oldest file
 * when file N+1 begins, so the disk holds at most N * SIZE.
 *
 * With a plain name the file is closed full: later events are counted
 * (metadata.output.events_past_max_size), not written, and tracing stops.
 *
 * The check runs before each event: the file so far (for gzip, what is
 * written plus a bound for what is still to compress; when that bound is
 * too coarse the writer is flushed to know exactly) plus 64K, room for one
 * event and the metadata, must fit in SIZE. Only a flow's held-back span
 * with its flow events (up to 1M, trace_flows.h) or a stack deeper than
 * 64K of names can take a file past SIZE, by that one release.
 */
#ifndef CTRACE_TRACE_ROTATION_H
#define CTRACE_TRACE_ROTATION_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include "encode/json/json_writer.h"
#include "lib/key_map.h"

struct chrome_trace;
struct trace_facts;
struct trace_stats;

/* Kept free at the end of every file: one event and the closing metadata. */
#define TRACE_ROTATION_RESERVE (64u * 1024)
/* Threads and processes whose names are remembered to write again, at most (beyond: counted). */
#define TRACE_ROTATION_NAMES_MAX 65536

struct trace_rotation {
	unsigned long long max_size;   /* 0: no limit (nothing here runs) */
	unsigned long long max_files;  /* numbered: keep this many (0: all) */
	const char *pattern;           /* the -o name */
	bool numbered;                 /* it has %n */
	unsigned long long index;      /* the current file's number, from 1 */
	char path[PATH_MAX];           /* the current file's name */
	bool full;                     /* plain name: full, events are counted, not written */
	bool busy;                     /* rotating: the names written again are not checked */
	unsigned long long events_past_limit;
	unsigned long long names_not_kept;
	unsigned long long rotations;
	unsigned long long events_before; /* written in the files closed before this one */
	unsigned long long bytes_before;  /* the same, in bytes (the status line's total) */
	struct key_map names;          /* names to write again, by (pid, tid) */
	/* What a rotation needs: the file's writer and fd, the trace's facts and counts. */
	struct json_writer *file;
	struct json_writer discard;    /* events past a plain file's limit go here, and are forgotten */
	int *fd;
	const struct trace_facts *facts;
	struct trace_stats *stats;
};

/*
 * Sets r up for -o `pattern` (max_size 0: none); the first file's name is
 * r->path. 0, or -1 having said why (a name too long).
 */
int trace_rotation_init(struct trace_rotation *r, const char *pattern,
			unsigned long long max_size, unsigned long long max_files);
/* What a rotation writes with; ct->rot = r from then on. */
void trace_rotation_attach(struct trace_rotation *r, struct chrome_trace *ct, struct json_writer *w,
			   int *fd, const struct trace_facts *facts, struct trace_stats *stats);
void trace_rotation_free(struct trace_rotation *r);

/* Before an event is begun (chrome_trace.c): rotates if need be. True: this event is not written (full). */
bool trace_rotation_before_event(struct trace_rotation *r, struct chrome_trace *ct);
/* An M event written (process_name, thread_name, a sort index): to be written again in the next files. */
void trace_rotation_remember(struct trace_rotation *r, const char *what, uint32_t pid, uint32_t tid,
			     const char *s, size_t n, unsigned flags, int64_t sort_index);
/*
 * Before the first event of (pid, tid) in a file after the first (the
 * chrome_trace's pid/tid cache missed): its process's and its names again.
 */
void trace_rotation_first_in_file(struct trace_rotation *r, struct chrome_trace *ct, uint32_t pid,
				  uint32_t tid);
/* The end: the file's writer back if events were being forgotten. */
void trace_rotation_at_end(struct trace_rotation *r, struct chrome_trace *ct);
/* ,"output":{...} for the metadata: the limit, this file's number, what did not fit. */
void trace_rotation_metadata(const struct trace_rotation *r, struct json_writer *w);

#endif
