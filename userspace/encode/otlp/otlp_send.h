/* SPDX-License-Identifier: MIT */
/*
 * otlp_send.h - takes finished OTLP/HTTP JSON request bodies and delivers
 * them from a thread of its own, so that the loop reading the ring buffer
 * never waits on the network:
 *
 *   --otlp URL       POST URL/v1/traces or URL/v1/metrics, gzip
 *                    (Content-Encoding), libcurl; 429, 502, 503, 504 and
 *                    failed connections are tried again with exponential
 *                    backoff (Retry-After when the collector gives it);
 *   -o FILE.otlp.json  one request a line, as the collector's file
 *                    exporter writes them, for offline import.
 *
 * The queue is bounded (OTLP_QUEUE_BYTES, OTLP_QUEUE_REQUESTS): a request
 * that finds it full is dropped, and counted with what it held. A file
 * never drops: its writer waits for room instead.
 */
#ifndef CTRACE_OTLP_SEND_H
#define CTRACE_OTLP_SEND_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define OTLP_QUEUE_BYTES (16u << 20)
#define OTLP_QUEUE_REQUESTS 64
/* Tries of one request, and the first wait between tries (doubled each time, at most OTLP_BACKOFF_MAX_MS). */
#define OTLP_ATTEMPTS 6
#define OTLP_BACKOFF_FIRST_MS 250
#define OTLP_BACKOFF_MAX_MS 8000
/* At the end: how long the queue may take to go out before the rest is dropped. */
#define OTLP_DRAIN_MS 5000

enum otlp_signal { OTLP_TRACES, OTLP_METRICS };

struct otlp_req {
	struct otlp_req *next;
	enum otlp_signal signal;
	char *body;
	size_t len;
	uint64_t items; /* spans and span events, or data points */
};

/* What happened to the requests: metadata.otlp and the end's line. */
struct otlp_counts {
	uint64_t requests_sent, requests_dropped, retries;
	uint64_t spans_sent, points_sent;    /* spans count their events too */
	uint64_t spans_dropped, points_dropped;
	uint64_t dropped_queue_full;         /* requests, of requests_dropped */
	uint64_t bytes_sent;                 /* as sent: gzip */
	char last_error[160];                /* why the last request failed, "" if none did */
};

struct otlp_sender {
	char *url_traces, *url_metrics; /* NULL: a file */
	FILE *file;
	const char *file_path;
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;
	pthread_cond_t wake, room;
	struct otlp_req *head, *tail;
	size_t queued_bytes, queued;
	bool stopping;
	uint64_t drain_deadline_ns; /* CLOCK_MONOTONIC, once stopping */
	struct otlp_counts counts;  /* under lock */
};

/*
 * url: "http://host:port" (or with a path: /v1/traces and /v1/metrics go
 * after it); or file_path (NULL: none), opened as file_fd (the sender
 * closes it). 0, or -errno having said why.
 */
int otlp_sender_start(struct otlp_sender *s, const char *url, int file_fd, const char *file_path);
/* Hands a body over (malloc()ed; the sender frees it). */
void otlp_sender_push(struct otlp_sender *s, enum otlp_signal signal, char *body, size_t len,
		      uint64_t items);
/* Sends what is queued (for OTLP_DRAIN_MS at most: the rest is dropped), stops the thread. */
void otlp_sender_stop(struct otlp_sender *s);
void otlp_sender_counts(struct otlp_sender *s, struct otlp_counts *c);

#endif
