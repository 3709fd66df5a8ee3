/* SPDX-License-Identifier: MIT */
/* trace_options.h - the command line of `ctrace-bpf [trace]`. */
#ifndef CTRACE_TRACE_OPTIONS_H
#define CTRACE_TRACE_OPTIONS_H

#include <stdbool.h>
#include "lib/categories.h"
#include "attach/usdt_spec.h"

#define TRACE_MAX_PIDS 64
/* --max-size at least: the end of a file keeps 64K for its last event and its metadata. */
#define TRACE_MAX_SIZE_MIN (1ull << 20)
/* The capture a conversion behind it has not taken yet (trace_behind.h), at most. */
#define TRACE_BACKLOG_DEFAULT (1ull << 30)
#define TRACE_BACKLOG_MIN (32ull << 20)
#define TRACE_RING_MIN (64ull << 10)
#define TRACE_RING_MAX (1ull << 30)

struct trace_options {
	int pids[TRACE_MAX_PIDS]; /* -p PID[,PID...] */
	int n_pids;
	const char *exe;          /* --exe PATH */
	bool user_set;            /* --user: only processes of this real uid */
	unsigned user_uid;
	const char *user_name;    /* its name (NULL: a uid without one) */
	char **command;           /* -- CMD ARGS... (launch mode), NULL-terminated */
	bool follow;              /* -f: children of traced processes too */
	bool fast;                /* --fast: attach at the guarded nop5 */
	bool no_batch;            /* --no-batch (or CTRACE_NO_BATCH=1): per-event probes only */
	const char *output;       /* with "%n": numbered files, a new one at each --max-size */
	bool perfetto;            /* --format perfetto, or -o FILE.pftrace: Perfetto's protobuf (pftrace.h) */
	unsigned long long max_size;  /* --max-size, bytes (0: none) */
	unsigned long long max_backlog; /* --max-backlog, bytes */
	unsigned long long max_files; /* --max-files (0: keep every numbered file) */
	double duration;
	unsigned long buffer_size;
	unsigned long long max_memory; /* --max-memory, bytes (default TRACE_MEMORY_DEFAULT) */
	/* --ring SIZE: the flight recorder's bytes of events (0: off; flight_recorder.h) */
	unsigned long long ring_size;
	bool verbose;
	bool quiet;               /* -q: no status line, no "tracing ..." and summary lines; warnings and errors still */
	/* --stacks[=DEPTH|fp|dwarf,...]: 0 = no stacks, else frames at most */
	unsigned stack_depth;
	unsigned stack_how; /* 0: chosen per target (stack_mode.c); CTRACE_STACK_FP, _DWARF */
	const char *event_path_why; /* why the per-event path was taken (metadata, -v) */
	struct category_filter categories; /* --categories (none: every category) */
	struct usdt_specs *usdt;  /* --usdt (usdt_spec.h): &usdt_given; NULL: none */
	struct usdt_specs usdt_given;
	/* --otlp URL: spans, instants and counters also to an OpenTelemetry collector (otlp_export.h) */
	const char *otlp_url;
	/* -o FILE.otlp.json: OTLP JSON lines there instead of the Chrome trace (NULL: not asked) */
	const char *otlp_file;
	unsigned output_mode;     /* --mode: of every file written (default OUTPUT_MODE_DEFAULT) */
};

/* --user's user as said in messages: "NAME (uid N)", or "uid N" for a uid without a name. */
const char *trace_options_user(const struct trace_options *o, char *buf, size_t len);

/* Parses argv; on a usage error prints one line and exits 2; --help, --version exit 0. */
void trace_options_parse(int argc, char **argv, struct trace_options *o);

#endif
