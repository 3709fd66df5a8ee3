// SPDX-License-Identifier: MIT
#include "encode/otlp/otlp_send.h"

#include <curl/curl.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <zlib.h>

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void drop_locked(struct otlp_sender *s, const struct otlp_req *r)
{
	s->counts.requests_dropped++;
	if (r->signal == OTLP_TRACES)
		s->counts.spans_dropped += r->items;
	else
		s->counts.points_dropped += r->items;
}

static void free_req(struct otlp_req *r)
{
	free(r->body);
	free(r);
}

void otlp_sender_push(struct otlp_sender *s, enum otlp_signal signal, char *body, size_t len,
		      uint64_t items)
{
	struct otlp_req *r = calloc(1, sizeof(*r));

	if (!r) {
		fputs("ctrace-bpf: out of memory\n", stderr);
		abort();
	}
	*r = (struct otlp_req){ NULL, signal, body, len, items };
	pthread_mutex_lock(&s->lock);
	/* A file waits for room (its writes are quick); the network may be gone: drop. */
	while (s->file && (s->queued >= OTLP_QUEUE_REQUESTS || s->queued_bytes + len > OTLP_QUEUE_BYTES) &&
	       s->queued)
		pthread_cond_wait(&s->room, &s->lock);
	if (s->queued >= OTLP_QUEUE_REQUESTS || (s->queued && s->queued_bytes + len > OTLP_QUEUE_BYTES)) {
		drop_locked(s, r);
		s->counts.dropped_queue_full++;
		snprintf(s->counts.last_error, sizeof(s->counts.last_error),
			 "the queue was full (%u requests or %u MiB waiting): the collector is slower than the trace",
			 OTLP_QUEUE_REQUESTS, OTLP_QUEUE_BYTES >> 20);
		pthread_mutex_unlock(&s->lock);
		free_req(r);
		return;
	}
	if (s->tail)
		s->tail->next = r;
	else
		s->head = r;
	s->tail = r;
	s->queued++;
	s->queued_bytes += len;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
}

/* gzip of the body (Content-Encoding: gzip): 0, or -1. */
static int gzip_body(const char *in, size_t len, unsigned char **out, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = deflateBound(&z, len) + 32;

	/* windowBits 15 + 16: a gzip header and trailer, not zlib's. */
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	cap = deflateBound(&z, len) + 32;
	*out = malloc(cap);
	if (!*out) {
		deflateEnd(&z);
		return -1;
	}
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	z.next_out = *out;
	z.avail_out = (uInt)cap;
	if (deflate(&z, Z_FINISH) != Z_STREAM_END) {
		deflateEnd(&z);
		free(*out);
		return -1;
	}
	*out_len = cap - z.avail_out;
	deflateEnd(&z);
	return 0;
}

struct reply {
	long retry_after_s; /* -1: none */
};

static size_t on_header(char *buf, size_t size, size_t n, void *ctx)
{
	struct reply *rp = ctx;
	size_t len = size * n;
	static const char key[] = "retry-after:";

	/* Retry-After as seconds (an HTTP date is taken as no advice). */
	if (len > sizeof(key) - 1 && !strncasecmp(buf, key, sizeof(key) - 1)) {
		char *end;
		long v = strtol(buf + sizeof(key) - 1, &end, 10);

		if (end != buf + sizeof(key) - 1 && v >= 0)
			rp->retry_after_s = v;
	}
	return len;
}

static size_t discard_body(char *buf, size_t size, size_t n, void *ctx)
{
	(void)buf;
	(void)ctx;
	return size * n;
}

