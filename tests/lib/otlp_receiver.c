// SPDX-License-Identifier: MIT
#include "otlp_receiver.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

static char *gunzip(const char *in, size_t len, size_t *out_len)
{
	z_stream z = { 0 };
	size_t cap = len * 8 + 1024;
	char *out = malloc(cap + 1);
	int rc;

	if (!out || inflateInit2(&z, 15 + 32) != Z_OK) /* + 32: gzip or zlib, by the header */
		return NULL;
	z.next_in = (unsigned char *)in;
	z.avail_in = (uInt)len;
	for (;;) {
		z.next_out = (unsigned char *)out + z.total_out;
		z.avail_out = (uInt)(cap - z.total_out);
		rc = inflate(&z, Z_NO_FLUSH);
		if (rc == Z_STREAM_END)
			break;
		if (rc != Z_OK && rc != Z_BUF_ERROR) {
			inflateEnd(&z);
			free(out);
			return NULL;
		}
		if (z.avail_out == 0) {
			cap *= 2;
			out = realloc(out, cap + 1);
		} else if (rc == Z_BUF_ERROR) {
			inflateEnd(&z);
			free(out);
			return NULL;
		}
	}
	*out_len = z.total_out;
	out[*out_len] = '\0';
	inflateEnd(&z);
	return out;
}

static int status_at(const char *statuses, unsigned i)
{
	const char *p = statuses;
	int v = 200;

	for (unsigned k = 0; *p; k++) {
		v = atoi(p);
		if (k == i)
			return v;
		p = strchr(p, ',');
		if (!p)
			break;
		p++;
	}
	return v;
}

static const char *reason(int code)
{
	return code == 200 ? "OK" : code == 503 ? "Service Unavailable" : code == 429 ? "Too Many Requests" :
	       code == 400 ? "Bad Request" : "Status";
}

/* Reads one request from the connection into buf: head length, body. 0, or -1 at its end. */
static int read_request(int fd, char **buf, size_t *cap, size_t *have, size_t *head_len, size_t *body_len)
{
	char *end;

	for (;;) {
		end = *have ? memmem(*buf, *have, "\r\n\r\n", 4) : NULL;
		if (end) {
			char *cl;
			size_t need;

			*head_len = (size_t)(end - *buf) + 4;
			(*buf)[*head_len - 1] = '\0';
			cl = strcasestr(*buf, "\r\nContent-Length:");
			*body_len = cl ? strtoul(cl + 17, NULL, 10) : 0;
			(*buf)[*head_len - 1] = '\n';
			need = *head_len + *body_len;
			while (*have < need) {
				ssize_t n;

				if (*cap < need + 1) {
					*cap = need + 1;
					*buf = realloc(*buf, *cap);
				}
				n = read(fd, *buf + *have, *cap - *have);
				if (n <= 0)
					return -1;
				*have += (size_t)n;
			}
			return 0;
		}
		if (*have + 4096 > *cap) {
			*cap = *cap * 2 + 8192;
			*buf = realloc(*buf, *cap);
		}
		ssize_t n = read(fd, *buf + *have, *cap - *have);

		if (n <= 0)
			return -1;
		*have += (size_t)n;
	}
}

static void header(const char *head, const char *name, char *to, size_t len)
{
	char key[64];
	const char *p, *e;

	snprintf(key, sizeof(key), "\r\n%s:", name);
	to[0] = '\0';
	p = strcasestr(head, key);
	if (!p)
		return;
	p += strlen(key);
	while (*p == ' ')
		p++;
	e = strstr(p, "\r\n");
	snprintf(to, len, "%.*s", (int)(e ? e - p : (long)strlen(p)), p);
}

