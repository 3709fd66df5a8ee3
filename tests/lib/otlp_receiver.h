/* SPDX-License-Identifier: MIT */
/*
 * otlp_receiver.h - an OTLP/HTTP receiver on loopback for the tests: a
 * child process that takes POSTs, answers each with the next status of a
 * script, and keeps every body (gunzipped when Content-Encoding says gzip)
 * and what came with it, so a test reads back exactly what the tracer sent.
 *
 *   struct otlp_receiver rc;
 *   or_start(&rc, dir, "503,200");   // first POST 503, then 200s (429 says Retry-After: 2)
 *   ... --otlp http://127.0.0.1:<rc.port> ...
 *   or_stop(&rc);                    // then rc.n requests, or_body(&rc, i), ...
 */
#ifndef CTRACE_TEST_OTLP_RECEIVER_H
#define CTRACE_TEST_OTLP_RECEIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define OR_MAX_REQUESTS 4096

struct or_request {
	char path[128];
	char content_type[64];
	char content_encoding[32];
	int status; /* the answer given */
	unsigned long long at_ns; /* when it came, CLOCK_MONOTONIC */
	char *body; /* as decoded; NUL-terminated */
	size_t len;
};

struct otlp_receiver {
	pid_t pid;
	int port;
	char dir[256];
	struct or_request *req; /* after or_stop */
	size_t n;
};

/*
 * statuses: comma-separated HTTP codes, one a request, the last repeated
 * ("200"; "503,503,200"). 0 or -1.
 */
int or_start(struct otlp_receiver *rc, const char *dir, const char *statuses);
/* Stops the receiver and reads what it recorded. */
int or_stop(struct otlp_receiver *rc);
void or_free(struct otlp_receiver *rc);

#endif
