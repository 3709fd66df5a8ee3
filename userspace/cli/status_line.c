// SPDX-License-Identifier: MIT
#include "cli/status_line.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

/* A resize: the region is set again for the new size at the next draw. */
static volatile sig_atomic_t resized;

static void on_winch(int sig)
{
	(void)sig;
	resized = 1;
}

/* All of buf to the terminal; a failed write only loses a status. */
static void put(const struct status_line *sl, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(sl->fd, buf, len);

		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static bool read_size(struct status_line *sl)
{
	struct winsize ws;

	if (ioctl(sl->fd, TIOCGWINSZ, &ws) < 0 || ws.ws_row < 2 || ws.ws_col < 20)
		return false;
	sl->rows = ws.ws_row;
	sl->cols = ws.ws_col;
	return true;
}

/*
 * Rows 1..rows-1 scroll, the last row is the status line's. A newline and
 * a line up first: a cursor on the last row moves one up, its line
 * scrolled up with it. DECSTBM homes the cursor: saved and restored
 * around it (DECSC, DECRC).
 */
static void set_region(struct status_line *sl)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "\n\033[1A\0337\033[1;%ur\0338", sl->rows - 1);

	put(sl, buf, (size_t)n);
}

void status_line_start(struct status_line *sl, bool wanted, uint64_t now_ns)
{
	struct sigaction sa = { 0 };

	memset(sl, 0, sizeof(*sl));
	sl->fd = -1;
	if (!wanted || !isatty(STDERR_FILENO))
		return;
	sl->fd = STDERR_FILENO;
	if (!read_size(sl)) {
		sl->fd = -1;
		return;
	}
	sa.sa_handler = on_winch;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGWINCH, &sa, NULL);
	set_region(sl);
	sl->start_ns = sl->last_ns = now_ns;
	sl->next_ns = now_ns; /* drawn at the first tick */
}

/* 1234567 -> "1,234,567": counts a glance can read. */
static const char *grouped(uint64_t v, char *buf, size_t len)
{
	char digits[24];
	int n = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)v);
	size_t o = 0;

	for (int i = 0; i < n && o + 2 < len; i++) {
		if (i && (n - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

static const char *bytes_text(uint64_t b, char *buf, size_t len)
{
	if (b < 1024 * 1024)
		snprintf(buf, len, "%.1f KB", (double)b / 1024);
	else if (b < 1024ull * 1024 * 1024)
		snprintf(buf, len, "%.1f MB", (double)b / (1024 * 1024));
	else
		snprintf(buf, len, "%.2f GB", (double)b / (1024.0 * 1024 * 1024));
	return buf;
}

void status_line_tick(struct status_line *sl, uint64_t now_ns, const struct status_figures *f)
{
	char text[256], line[400], a[32], b[32], c[32], d[32];
	/* A capture counts its records undecoded: probe hits (a span is two), not the trace's events. */
	const char *unit = f->captured ? "hits" : "events";
	double dt;
	int n;

	if (sl->fd < 0 || now_ns < sl->next_ns)
		return;
	if (resized) {
		resized = 0;
		if (!read_size(sl)) {
			status_line_end(sl);
			return;
		}
		set_region(sl);
	}
	dt = (double)(now_ns - sl->last_ns) / 1e9;
	n = snprintf(text, sizeof(text), "ctrace-bpf: %.1f s | %s %s/s | %s %s | %s dropped | %s %s | %u process%s",
		     (double)(now_ns - sl->start_ns) / 1e9,
		     grouped(dt > 0 && f->events >= sl->last_events ? (uint64_t)((double)(f->events - sl->last_events) / dt) : 0, a, sizeof(a)),
		     unit, grouped(f->events, b, sizeof(b)), unit, grouped(f->dropped, c, sizeof(c)),
		     bytes_text(f->bytes, d, sizeof(d)), f->captured ? "captured" : "written", f->processes, f->processes == 1 ? "" : "es");
	/* Never wider than the row: a wrapped line would scroll the screen. */
	if (n > (int)sl->cols - 1)
		n = (int)sl->cols - 1;
	if (n < 0)
		n = 0;
	n = snprintf(line, sizeof(line), "\0337\033[%u;1H\033[2K%.*s\0338", sl->rows, n, text);
	put(sl, line, (size_t)n);
	sl->last_ns = now_ns;
	sl->last_events = f->events;
	sl->next_ns = now_ns + STATUS_LINE_EVERY_NS;
}

void status_line_end(struct status_line *sl)
{
	char buf[64];
	int n;

	if (sl->fd < 0)
		return;
	/* The last row emptied, then the whole screen scrolls again (DECSTBM homes the cursor: saved around it). */
	n = snprintf(buf, sizeof(buf), "\0337\033[%u;1H\033[2K\0338\0337\033[r\0338", sl->rows);
	put(sl, buf, (size_t)n);
	signal(SIGWINCH, SIG_DFL);
	sl->fd = -1;
}