/* One try: 0 sent, 1 to try again (after *wait_ms, when the collector said), -1 not to. */
static int post_once(struct otlp_sender *s, CURL *c, const char *url, const unsigned char *gz,
		     size_t gz_len, long *wait_ms, char *why, size_t why_len)
{
	struct curl_slist *h = NULL;
	struct reply rp = { -1 };
	long code = 0;
	CURLcode rc;

	(void)s;
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Content-Encoding: gzip");
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, gz);
	curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)gz_len);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &rp);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, discard_body);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 2000L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 10000L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); /* a thread: no SIGALRM for timeouts */
	rc = curl_easy_perform(c);
	curl_slist_free_all(h);
	*wait_ms = rp.retry_after_s >= 0 ? rp.retry_after_s * 1000 : -1;
	if (rc != CURLE_OK) {
		snprintf(why, why_len, "%s: %s", url, curl_easy_strerror(rc));
		return 1; /* the collector may come (back) */
	}
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300)
		return 0;
	snprintf(why, why_len, "%s answered HTTP %ld", url, code);
	/* OTLP/HTTP: these are the retryable answers; any other refuses the data for good. */
	return code == 429 || code == 502 || code == 503 || code == 504 ? 1 : -1;
}

/* Waits ms, or less when stopping makes the drain's deadline nearer; false past the deadline. */
static bool backoff(struct otlp_sender *s, long ms)
{
	uint64_t until = mono_ns() + (uint64_t)ms * 1000000ull;
	bool in_time;

	pthread_mutex_lock(&s->lock);
	for (;;) {
		uint64_t now = mono_ns(), end = until;
		struct timespec ts;

		if (s->stopping && s->drain_deadline_ns < end)
			end = s->drain_deadline_ns;
		if (now >= end)
			break;
		ts.tv_sec = (time_t)(end / 1000000000ull);
		ts.tv_nsec = (long)(end % 1000000000ull);
		pthread_cond_timedwait(&s->wake, &s->lock, &ts);
	}
	in_time = !s->stopping || mono_ns() < s->drain_deadline_ns;
	pthread_mutex_unlock(&s->lock);
	return in_time;
}

/* Delivers one request over HTTP: true if the collector took it. */
static bool deliver(struct otlp_sender *s, CURL *c, const struct otlp_req *r, size_t *sent_bytes)
{
	const char *url = r->signal == OTLP_TRACES ? s->url_traces : s->url_metrics;
	unsigned char *gz;
	size_t gz_len;
	long wait_ms, next_ms = OTLP_BACKOFF_FIRST_MS;
	char why[160] = "";
	int res = -1;

	if (gzip_body(r->body, r->len, &gz, &gz_len) < 0) {
		snprintf(why, sizeof(why), "out of memory compressing a request");
		goto out;
	}
	for (int attempt = 1; attempt <= OTLP_ATTEMPTS; attempt++) {
		res = post_once(s, c, url, gz, gz_len, &wait_ms, why, sizeof(why));
		if (res <= 0 || attempt == OTLP_ATTEMPTS)
			break;
		if (wait_ms < 0)
			wait_ms = next_ms;
		if (wait_ms > 30000)
			wait_ms = 30000; /* a Retry-After of hours would hold the queue for good */
		next_ms = next_ms * 2 > OTLP_BACKOFF_MAX_MS ? OTLP_BACKOFF_MAX_MS : next_ms * 2;
		pthread_mutex_lock(&s->lock);
		s->counts.retries++;
		pthread_mutex_unlock(&s->lock);
		if (!backoff(s, wait_ms)) {
			snprintf(why + strlen(why), sizeof(why) - strlen(why), " (out of time at the end)");
			res = -1;
			break;
		}
	}
	*sent_bytes = gz_len;
	free(gz);
out:
	if (res != 0) {
		pthread_mutex_lock(&s->lock);
		snprintf(s->counts.last_error, sizeof(s->counts.last_error), "%s", why);
		pthread_mutex_unlock(&s->lock);
	}
	return res == 0;
}

static bool write_line(struct otlp_sender *s, const struct otlp_req *r)
{
	if (fwrite(r->body, 1, r->len, s->file) == r->len && fputc('\n', s->file) != EOF)
		return true;
	pthread_mutex_lock(&s->lock);
	snprintf(s->counts.last_error, sizeof(s->counts.last_error), "writing %s: %s", s->file_path,
		 strerror(errno));
	pthread_mutex_unlock(&s->lock);
	return false;
}