/* The child: serves until killed; each request's head and body into dir/N.head, dir/N.body. */
static void serve(int ls, const char *dir, const char *statuses)
{
	unsigned count = 0;
	char *buf = NULL;
	size_t cap = 0;

	for (;;) {
		int fd = accept(ls, NULL, NULL);
		size_t have = 0;

		if (fd < 0)
			continue;
		for (;;) {
			size_t head_len, body_len;
			char path[300], method[16], target[128], ctype[64], cenc[32], reply[256];
			int code = status_at(statuses, count);
			FILE *f;

			if (read_request(fd, &buf, &cap, &have, &head_len, &body_len) < 0)
				break;
			buf[head_len - 2] = '\0';
			method[0] = target[0] = '\0';
			sscanf(buf, "%15s %127s", method, target);
			header(buf, "Content-Type", ctype, sizeof(ctype));
			header(buf, "Content-Encoding", cenc, sizeof(cenc));
			snprintf(path, sizeof(path), "%s/%u.body", dir, count);
			f = fopen(path, "w");
			if (f) {
				fwrite(buf + head_len, 1, body_len, f);
				fclose(f);
			}
			snprintf(path, sizeof(path), "%s/%u.head", dir, count);
			f = fopen(path, "w");
			if (f) {
				struct timespec now;

				clock_gettime(CLOCK_MONOTONIC, &now);
				fprintf(f, "%s\n%s\n%s\n%d\n%llu\n", target, *ctype ? ctype : "-", *cenc ? cenc : "-", code,
					(unsigned long long)now.tv_sec * 1000000000ull + (unsigned long long)now.tv_nsec);
				fclose(f);
			}
			count++;
			snprintf(reply, sizeof(reply),
				 "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: 2\r\n%s\r\n{}",
				 code, reason(code), code == 429 ? "Retry-After: 2\r\n" : "");
			if (write(fd, reply, strlen(reply)) < 0)
				break;
			memmove(buf, buf + head_len + body_len, have - head_len - body_len);
			have -= head_len + body_len;
		}
		close(fd);
	}
}

int or_start(struct otlp_receiver *rc, const char *dir, const char *statuses)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t alen = sizeof(a);
	int ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	memset(rc, 0, sizeof(*rc));
	snprintf(rc->dir, sizeof(rc->dir), "%s", dir);
	if (ls < 0 || bind(ls, (struct sockaddr *)&a, sizeof(a)) < 0 || listen(ls, 16) < 0 ||
	    getsockname(ls, (struct sockaddr *)&a, &alen) < 0)
		return -1;
	rc->port = ntohs(a.sin_port);
	rc->pid = fork();
	if (rc->pid < 0)
		return -1;
	if (rc->pid == 0) {
		serve(ls, dir, statuses);
		_exit(0);
	}
	close(ls);
	return 0;
}

int or_stop(struct otlp_receiver *rc)
{
	if (rc->pid > 0) {
		kill(rc->pid, SIGKILL);
		waitpid(rc->pid, NULL, 0);
		rc->pid = 0;
	}
	rc->req = calloc(OR_MAX_REQUESTS, sizeof(*rc->req));
	if (!rc->req)
		return -1;
	for (rc->n = 0; rc->n < OR_MAX_REQUESTS; rc->n++) {
		struct or_request *r = &rc->req[rc->n];
		char path[300], raw[1 << 12];
		FILE *f;
		char *body = NULL;
		size_t len = 0;

		snprintf(path, sizeof(path), "%s/%zu.head", rc->dir, rc->n);
		f = fopen(path, "r");
		if (!f)
			break;
		if (fscanf(f, "%127[^\n]\n%63[^\n]\n", r->path, r->content_type) < 1)
			r->path[0] = '\0';
		if (fscanf(f, "%31[^\n]\n", r->content_encoding) != 1)
			r->content_encoding[0] = '\0';
		if (fscanf(f, "%d\n", &r->status) != 1)
			r->status = 0;
		if (fscanf(f, "%llu", &r->at_ns) != 1)
			r->at_ns = 0;
		fclose(f);
		snprintf(path, sizeof(path), "%s/%zu.body", rc->dir, rc->n);
		f = fopen(path, "r");
		if (f) {
			size_t k;

			while ((k = fread(raw, 1, sizeof(raw), f)) > 0) {
				body = realloc(body, len + k + 1);
				memcpy(body + len, raw, k);
				len += k;
			}
			fclose(f);
		}
		if (!strcasecmp(r->content_encoding, "gzip") && body) {
			r->body = gunzip(body, len, &r->len);
			free(body);
		} else {
			r->body = body ? body : calloc(1, 1);
			r->len = len;
			if (body)
				r->body[len] = '\0';
		}
	}
	return 0;
}

void or_free(struct otlp_receiver *rc)
{
	for (size_t i = 0; i < rc->n; i++)
		free(rc->req[i].body);
	free(rc->req);
	rc->req = NULL;
	rc->n = 0;
}
