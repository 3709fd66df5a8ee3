/* SPDX-License-Identifier: MIT */
/*
 * status_line.h - a live line on the terminal while tracing: elapsed time,
 * events a second, events written, dropped, bytes written, processes
 * traced, redrawn about twice a second. Only when stderr is a terminal
 * (and not -q); nothing of it otherwise.
 *
 * The line lives on the terminal's last row, outside a scroll region that
 * holds the rows above it (DECSTBM, as apt draws its progress bar): what
 * is printed meanwhile, the tracer's own messages and a launched
 * command's output on the same terminal alike, scrolls above it and never
 * tears it. The end gives the row back, empty, and the region back whole.
 */
#ifndef CTRACE_STATUS_LINE_H
#define CTRACE_STATUS_LINE_H

#include <stdbool.h>
#include <stdint.h>

#define STATUS_LINE_EVERY_NS (500 * 1000000ull)

struct status_figures {
	uint64_t events;    /* written to the trace (captured: the probes' hits captured) */
	uint64_t dropped;
	uint64_t bytes;     /* of the trace, written out (captured: of the capture) */
	bool captured;      /* a capture's figures: the trace is written from it later, or behind it */
	unsigned processes; /* traced now */
};

struct status_line {
	int fd;           /* the terminal (stderr), -1: off */
	unsigned rows, cols;
	uint64_t start_ns, next_ns, last_ns, last_events;
};

/* On if `wanted` and stderr is a terminal of at least 2 rows: the last row set apart. */
void status_line_start(struct status_line *sl, bool wanted, uint64_t now_ns);
/* Redraws the line if its time has come (now_ns, CLOCK_MONOTONIC). */
void status_line_tick(struct status_line *sl, uint64_t now_ns, const struct status_figures *f);
/* The row erased and given back; off from then on. Safe to call again. */
void status_line_end(struct status_line *sl);

#endif
