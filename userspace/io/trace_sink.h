/* SPDX-License-Identifier: MIT */
/*
 * trace_sink.h - the trace's bytes on their last step to the file: as they
 * are, or gzip-compressed (zlib's deflate) for an output named *.gz.
 *
 * Compressed, every piece handed in ends with a sync flush: the bytes so
 * far are whole deflate blocks in the file, so a tracer killed (or a disk
 * full) leaves a .gz that zlib reads up to the cut, and `ctrace-bpf fix`
 * repairs it as it does plain JSON. Pieces are large (the writer's 1 MB
 * buffer, or what 50 ms brought), so a flush costs a few bytes in a
 * megabyte.
 */
#ifndef CTRACE_TRACE_SINK_H
#define CTRACE_TRACE_SINK_H

#include <stdbool.h>
#include <stddef.h>

/* The file descriptor is the caller's (json_writer's fd), given to each call. */
struct trace_sink {
	struct z_stream_s *z; /* NULL: plain */
	unsigned char *zbuf;  /* deflate's output before write(2) */
	size_t zcap;
	bool finished;        /* the gzip trailer (or the Perfetto trace's last packet) is written */
	/*
	 * Perfetto's format (pftrace.h): the JSON handed in is converted as it
	 * comes, and the file gets the packets of its complete events, each
	 * write ending on a packet; json_fd (-1: none) the JSON as it is.
	 */
	struct pftrace_stream *pf;
	int json_fd;
	/* Each piece handed in ends on a record (jw_packets()): one cut short is taken back whole. */
	bool whole_pieces;
};

/*
 * deflate level 1 (Z_BEST_SPEED): the writer must keep up with the event
 * rate. On the demo's trace level 6 compressed 96 MB/s of JSON to 10.2x,
 * level 1 250 MB/s to 7.6x: 2.6x slower for 1.35x smaller
 * (tests/bench/output_formats.c measures the writer with level 1).
 */
#define TRACE_SINK_GZIP_LEVEL 1

/* 0 or -ENOMEM. gzip: compressed (sink_free() frees zlib's state). */
int trace_sink_init(struct trace_sink *s, bool gzip);
/* 0 or -ENOMEM. The JSON into Perfetto packets (see pf above); json_fd is the caller's. */
int trace_sink_init_pftrace(struct trace_sink *s, int json_fd);
/*
 * p[0, n) to fd (compressed and sync-flushed if gzip). 0 or the
 * errno of the first failing write(2); *written gets the bytes that
 * reached the file added.
 */
int trace_sink_write(struct trace_sink *s, int fd, const char *p, size_t n,
		     unsigned long long *written);
/* The gzip trailer, or the Perfetto trace's metadata (nothing for plain output); 0 or an errno. */
int trace_sink_finish(struct trace_sink *s, int fd, unsigned long long *written);
void trace_sink_free(struct trace_sink *s);

/* Whether a path names gzip output: it ends in ".gz". */
bool trace_sink_path_is_gzip(const char *path);

#endif