static void *sender_main(void *arg)
{
	struct otlp_sender *s = arg;
	CURL *c = s->file ? NULL : curl_easy_init();

	for (;;) {
		struct otlp_req *r;
		size_t bytes = 0;
		bool ok, late;

		pthread_mutex_lock(&s->lock);
		while (!s->head && !s->stopping)
			pthread_cond_wait(&s->wake, &s->lock);
		r = s->head;
		if (!r) {
			pthread_mutex_unlock(&s->lock);
			break;
		}
		s->head = r->next;
		if (!s->head)
			s->tail = NULL;
		s->queued--;
		s->queued_bytes -= r->len;
		late = s->stopping && !s->file && mono_ns() >= s->drain_deadline_ns;
		pthread_cond_signal(&s->room);
		pthread_mutex_unlock(&s->lock);
		if (late)
			ok = false;
		else if (s->file)
			ok = write_line(s, r);
		else
			ok = c && deliver(s, c, r, &bytes);
		pthread_mutex_lock(&s->lock);
		if (ok) {
			s->counts.requests_sent++;
			s->counts.bytes_sent += s->file ? r->len + 1 : bytes;
			if (r->signal == OTLP_TRACES)
				s->counts.spans_sent += r->items;
			else
				s->counts.points_sent += r->items;
		} else {
			drop_locked(s, r);
			if (late && !*s->counts.last_error)
				snprintf(s->counts.last_error, sizeof(s->counts.last_error),
					 "still queued %u ms after the end", OTLP_DRAIN_MS);
		}
		pthread_mutex_unlock(&s->lock);
		free_req(r);
	}
	if (c)
		curl_easy_cleanup(c);
	return NULL;
}

static char *join_url(const char *base, const char *path)
{
	size_t n = strlen(base);
	char *u;

	while (n && base[n - 1] == '/')
		n--;
	u = malloc(n + strlen(path) + 1);
	if (u) {
		memcpy(u, base, n);
		strcpy(u + n, path);
	}
	return u;
}

int otlp_sender_start(struct otlp_sender *s, const char *url, int file_fd, const char *file_path)
{
	pthread_condattr_t ca;
	sigset_t all, was;
	int err;

	memset(s, 0, sizeof(*s));
	if (file_path) {
		s->file_path = file_path;
		s->file = fdopen(file_fd, "w");
		if (!s->file) {
			fputs("ctrace-bpf: out of memory\n", stderr);
			return -ENOMEM;
		}
	} else {
		if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
			fputs("ctrace-bpf: --otlp: libcurl did not start\n", stderr);
			return -EIO;
		}
		s->url_traces = join_url(url, "/v1/traces");
		s->url_metrics = join_url(url, "/v1/metrics");
		if (!s->url_traces || !s->url_metrics) {
			fputs("ctrace-bpf: out of memory\n", stderr);
			return -ENOMEM;
		}
	}
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* backoff() waits on CLOCK_MONOTONIC times */
	pthread_cond_init(&s->wake, &ca);
	pthread_cond_init(&s->room, NULL);
	pthread_condattr_destroy(&ca);
	/* Signals (Ctrl-C, SIGUSR1, SIGCHLD) are the loop's: the thread starts with them blocked. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &was);
	err = pthread_create(&s->thread, NULL, sender_main, s);
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	if (err != 0) {
		fputs("ctrace-bpf: --otlp: cannot start its thread\n", stderr);
		return -EAGAIN;
	}
	s->started = true;
	return 0;
}

void otlp_sender_stop(struct otlp_sender *s)
{
	if (!s->started)
		return;
	pthread_mutex_lock(&s->lock);
	s->stopping = true;
	s->drain_deadline_ns = mono_ns() + OTLP_DRAIN_MS * 1000000ull;
	pthread_cond_broadcast(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->thread, NULL);
	s->started = false;
	if (s->file && fclose(s->file) != 0)
		snprintf(s->counts.last_error, sizeof(s->counts.last_error), "writing %s: %s",
			 s->file_path, strerror(errno));
	s->file = NULL;
	free(s->url_traces);
	free(s->url_metrics);
	s->url_traces = s->url_metrics = NULL;
	if (!s->file_path)
		curl_global_cleanup();
}

void otlp_sender_counts(struct otlp_sender *s, struct otlp_counts *c)
{
	pthread_mutex_lock(&s->lock);
	*c = s->counts;
	pthread_mutex_unlock(&s->lock);
}
